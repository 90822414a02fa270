"""Fine-tuning methods behind one interface (paper A, section 6).

* ``full``: every parameter of the model.
* ``adapter``: the very weight matrices that LoRA adapts (the adapted projections of every block:
  GPT-2's fused attention projection ``c_attn``, Llama's ``q_proj`` and ``v_proj``; see
  :mod:`.families`), trained directly, without a low-rank factorisation: the comparison that
  paper A's theory makes.
* ``adaptersgd``: the same weights trained with plain SGD, as paper A's §6 says its adapters were, over the
  scale's SGD rates (``EngineScale.sgd_lr_grid``; the AdamW grids do not fit SGD).
* ``lora``: LoRA through PEFT on the adapted projections, rank r, scaling 1 (lora_alpha = r),
  B = 0 and A with i.i.d. N(0, 1/r) entries at start as in paper A.  GPT-2's ``c_attn`` is a
  ``Conv1D`` whose weight is stored (in, out), so ``fan_in_fan_out=True`` there.
* ``lorafa``: LoRA with A frozen at its random start and only B trained (LoRA-FA: paper A's
  frozen-A setting, and the release paper B attacks).
* ``flora``: LoRA with A frozen and resampled after every step; before resampling, B A is
  merged into the weight, B reset to 0 and B's optimiser state (AdamW's moments) cleared, so
  each step moves the weight by a fresh random projection of the gradient (the FLoRA rule of
  the dynamics chapter) and no moment estimated under an old A carries over to a new one.
* ``dpsgd``: DP-SGD through Opacus on the LoRA factors, a text being the privacy unit
  (``lorapriv_utils.mia.engine.dp``), with epsilon from the PRV and RDP accountants.
* ``rowscale``: LoRA with A frozen and every row of every per-text B-gradient rescaled to norm
  (1 - Delta) sqrt(r) c before the step (paper A, section 5; ``lorapriv_utils.mia.engine.rowscale``).

Budgets: each scale's record (``lorapriv_utils.scale.EngineScale``, fields ``dense`` and
``lora``) holds epochs, batch size and the learning rates swept; the runner picks each
method's rate by one rule (see ``Hparams``).  The paper states 20 epochs and learning rate
1e-5 with a linear schedule but not the optimiser; the code it follows used AdamW, and 1e-4
for PEFT methods.  We use AdamW for every method but ``adaptersgd``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from peft import LoraConfig, get_peft_model

from ...scale import DPConfig, EngineScale, RowScaleConfig
from . import families, methods
from .data import TextWindows
from .methods import GRID as METHODS
from .methods import RANKED
from .training import EpochHook, TrainConfig, block_loader, linear_schedule, make_optimizer, run_training

__all__ = ["METHODS", "RANKED", "fine_tune", "prepare"]


def max_rank(model: torch.nn.Module) -> int:
    """The largest rank every adapted projection admits: min(n, m) over them."""
    return min(min(shape) for shape in families.family_of(model).adapted_shapes(model))


def check_method(method: str, rank: int | None, model: torch.nn.Module) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method in RANKED:
        family = families.family_of(model)
        limit = max_rank(model)
        if rank is None or isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= limit:
            shapes = sorted({f"{n} x {m}" for n, m in family.adapted_shapes(model)})
            raise ValueError(
                f"method {method!r} needs a rank r with 1 <= r <= min(n, m) = {limit} "
                f"({'/'.join(family.targets)}: {', '.join(shapes)}), got {rank!r}"
            )


def lora_config(model: torch.nn.Module, rank: int, recipe: dict | None = None) -> LoraConfig:
    """PEFT's configuration of the engine's LoRA on ``model``'s adapted projections, scaling 1; or of a user's
    ``recipe`` (``recipe.read_peft_config``: its modules, rank, alpha, dropout, bias and rsLoRA)."""
    family = families.family_of(model)
    if recipe is not None:
        names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
        missing = [target for target in recipe["target_modules"] if target not in names]
        if missing:
            linear = sorted({n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)})
            raise ValueError(
                f"--peft-config: target_modules {', '.join(missing)} match no module of the model; "
                f"its linear layers are named {', '.join(linear) or 'otherwise'}"
            )
        if recipe["r"] != rank:
            raise ValueError(f"--peft-config sets r = {recipe['r']}, the run asks for rank {rank}: drop --ranks")
        return LoraConfig(
            r=rank,
            lora_alpha=recipe["lora_alpha"],
            target_modules=list(recipe["target_modules"]),
            fan_in_fan_out=family.fan_in_fan_out,
            lora_dropout=recipe["lora_dropout"],
            bias=recipe["bias"],
            use_rslora=recipe["use_rslora"],
        )
    return LoraConfig(
        r=rank,
        lora_alpha=rank,
        target_modules=list(family.targets),
        fan_in_fan_out=family.fan_in_fan_out,
        lora_dropout=0.0,
        bias="none",
    )


def _lora(
    model: torch.nn.Module, rank: int, seed: int, fixed: bool = False, recipe: dict | None = None
) -> torch.nn.Module:
    config = lora_config(model, rank, recipe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PEFT's notes on deprecated transformers attributes
        peft_model = get_peft_model(model, config)
    generator = torch.Generator().manual_seed(seed)
    for layer in lora_layers(peft_model):
        if fixed:
            with torch.no_grad():
                weight = layer.lora_A["default"].weight
                weight.copy_(fixed_a(*weight.shape).to(weight.dtype))
        else:
            resample_a(layer, generator)
        torch.nn.init.zeros_(layer.lora_B["default"].weight)
    return peft_model


def fixed_a(rank: int, width: int) -> torch.Tensor:
    """The fixed A (r x m) of ``lorafixed``: sqrt(m / r) times the first r rows of the orthonormal DCT-II basis,
    so A A^T = (m / r) I_r, which a random A with N(0, 1/r) entries has on average."""
    if not 1 <= rank <= width:
        raise ValueError(f"a fixed A needs 1 <= r <= m, got r = {rank}, m = {width}")
    k = torch.arange(rank, dtype=torch.float64)[:, None]
    n = torch.arange(width, dtype=torch.float64)[None, :]
    basis = torch.cos(math.pi * (n + 0.5) * k / width) * math.sqrt(2.0 / width)
    basis[0] /= math.sqrt(2.0)
    return basis * math.sqrt(width / rank)


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


def prepare(
    model: torch.nn.Module,
    method: str,
    rank: int | None = None,
    seed: int = 0,
    a_seed: int | None = None,
    recipe: dict | None = None,
):
    """The model to train for ``method`` (possibly PEFT-wrapped), its trainable parameters and a step hook, from
    the method's registry entry (``methods.REGISTRY``: which weights, A trained or frozen, A resampled).

    LoRA's start A comes from ``a_seed`` (default ``seed``), so that a reference model may share it: A is
    public where it stays frozen and ships with the adapter (LoRA-FA, row scaling); plain LoRA trains A and
    releases only its end point.  FLoRA's later draws of A come from ``seed + 1`` (secret).  ``recipe``: a user's
    LoRA recipe, which only method ``lora`` takes (:func:`lora_config`)."""
    check_method(method, rank, model)
    if recipe is not None and method != "lora":
        raise ValueError(f"--peft-config: a LoRA recipe applies to method lora, not {method}")
    spec = methods.get(method)
    for p in model.parameters():
        p.requires_grad_(spec.weights in ("all", "body"))
    if spec.weights != "lora":
        if spec.weights == "body":  # the control of issue 28: full fine-tuning that cannot move the embeddings
            for weight in families.family_of(model).embedding_weights(model):
                weight.requires_grad_(False)
        if spec.weights == "adapted":
            for weight in families.family_of(model).adapted_weights(model):
                weight.requires_grad_(True)
        return model, [p for p in model.parameters() if p.requires_grad], None
    peft_model = _lora(model, rank, seed if a_seed is None else a_seed, fixed=spec.fixed_a, recipe=recipe)
    if spec.train_a:
        return peft_model, [p for p in peft_model.parameters() if p.requires_grad], None
    layers = lora_layers(peft_model)
    for layer in layers:
        layer.lora_A["default"].weight.requires_grad_(False)
    trained = [layer.lora_B["default"].weight for layer in layers]
    if not spec.resample_a:  # A frozen, B trained (section 5; LoRA-FA)
        return peft_model, trained, None
    generator = torch.Generator().manual_seed(seed + 1)

    def hook(optimizer: torch.optim.Optimizer | None = None) -> None:
        for layer in layers:
            merge_and_reset(layer, generator)
        if optimizer is not None:
            reset_optimizer_state(optimizer, trained)

    return peft_model, trained, hook


def reset_optimizer_state(optimizer: torch.optim.Optimizer, params: list[torch.nn.Parameter]) -> None:
    """Forget the optimiser's state (moments, step count) of ``params``; wrappers (accelerate) pass through."""
    inner = getattr(optimizer, "optimizer", optimizer)
    for p in params:
        inner.state.pop(p, None)


