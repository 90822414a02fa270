"""A cell's scoring stage: the target trained on the members, and every member and non-member text scored by the
target (loss and Min-K%++) and by the reference model (loss); validation perplexity."""

from __future__ import annotations

import numpy as np

from ..engine import data as data_mod
from ..engine.training import row_sums, text_losses, text_scores
from .grid import Cell
from .prepare import PreparedData

PARTS = ("members", "nonmembers")


def perplexity(model, windows: data_mod.TextWindows, device) -> float:
    """Validation perplexity: exp of the mean token loss over every validation token."""
    totals, counts = row_sums(model, windows.ids, device=device)
    return float(np.exp(totals.sum() / counts.sum()))


def reference_scores(ws, model, prepared: PreparedData, label: str) -> dict[str, np.ndarray]:
    """The reference model's loss on each member and non-member text."""
    return {
        part: text_losses(
            model,
            getattr(prepared, part),
            device=ws.device,
            progress=ws.progress,
            desc=f"scoring {label} reference, {part}",
        )
        for part in PARTS
    }


def trained_target(ws, cell: Cell, prepared: PreparedData, cfg) -> dict:
    """The target of ``cell`` trained on the members with ``cfg``: its training statistics, its scores of each part
    (loss and Min-K%++) and its validation perplexity, in the form ``reuse.earlier_work`` keeps a target."""
    model, stats = ws.fine_tune(cell.method, prepared.members, cfg, cell.rank, desc=cell.name)
    scored = {
        part: text_scores(
            model, getattr(prepared, part), device=ws.device, progress=ws.progress, desc=f"scoring {cell.name} {part}"
        )
        for part in PARTS
    }
    return {
        "lr": cfg.lr,
        "training": stats,
        "validation_perplexity": perplexity(model, prepared.validation, ws.device),
        **scored,
    }


def cell_scores(target: dict, reference: dict) -> dict[str, np.ndarray]:
    """The per-text scores a cell's record stores beside it."""
    return {
        "members_target": target["members"]["loss"],
        "nonmembers_target": target["nonmembers"]["loss"],
        "members_reference": reference["members"],
        "nonmembers_reference": reference["nonmembers"],
        "members_minkpp": target["members"]["minkpp"],
        "nonmembers_minkpp": target["nonmembers"]["minkpp"],
    }
