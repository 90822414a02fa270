from pathlib import Path

import matplotlib
import pytest

from lorapriv_utils.scale import Scale

matplotlib.use("Agg")  # tests draw figures without a display

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def tiny_scale() -> Scale:
    """A scale small enough for unit tests (the code path is the one the notebooks use)."""
    return Scale(name="test", description="unit tests", mc_draws=4000, mc_chunk=1500, seed=7)


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def fresh_accelerate_state():
    """accelerate keeps one process-wide state; tests that build accelerators with other settings reset it
    (as accelerate's own test case does)."""
    from accelerate.state import AcceleratorState

    AcceleratorState._reset_state(reset_partial_state=True)
    yield
    AcceleratorState._reset_state(reset_partial_state=True)