def fine_tune(
    model: torch.nn.Module,
    method: str,
    data: np.ndarray | TextWindows,
    cfg: TrainConfig,
    rank: int | None = None,
    dp: DPConfig | None = None,
    progress: bool = False,
    desc: str = "fine-tuning",
    device: torch.device | None = None,
    autocast_dtype: torch.dtype | None = None,
    accelerator=None,
    rowscale: RowScaleConfig | None = None,
    epoch_hook: EpochHook | None = None,
    a_seed: int | None = None,
    recipe: dict | None = None,
) -> tuple[torch.nn.Module, dict]:
    """Fine-tune ``model`` with ``method`` on ``data`` (text windows, or rows each of which is a text);
    returns the trained model (for evaluation) and stats.  ``epoch_hook(epoch, model, steps)`` runs after
    every epoch (checkpoints of the privacy-utility frontier); not with ``accelerator``.  ``a_seed`` draws
    LoRA's start A (default ``cfg.seed``, which draws everything else: order, noise, sampling, resampling);
    ``recipe``, a user's LoRA recipe for method ``lora`` (:func:`lora_config`)."""
    if epoch_hook is not None and accelerator is not None:
        raise ValueError("epoch checkpoints (the frontier) run in one process: drop --accelerate")
    if methods.optimizer_refused(method, cfg.optimizer):
        raise ValueError(f"{method} trains with {methods.get(method).optimizer}, not {cfg.optimizer}: drop --optimizer")
    torch.manual_seed(cfg.seed)
    if not isinstance(data, TextWindows):
        rows = np.asarray(data)
        data = TextWindows(rows, np.arange(len(rows)), len(rows))
    device = device or torch.device("cpu")
    trained, params, hook = prepare(model, method, rank, cfg.seed, a_seed, recipe)
    trained.to(device)
    stats: dict = {"method": method, "rank": rank, "trainable_parameters": int(sum(p.numel() for p in params))}
    trainer = TRAINERS[methods.get(method).trainer]
    if accelerator is not None and accelerator.num_processes > 1 and methods.get(method).per_text:
        raise ValueError(
            f"{method} clips per text in one process, which each of the {accelerator.num_processes} processes "
            "would repeat: train it without --accelerate"
        )
    context = {
        "rank": rank,
        "dp": dp or DPConfig(),
        "rowscale": rowscale or RowScaleConfig(),
        "hook": hook,
        "progress": progress,
        "desc": desc,
        "device": device,
        "autocast_dtype": autocast_dtype,
        "accelerator": accelerator,
        "epoch_hook": epoch_hook,
    }
    trained, more = trainer(trained, params, data, cfg, **context)
    return trained, {**stats, **more}


