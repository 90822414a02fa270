"""Per-text gradients and the one per-text training loop that DP-SGD, compressed DP-SGD and row scaling share.

A text longer than the context spans several windows (rows).  Opacus's ``GradSampleModule``
(with ``loss_reduction="sum"``) gives one gradient per row of the summed text losses; adding the
rows of each text gives each text's gradient.  Opacus is used rather than ``torch.func``
because it handles the PEFT-wrapped GPT-2 (hooks on its Linear and Conv1D layers) without
rewriting the model functionally, and ``tests/test_finetune.py`` checks it against ``torch.func``.

:func:`per_text_train` is the loop.  A method plugs in what it changes: DP-SGD passes its settings
(Opacus's ``DPOptimizer`` clips each text's gradient, adds the noise and averages; batches are Poisson
samples of texts), compressed DP-SGD adds a step hook on that optimizer (run after clip, noise and
scaling), row scaling a transform of each text's gradient before the plain optimizer averages them
(batches are a shuffled pass over the texts).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable

import numpy as np
import torch

from ...scale import DPConfig
from .data import TextWindows
from .training import (
    EpochHook,
    TrainConfig,
    end_of_epoch,
    linear_schedule,
    make_optimizer,
    progress_bar,
    row_nll,
    trim_padding,
)


class TextBatches:
    """The windows of any set of texts, as one padded batch with each window's text (local index)."""

    def __init__(self, windows: TextWindows):
        self.ids = torch.as_tensor(windows.ids)
        self.rows_of = [np.flatnonzero(windows.owner == t) for t in range(windows.n_texts)]

    def batch(self, texts: list[int], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        rows = np.concatenate([self.rows_of[t] for t in texts])
        owner = torch.as_tensor(np.repeat(np.arange(len(texts)), [len(self.rows_of[t]) for t in texts]))
        return trim_padding(self.ids[rows]).to(device), owner.to(device)


def text_loss_sum(model: torch.nn.Module, batch: torch.Tensor, owner: torch.Tensor, texts: int) -> torch.Tensor:
    """Sum over texts of each text's mean token loss (its windows pooled)."""
    total, count = row_nll(model, batch)
    tokens = total.new_zeros(texts).index_add_(0, owner, count.to(total.dtype))
    loss = total.new_zeros(texts).index_add_(0, owner, total)
    return (loss / tokens).sum()


def per_text_gradients(params: list[torch.nn.Parameter], owner: torch.Tensor, texts: int) -> None:
    """Replace each parameter's per-window ``grad_sample`` by per-text sums (rows of one text added)."""
    for p in params:
        rows = p.grad_sample
        p.grad_sample = rows.new_zeros((texts, *rows.shape[1:])).index_add_(0, owner, rows)


def per_text_backward(
    wrapped: torch.nn.Module, batches: TextBatches, params: list[torch.nn.Parameter], texts: list[int], device
) -> float:
    """Forward and backward on the windows of ``texts`` through Opacus's ``GradSampleModule`` ``wrapped``
    (``loss_reduction="sum"``); leaves each text's gradient in ``p.grad_sample`` and returns the mean text loss."""
    batch, owner = batches.batch(texts, device)
    loss = text_loss_sum(wrapped, batch, owner, len(texts))
    loss.backward()
    per_text_gradients(params, owner, len(texts))
    return float(loss.detach()) / len(texts)


def noise_generator(device: torch.device, seed: int) -> torch.Generator:
    """The generator of DP-SGD's noise, on the device of the parameters it perturbs (Opacus draws there)."""
    return torch.Generator(device=device).manual_seed(seed)


def per_text_train(
    model: torch.nn.Module,
    params: list[torch.nn.Parameter],
    windows: TextWindows,
    cfg: TrainConfig,
    dp: DPConfig | None = None,
    step_hook: Callable[[], None] | None = None,
    transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "per-text training",
    epoch_hook: EpochHook | None = None,
) -> tuple[torch.nn.Module, dict]:
    """Train ``params`` of ``model`` on per-text gradients; returns the unwrapped model and the loop's stats.

    With ``dp``: Opacus's ``DPOptimizer`` (clip each text's gradient to C, add N(0, (sigma C)^2) noise from a
    generator seeded ``cfg.seed + 2``, divide by the expected batch) over Poisson batches of texts (rate batch
    size / texts, seed ``cfg.seed + 3``; an empty batch takes a noise-only step, as the accountant assumes), and
    ``step_hook()`` after each of its steps.  Without: a shuffled pass over the texts per epoch (seed
    ``cfg.seed``), each text's gradient mapped by ``transform`` and averaged over the batch.
    """
    from opacus import GradSampleModule

    if dp is None and step_hook is not None:
        raise ValueError("a step hook runs on DP-SGD's optimizer: give DP-SGD's settings")
    device = device or torch.device("cpu")
    n_texts = windows.n_texts
    if dp is not None and cfg.batch_size > n_texts:
        raise ValueError(f"batch size {cfg.batch_size} exceeds the {n_texts} texts DP-SGD samples from")
    batches = TextBatches(windows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Opacus's notes on secure RNG and unsupported-but-unused layers
        wrapped = GradSampleModule(model, loss_reduction="sum")
        optimizer = make_optimizer(params, cfg) if dp is None else _dp_optimizer(params, cfg, dp, device, step_hook)
    epoch_batches = _shuffled(n_texts, cfg) if dp is None else _poisson(n_texts, cfg)
    per_epoch = len(epoch_batches)
    scheduler = linear_schedule(optimizer, cfg.epochs * per_epoch, cfg.warmup_fraction)
    wrapped.train()
    steps, empty, last, start = 0, 0, math.nan, time.perf_counter()
    bar = progress_bar(cfg.epochs * per_epoch, desc, progress)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        for epoch in range(1, cfg.epochs + 1):
            for texts in epoch_batches:
                optimizer.zero_grad(set_to_none=True)
                if texts:
                    last = per_text_backward(wrapped, batches, params, texts, device)
                else:  # Poisson sampling drew no text: a noise-only step, as the accountant assumes
                    empty += 1
                    for p in params:
                        p.grad_sample = torch.zeros((0, *p.shape), device=p.device, dtype=p.dtype)
                if transform is not None:
                    for p in params:
                        p.grad = transform(p.grad_sample).mean(dim=0)
                        p.grad_sample = None
                optimizer.step()
                scheduler.step()
                steps += 1
                bar.update(1)
            end_of_epoch(epoch_hook, epoch, wrapped._module, steps)
    bar.close()
    model = wrapped._module
    wrapped._close()  # remove Opacus's hooks: the returned model evaluates like any other
    stats = {"steps": steps, "seconds": time.perf_counter() - start, "final_loss": last}
    if dp is not None:
        stats.update(empty_batches=empty, sample_rate=cfg.batch_size / n_texts)
    return model, stats


def _dp_optimizer(params, cfg: TrainConfig, dp: DPConfig, device, step_hook):
    from opacus.optimizers import DPOptimizer

    optimizer = DPOptimizer(
        make_optimizer(params, cfg),
        noise_multiplier=dp.noise_multiplier,
        max_grad_norm=dp.max_grad_norm,
        expected_batch_size=cfg.batch_size,
        loss_reduction="mean",
        generator=noise_generator(device, cfg.seed + 2),
    )
    if step_hook is not None:
        optimizer.attach_step_hook(lambda _: step_hook())
    return optimizer


def _poisson(n_texts: int, cfg: TrainConfig):
    from opacus.utils.uniform_sampler import UniformWithReplacementSampler

    sample_rate = cfg.batch_size / n_texts
    return UniformWithReplacementSampler(
        num_samples=n_texts, sample_rate=sample_rate, generator=torch.Generator().manual_seed(cfg.seed + 3)
    )


class _shuffled:
    """Each epoch, the texts in a fresh random order (one generator for the run), cut into batches."""

    def __init__(self, n_texts: int, cfg: TrainConfig):
        self.n, self.size = n_texts, cfg.batch_size
        self.generator = torch.Generator().manual_seed(cfg.seed)

    def __len__(self) -> int:
        return math.ceil(self.n / self.size)

    def __iter__(self):
        order = torch.randperm(self.n, generator=self.generator).tolist()
        return iter(order[k : k + self.size] for k in range(0, self.n, self.size))
