"""The catalogue of committed results: one entry per group of records under ``results/published``.

Each entry names where its records lie, their kind (which spec, ``lorapriv_utils.mia.records.specs``, says what
they depend on), the scale they were made at, the Make target and command that regenerate them, and the
chapter that reads them.  The status check (``python -m lorapriv_utils status``) and its test walk this
list; a new committed result is one entry here.  Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .store import read_record

PUBLISHED = Path(__file__).resolve().parent.parent / "results" / "published"
ALLOWED_STALE = PUBLISHED / "allowed-stale.txt"  # "relative/path: reason" lines; read by the status test


DATA = "DATA_DIR=../shared/data"  # the real Enron and PubMed samples' folder (never copied into the repository)


@dataclass(frozen=True)
class Entry:
    """One group of committed records."""

    name: str
    pattern: str  # a glob under results/published, of the records' JSON files
    kind: str  # cell, frontier, lira, audit, dp-compare, or a measurement's kind (specs.MEASUREMENTS)
    scale: str
    make: str  # the Make target that regenerates the group
    chapter: str  # the chapter (key) that reads it
    needs: str = ""  # what its Make target needs beyond the repository (a data folder)

    def paths(self, root: Path = PUBLISHED) -> list[Path]:
        return sorted(p for p in Path(root).glob(self.pattern) if p.is_file())


CATALOGUE = (
    Entry("grid-ptb", "cpu-small/ptb/*.json", "cell", "cpu-small", "results-a6", "a6_membership"),
    Entry("grid-email", "cpu-small/synthetic-email/*.json", "cell", "cpu-small", "results-a6", "a6_membership"),
    Entry("frontier", "cpu-small/frontier/*/*.json", "frontier", "cpu-small", "results-a6", "a6_membership"),
    Entry("lira", "cpu-small/lira/*/*.json", "lira", "cpu-small", "results-a6", "a6_membership"),
    Entry("audit", "cpu-small/audit/*/*.json", "audit", "cpu-small", "results-a5", "a5_row_scaling"),
    Entry(
        "projection-adamw",
        "projection/adamw/cpu-small/*/*.json",
        "cell",
        "cpu-small",
        "results-a6-projection",
        "a6_membership",
    ),
    Entry(
        "projection-sgd",
        "projection/sgd/cpu-small/*/*.json",
        "cell",
        "cpu-small",
        "results-a6-projection",
        "a6_membership",
    ),
    Entry("grid-large", "cpu-large/*/*.json", "cell", "cpu-large", "results-a6-large", "a6_membership", DATA),
    Entry(
        "grid-pretrained",
        "cpu-pretrained/*/*.json",
        "cell",
        "cpu-pretrained",
        "results-a6-pretrained",
        "a6_membership",
        DATA,
    ),
    Entry(
        "base-pretrained",
        "cpu-pretrained/frontier/*/base-s*.json",
        "frontier",
        "cpu-pretrained",
        "results-a6-pretrained",
        "a6_membership",
        DATA,
    ),
    Entry(
        "frontier-pretrained",
        "cpu-pretrained/frontier/*/*-lr*.json",
        "frontier",
        "cpu-pretrained",
        "results-a6-pretrained",
        "a6_membership",
        DATA,
    ),
    Entry(
        "projection-adamw-pretrained",
        "projection/adamw/cpu-pretrained/*/*.json",
        "cell",
        "cpu-pretrained",
        "results-a6-projection-pretrained",
        "a6_membership",
        DATA,
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


# What each Make target that regenerates committed results recomputes (``make help`` prints these lines).
TARGETS = {
    "results-a6": "§6's grid (three seeds), the frontier and offline LiRA's references at cpu-small",
    "results-a6-projection": "§6's projection arms: LoRA-FA with a random A against a fixed A, AdamW and SGD",
    "results-a6-large": "§6's grid at cpu-large on Penn Treebank, Enron and PubMed",
    "results-a6-pretrained": "Table 1's grid on the pretrained SmolLM2-135M, its base model's scores and its frontier",
    "results-a6-projection-pretrained": "§6's projection arm on the pretrained SmolLM2-135M: random A against fixed A",
    "results-a5": "§5.1's multiplier on real per-text gradients, the canary audits and row scaling's cost",
    "results-b1": "paper B's gradient alignment at the start of fine-tuning",
    "results-b2": "the DP game against LoRA-FA on a trained GPT-2",
    "results-b3": "DP-SGD on four weight sets and compressed DP-SGD, four noise multipliers, two seeds",
}


def help_lines() -> list[str]:
    """``make help``'s line for each target of :data:`TARGETS`: what it recomputes, what it needs, its records."""
    lines = []
    for target, what in TARGETS.items():
        entries = [e for e in CATALOGUE if e.make == target]
        needs = "".join(dict.fromkeys(f"; needs {e.needs}" for e in entries if e.needs))
        lines.append(f"make {target:<22} {what} ({', '.join(e.name for e in entries)}{needs})")
    return lines + ["  (each record's measured wall time: make status)"]


def entry(name: str) -> Entry:
    for item in CATALOGUE:
        if item.name == name:
            return item
    raise KeyError(f"no catalogue entry {name!r}; entries: {', '.join(e.name for e in CATALOGUE)}")


def regenerate(*names: str) -> str:
    """How to regenerate the records of catalogue entries ``names``: their Make targets, with what each needs (the
    one source of the chapters' regeneration lines; the measured wall times are the records' own)."""
    targets = dict.fromkeys(f"make {e.make}" + (f" {e.needs}" if e.needs else "") for e in map(entry, names))
    return " and ".join(targets) + " (the records' measured wall times: make status)"


def regenerate_kind(scale: str, kind: str) -> str:
    """:func:`regenerate` for the catalogue entries of ``kind`` in ``scale``'s own folder (``<scale>/...`` under
    results/published: its grid, its frontier), so that a missing record's error names its own scale's command."""
    names = [e.name for e in CATALOGUE if e.scale == scale and e.kind == kind and e.pattern.startswith(f"{scale}/")]
    if not names:
        return (
            f"the engine's command line (python -m lorapriv_utils; no Make target computes {kind} records at {scale})"
        )
    return regenerate(*names)


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


# ---------------------------------------------------------------- measured wall times (the records' own)


def wall_seconds(record: dict) -> float | None:
    """A record's measured wall time, with that of the earlier record whose trained rates it took over (a widened
    learning-rate grid, ``reuse.earlier_work``); None where the record has none."""
    manifest = record.get("manifest", {})
    wall = manifest.get("wall_seconds", record.get("wall_seconds"))
    if not isinstance(wall, int | float):
        return None
    earlier = manifest.get("reused", {}).get("wall_seconds")
    return float(wall) + (float(earlier) if isinstance(earlier, int | float) else 0.0)


def format_duration(seconds: float) -> str:
    """A measured duration in words: seconds, minutes or hours."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def measured_seconds(*names: str, root: Path = PUBLISHED) -> float:
    """The measured wall time of the records of catalogue entries ``names`` (or of every entry whose Make target
    a name is), summed over records: what a chapter quotes as the cost of its results.  Reads only the records'
    own wall times (no key checks: seconds)."""
    known = {e.name for e in CATALOGUE} | {e.make for e in CATALOGUE}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f"no catalogue entry or Make target {', '.join(unknown)}")
    total = 0.0
    for entry in CATALOGUE:
        if entry.name in names or entry.make in names:
            total += sum(wall_seconds(read_record(path, declared=False)) or 0.0 for path in entry.paths(root))
    return total


if __name__ == "__main__":  # ``make help``: torch-free, any Python 3.11
    print("\n".join(help_lines()))
