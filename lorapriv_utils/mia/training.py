"""One training loop for every language model of the pipeline (pre-training and all
fine-tuning methods), and per-block evaluation of losses."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

OPTIMIZERS = ("adamw", "sgd")


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


def block_loader(blocks: np.ndarray, batch_size: int, seed: int, shuffle: bool = True) -> DataLoader:
    """Batches of token blocks in a seeded order."""
    data = TensorDataset(torch.as_tensor(np.asarray(blocks), dtype=torch.long))
    generator = torch.Generator().manual_seed(seed)
    return DataLoader(data, batch_size=batch_size, shuffle=shuffle, generator=generator)


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
    step_hook: Callable[[], None] | None = None,
    progress: bool = False,
    desc: str = "training",
    device: torch.device | None = None,
    autocast_dtype: torch.dtype | None = None,
    backward: Callable[[torch.Tensor], None] | None = None,
) -> dict:
    """The loop itself: causal-LM loss on each batch of blocks, ``step_hook`` after each optimiser step.

    ``backward`` replaces ``loss.backward()`` (``accelerate.Accelerator.backward`` for data-parallel runs).
    """
    device = device or torch.device("cpu")
    model.train()
    steps, tokens, last = 0, 0, math.nan
    start = time.perf_counter()
    bar = tqdm(total=epochs * len(loader), desc=desc, disable=not progress, leave=False)
    for _ in range(epochs):
        for (batch,) in loader:
            if batch.numel() == 0:  # Poisson sampling (DP-SGD) can draw an empty batch
                continue
            batch = batch.to(device)
            with torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None):
                loss = model(input_ids=batch, attention_mask=torch.ones_like(batch), labels=batch).loss
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
                step_hook()
            steps, tokens, last = steps + 1, tokens + batch.numel(), float(loss.detach())
            bar.update(1)
    bar.close()
    return {"steps": steps, "tokens": tokens, "seconds": time.perf_counter() - start, "final_loss": last}


def train_language_model(
    model: torch.nn.Module,
    blocks: np.ndarray,
    cfg: TrainConfig,
    params: list[torch.nn.Parameter] | None = None,
    step_hook: Callable[[], None] | None = None,
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
def block_losses(
    model: torch.nn.Module, blocks: np.ndarray, batch_size: int = 32, device: torch.device | None = None
) -> np.ndarray:
    """Mean next-token negative log-likelihood of each block (the per-example loss of eq. 24)."""
    model.eval()
    out = []
    for (batch,) in block_loader(blocks, batch_size, 0, shuffle=False):
        batch = batch.to(device or torch.device("cpu"))
        logits = model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits[:, :-1]
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]).float(), batch[:, 1:].reshape(-1), reduction="none"
        )
        out.append(nll.view(batch.shape[0], -1).mean(dim=1).double().cpu().numpy())
    return np.concatenate(out)
