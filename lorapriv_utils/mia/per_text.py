"""Per-text gradients: the plumbing that DP-SGD and row scaling share.

A text longer than the context spans several windows (rows).  Opacus's ``GradSampleModule``
(with ``loss_reduction="sum"``) gives one gradient per row of the summed text losses; adding the
rows of each text gives each text's gradient.  Opacus is used rather than ``torch.func``
because it handles the PEFT-wrapped GPT-2 (hooks on its Linear and Conv1D layers) without
rewriting the model functionally, and ``tests/test_finetune.py`` checks it against ``torch.func``.
"""

from __future__ import annotations

import numpy as np
import torch

from .data import TextWindows
from .training import row_nll, trim_padding


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
    tokens = torch.zeros(texts, device=batch.device).index_add_(0, owner, count.float())
    loss = torch.zeros(texts, device=batch.device).index_add_(0, owner, total)
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
