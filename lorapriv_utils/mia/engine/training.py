"""One training loop for every language model of the pipeline (pre-training and all
fine-tuning methods), and evaluation of losses per row and per text.

Rows are token windows padded with -1 (see ``data.text_windows``); packed pre-training blocks
are rows without padding.  The training loss is the mean over the rows of a batch of each row's
mean token loss, so that a row's gradient does not depend on the other rows' lengths (which
DP-SGD's per-sample clipping needs, and which keeps every method on the same objective).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

OPTIMIZERS = ("adamw", "sgd")
EpochHook = Callable[[int, torch.nn.Module, int], None]


def end_of_epoch(hook: EpochHook | None, epoch: int, model: torch.nn.Module, steps: int) -> None:
    """Call ``hook(epoch, model, steps)`` (it may evaluate the model), then put the model back in training mode."""
    if hook is not None:
        hook(epoch, model, steps)
        model.train()


class LineProgress:
    """Progress without a terminal (a log file, CI): one line at every ``step`` fraction, not one per update."""

    def __init__(self, total: int, desc: str, step: float = 0.05, stream=None):
        self.total, self.desc, self.done, self.stream = max(int(total), 1), desc, 0, stream or sys.stderr
        self.every = max(1, math.ceil(self.total * step))
        self.start = time.perf_counter()

    def update(self, n: int = 1) -> None:
        before, self.done = self.done, min(self.done + n, self.total)
        if self.done // self.every > before // self.every or self.done == self.total > before:
            elapsed = time.perf_counter() - self.start
            print(
                f"{self.desc}: {self.done}/{self.total} ({self.done / self.total:.0%}, {elapsed:.0f} s)",
                file=self.stream,
            )

    def close(self) -> None:
        pass


def progress_bar(total: int, desc: str, enabled: bool, leave: bool = False):
    """A tqdm bar on a terminal; a line every 5% elsewhere; nothing when not ``enabled``."""
    if enabled and not sys.stderr.isatty():
        return LineProgress(total, desc)
    return tqdm(total=total, desc=desc, disable=not enabled, leave=leave)


@dataclass(frozen=True)
class TrainConfig:
    """Epochs, optimiser (``adamw`` or ``sgd``), learning rate with linear decay after an optional warm-up."""

    epochs: int = 1
    lr: float = 1e-3
    batch_size: int = 16
    seed: int = 0
    optimizer: str = "adamw"
    weight_decay: float = 0.0
    warmup_fraction: float = 0.0

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
        if self.epochs < 1 or self.batch_size < 1 or not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"epochs and batch_size must be >= 1 and lr > 0, got {self}")


def trim_padding(rows: torch.Tensor) -> torch.Tensor:
    """``rows`` without the trailing columns that are padding (-1) in every row (a batch of short texts stays short)."""
    used = (rows >= 0).any(dim=0).nonzero()
    return rows[:, : int(used.max()) + 1] if used.numel() else rows


def _trim(batch: list[tuple[torch.Tensor, ...]]) -> tuple[torch.Tensor]:
    """Collate: stack rows and trim their padding."""
    rows = torch.stack([item[0] for item in batch]) if batch else torch.zeros((0, 0), dtype=torch.long)
    return (trim_padding(rows),)


def block_loader(blocks: np.ndarray, batch_size: int, seed: int, shuffle: bool = True) -> DataLoader:
    """Batches of token rows (blocks or padded windows) in a seeded order."""
    data = TensorDataset(torch.as_tensor(np.asarray(blocks), dtype=torch.long))
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(data, batch_size=batch_size, shuffle=shuffle, generator=generator, collate_fn=_trim)


def at_least_float32(values: torch.Tensor) -> torch.Tensor:
    """Half-precision logits (autocast) in float32 for the loss; float32 and float64 as they are."""
    return values.float() if values.dtype in (torch.float16, torch.bfloat16) else values


def row_nll(model: torch.nn.Module, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed next-token negative log-likelihood and number of predicted tokens of each row (-1 pads)."""
    mask = rows >= 0
    ids = rows.clamp(min=0)
    logits = model(input_ids=ids, attention_mask=mask.long()).logits[:, :-1]
    target_mask = mask[:, 1:] & mask[:, :-1]
    nll = torch.nn.functional.cross_entropy(
        at_least_float32(logits.reshape(-1, logits.shape[-1])), ids[:, 1:].reshape(-1), reduction="none"
    ).view(rows.shape[0], -1)
    return (nll * target_mask).sum(dim=1), target_mask.sum(dim=1)


