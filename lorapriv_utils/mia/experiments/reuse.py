"""What a run takes over instead of training again: a current record, the work of a record under another
learning-rate grid (:func:`earlier_work`), and the journal of a stopped run (:class:`SweepJournal`,
:func:`resumed_work`).

A record is reused only when its files are intact and its key matches that of its spec (``specs.cell_spec``;
``lorapriv_utils.store``); otherwise one line says which part, and which fields, changed.  When only the
learning-rate grid changed, the rates the old record swept are not trained again, nor its reference and target
when their rate wins again; the manifest's ``reused`` says what was taken over.  An unfinished cell keeps its sweep
in a journal: a rerun under the same key trains only the rates the journal lacks.
"""

from __future__ import annotations

import sys
import time
import zipfile
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ...catalogue import wall_seconds
from ...declared import UndeclaredError
from ...files import Lock
from ...provenance import git_commit
from ...store import changed_parts, key_of, read_record, seal, spec_differences, trained_key, write_record

DAMAGED = (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile)  # what reading a damaged record raises


def read_intact(path: Path, with_scores: bool = True) -> tuple[dict, dict[str, np.ndarray] | None]:
    """A record whose envelope and checksum verify, and (``with_scores``) its arrays, which must match the digest
    it holds (None for a kind without arrays); one of :data:`DAMAGED` says what is wrong otherwise."""
    return read_record(path, with_arrays=True) if with_scores else (read_record(path), None)


def load_result(path: Path, spec: dict, with_scores: bool = True, refresh=None) -> dict | None:
    """A finished record (a cell's, or an audit's with ``with_scores=False``), or None, with one line saying why,
    when it is missing, corrupt, partial or stale (its key is not that of ``spec``).  ``refresh(record)``: how
    to bring a record whose ``derived`` part alone is stale up to date from its stored scores."""
    if not path.is_file():
        return None
    try:
        record, _ = read_intact(path, with_scores)
    except UndeclaredError:  # a record the published store's declaration does not name as it is: never retrained
        raise
    except DAMAGED as err:
        tqdm.write(f"lorapriv: {path} is damaged or partial ({err}); recomputing it", file=sys.stderr)
        return None
    stored = record["manifest"].get("key", {})
    changed = changed_parts(stored, key_of(spec))
    if changed:
        fields = spec_differences(record["manifest"].get("spec", {}), spec) if "spec" in record["manifest"] else []
        detail = f": {', '.join(fields[:4])}" if fields else ""
        if changed == ["derived"] and refresh is not None:
            tqdm.write(
                f"lorapriv: {path}: only its metrics' settings changed{detail}; recomputing them from its scores",
                file=sys.stderr,
            )
            return refresh(record)
        tqdm.write(
            f"lorapriv: {path} is stale ({', '.join(changed)} changed{detail}); not reused as it stands",
            file=sys.stderr,
        )
        return None
    return record


TARGET_SCORES = {
    "members": ("members_target", "members_minkpp"),
    "nonmembers": ("nonmembers_target", "nonmembers_minkpp"),
}
GRID_FIELD = "method.lr_rule.grid"


def _sweep_rates(rows: list[dict]) -> dict[float, float]:
    """A sweep's table (a record's ``lr_selection.sweep``, a journal's ``rates``) as {rate: validation perplexity}."""
    return {float(row["lr"]): float(row["validation_perplexity"]) for row in rows}


def earlier_work(path: Path, spec: dict) -> dict | None:
    """What an intact cell record at ``path`` already trained, when it differs from ``spec`` only in its
    learning-rate grid (and its metrics' settings, which are recomputed anyway): the validation perplexity of
    each rate it swept, its reference model's scores and its target's scores, each tied to its rate.  None
    otherwise, and for a reference model of another method (``reference="full"``), whose sweep is not the
    cell's own.  The expensive unit is one trained model's scores: a widened grid trains only its new rates."""
    if not path.is_file():
        return None
    try:
        record, scores = read_intact(path)
        manifest, metrics = record["manifest"], record["metrics"]
        fields = spec_differences(manifest["spec"], spec)
        if GRID_FIELD not in fields or any(f != GRID_FIELD and not f.startswith("derived.") for f in fields):
            return None
        if manifest["spec"]["method"].get("reference") != "same":
            return None
        return {
            "rates": _sweep_rates(metrics["lr_selection"]["sweep"]),
            "reference": {
                "lr": float(manifest["reference"]["lr"]),
                "training": manifest["reference"]["training"],
                "members": scores["members_reference"],
                "nonmembers": scores["nonmembers_reference"],
            },
            "target": {
                "lr": float(manifest["train_config"]["lr"]),
                "training": {**metrics["training"], "seconds": manifest["training_seconds"]},
                "validation_perplexity": metrics["validation_perplexity"],
                **{
                    part: {"loss": scores[loss], "minkpp": scores[minkpp]}
                    for part, (loss, minkpp) in TARGET_SCORES.items()
                },
            },
            "provenance": {
                "from_key": manifest["key"],
                "from_commit": manifest.get("git_commit"),
                "wall_seconds": wall_seconds(record),  # its own, and that of the rates it took over in turn
            },
        }
    except (*DAMAGED, TypeError):
        return None


