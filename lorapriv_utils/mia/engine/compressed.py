"""Compressed DP-SGD: paper B's noisy variant M2 (add noise, then project) as a training rule.

Each step runs DP-SGD on the matrices LoRA adapts (the adapted projections of :mod:`.families`), in their full
space: every text's gradient is clipped to C over all those matrices together, N(0, (sigma C)^2) noise is added
there (Opacus's ``DPOptimizer``, a text as the privacy unit, Poisson sampling, exactly as :func:`.dp.dp_train`),
and then each matrix's noisy gradient G + E is projected, G + E -> M (G + E) with M = A^T A and a fresh secret r
x d_in matrix A of N(0, 1/r) entries per layer and per step (E[M] = I: the update is unbiased). The update M (G
+ E) = A^T [A (G + E)] is a post-processing of (A, A (G + E)), so the step's privacy is that of the joint
release: given A, a subsampled Gaussian mechanism whose sensitivity is C |P_A D| / |D| (D the text's clipped
gradient) rather than C. The certificate is ``theory.noisy.m2_rdp_epsilon`` (Renyi DP, valid for a difference of
any rank); the tighter ``theory.noisy.m2_subsampled_pld`` is exact only for a rank-one difference and is
reported beside it. The *added* noise multiplier is chosen so that the certificate matches a given DP-SGD
certificate (:func:`matched_noise`); the noise in the update, M E, is larger per coordinate than E (E[M^2] = (1
+ (d + 1) / r) I), a cost the projection's accounting pays for.

The loop is the engine's one per-text loop (``per_text.per_text_train``, DP-SGD's), with the projection
attached as the optimizer's step hook: it runs after Opacus's clipping, noise and scaling, before the update.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ...numbers import check_rank
from ...scale import DPConfig
from ...theory import noisy
from . import families
from .data import TextWindows
from .dp import epsilons
from .per_text import per_text_train
from .training import TrainConfig


def input_width(params: list[torch.nn.Parameter], family: families.Family) -> int:
    """The common input width d of the adapted matrices (``Family.input_width``)."""
    widths = {family.input_width(p) for p in params}
    if len(widths) != 1 or any(p.dim() != 2 for p in params):
        shapes = [tuple(p.shape) for p in params]
        raise ValueError(f"compressed DP-SGD needs matrices of one input width, got shapes {shapes}")
    return widths.pop()


def check_projection_rank(rank: int, d: int) -> int:
    check_rank(rank)
    if rank >= d:
        raise ValueError(f"rank {rank} must be below the input width {d}: at r >= d the projection keeps everything")
    return rank


def project(params: list[torch.nn.Parameter], rank: int, generator: torch.Generator, family: families.Family) -> None:
    """Each parameter's gradient G projected on the input side by M = A^T A (``Family.project_inputs``), with a
    fresh A (r x d_in, N(0, 1/r) entries) per matrix."""
    for p in params:
        d = family.input_width(p)
        A = torch.randn(rank, d, generator=generator, device=p.device, dtype=p.dtype) / math.sqrt(rank)
        p.grad = family.project_inputs(p.grad, A)


def steps_for(n_texts: int, batch_size: int, epochs: int) -> tuple[float, int]:
    """(sampling rate, steps) of a training over ``n_texts`` texts: Opacus's Poisson sampler takes 1/q steps
    per epoch (``UniformWithReplacementSampler.__len__``)."""
    q = batch_size / n_texts
    return q, epochs * int(1 / q)


@functools.lru_cache(maxsize=64)
def matched_noise(noise_multiplier: float, sample_rate: float, steps: int, delta: float, d: int, r: int) -> dict:
    """The noise multiplier at which compressed DP-SGD certifies (by RDP, for any difference) what plain DP-SGD
    does at ``noise_multiplier`` (Opacus's PRV epsilon over the same sampling and steps: a tighter accountant
    than RDP, so the match is conservative for compressed DP-SGD), with both epsilons."""
    target = epsilons(noise_multiplier, sample_rate, steps, delta)["prv"]
    if target is None or not math.isfinite(target):
        raise ValueError(f"DP-SGD certifies nothing useful at sigma = {noise_multiplier}: no epsilon to match")
    sigma = noisy.matched_noise_multiplier(
        lambda s: noisy.m2_rdp_epsilon(delta, s, sample_rate, steps, d, r), target, upper=noise_multiplier, rtol=5e-3
    )
    return {
        "noise_multiplier": sigma,
        "epsilon": noisy.m2_rdp_epsilon(delta, sigma, sample_rate, steps, d, r),
        "matched_noise_multiplier": noise_multiplier,
        "matched_epsilon": target,
    }


@functools.lru_cache(maxsize=64)
def rank_one_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float, d: int, r: int) -> float:
    """The tighter PLD figure of ``theory.noisy.m2_subsampled_pld``, exact only for a rank-one difference in one
    layer (a real text's gradient is not): reported beside the certificate, never used as one."""
    return noisy.m2_subsampled_epsilon(delta, noise_multiplier, sample_rate, steps, d, r)


def compressed_train(
    model: torch.nn.Module,
    params: list[torch.nn.Parameter],
    windows: TextWindows,
    cfg: TrainConfig,
    dp: DPConfig,
    rank: int,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "compressed dp-sgd",
) -> tuple[torch.nn.Module, dict]:
    """Train ``params`` (matrices of one input width) with compressed DP-SGD; returns the unwrapped model and
    stats with the certificate (RDP, any difference), the tighter rank-one PLD figure and plain DP-SGD's epsilon
    at the same noise beside it."""
    device = device or torch.device("cpu")
    family = families.family_of(model)
    d = input_width(params, family)
    check_projection_rank(rank, d)
    if not (math.isfinite(dp.noise_multiplier) and dp.noise_multiplier > 0):
        raise ValueError(f"compressed DP-SGD needs noise (sigma > 0), got sigma = {dp.noise_multiplier}")
    # the secret A's: a stream of their own (no other seed's sampling or noise generator shares it)
    projection = torch.Generator(device=device).manual_seed(
        int(np.random.SeedSequence([cfg.seed, 4]).generate_state(1)[0])
    )
    model, stats = per_text_train(
        model,
        params,
        windows,
        cfg,
        dp,
        lambda: project(params, rank, projection, family),
        None,
        device,
        progress,
        desc,
    )
    sample_rate, steps = stats["sample_rate"], stats["steps"]
    plain = epsilons(dp.noise_multiplier, sample_rate, steps, dp.delta)
    certificate = noisy.m2_rdp_epsilon(dp.delta, dp.noise_multiplier, sample_rate, steps, d, rank)
    stats = {
        **stats,
        "privacy_unit": "text",
        "epsilon": certificate,
        "epsilon_rdp": certificate,
        "epsilon_rank_one": rank_one_epsilon(dp.noise_multiplier, sample_rate, steps, dp.delta, d, rank),
        "epsilon_plain_dpsgd": plain["prv"],
        "accountant": "theory.noisy.m2_rdp_epsilon (RDP, any difference, a fresh A per step)",
        "delta": dp.delta,
        "noise_multiplier": dp.noise_multiplier,
        "max_grad_norm": dp.max_grad_norm,
        "projection_rank": rank,
        "input_width": d,
    }
    return model, stats