def _train_batch(trained, params, data: TextWindows, cfg: TrainConfig, **c) -> tuple[torch.nn.Module, dict]:
    """The engine's training loop over batches of windows (``training.run_training``), data-parallel under an
    accelerator."""
    device, autocast_dtype, accelerator = c["device"], c["autocast_dtype"], c["accelerator"]
    loader = block_loader(data.ids, cfg.batch_size, cfg.seed)
    optimizer = make_optimizer(params, cfg)
    scheduler = linear_schedule(optimizer, cfg.epochs * len(loader), cfg.warmup_fraction)
    backward = None
    if accelerator is not None:
        trained, optimizer, loader, scheduler = accelerator.prepare(trained, optimizer, loader, scheduler)
        device, autocast_dtype, backward = accelerator.device, None, accelerator.backward  # it owns mixed precision
    stats = run_training(
        trained,
        loader,
        optimizer,
        scheduler,
        cfg.epochs,
        c["hook"],
        c["progress"],
        c["desc"],
        device,
        autocast_dtype,
        backward,
        c["epoch_hook"],
    )
    if backward is not None:  # totals over all processes
        stats["tokens"] = int(accelerator.reduce(torch.tensor(stats["tokens"], device=device), "sum"))
        stats["final_loss"] = float(accelerator.reduce(torch.tensor(stats["final_loss"], device=device), "mean"))
        trained = accelerator.unwrap_model(trained)
    return trained, stats


def _train_dp(trained, params, data: TextWindows, cfg: TrainConfig, **c) -> tuple[torch.nn.Module, dict]:
    """DP-SGD over texts (``dp.dp_train``)."""
    from .dp import dp_train

    return dp_train(trained, params, data, cfg, c["dp"], c["device"], c["progress"], c["desc"], c["epoch_hook"])


def _train_rowscale(trained, params, data: TextWindows, cfg: TrainConfig, **c) -> tuple[torch.nn.Module, dict]:
    """Row-scaled per-text gradients (``rowscale.rowscale_train``)."""
    from .rowscale import rowscale_train

    return rowscale_train(
        trained, params, data, cfg, c["rowscale"], c["rank"], c["device"], c["progress"], c["desc"], c["epoch_hook"]
    )


# How each ``methods.Method.trainer`` trains (compressed DP-SGD is run by ``dp_compare`` on its weight set).
TRAINERS = {"batch": _train_batch, "dp": _train_dp, "rowscale": _train_rowscale}


def default_train_config(engine: EngineScale, method: str, seed: int, lr: float | None = None) -> TrainConfig:
    """The training configuration of ``method`` at a scale; ``lr`` defaults to the middle of its sweep grid."""
    hp = engine.hparams(ranked=method in RANKED)
    if lr is None:
        grid = methods.lr_grid(engine, method)
        lr = grid[len(grid) // 2]
    optimizer = methods.get(method).optimizer
    return TrainConfig(epochs=hp.epochs, lr=lr, batch_size=hp.batch_size, seed=seed, optimizer=optimizer)
