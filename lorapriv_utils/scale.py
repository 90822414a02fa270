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
        noise_draws: draws of the full noise matrix N = G (A^T A - I) (section 3).
        element_draws: exact draws of one noise element (sections 3 and 4).
        m_grid: input dimensions m swept in section 4.
        r_grid: ranks r swept in sections 3 and 4.
        dyn_steps: training lengths T for the dynamics of section 2.
        dyn_lrs: number of learning rates in the section 2 sweep.
        seed: the root seed from which every random stream is derived.
    """

    name: str
    description: str
    mc_draws: int
    mc_chunk: int
    noise_draws: int = 20_000
    element_draws: int = 1_000_000
    m_grid: tuple[int, ...] = (16, 64, 256, 1024, 4096, 16384)
    r_grid: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    dyn_steps: tuple[int, ...] = (25, 100, 400)
    dyn_lrs: int = 9
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
        noise_draws=200_000,
        element_draws=20_000_000,
        m_grid=(16, 64, 256, 1024, 4096, 16384, 65536),
        r_grid=(1, 2, 4, 8, 16, 32, 64, 128),
        dyn_steps=(25, 100, 400, 1600),
        dyn_lrs=17,
    ),
    "paper": Scale(
        name="paper",
        description="the papers' own scale: GPT-2 117M on hub data, meant for a GPU machine with internet",
        mc_draws=100_000_000,
        mc_chunk=4_000_000,
        noise_draws=1_000_000,
        element_draws=100_000_000,
        m_grid=(16, 64, 256, 1024, 4096, 16384, 65536, 262144),
        r_grid=(1, 2, 4, 8, 16, 32, 64, 128, 256),
        dyn_steps=(25, 100, 400, 1600, 6400),
        dyn_lrs=25,
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
