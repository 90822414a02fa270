"""Is a LoRA step with A frozen the Wishart projection M V?  Checked on the engine's own PEFT models.

For an adapted projection y = W x (W of shape (n, m), paper A's layout; GPT-2's Conv1D stores its
transpose) PEFT adds s B A x, with A of shape (r, m), B of shape (n, r) and s = lora_alpha / r.  With
G = dL/dW (n x m) at the current merged weight, dL/dB = s G A^T, so one SGD step on B moves the merged
weight by

    Delta W = s Delta B A = -eta s^2 G A^T A = -eta s^2 G M,      M = A^T A,

whatever B is: every plain-SGD step releases M V with V = G (paper B's setting).  With AdamW the step
on B is a coordinatewise function of s G^T A^T, and Delta W is no longer M times anything the data
alone determines.  The engine draws A with N(0, 1/r) entries, so M ~ W_m(I/r, r); PEFT's own default
(Kaiming-uniform) draws uniform entries of variance 1/(3m), which is not a Wishart projection.
"""

from __future__ import annotations

import contextlib
import copy
import math
import warnings

import numpy as np
import torch
from scipy import stats

from ...numbers import check_positive
from ...scale import ModelSpec
from . import families, finetune, models


@contextlib.contextmanager
def _quiet():
    """Silence transformers' and PEFT's notes about padding, loss types and deprecations."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        hf_logging.set_verbosity(level)


def tiny_model(seed: int, spec: ModelSpec | None = None, vocab: int = 512) -> torch.nn.Module:
    """A randomly initialised model of the engine's architecture (``spec``'s family; no weights to fetch)."""
    return models.new_model(spec or ModelSpec(), vocab, eos_id=0, seed=seed).eval()


def _batch(model: torch.nn.Module, batch: int, length: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.config.vocab_size, (batch, length), generator=g)


def _base_gradients(model: torch.nn.Module, ids: torch.Tensor) -> list[torch.Tensor]:
    """dL/dW of every adapted projection, as stored, at the model's current weights (the model, a throw-away
    copy, has its parameters' gradient flags changed)."""
    for p in model.parameters():
        p.requires_grad_(False)
    weights = families.family_of(model).adapted_weights(model)
    for w in weights:
        w.requires_grad_(True)
    model(ids, labels=ids).loss.backward()
    return [w.grad.detach().clone() for w in weights]


def _merged(peft_model) -> torch.nn.Module:
    """A plain copy of the base model whose adapted weights are the LoRA model's merged weights W + s B A."""
    out = copy.deepcopy(peft_model.get_base_model())
    for module in list(out.modules()):
        for name, child in list(module.named_children()):
            if hasattr(child, "base_layer") and hasattr(child, "lora_A"):
                with torch.no_grad():
                    child.base_layer.weight += child.get_delta_weight("default")
                setattr(module, name, child.base_layer)
    return out


@_quiet()
def step_residuals(
    rank: int,
    steps: int = 3,
    optimizer: str = "sgd",
    lr: float = 0.05,
    seed: int = 0,
    batch: int = 4,
    spec: ModelSpec | None = None,
) -> list[float]:
    """Train LoRA with A frozen (the engine's ``lorafa``) for ``steps`` steps; after each, the relative residual
    of the merged weights' change against the best multiple c M G (G at the weights before the step), worst
    layer.  Plain SGD: c = -lr s^2 and the residual is rounding; AdamW: the step is not of that form.  ``spec``:
    the tiny model's architecture (default: the engine's GPT-2)."""
    if optimizer not in ("sgd", "adamw"):
        raise ValueError(f"optimizer must be 'sgd' or 'adamw', got {optimizer!r}")
    model = tiny_model(seed, spec)
    peft_model, params, _ = finetune.prepare(model, "lorafa", rank, seed)
    opt = torch.optim.SGD(params, lr=lr) if optimizer == "sgd" else torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    layers = finetune.lora_layers(peft_model)
    family = families.family_of(model)
    out = []
    for t in range(steps):
        ids = _batch(model, batch, 32, seed + 1 + t)
        merged = _merged(peft_model)
        grads = _base_gradients(merged, ids)
        before = [layer.get_delta_weight("default").detach().clone() for layer in layers]
        opt.zero_grad()
        peft_model(input_ids=ids, labels=ids).loss.backward()
        opt.step()
        worst = 0.0
        for layer, G, b in zip(layers, grads, before, strict=True):
            delta = (layer.get_delta_weight("default").detach() - b).double()
            A = layer.lora_A["default"].weight.detach().double()  # (r, m)
            MG = family.project_inputs(G.double(), A)
            c = float((delta * MG).sum() / (MG * MG).sum())  # the best multiple
            worst = max(worst, float(torch.linalg.norm(delta - c * MG) / torch.linalg.norm(delta)))
        out.append(worst)
    return out


@_quiet()
def sgd_scale(
    rank: int, lr: float = 0.05, seed: int = 0, scaling: float = 2.0, spec: ModelSpec | None = None
) -> tuple[float, float]:
    """(c fitted on one SGD step, -lr s^2 as derived): the multiple of M G that a step releases, with PEFT's
    scaling s = lora_alpha / r set to ``scaling`` (the engine uses 1, where s, s^2 and 1 coincide)."""
    check_positive("scaling", scaling)
    model = tiny_model(seed, spec)
    peft_model, params, _ = finetune.prepare(model, "lorafa", rank, seed)
    for lora_layer in finetune.lora_layers(peft_model):
        lora_layer.scaling["default"] = scaling  # lora_alpha = scaling * r
    layer = finetune.lora_layers(peft_model)[0]
    s = float(layer.scaling["default"])
    ids = _batch(model, 4, 32, seed + 1)
    G = _base_gradients(_merged(peft_model), ids)[0].double()
    opt = torch.optim.SGD(params, lr=lr)
    peft_model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    delta = layer.get_delta_weight("default").detach().double()
    A = layer.lora_A["default"].weight.detach().double()
    MG = families.family_of(model).project_inputs(G, A)
    return float((delta * MG).sum() / (MG * MG).sum()), -lr * s * s


@_quiet()
def a_entries(rank: int, init: str, seed: int = 0) -> np.ndarray:
    """The entries of every layer's A times sqrt(r): the engine's draw (``engine``) or PEFT's default
    initialisation (``peft``).  For a Wishart projection W_m(I/r, r) they are standard normal."""
    from peft import get_peft_model

    if init not in ("engine", "peft"):
        raise ValueError(f"init must be 'engine' or 'peft', got {init!r}")
    model = tiny_model(seed)
    if init == "engine":
        peft_model, _, _ = finetune.prepare(model, "lorafa", rank, seed)
    else:
        torch.manual_seed(seed)
        peft_model = get_peft_model(model, finetune.lora_config(model, rank))  # PEFT's own initialisation
    entries = [layer.lora_A["default"].weight.detach().numpy().ravel() for layer in finetune.lora_layers(peft_model)]
    return np.concatenate(entries).astype(float) * math.sqrt(rank)


def normality(entries: np.ndarray) -> dict[str, float]:
    """Variance, excess kurtosis, the KS p-value of scaled A entries against N(0, 1) (law and scale) and of the
    standardised entries (shape only)."""
    return {
        "variance": float(entries.var()),
        "excess_kurtosis": float(stats.kurtosis(entries)),
        "ks_p_value": float(stats.kstest(entries, "norm").pvalue),
        "ks_p_value_shape": float(stats.kstest((entries - entries.mean()) / entries.std(), "norm").pvalue),
    }
