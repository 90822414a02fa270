"""LoRA with row scaling (paper A, section 5, eq. 22), as a training method.

A is frozen (the random projection of section 5); only B trains.  Before every step, each
text's gradient with respect to B, an n x r matrix whose row l is g_l A^T (g_l the matching row of
the text's gradient with respect to W), has every row rescaled to norm (1 - Delta) sqrt(r) c.
The batch gradient is the mean of the rescaled per-text gradients, and the optimiser steps with
it.  Section 5 argues that by the Johnson-Lindenstrauss lemma every row of the W-gradient then
has norm between (1 - Delta)/(1 + Delta) sqrt(r) c and sqrt(r) c with high probability, so the
step resembles DP-SGD's clipped step (its noise being the projection's own, eq. 11).  No noise is
added and nothing is certified: this is the method whose privacy the book measures.
"""

from __future__ import annotations

import math

import torch

from ...scale import RowScaleConfig
from .data import TextWindows
from .per_text import per_text_train
from .training import EpochHook, TrainConfig


def row_target(config: RowScaleConfig, rank: int) -> float:
    """Eq. 22's row norm (1 - Delta) sqrt(r) c."""
    return (1 - config.delta) * math.sqrt(rank) * config.c


def scale_rows(grad: torch.Tensor, target: float) -> torch.Tensor:
    """Every row (last axis) of every per-text gradient rescaled to norm ``target`` (zero rows stay zero)."""
    norms = grad.norm(dim=-1, keepdim=True)
    return torch.where(norms > 0, grad * (target / norms.clamp_min(torch.finfo(grad.dtype).tiny)), grad)


def rowscale_train(
    model: torch.nn.Module,
    params: list[torch.nn.Parameter],
    windows: TextWindows,
    cfg: TrainConfig,
    config: RowScaleConfig,
    rank: int,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "rowscale",
    epoch_hook: EpochHook | None = None,
) -> tuple[torch.nn.Module, dict]:
    """Train the B matrices ``params`` of a PEFT LoRA model with row-scaled per-text gradients."""
    if any(p.dim() != 2 or p.shape[1] != rank for p in params):
        raise ValueError(
            f"row scaling trains LoRA's B matrices (out x r = {rank}); got shapes {[p.shape for p in params]}"
        )
    target = row_target(config, rank)
    model, stats = per_text_train(
        model,
        params,
        windows,
        cfg,
        transform=lambda grad: scale_rows(grad, target),  # eq. 22, then the batch mean
        device=device,
        progress=progress,
        desc=desc,
        epoch_hook=epoch_hook,
    )
    return model, {**stats, "row_norm": target, "delta": config.delta, "c": config.c, "unit": "text"}
