"""The fine-tuning methods, one registry entry each: what a method trains, how, and what its numbers depend on.

Torch-free: the command line, the specs and the status check read it.  The engine's implementations
(``finetune.prepare`` for the weights, ``finetune.TRAINERS`` for the loop) are driven by these fields,
so adding a method is one entry here, its numerics component (``store.NUMERICS``), a tripwire and its
tests; a new way of training adds one trainer.

Fields:

* ``weights``: ``all`` (every parameter), ``body`` (every parameter but the embeddings: token, position
  and output head, ``families.Family.embedding_weights``), ``adapted`` (the adapted projections themselves, at full
  rank: ``families``), or ``lora`` (PEFT LoRA factors on the adapted projections, B = 0 and A with
  N(0, 1/r) entries at start);
* ``train_a``: LoRA's A trains too (plain LoRA) or stays at its random start (LoRA-FA, paper A's frozen A);
* ``fixed_a``: LoRA's frozen A is not drawn but fixed: sqrt(m / r) times the first r rows of the orthonormal
  DCT-II basis of R^m, a subspace chosen without data and the same for every seed, with A A^T = (m / r) I,
  the value a random A's A A^T takes on average (the control arm that differs from LoRA-FA only in A);
* ``resample_a``: after every step B A is merged into the weight, B reset and A drawn afresh (FLoRA);
* ``trainer``: ``batch`` (the engine's training loop, ``training.run_training``), ``dp`` (DP-SGD over
  texts, ``dp.dp_train``), ``rowscale`` (paper A's row scaling of per-text gradients,
  ``rowscale.rowscale_train``), ``compressed`` (paper B's M2, ``compressed.compressed_train``);
* ``optimizer``: how it trains by default, ``adamw`` or ``sgd`` (``adaptersgd``: paper A's Table 1 trains its
  adapters with SGD); an SGD method sweeps the scale's ``EngineScale.sgd_lr_grid`` (:func:`lr_grid`);
* ``settings``: the engine record's field the method reads (``EngineScale.dp`` or ``.rowscale``), which
  enters its records' specs; None for the others;
* ``components``: the numerics components the method uses besides the engine's shared ones;
* ``grid``: whether the grid command offers it (``compressed`` is a weight set of the DP comparison).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    name: str
    label: str
    weights: str
    components: tuple[str, ...]
    train_a: bool = False
    fixed_a: bool = False
    resample_a: bool = False
    trainer: str = "batch"
    settings: str | None = None
    grid: bool = True
    optimizer: str = "adamw"

    @property
    def ranked(self) -> bool:
        """A method with a LoRA rank r (its factors, or its projection's rank)."""
        return self.weights == "lora" or self.trainer == "compressed"

    @property
    def per_text(self) -> bool:
        """A method that clips or rescales each text's gradient in one process (not data-parallel)."""
        return self.trainer != "batch"


REGISTRY: dict[str, Method] = {
    m.name: m
    for m in (
        Method("full", "full fine-tuning", "all", ("full",)),
        Method("frozenemb", "full fine-tuning (embeddings frozen)", "body", ("full", "frozenemb")),
        Method("adapter", "adapter fine-tuning", "adapted", ("adapter",)),
        Method("adaptersgd", "adapter fine-tuning (SGD)", "adapted", ("adapter",), optimizer="sgd"),
        Method("lora", "LoRA", "lora", ("lora",), train_a=True),
        Method("lorafa", "LoRA-FA", "lora", ("lora", "lorafa")),
        Method("lorafixed", "LoRA-FA (fixed A)", "lora", ("lora", "lorafa", "lorafixed"), fixed_a=True),
        Method("flora", "FLoRA", "lora", ("lora", "flora"), resample_a=True),
        Method("dpsgd", "DP-SGD (LoRA)", "lora", ("lora", "dpsgd"), train_a=True, trainer="dp", settings="dp"),
        Method(
            "rowscale",
            "LoRA (row-scaled)",
            "lora",
            ("lora", "lorafa", "rowscale"),
            trainer="rowscale",
            settings="rowscale",
        ),
        Method(
            "compressed",
            "compressed DP-SGD",
            "adapted",
            ("adapter", "dpsgd", "compressed"),
            trainer="compressed",
            settings="dp",
            grid=False,
        ),
    )
}
GRID = tuple(name for name, m in REGISTRY.items() if m.grid)  # what the grid offers and fine_tune trains
POSITION = {name: k for k, name in enumerate(GRID)}  # each method's place in every table of them


def position(name: str) -> int:
    """A method's place in a table of methods: its place in GRID, and after all of them for one the grid does not
    offer (compressed DP-SGD, or a method no longer registered)."""
    return POSITION.get(name, len(POSITION))


RANKED = tuple(name for name in GRID if REGISTRY[name].ranked)
WEIGHTS = ("all", "body", "adapted", "lora")
TRAINERS = ("batch", "dp", "rowscale", "compressed")


def lr_grid(engine, name: str) -> tuple[float, ...]:
    """The rates ``name``'s sweep tries at a scale (``engine``: its ``EngineScale``): the SGD rates for a method
    that trains with SGD, else its family's (LoRA-type or dense) AdamW rates."""
    if get(name).optimizer == "sgd":
        if not engine.sgd_lr_grid:
            raise ValueError(f"{name} trains with SGD and this scale declares no SGD rates; pass them with --lr-grid")
        return tuple(engine.sgd_lr_grid)
    return engine.hparams(ranked=name in RANKED).lr_grid


def optimizer_refused(name: str, optimizer: str | None) -> bool:
    """Whether ``optimizer`` contradicts ``name``'s own optimiser where that is part of the method (``adaptersgd``'s
    SGD); the AdamW methods take any, and None means the method's own."""
    own = get(name).optimizer
    return own != "adamw" and optimizer not in (None, own)


def get(name: str) -> Method:
    """The method called ``name``; a clear error lists the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(REGISTRY)}") from None