def batch_loss(model: torch.nn.Module, rows: torch.Tensor) -> torch.Tensor:
    """Mean over rows of each row's mean token loss (the training objective of every method)."""
    total, count = row_nll(model, rows)
    if bool((count == 0).any()):
        raise ValueError("a row has no token to predict: every row needs at least 2 tokens")
    return (total / count).mean()


def make_optimizer(params: list[torch.nn.Parameter], cfg: TrainConfig) -> torch.optim.Optimizer:
    if not params:
        raise ValueError("no trainable parameters: check the fine-tuning method's parameter selection")
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def linear_schedule(optimizer: torch.optim.Optimizer, total_steps: int, warmup_fraction: float):
    warmup = int(warmup_fraction * total_steps)

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def run_training(
    model: torch.nn.Module,
    loader: DataLoader,
    optimizer: torch.optim.Optimizer,
    scheduler,
    epochs: int,
    step_hook: Callable[[torch.optim.Optimizer], None] | None = None,
    progress: bool = False,
    desc: str = "training",
    device: torch.device | None = None,
    autocast_dtype: torch.dtype | None = None,
    backward: Callable[[torch.Tensor], None] | None = None,
    epoch_hook: EpochHook | None = None,
) -> dict:
    """The loop itself: :func:`batch_loss` on each batch, ``step_hook(optimizer)`` after each optimiser step.

    ``backward`` replaces ``loss.backward()`` (``accelerate.Accelerator.backward`` for data-parallel runs).
    ``epoch_hook(epoch, model, steps)`` runs after each epoch (1-based), e.g. to score a checkpoint.
    """
    device = device or torch.device("cpu")
    model.train()
    steps, tokens, last = 0, 0, math.nan
    start = time.perf_counter()
    bar = progress_bar(epochs * len(loader), desc, progress)
    for epoch in range(1, epochs + 1):
        for (batch,) in loader:
            if batch.numel() == 0:  # Poisson sampling (DP-SGD) can draw an empty batch
                continue
            batch = batch.to(device)
            with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
                loss = batch_loss(model, batch)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"{desc}: loss became {loss.item()} at step {steps}; lower the learning rate")
            optimizer.zero_grad(set_to_none=True)
            if backward is None:
                loss.backward()
            else:
                backward(loss)
            optimizer.step()
            scheduler.step()
            if step_hook is not None:
                step_hook(optimizer)
            steps, tokens, last = steps + 1, tokens + int((batch >= 0).sum()), float(loss.detach())
            bar.update(1)
        end_of_epoch(epoch_hook, epoch, model, steps)
    bar.close()
    return {"steps": steps, "tokens": tokens, "seconds": time.perf_counter() - start, "final_loss": last}


def train_language_model(
    model: torch.nn.Module,
    blocks: np.ndarray,
    cfg: TrainConfig,
    params: list[torch.nn.Parameter] | None = None,
    step_hook: Callable[[torch.optim.Optimizer], None] | None = None,
    progress: bool = False,
    desc: str = "training",
) -> dict:
    """Train ``params`` (default: all trainable parameters) of ``model`` on ``blocks`` with ``cfg``."""
    torch.manual_seed(cfg.seed)
    params = params if params is not None else [p for p in model.parameters() if p.requires_grad]
    loader = block_loader(blocks, cfg.batch_size, cfg.seed)
    optimizer = make_optimizer(params, cfg)
    scheduler = linear_schedule(optimizer, cfg.epochs * len(loader), cfg.warmup_fraction)
    return run_training(model, loader, optimizer, scheduler, cfg.epochs, step_hook, progress, desc)


@torch.no_grad()
def row_sums(
    model: torch.nn.Module,
    rows: np.ndarray,
    batch_size: int = 32,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "scoring",
) -> tuple[np.ndarray, np.ndarray]:
    """Summed token loss and number of predicted tokens of every row, in order."""
    model.eval()
    totals, counts = [], []
    loader = block_loader(rows, batch_size, 0, shuffle=False)
    bar = progress_bar(len(loader), desc, progress)
    for (batch,) in loader:
        total, count = row_nll(model, batch.to(device or torch.device("cpu")))
        totals.append(total.double().cpu().numpy())
        counts.append(count.cpu().numpy())
        bar.update(1)
    bar.close()
    return np.concatenate(totals), np.concatenate(counts)


