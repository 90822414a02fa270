"""A grid cell, (dataset, method, rank, seed) at a named scale, as a job: its spec in, its record out, through stages
that run in one direction and never call back into the one above.

1. data (:mod:`.prepare`): the corpus is de-duplicated and split, each text tokenized into context windows;
2. sweep (:mod:`.sweep`): the method's learning rate is chosen on the auxiliary part, by the lowest validation
   perplexity over the scale's grid (``--lr`` fixes it instead); the winner is eq. 24's reference model, the
   target's own method and hyperparameters (``reference="full"``: full fine-tuning's sweep winner instead);
3. target and scores (:mod:`.scoring`): the target is trained on the members, and every member and non-member text
   is scored by both models;
4. metrics (:mod:`.cell_metrics`): each attack's AUC and TPRs with their intervals;
5. record (:mod:`.cell_record`): the sealed record and its per-text scores, written atomically.

What the cells of one run share, the base model and each corpus's split, is cached in the :class:`.Workspace`.
Before the stages run, :func:`current_or_run` reuses a current record, or takes over what a record under another
learning-rate grid or a stopped run's journal already trained (:mod:`.reuse`).  ``shard=(i, n)`` (``grid.shard``)
runs every n-th cell starting at i.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tqdm.auto import tqdm

from ...files import Lock
from ...store import read_scores, scores_path, write_record
from . import cell_metrics, cell_record, prepare, reuse, scoring
from .grid import Cell, result_path
from .sweep import sweep
from .workspace import Workspace

__all__ = ["current_or_run", "refresh_metrics", "run", "run_cell"]


def run_cell(ws: Workspace, cell: Cell, spec: dict | None = None, earlier: dict | None = None) -> dict:
    """Train and score one cell and write its record; ``earlier`` (``reuse.earlier_work``, ``reuse.resumed_work``)
    supplies what a record of the same cell under another learning-rate grid, or a stopped run, already trained: its
    rates, and its reference and target when the rule picks their rate again."""
    start = time.perf_counter()
    prepared = ws.dataset(cell.dataset, cell.seed)
    spec = spec or ws.spec(cell)
    path = result_path(ws.out, ws.scale, cell)
    journal = None
    if ws.accelerator is None:  # under several processes, a stopped run starts the cell again
        journal = reuse.SweepJournal(path, spec, (earlier["provenance"]["wall_seconds"] or 0.0) if earlier else 0.0)
    chosen = sweep(ws, cell.dataset, cell.method, cell.rank, cell.seed, earlier, journal)
    reference = chosen if ws.reference == "same" else sweep(ws, cell.dataset, "full", None, cell.seed)
    cfg = ws.train_config(cell.method, cell.seed, chosen["lr"])
    kept = earlier["target"] if earlier and earlier["target"] and earlier["target"]["lr"] == chosen["lr"] else None
    target = kept or scoring.trained_target(ws, cell, prepared, cfg)
    scores = scoring.cell_scores(target, reference)
    attacks = cell_metrics.cell_attacks(cell, scores, prepared.texts, ws.engine.bootstrap_resamples)
    reused = None
    if earlier is not None:
        reused = {
            **earlier["provenance"],
            "rates": chosen["reused"]["rates"],
            "reference": chosen["reused"]["reference"],
            "target": kept is not None,
        }
    record = cell_record.cell_record(
        ws, cell, spec, start, prepared, (chosen, reference), cfg, target, scores, attacks, reused
    )
    if ws.accelerator is None or ws.accelerator.is_main_process:
        write_record(path, record, scores)
        if journal is not None:
            journal.remove()
    if ws.accelerator is not None:
        ws.accelerator.wait_for_everyone()
    return record


def refresh_metrics(ws: Workspace, cell: Cell, path: Path, record: dict, spec: dict) -> dict:
    """A record whose derived part alone is stale, its attacks recomputed from its stored scores."""
    texts = prepare.dataset_texts(cell.dataset, cell.seed, ws.engine, ws.data_dir, ws.hub)
    scores = read_scores(scores_path(path))
    attacks = cell_metrics.cell_attacks(cell, scores, texts, ws.engine.bootstrap_resamples)
    return cell_record.write_refreshed(ws, path, record, spec, attacks, scores)


def current_or_run(ws: Workspace, cell: Cell) -> dict:
    """The current record of ``cell`` (its metrics refreshed when only they are stale), or the one
    :func:`run_cell` writes, taking over what an earlier record or a journal already trained."""
    spec, path = ws.spec(cell), result_path(ws.out, ws.scale, cell)
    done = reuse.load_result(path, spec, refresh=lambda record: refresh_metrics(ws, cell, path, record, spec))
    if done is not None:
        return done
    earlier = reuse.earlier_work(path, spec)
    if earlier is not None and ws.progress:
        tqdm.write(
            f"lorapriv: {path}: only its learning-rate grid changed; training only the rates it lacks", file=sys.stderr
        )
    return run_cell(ws, cell, spec, earlier=reuse.resumed_work(path, spec, earlier) or earlier)


def run(ws: Workspace, cells: list[Cell]) -> list[dict]:
    """Every cell's current record, in the order of ``cells``: a cell another run is computing (its lock held) is
    taken up at the end, once that run has written it."""
    if ws.accelerator is not None:  # data-parallel: every process runs every cell, in lockstep
        return [current_or_run(ws, cell) for cell in cells]
    results: dict[Cell, dict] = {}
    deferred = []
    for cell in tqdm(cells, desc=f"grid ({ws.scale.name})", disable=not ws.progress):
        lock = Lock(result_path(ws.out, ws.scale, cell))
        if not lock.acquire(blocking=False):  # another run is computing it: come back at the end
            deferred.append(cell)
            continue
        try:
            results[cell] = current_or_run(ws, cell)
        finally:
            lock.release()
    for cell in deferred:
        if ws.progress:
            tqdm.write(f"lorapriv: waiting for another run to finish {cell.name}", file=sys.stderr)
        with Lock(result_path(ws.out, ws.scale, cell)):
            results[cell] = current_or_run(ws, cell)
    return [results[cell] for cell in cells]
