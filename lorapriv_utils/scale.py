"""The run scales: one place that says how big a computation is.

Every notebook's first code cell calls :func:`current_scale`, which reads the
environment variable ``LORAPRIV_SCALE`` (default ``cpu-small``).  The three
scales share one code path; only the sizes below change.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

ENV_VAR = "LORAPRIV_SCALE"
DEFAULT_SCALE = "cpu-small"


@dataclass(frozen=True)
class Scale:
    """Sizes of one run scale.

    Attributes:
        name: the value of ``LORAPRIV_SCALE`` that selects this scale.
        description: what the scale is for, in one sentence.
        mc_draws: Monte Carlo draws per estimate in the moment checks.
        mc_chunk: draws generated at once (bounds memory, not the result).
        seed: the root seed from which every random stream is derived.
    """

    name: str
    description: str
    mc_draws: int
    mc_chunk: int
    seed: int = 20240926

    def as_dict(self) -> dict:
        return asdict(self)


SCALES: dict[str, Scale] = {
    "cpu-small": Scale(
        name="cpu-small",
        description="the default: every notebook in minutes on a 2-core laptop; used by `make book` and CI",
        mc_draws=400_000,
        mc_chunk=200_000,
    ),
    "cpu-large": Scale(
        name="cpu-large",
        description="a larger CPU run (tens of minutes to hours) that tightens every error bar",
        mc_draws=20_000_000,
        mc_chunk=1_000_000,
    ),
    "paper": Scale(
        name="paper",
        description="the papers' own scale: GPT-2 117M on hub data, meant for a GPU machine with internet",
        mc_draws=100_000_000,
        mc_chunk=4_000_000,
    ),
}


def get_scale(name: str) -> Scale:
    """Return the scale called ``name``; a clear ValueError lists the valid names otherwise."""
    try:
        return SCALES[name]
    except KeyError:
        valid = ", ".join(SCALES)
        raise ValueError(f"unknown scale {name!r} (from {ENV_VAR}); valid scales are: {valid}") from None


def current_scale() -> Scale:
    """The scale selected by ``LORAPRIV_SCALE`` (``cpu-small`` when unset or empty)."""
    return get_scale(os.environ.get(ENV_VAR, "").strip() or DEFAULT_SCALE)
