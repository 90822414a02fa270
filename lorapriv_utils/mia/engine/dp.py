"""DP-SGD with a text as the privacy unit, through Opacus, and the epsilon it certifies.

A text longer than the context spans several windows (rows), so clipping per row would bound a
window's influence, not a text's, and the reported epsilon would understate what one text can
leak.  Here Opacus's ``GradSampleModule`` computes per-window gradients of the summed text losses,
they are added up per text, and Opacus's ``DPOptimizer`` clips each *text's* gradient to C, adds
N(0, (sigma C)^2) noise drawn by a generator on the training device and divides by the expected
number of texts per batch.  Batches are Poisson samples of texts (Opacus's
``UniformWithReplacementSampler``, rate q = batch size / texts); an empty batch still takes a
noise-only step, as the accounting assumes.  Epsilon comes from Opacus's PRV accountant (its
default) with its RDP accountant beside it, over the same (sigma, q, steps) history.
"""

from __future__ import annotations

import math

import torch

from ...scale import DPConfig
from .data import TextWindows
from .per_text import noise_generator, per_text_train
from .training import EpochHook, TrainConfig

__all__ = ["PRV_LIMIT", "dp_train", "epsilons", "noise_generator"]


PRV_LIMIT = 500.0  # above this RDP epsilon, Opacus's PRV accountant takes minutes (or hangs): RDP alone


def epsilons(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> dict:
    """Epsilon at ``delta`` from Opacus's PRV accountant (its default) and its RDP accountant.

    Where RDP already gives epsilon > ``PRV_LIMIT`` (a vacuous guarantee), PRV is not run and is None.
    """
    from opacus.accountants import PRVAccountant, RDPAccountant

    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if noise_multiplier == 0:
        return {"prv": math.inf, "rdp": math.inf}  # no noise, no privacy
    rdp = RDPAccountant()
    rdp.history = [(noise_multiplier, sample_rate, steps)]
    out = {"rdp": float(rdp.get_epsilon(delta)), "prv": None}
    if out["rdp"] <= PRV_LIMIT:
        prv = PRVAccountant()
        prv.history = [(noise_multiplier, sample_rate, steps)]
        out["prv"] = float(prv.get_epsilon(delta))
    return out


def dp_train(
    model: torch.nn.Module,
    params: list[torch.nn.Parameter],
    windows: TextWindows,
    cfg: TrainConfig,
    dp: DPConfig,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "dp-sgd",
    epoch_hook: EpochHook | None = None,
) -> tuple[torch.nn.Module, dict]:
    """Train ``params`` of ``model`` with DP-SGD over texts (``per_text.per_text_train``); returns the unwrapped
    model and stats with epsilon."""
    model, stats = per_text_train(model, params, windows, cfg, dp, None, None, device, progress, desc, epoch_hook)
    eps = epsilons(dp.noise_multiplier, stats["sample_rate"], stats["steps"], dp.delta)
    stats.update(
        privacy_unit="text",
        # None: not private (no noise); PRV also None where RDP's epsilon is vacuous (see PRV_LIMIT)
        epsilon=eps["prv"] if eps["prv"] is not None and math.isfinite(eps["prv"]) else None,
        epsilon_rdp=eps["rdp"] if math.isfinite(eps["rdp"]) else None,
        accountant="prv (opacus default); rdp beside it",
        delta=dp.delta,
        noise_multiplier=dp.noise_multiplier,
        max_grad_norm=dp.max_grad_norm,
    )
    return model, stats