def block_losses(
    model: torch.nn.Module, blocks: np.ndarray, batch_size: int = 32, device: torch.device | None = None
) -> np.ndarray:
    """Mean next-token negative log-likelihood of each row (block or window)."""
    totals, counts = row_sums(model, blocks, batch_size, device)
    return totals / counts


def text_losses(
    model: torch.nn.Module,
    windows,
    batch_size: int = 32,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "scoring",
) -> np.ndarray:
    """Mean token loss of each text (``data.TextWindows``): its windows' token losses pooled (eq. 24's L(x))."""
    totals, counts = row_sums(model, windows.ids, batch_size, device, progress, desc)
    per_text = np.bincount(windows.owner, weights=totals, minlength=windows.n_texts)
    tokens = np.bincount(windows.owner, weights=counts, minlength=windows.n_texts)
    return per_text / tokens


def token_terms(model: torch.nn.Module, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per predicted token: its loss, its Min-K%++ z-score, and the mask of real tokens.

    Min-K%++ (Zhang et al. 2024) standardises a token's log-probability by the mean and standard
    deviation of the log-probability under the model's own next-token distribution:
    z = (log p(x_t) - E_z[log p(z)]) / sd_z[log p(z)], both moments taken over z ~ p(. | x_<t).
    """
    mask = rows >= 0
    ids = rows.clamp(min=0)
    logp = torch.log_softmax(at_least_float32(model(input_ids=ids, attention_mask=mask.long()).logits[:, :-1]), dim=-1)
    chosen = logp.gather(-1, ids[:, 1:, None])[..., 0]
    p = logp.exp()
    mean = (p * logp).sum(-1)
    sd = ((p * logp.square()).sum(-1) - mean.square()).clamp(min=1e-12).sqrt()
    return -chosen, (chosen - mean) / sd, mask[:, 1:] & mask[:, :-1]


def lowest_fraction_mean(values: np.ndarray, owner: np.ndarray, n_groups: int, fraction: float) -> np.ndarray:
    """Per group: the mean of its ceil(fraction * size) lowest values (Min-K%'s pooling)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction}")
    size = np.bincount(owner, minlength=n_groups)
    if np.any(size == 0):
        raise ValueError("every group needs at least one value")
    order = np.lexsort((values, owner))
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    rank = np.arange(len(values)) - start[owner[order]]
    keep = rank < np.ceil(fraction * size)[owner[order]]
    kept_owner, kept = owner[order][keep], values[order][keep]
    return np.bincount(kept_owner, weights=kept, minlength=n_groups) / np.bincount(kept_owner, minlength=n_groups)


@torch.no_grad()
def text_scores(
    model: torch.nn.Module,
    windows,
    fraction: float = 0.2,
    batch_size: int = 32,
    device: torch.device | None = None,
    progress: bool = False,
    desc: str = "scoring",
) -> dict[str, np.ndarray]:
    """Per text (``data.TextWindows``): its mean token loss (eq. 24's L(x)) and its Min-K%++ score
    (the mean z-score of its ``fraction`` lowest-scoring tokens; higher looks more like a member)."""
    model.eval()
    nll, z, owner = [], [], []
    row = 0
    loader = block_loader(windows.ids, batch_size, 0, shuffle=False)
    bar = progress_bar(len(loader), desc, progress)
    for (batch,) in loader:
        bar.update(1)
        loss, score, mask = token_terms(model, batch.to(device or torch.device("cpu")))
        mask = mask.cpu().numpy()
        nll.append(loss.double().cpu().numpy()[mask])
        z.append(score.double().cpu().numpy()[mask])
        owner.append(np.broadcast_to(windows.owner[row : row + len(batch), None], mask.shape)[mask])
        row += len(batch)
    nll, z, owner = np.concatenate(nll), np.concatenate(z), np.concatenate(owner)
    tokens = np.bincount(owner, minlength=windows.n_texts)
    return {
        "loss": np.bincount(owner, weights=nll, minlength=windows.n_texts) / tokens,
        "minkpp": lowest_fraction_mean(z, owner, windows.n_texts, fraction),
    }
