"""The catalogue of committed results: one entry per group of records under ``results/published``.

Each entry names where its records lie, their kind (which spec, ``lorapriv_utils.mia.records.specs``, says what
they depend on), the scale they were made at, the Make target and command that regenerate them, and the
chapter that reads them.  The status check (``python -m lorapriv_utils status``) and its test walk this
list; a new committed result is one entry here.  Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PUBLISHED = Path(__file__).resolve().parent.parent / "results" / "published"
ALLOWED_STALE = PUBLISHED / "allowed-stale.txt"  # "relative/path: reason" lines; read by the status test


@dataclass(frozen=True)
class Entry:
    """One group of committed records."""

    name: str
    pattern: str  # a glob under results/published, of the records' JSON files
    kind: str  # cell, frontier, lira, audit, dp-compare, or a measurement's kind (specs.MEASUREMENTS)
    scale: str
    make: str  # the Make target that regenerates the group
    chapter: str  # the chapter (key) that reads it
    scores: bool = False  # each record has a .scores.npz beside it, covered by its checksum

    def paths(self, root: Path = PUBLISHED) -> list[Path]:
        return sorted(p for p in Path(root).glob(self.pattern) if p.is_file())


CATALOGUE = (
    Entry("grid-ptb", "cpu-small/ptb/*.json", "cell", "cpu-small", "results-a6", "a6_membership", True),
    Entry("grid-email", "cpu-small/synthetic-email/*.json", "cell", "cpu-small", "results-a6", "a6_membership", True),
    Entry("frontier", "cpu-small/frontier/*/*.json", "frontier", "cpu-small", "results-a6", "a6_membership", True),
    Entry("lira", "cpu-small/lira/*/*.json", "lira", "cpu-small", "results-a6", "a6_membership", True),
    Entry("audit", "cpu-small/audit/*/*.json", "audit", "cpu-small", "results-a5", "a5_row_scaling"),
    Entry(
        "projection-adamw",
        "projection/adamw/cpu-small/*/*.json",
        "cell",
        "cpu-small",
        "results-a6-projection",
        "a6_membership",
        True,
    ),
    Entry(
        "projection-sgd",
        "projection/sgd/cpu-small/*/*.json",
        "cell",
        "cpu-small",
        "results-a6-projection",
        "a6_membership",
        True,
    ),
    Entry("grid-large", "cpu-large/*/*.json", "cell", "cpu-large", "results-a6-large", "a6_membership", True),
    Entry(
        "grid-pretrained",
        "cpu-pretrained/*/*.json",
        "cell",
        "cpu-pretrained",
        "results-a6-pretrained",
        "a6_membership",
        True,
    ),
    Entry(
        "base-pretrained",
        "cpu-pretrained/frontier/*/base-s*.json",
        "frontier",
        "cpu-pretrained",
        "results-a6-pretrained",
        "a6_membership",
        True,
    ),
    Entry("dp-compare", "dp_compare/cpu-small/*/*.json", "dp-compare", "cpu-small", "results-b3", "b3_noisy_variants"),
    Entry(
        "multiplier", "multiplier/cpu-small-pretrained.json", "multiplier", "cpu-small", "results-a5", "a5_row_scaling"
    ),
    Entry(
        "alignment", "alignment/cpu-small-pretrained.json", "alignment", "cpu-small", "results-b1", "b1_vector_queries"
    ),
    Entry("whitebox", "whitebox/cpu-small.json", "whitebox", "cpu-small", "results-b2", "b2_matrix_queries"),
    Entry("cost", "bench/rowscale_cost.json", "rowscale-cost", "cpu-small", "results-a5", "a5_row_scaling"),
    Entry(
        "cost-large",
        "bench/rowscale_cost_cpu-large.json",
        "rowscale-cost",
        "cpu-large",
        "results-a5",
        "a5_row_scaling",
    ),
)


def entry(name: str) -> Entry:
    for item in CATALOGUE:
        if item.name == name:
            return item
    raise KeyError(f"no catalogue entry {name!r}; entries: {', '.join(e.name for e in CATALOGUE)}")


def allowed_stale(path: Path = ALLOWED_STALE) -> dict[str, str]:
    """The records allowed not to be current, with the reason given for each (path relative to published/)."""
    if not Path(path).is_file():
        return {}
    allowed = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, reason = line.partition(":")
        if not sep or not reason.strip():
            raise ValueError(f"{path}, line {number}: write 'relative/path.json: the reason it may be stale'")
        allowed[name.strip()] = reason.strip()
    return allowed