def reused_or_computed(path: Path, spec: dict, compute, with_scores: bool = True, refresh=None) -> dict:
    """The current record at ``path`` (:func:`load_result`, with its ``refresh``), or the one ``compute()`` writes
    there, under the record's lock: another run computing the same record is waited for, and its record reused."""
    with Lock(path):
        done = load_result(path, spec, with_scores, refresh)
        return done if done is not None else compute()


def journal_path(path: Path, what: str = "sweep") -> Path:
    """Where the unfinished work (``what``: a cell's sweep, a frontier point's target) of the record that will lie
    at ``path`` is journaled until the record is written: hidden beside it, under a name that no record pattern
    matches."""
    return Path(path).with_name(f".{Path(path).stem}.{what}")


class SweepJournal:
    """A cell's learning-rate sweep, written after each rate it trains, so that a run stopped in the middle
    (a session's end, a killed job) resumes at the next rate rather than at the cell's start: each rate trained
    with its validation perplexity.  The models are not kept: when a rate of a stopped run wins the sweep, the
    resumed run trains it again for the reference model (the same training, the same seed), one training where
    scoring every best-so-far as it appeared would cost a scoring pass each time.  It is a sealed record under
    the cell's spec (kind ``sweep-journal``); a rerun takes it over only when its key is the cell's
    (:func:`resumed_work`).  ``seconds``: the wall time of the work it already holds (earlier runs'), to which
    this run's time since ``start`` is added."""

    def __init__(self, path: Path, spec: dict, seconds: float = 0.0):
        self.path, self.spec, self.seconds, self.start = journal_path(path), spec, seconds, time.perf_counter()

    def save(self, rows: list[dict]) -> None:
        """Journal the sweep's ``rows`` so far (rate and validation perplexity)."""
        record = {
            "kind": "sweep-journal",
            "manifest": {"wall_seconds": self.seconds + time.perf_counter() - self.start, "git_commit": git_commit()},
            "rates": rows,
        }
        write_record(self.path, seal(record, self.spec))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def read_journal(journal: Path, kind: str, spec: dict, otherwise: str, with_arrays: bool = False):
    """The intact journal of ``kind`` at ``journal`` written under ``spec``'s key (with its arrays, as
    :func:`read_record` returns them, when ``with_arrays``), or None: none there, a damaged one or one of another
    key, each said in one line ending with ``otherwise`` (what the run does instead).  The key's ``derived`` part
    (the metrics computed from the scores when the record is written) does not count: a journal holds training
    work, which it does not change."""
    if not journal.is_file():
        return None
    try:
        read = read_record(journal, kind, with_arrays=with_arrays)
    except DAMAGED as err:
        tqdm.write(f"lorapriv: {journal}: its journal is damaged ({err}); {otherwise}", file=sys.stderr)
        return None
    record = read[0] if with_arrays else read
    if trained_key(record["manifest"].get("key") or {}) != trained_key(key_of(spec)):
        tqdm.write(f"lorapriv: {journal}: its journal is of another key; {otherwise}", file=sys.stderr)
        return None
    return read


def journal_provenance(record: dict, source: str) -> dict:
    """What a record built on a journal's work notes of it (its ``manifest.reused``): the journal's key, commit and
    wall time, and ``source``, which journal it was."""
    return {
        "from_key": record["manifest"]["key"],
        "from_commit": record["manifest"].get("git_commit"),
        "from": source,
        "wall_seconds": record["manifest"]["wall_seconds"],
    }


def resumed_work(path: Path, spec: dict, earlier: dict | None) -> dict | None:
    """What the journal of an unfinished run of the cell at ``path`` holds, in the form of :func:`earlier_work`
    (its rates; the reference model and target of ``earlier``, the record of another grid, when there is one),
    or None when there is no intact journal under the cell's key."""
    record = read_journal(journal_path(path), "sweep-journal", spec, "the sweep starts again")
    if record is None:
        return None
    tqdm.write(f"lorapriv: {path}: resuming its sweep after {len(record['rates'])} rates", file=sys.stderr)
    return {
        "rates": _sweep_rates(record["rates"]),
        "reference": earlier["reference"] if earlier else None,
        "target": earlier["target"] if earlier else None,
        "provenance": journal_provenance(record, "sweep journal"),
    }
