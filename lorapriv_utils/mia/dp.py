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
import time
import warnings

import torch
from tqdm.auto import tqdm

from ..scale import DPConfig
from .data import TextWindows
from .per_text import TextBatches, per_text_backward
from .training import EpochHook, TrainConfig, end_of_epoch, linear_schedule, make_optimizer


def noise_generator(device: torch.device, seed: int) -> torch.Generator:
    """The generator of DP-SGD's noise, on the device of the parameters it perturbs (Opacus draws there)."""
    return torch.Generator(device=device).manual_seed(seed)


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
    """Train ``params`` of ``model`` with DP-SGD over texts; returns the unwrapped model and stats with epsilon."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer
    from opacus.utils.uniform_sampler import UniformWithReplacementSampler

    device = device or torch.device("cpu")
    n_texts = windows.n_texts
    if cfg.batch_size > n_texts:
        raise ValueError(f"batch size {cfg.batch_size} exceeds the {n_texts} texts DP-SGD samples from")
    sample_rate = cfg.batch_size / n_texts
    batches = TextBatches(windows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's notes on secure RNG and unsupported-but-unused layers
        wrapped = GradSampleModule(model, loss_reduction="sum")
        optimizer = DPOptimizer(
            make_optimizer(params, cfg),
            noise_multiplier=dp.noise_multiplier,
            max_grad_norm=dp.max_grad_norm,
            expected_batch_size=cfg.batch_size,
            loss_reduction="mean",
            generator=noise_generator(device, cfg.seed + 2),
        )
    sampler = UniformWithReplacementSampler(
        num_samples=n_texts, sample_rate=sample_rate, generator=torch.Generator().manual_seed(cfg.seed + 3)
    )
    steps_per_epoch = len(sampler)
    scheduler = linear_schedule(optimizer, cfg.epochs * steps_per_epoch, cfg.warmup_fraction)
    wrapped.train()
    steps, empty, last, start = 0, 0, math.nan, time.perf_counter()
    bar = tqdm(total=cfg.epochs * steps_per_epoch, desc=desc, disable=not progress, leave=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        for epoch in range(1, cfg.epochs + 1):
            for texts in sampler:
                optimizer.zero_grad(set_to_none=True)
                if texts:
                    last = per_text_backward(wrapped, batches, params, texts, device)
                else:  # Poisson sampling drew no text: a noise-only step, as the accountant assumes
                    empty += 1
                    for p in params:
                        p.grad_sample = torch.zeros((0, *p.shape), device=p.device, dtype=p.dtype)
                optimizer.step()
                scheduler.step()
                steps += 1
                bar.update(1)
            end_of_epoch(epoch_hook, epoch, wrapped._module, steps)
    bar.close()
    eps = epsilons(dp.noise_multiplier, sample_rate, steps, dp.delta)
    stats = {
        "steps": steps,
        "empty_batches": empty,
        "seconds": time.perf_counter() - start,
        "final_loss": last,
        "privacy_unit": "text",
        "sample_rate": sample_rate,
        # None: not private (no noise); PRV also None where RDP's epsilon is vacuous (see PRV_LIMIT)
        "epsilon": eps["prv"] if eps["prv"] is not None and math.isfinite(eps["prv"]) else None,
        "epsilon_rdp": eps["rdp"] if math.isfinite(eps["rdp"]) else None,
        "accountant": "prv (opacus default); rdp beside it",
        "delta": dp.delta,
        "noise_multiplier": dp.noise_multiplier,
        "max_grad_norm": dp.max_grad_norm,
    }
    model = wrapped._module
    wrapped._close()  # remove Opacus's hooks: the returned model evaluates like any other
    return model, stats
