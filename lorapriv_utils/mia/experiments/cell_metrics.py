"""A cell's metrics stage: each attack's AUC and TPR at fixed FPRs, with bootstrap intervals over texts, from the
per-text scores.  What a record derives from its scores (``specs.derived_spec``): recomputed without training when
only that changes."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from ..attacks import metrics as mia_metrics
from .grid import Cell, cell_seeds

ALPHAS = (0.01, 0.001, 0.0001)


def rate_metrics(member_signal: np.ndarray, nonmember_signal: np.ndarray, alpha: float, rng, resamples: int) -> dict:
    """TPR at FPR alpha with its interval, or a statement that the non-members cannot resolve alpha."""
    rate = mia_metrics.tpr_at_fpr(member_signal, nonmember_signal, alpha)
    if rate.at_zero_fpr:
        return {"resolvable": False, "note": f"not resolvable with {len(nonmember_signal)} non-members"}
    ci = mia_metrics.bootstrap(
        lambda m, n: mia_metrics.tpr_at_fpr(m, n, alpha).tpr, member_signal, nonmember_signal, rng, resamples
    )
    return {"resolvable": True, **asdict(ci), "achieved_fpr": rate.achieved_fpr}


def attack_metrics(
    member_signal: np.ndarray, nonmember_signal: np.ndarray, rng: np.random.Generator, resamples: int
) -> dict:
    """One attack's AUC and its TPR at each of :data:`ALPHAS`, each with its interval."""
    out = {"auc": asdict(mia_metrics.bootstrap(mia_metrics.roc_auc, member_signal, nonmember_signal, rng, resamples))}
    for alpha in ALPHAS:
        out[f"tpr_at_{alpha:g}"] = rate_metrics(member_signal, nonmember_signal, alpha, rng, resamples)
    return out


def cell_attacks(cell: Cell, scores: dict[str, np.ndarray], texts: dict[str, list[str]], resamples: int) -> dict:
    """The four attacks' metrics of a cell, from its per-text scores (and its texts, for zlib), in one bootstrap
    stream of the cell's seed."""
    rng = np.random.default_rng(cell_seeds(cell)["bootstrap"])
    return {
        f"{name}_attack": attack_metrics(
            attack.signals(scores, texts, "members"), attack.signals(scores, texts, "nonmembers"), rng, resamples
        )
        for name, attack in mia_metrics.ATTACKS.items()
    }
