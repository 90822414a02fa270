"""Fine-tuning methods behind one interface (paper A, section 6).

* ``full``: every parameter of the model.
* ``adapter``: the very weight matrices that LoRA adapts (the fused attention projection
  ``c_attn`` of every block), trained directly, without a low-rank factorisation: the
  comparison that paper A's theory makes.
* ``lora``: LoRA through PEFT on ``c_attn``, rank r, scaling 1 (lora_alpha = r), B = 0 and
  A with i.i.d. N(0, 1/r) entries at start as in paper A.  GPT-2's ``c_attn`` is a
  ``Conv1D`` whose weight is stored (in, out), so ``fan_in_fan_out=True``.
* ``flora``: LoRA with A frozen and resampled after every step; before resampling, B A is
  merged into the weight and B reset to 0, so each step moves the weight by a fresh random
  projection of the gradient (the FLoRA rule of the dynamics chapter).
* ``dpsgd``: DP-SGD through Opacus on the LoRA factors (per-sample clipping and Gaussian
  noise), with Opacus's RDP accountant reporting epsilon.

Defaults: each scale's record (``lorapriv_utils.scale.EngineScale``, fields ``dense`` and
``lora``) holds them.  The paper states 20 epochs and learning rate 1e-5 with a linear
schedule but not the optimiser; the code it follows used AdamW, and 1e-4 for PEFT methods.
We use AdamW everywhere.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from peft import LoraConfig, get_peft_model
from transformers import GPT2LMHeadModel

from ..scale import DPConfig, EngineScale
from .training import TrainConfig, block_loader, linear_schedule, make_optimizer, run_training

METHODS = ("full", "adapter", "lora", "flora", "dpsgd")
RANKED = ("lora", "flora", "dpsgd")
TARGET = "c_attn"


def adapted_shape(model: GPT2LMHeadModel) -> tuple[int, int]:
    """(n, m) of the adapted matrices: output and input dimensions of ``c_attn``."""
    weight = model.transformer.h[0].attn.c_attn.weight  # Conv1D: (in, out)
    return int(weight.shape[1]), int(weight.shape[0])


def check_method(method: str, rank: int | None, model: GPT2LMHeadModel) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method in RANKED:
        n, m = adapted_shape(model)
        if rank is None or isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= min(n, m):
            raise ValueError(
                f"method {method!r} needs a rank r with 1 <= r <= min(n, m) = {min(n, m)} "
                f"(c_attn is {n} x {m}), got {rank!r}"
            )


def _lora(model: GPT2LMHeadModel, rank: int, seed: int) -> torch.nn.Module:
    config = LoraConfig(
        r=rank, lora_alpha=rank, target_modules=[TARGET], fan_in_fan_out=True, lora_dropout=0.0, bias="none"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PEFT's notes on deprecated transformers attributes
        peft_model = get_peft_model(model, config)
    generator = torch.Generator().manual_seed(seed)
    for layer in lora_layers(peft_model):
        resample_a(layer, generator)
        torch.nn.init.zeros_(layer.lora_B["default"].weight)
    return peft_model


def lora_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    return [mod for mod in model.modules() if hasattr(mod, "lora_A") and "default" in getattr(mod, "lora_A", {})]


@torch.no_grad()
def resample_a(layer: torch.nn.Module, generator: torch.Generator) -> None:
    weight = layer.lora_A["default"].weight  # (r, m)
    weight.copy_(torch.randn(weight.shape, generator=generator) / math.sqrt(weight.shape[0]))


@torch.no_grad()
def merge_and_reset(layer: torch.nn.Module, generator: torch.Generator) -> None:
    """FLoRA step: fold B A into the base weight, then B = 0 and a fresh A."""
    layer.base_layer.weight += layer.get_delta_weight("default")
    layer.lora_B["default"].weight.zero_()
    resample_a(layer, generator)


def prepare(model: GPT2LMHeadModel, method: str, rank: int | None = None, seed: int = 0):
    """The model to train for ``method`` (possibly PEFT-wrapped), its trainable parameters and a step hook."""
    check_method(method, rank, model)
    for p in model.parameters():
        p.requires_grad_(method == "full")
    if method in ("full", "adapter"):
        if method == "adapter":
            for block in model.transformer.h:
                block.attn.c_attn.weight.requires_grad_(True)
        return model, [p for p in model.parameters() if p.requires_grad], None
    peft_model = _lora(model, rank, seed)
    if method != "flora":
        return peft_model, [p for p in peft_model.parameters() if p.requires_grad], None
    layers = lora_layers(peft_model)
    for layer in layers:
        layer.lora_A["default"].weight.requires_grad_(False)
    generator = torch.Generator().manual_seed(seed + 1)

    def hook() -> None:
        for layer in layers:
            merge_and_reset(layer, generator)

    return peft_model, [layer.lora_B["default"].weight for layer in layers], hook


def fine_tune(
    model: GPT2LMHeadModel,
    method: str,
    blocks: np.ndarray,
    cfg: TrainConfig,
    rank: int | None = None,
    dp: DPConfig | None = None,
    progress: bool = False,
    desc: str = "fine-tuning",
    device: torch.device | None = None,
    autocast_dtype: torch.dtype | None = None,
    accelerator=None,
) -> tuple[torch.nn.Module, dict]:
    """Fine-tune ``model`` with ``method`` on ``blocks``; returns the trained model (for evaluation) and stats."""
    torch.manual_seed(cfg.seed)
    trained, params, hook = prepare(model, method, rank, cfg.seed)
    trained.to(device or torch.device("cpu"))
    loader = block_loader(blocks, cfg.batch_size, cfg.seed)
    optimizer = make_optimizer(params, cfg)
    stats: dict = {"method": method, "rank": rank, "trainable_parameters": int(sum(p.numel() for p in params))}
    if method == "dpsgd":
        from opacus import PrivacyEngine

        dp = dp or DPConfig()
        engine = PrivacyEngine(accountant="rdp")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Opacus's notes on secure RNG and on its optimiser wrapper
            trained, optimizer, loader = engine.make_private(
                module=trained,
                optimizer=optimizer,
                data_loader=loader,
                noise_multiplier=dp.noise_multiplier,
                max_grad_norm=dp.max_grad_norm,
                poisson_sampling=True,
                noise_generator=torch.Generator().manual_seed(cfg.seed + 2),
            )
    scheduler = linear_schedule(optimizer, cfg.epochs * len(loader), cfg.warmup_fraction)
    backward = None
    if accelerator is not None and method != "dpsgd":  # DP-SGD (Opacus) trains on one device
        trained, optimizer, loader, scheduler = accelerator.prepare(trained, optimizer, loader, scheduler)
        device, autocast_dtype, backward = accelerator.device, None, accelerator.backward  # it owns mixed precision
    with warnings.catch_warnings():
        # Opacus's hooks make torch note that no *input* requires a gradient; that is expected here
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        stats.update(
            run_training(
                trained,
                loader,
                optimizer,
                scheduler,
                cfg.epochs,
                hook,
                progress,
                desc,
                device,
                autocast_dtype,
                backward,
            )
        )
    if method == "dpsgd":
        stats.update(
            {
                "epsilon": float(engine.get_epsilon(dp.delta)),
                "delta": dp.delta,
                "noise_multiplier": dp.noise_multiplier,
                "max_grad_norm": dp.max_grad_norm,
            }
        )
        trained = trained._module  # the PEFT model underneath Opacus's wrapper
    elif backward is not None:  # totals over all processes
        stats["tokens"] = int(accelerator.reduce(torch.tensor(stats["tokens"], device=device), "sum"))
        stats["final_loss"] = float(accelerator.reduce(torch.tensor(stats["final_loss"], device=device), "mean"))
        trained = accelerator.unwrap_model(trained)
    return trained, stats


def default_train_config(engine: EngineScale, method: str, seed: int) -> TrainConfig:
    """The training configuration of ``method`` at a scale, before any command-line override."""
    hp = engine.hparams(ranked=method in RANKED)
    return TrainConfig(epochs=hp.epochs, lr=hp.lr, batch_size=hp.batch_size, seed=seed)
