"""Recompute one committed grid cell from nothing and compare every number with the record (``python -m
lorapriv_utils verify PATH``; ``make verify`` runs a declared subset, ``tools/verify.py``).

The cell is trained again, at the rate its record chose (``--lr``, so that its sweep is not repeated: the sweep only
chose the rate), with the record's own other options, one thread, in a temporary folder; then each number of its
metrics (attack AUCs and TPRs with their intervals, perplexity, final loss) is compared with the committed one.  On
the platform a record was made on the numbers are expected to agree to rounding; across CPUs with other vector
kernels (AVX2 against AVX-512) float32 results differ in their last bits, which training can carry much further, so
the report names both CPUs' kernels.  The tolerance, :data:`TOLERANCE`, is far below any threshold a verdict reads
(the smallest is 0.02 in AUC), and it is not widened for another CPU: a difference beyond it is reported as one.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...store import read_record
from .grid import Cell

# a number passes when |committed - recomputed| <= ABS or <= REL x |committed|
TOLERANCE = {"abs": 1e-3, "rel": 1e-3}
SKIPPED = ("lr_selection",)  # what differs by design: the recomputation fixes the rate its sweep chose
TIMES = ("seconds", "wall_seconds")  # measured durations, never compared


@dataclass(frozen=True)
class Difference:
    name: str
    committed: float
    recomputed: float

    @property
    def error(self) -> float:
        return abs(self.committed - self.recomputed)

    @property
    def passes(self) -> bool:
        """Within the tolerance; a number that is not finite passes only where both are the same infinity (a NaN,
        which also stands for a number one record lacks, never passes)."""
        if not (math.isfinite(self.committed) and math.isfinite(self.recomputed)):
            return self.committed == self.recomputed
        return self.error <= max(TOLERANCE["abs"], TOLERANCE["rel"] * abs(self.committed))


def numbers(metrics: dict, prefix: str = "") -> dict[str, float]:
    """Every number of a record's metrics by its dotted name (booleans, notes and measured times left out)."""
    out: dict[str, float] = {}
    for name, value in metrics.items():
        if not prefix and name in SKIPPED:
            continue
        if isinstance(value, dict):
            out.update(numbers(value, f"{prefix}{name}."))
        elif isinstance(value, int | float) and not isinstance(value, bool) and name not in TIMES:
            out[f"{prefix}{name}"] = float(value)
    return out


def compare(committed: dict, recomputed: dict) -> list[Difference]:
    """Each number of either record's metrics beside the other's: a number that only one of them holds is NaN in the
    other, and fails (:attr:`Difference.passes`)."""
    old, new = numbers(committed), numbers(recomputed)
    if not old:
        raise ValueError("the committed record holds no metrics to compare")
    names = list(old) + [name for name in new if name not in old]
    return [Difference(name, old.get(name, math.nan), new.get(name, math.nan)) for name in names]


def recompute_cell(path, data_dir=None, out: Path | None = None, progress: bool = False) -> dict:
    """Train the cell of the committed record at ``path`` again and compare (see the module docstring): a report
    with the record's name, its scale, how many numbers were compared, the largest difference, the numbers that
    fall outside the tolerance and the wall time of the recomputation."""
    from ...scale import get_scale
    from .grid import result_path
    from .runner import run
    from .workspace import Overrides, Workspace, set_threads

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no record at {path}: give the JSON file of a committed grid cell")
    record = read_record(path, "cell", with_arrays=True)[0]  # a declared store refuses an altered or foreign record
    manifest = record["manifest"]
    cell = Cell(**manifest["cell"])
    if "+" in manifest["config"]["scale"]:  # a user's own model or recipe (run --model / --peft-config)
        raise ValueError(
            f"{path}: a record of your own model or recipe ({manifest['config']['scale']}); verify recomputes the "
            "book's records: rerun its run command into another --out and compare"
        )
    scale = get_scale(manifest["config"]["scale"])
    own = {k: v for k, v in (manifest["config"].get("overrides") or {}).items() if v is not None}
    overrides = Overrides(
        epochs=own.get("epochs"), optimizer=own.get("optimizer"), lr=record["metrics"]["lr_selection"]["chosen"]
    )
    set_threads(manifest.get("torch_threads") or 1)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lorapriv-verify-") as scratch:
        folder = Path(out) if out is not None else Path(scratch)
        work = Workspace(
            scale,
            folder,
            overrides,
            data_dir=data_dir,
            progress=progress,
            reference=manifest["config"].get("reference", "same"),
        )
        run(work, [cell])
        again = read_record(result_path(folder, scale, cell), "cell")
    seconds = time.perf_counter() - start
    differences = compare(record["metrics"], again["metrics"])
    worst = max(differences, key=lambda d: d.error if math.isfinite(d.error) else math.inf)
    return {
        "record": path.name if path.parent == Path(".") else "/".join(path.parts[-3:]),
        "scale": scale.name,
        "cell": cell.name,
        "lr": overrides.lr,
        "numbers": len(differences),
        "identical": sum(d.error == 0 for d in differences),
        "largest": {"name": worst.name, "committed": worst.committed, "recomputed": worst.recomputed},
        "outside": [d.__dict__ for d in differences if not d.passes],
        "passes": all(d.passes for d in differences),
        "seconds": seconds,
        "committed_seconds": manifest.get("wall_seconds"),
        # the CPU's vector kernels (torch's capability): records made with other kernels differ in their last bits,
        # which training can carry further; None where a record predates this field
        "made_on": manifest.get("cpu_capability"),
        "recomputed_on": again["manifest"].get("cpu_capability"),
    }


def describe(report: dict) -> str:
    """One line of a cell's verification."""
    largest = report["largest"]
    verdict = "passes" if report["passes"] else f"FAILS ({len(report['outside'])} numbers outside the tolerance)"
    return (
        f"{report['record']}: {verdict}; {report['numbers']} numbers compared, {report['identical']} identical, "
        f"largest difference {abs(largest['committed'] - largest['recomputed']):.2g} ({largest['name']}); "
        f"recomputed in {report['seconds']:.0f} s"
    )
