import dataclasses
from pathlib import Path

import matplotlib
import pytest

from lorapriv_utils import ledger
from lorapriv_utils.scale import Scale

matplotlib.use("Agg")  # tests draw figures without a display

SLOW = 5.0  # seconds: a test that takes longer carries the slow marker (make test runs the slow tier last)
_unmarked: list[tuple[str, float]] = []


def pytest_runtest_logreport(report) -> None:
    if report.when == "call" and report.duration > SLOW and "slow" not in report.keywords:
        _unmarked.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter) -> None:
    """The marker guard: every test over SLOW seconds without the slow marker, named."""
    if _unmarked:
        terminalreporter.section(f"tests over {SLOW:g} s without the slow marker (mark them slow)")
        for nodeid, seconds in sorted(_unmarked, key=lambda item: -item[1]):
            terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")


REPO = Path(__file__).resolve().parents[1]


def registered(chapter_key: str) -> set[str]:
    """The claim ids that the register assigns to a chapter."""
    return {e.claim_id for e in ledger.load_register(REPO / "ledger") if e.chapter == chapter_key}


@pytest.fixture
def tiny_scale() -> Scale:
    """A scale small enough for unit tests (the code path is the one the notebooks use)."""
    return Scale(name="test", description="unit tests", mc_draws=4000, mc_chunk=1500, seed=7)


@pytest.fixture(scope="session")
def engine_cache(tmp_path_factory, request) -> Path:
    """One base-model cache for the test session (``LORAPRIV_CACHE_DIR``): each tiny base model is pre-trained
    once, by whichever test needs it first, and loaded from the cache by the others (entries are keyed by spec).
    Under pytest-xdist (``make unit-slow`` runs two workers) the workers share it: an entry's lock lets one
    build it while the other waits (``files.cached_entry``)."""
    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        root = root.parent  # the session's folder above the workers' own
    folder = root / "engine-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def tiny_tree(engine_cache):
    """The session's tiny published tree (``tiny_published.TinyTree``): grid, frontier, LiRA, canary-audit and
    DP-comparison records at the one tiny scale, each part run once per session by whichever test (or worker)
    needs it first, beside the engine cache.  Read it; copy it (``TinyTree.copy``) to edit or rerun records."""
    from tiny_published import TinyTree

    return TinyTree(engine_cache.parent / "tiny-tree", engine_cache)


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


@pytest.fixture
def small(tiny_scale: Scale) -> Scale:
    """The tiny scale with the section 2-4 grids shrunk to what a unit test can afford."""
    return dataclasses.replace(
        tiny_scale,
        noise_draws=3000,
        element_draws=20_000,
        m_grid=(16, 256, 1024, 4096),
        r_grid=(1, 2, 4, 8, 16),
        dyn_steps=(10, 40),
        dyn_lrs=4,
    )
