"""A cell's last stage: its record, one JSON file (metrics, manifest, checksum) with its per-text scores beside it
(``.scores.npz``, covered by the checksum), written atomically."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from ...provenance import refresh_stamp
from ...store import scores_digest, seal, write_record
from .grid import Cell, cell_seeds
from .prepare import PreparedData


def cell_metrics_entry(ws, cell: Cell, prepared: PreparedData, chosen: dict, target: dict, attacks: dict) -> dict:
    """A record's ``metrics``: the attacks', the target's validation perplexity, the counts, the learning-rate
    selection and the target's training statistics."""
    table = chosen["table"]
    return {
        **attacks,
        "validation_perplexity": target["validation_perplexity"],
        "texts": {
            "members": prepared.members.n_texts,
            "nonmembers": prepared.nonmembers.n_texts,
            "validation": prepared.validation.n_texts,
        },
        "windows": {"members": int(len(prepared.members.ids)), "nonmembers": int(len(prepared.nonmembers.ids))},
        "lr_selection": {
            **ws.lr_rule(cell.method),
            "chosen": chosen["lr"],
            "sweep": table,
            # a winner at either end of a grid of several rates may lie beyond it: the grid should be widened
            "at_grid_edge": len(table) > 1
            and chosen["lr"] in (min(r["lr"] for r in table), max(r["lr"] for r in table)),
        },
        "training": {k: v for k, v in target["training"].items() if k != "seconds"},  # wall time: the manifest's
    }


def cell_record(
    ws,
    cell: Cell,
    spec: dict,
    start: float,
    prepared: PreparedData,
    sweeps: tuple[dict, dict],
    cfg,
    target: dict,
    scores: dict,
    attacks: dict,
    reused: dict | None = None,
) -> dict:
    """The sealed record of ``cell``: ``sweeps`` are its own sweep and its reference model's (the same one unless
    the reference is full fine-tuning), ``target`` what :func:`scoring.trained_target` returns, ``scores`` the
    per-text scores, ``attacks`` their metrics; ``reused``, what was taken over from an earlier record or journal."""
    chosen, reference = sweeps
    manifest = {
        **ws.provenance(spec, start),
        "cell": asdict(cell),
        "train_config": asdict(cfg),
        "seeds": cell_seeds(cell),
        "reference": {
            "kind": "target's method and hyperparameters" if ws.reference == "same" else "full fine-tuning",
            "lr": reference["lr"],
            "training": reference["reference_training"],
        },
        "split_hashes": prepared.split_hashes,
        "dedup": prepared.dedup,
        "data_provenance": prepared.provenance,
        "accelerate": None
        if ws.accelerator is None
        else {"num_processes": ws.accelerator.num_processes, "mixed_precision": str(ws.accelerator.mixed_precision)},
        "autocast": str(ws.autocast),
        "training_seconds": target["training"]["seconds"],
    }
    if reused is not None:
        manifest["reused"] = reused
    metrics = cell_metrics_entry(ws, cell, prepared, chosen, target, attacks)
    return seal({"kind": "cell", "metrics": metrics, "manifest": manifest, "scores_sha256": scores_digest(scores)})


def write_refreshed(ws, path: Path, record: dict, spec: dict, metrics: dict, scores=None) -> dict:
    """``record`` with its derived ``metrics`` recomputed: merged in, the refresh stamped (the key it came from,
    this commit) with today's configuration, re-sealed under ``spec`` and written (with its ``scores``)."""
    record["metrics"].update(metrics)
    record["manifest"]["metrics_refreshed"] = refresh_stamp(record)
    record["manifest"]["config"] = json.loads(json.dumps(ws.config))
    return write_record(path, seal(record, spec), scores)
