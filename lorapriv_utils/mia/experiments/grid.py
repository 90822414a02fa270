"""The grid of a membership-inference run, without torch: methods, cells, sharding, argument parsing.

The command line validates everything here before it imports torch, so that a typo costs well
under a second; every error names the option it is about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ...scale import Scale
from ..engine.methods import GRID as METHODS  # the methods the grid offers
from ..engine.methods import RANKED

REFERENCES = ("same", "full")  # eq. 24's reference: the target's own method (calibrated), or full fine-tuning
DEFAULT_RANKS = (8, 16)  # paper A's Table 1
DEFAULT_METHODS = ("full", "adapter", "lora", "flora", "dpsgd")  # 'all' adds the other methods of the registry
REFERENCE_SEED_OFFSET = 1000


def reference_seed(seed: int) -> int:
    """The seed of a reference model's training randomness: independent of the target's (``seed``)."""
    return seed + REFERENCE_SEED_OFFSET


def cell_name(method: str, rank=None, noise=None, seed: int | None = None, dataset: str | None = None) -> str:
    """The one name of a trained model's cell, as its record's file is named: ``[dataset/]method[-rR][-zZ][-sS]``
    (``enron/lora-r8-s0``, ``dpsgd-r8-z1-s0``); a missing or NaN rank or noise is left out."""

    def given(value) -> bool:
        return value is not None and not (isinstance(value, float) and math.isnan(value))

    name = method + (f"-r{int(rank)}" if given(rank) else "") + (f"-z{noise:g}" if given(noise) else "")
    name += f"-s{seed}" if seed is not None else ""
    return f"{dataset}/{name}" if dataset is not None else name


def audit_stem(method: str, rank=None, noise=None, lr: float | None = None) -> str:
    """A canary audit's name less its seed: its cell's name, then the rate where ``--lr`` fixed it rather than the
    sweep choosing it (``full-lr3e-05``), so that the two audits of one method lie side by side."""
    return cell_name(method, rank, noise) + ("" if lr is None else f"-lr{lr:g}")


def result_path(out, scale: Scale, cell: Cell) -> Path:
    """Where a grid cell's record lies: ``OUT/SCALE/DATASET/NAME.json``."""
    return Path(out) / scale.name / f"{cell.name}.json"


def frontier_path(out: Path, scale_name: str, dataset: str, name: str, seed: int) -> Path:
    """Where a frontier record lies (``name``: ``base``, or a point's :func:`point_name`)."""
    return Path(out) / scale_name / "frontier" / f"{cell_name(name, seed=seed, dataset=dataset)}.json"


def point_name(variant_name: str, lr: float) -> str:
    """A frontier point's name: its variant's, then its rate (``lora-r8-lr0.01``)."""
    return f"{variant_name}-lr{lr:g}"


def audit_path(out: Path, scale: Scale, cell: Cell, dp, lr: float | None = None) -> Path:
    """``<scale>/audit/<dataset>/<method>[-r<rank>][-z<sigma>][-lr<lr>]-s<seed>.json``: the order of every record's
    name (method, rank, noise, rate, seed), as the grid's and the frontier's; ``dp``, DP-SGD's settings (a
    ``DPConfig``, read for a dpsgd cell); ``lr``, a rate fixed by ``--lr`` rather than swept, names the record so that
    it lies beside the swept one."""
    sigma = None if dp is None or cell.method != "dpsgd" else dp.noise_multiplier
    name = audit_stem(cell.method, cell.rank, sigma, lr)
    return Path(out) / scale.name / "audit" / cell.dataset / f"{name}-s{cell.seed}.json"


FRONTIER_RANKS = (1, 2, 4, 8, 16, 32, 64)  # the rank sweep of the frontier
FRONTIER_NOISE = (0.5, 1.0, 2.0)  # DP-SGD's noise multipliers on the frontier
FRONTIER_CHECKPOINTS = (1, 2, 4, 8)  # epochs after which a frontier run is scored
FRONTIER_DP_RANK = 8


@dataclass(frozen=True)
class Variant:
    """One curve of the privacy-utility frontier: a method, its rank, and DP-SGD's noise multiplier."""

    method: str
    rank: int | None = None
    noise_multiplier: float | None = None

    def __post_init__(self) -> None:
        check_methods([self.method])
        if (self.method in RANKED) != (self.rank is not None):
            raise ValueError(f"--variants: {self.method} {'needs' if self.method in RANKED else 'takes no'} rank")
        if (self.method == "dpsgd") != (self.noise_multiplier is not None):
            raise ValueError("--variants: a noise multiplier goes with dpsgd, and dpsgd needs one")
        if self.noise_multiplier is not None and not self.noise_multiplier > 0:
            raise ValueError(f"--noise: multipliers must be > 0, got {self.noise_multiplier}")

    @property
    def name(self) -> str:
        return cell_name(self.method, self.rank, self.noise_multiplier)


def frontier_variants(
    ranks: tuple[int, ...] = FRONTIER_RANKS, noise: tuple[float, ...] = FRONTIER_NOISE, dp_rank: int = FRONTIER_DP_RANK
) -> list[Variant]:
    """The frontier's curves: full and adapter fine-tuning, LoRA at every rank, FLoRA and DP-SGD (LoRA
    factors, rank ``dp_rank``) at every noise multiplier."""
    return [
        Variant("full"),
        Variant("adapter"),
        *(Variant("lora", r) for r in ranks),
        Variant("flora", dp_rank),
        *(Variant("dpsgd", dp_rank, z) for z in noise),
    ]


@dataclass(frozen=True)
class Cell:
    dataset: str
    method: str
    rank: int | None
    seed: int

    @property
    def name(self) -> str:
        return cell_name(self.method, self.rank, seed=self.seed, dataset=self.dataset)


def cell_seeds(cell: Cell) -> dict:
    """Every seed a cell derives from its own (recorded in the manifest)."""
    s = cell.seed
    return {
        "split": [s, 11],
        "validation_cut": [s, 7],
        "training_order": s,
        "lora_init": s,
        "flora_resampling": s + 1,
        "dp_noise": s + 2,
        "dp_sampling": s + 3,
        "bootstrap": [s, 99],
        "reference": reference_seed(s),  # the sweep's and reference's secret randomness (its own +1, +2, +3)
        "reference_lora_init": s,  # the public start A, shared with the target
    }


def check_methods(methods: list[str]) -> list[str]:
    if not methods:
        raise ValueError("--methods: the list is empty")
    for method in methods:
        if method not in METHODS:
            raise ValueError(f"--methods: unknown method {method!r}; choose from {', '.join(METHODS)} or 'all'")
    return methods


def plan(
    datasets: list[str], methods: list[str], ranks: list[int], seeds: list[int], own: tuple[str, ...] = ()
) -> list[Cell]:
    """All cells of a grid: ranked methods once per rank, the others once (``own``: the names of a user's own
    corpora, ``--data``, beside the built-in ones)."""
    from ..engine.data import check_name  # numpy only

    for name in datasets:
        if name not in own:
            check_name(name)
    check_methods(methods)
    if any(isinstance(r, bool) or not isinstance(r, int) or r < 1 for r in ranks):
        raise ValueError(f"--ranks: ranks must be integers >= 1, got {ranks}")
    if any(m in RANKED for m in methods) and not ranks:
        raise ValueError(
            "--ranks: the list is empty, but " + ", ".join(m for m in methods if m in RANKED) + " need one"
        )
    cells = []
    for seed in seeds:
        for dataset in datasets:
            for method in methods:
                for rank in ranks if method in RANKED else [None]:
                    cells.append(Cell(dataset, method, rank, seed))
    return cells


def check_ranks(cells: list[Cell], scale: Scale) -> None:
    """Every rank must fit every adapted projection of the scale's model (``ModelSpec.max_rank``)."""
    limit = scale.engine.model.max_rank()
    bad = sorted({c.rank for c in cells if c.rank is not None and c.rank > limit})
    if bad:
        raise ValueError(
            f"--ranks: rank(s) {bad} exceed min(n, m) = {limit} of the adapted projections at scale {scale.name}; "
            f"use ranks <= {limit}"
        )


def shard(cells: list[Cell], index: int, count: int) -> list[Cell]:
    if not 0 <= index < count:
        raise ValueError(f"--shard: must be i/n with 0 <= i < n, got {index}/{count}")
    return cells[index::count]


def parse_list(option: str, text: str, every: tuple[str, ...]) -> list[str]:
    """A comma list, or every choice for 'all'."""
    items = list(every) if text.strip() == "all" else [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"{option}: the list is empty")
    return list(dict.fromkeys(items))  # a repeated item once


def parse_ints(option: str, text: str, minimum: int = 0) -> list[int]:
    """Integers from a comma list; an error names the option and the offending item."""
    values = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            value = int(item)
        except ValueError:
            raise ValueError(f"{option}: {item!r} is not an integer") from None
        if value < minimum:
            raise ValueError(f"{option}: {value} is below {minimum}")
        values.append(value)
    if not values:
        raise ValueError(f"{option}: the list is empty")
    return list(dict.fromkeys(values))  # a repeated value once


def parse_floats(option: str, text: str) -> list[float]:
    """Positive finite numbers from a comma list; an error names the option and the offending item."""
    values = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"{option}: {item!r} is not a number") from None
        if not 0 < value < float("inf"):
            raise ValueError(f"{option}: {value} must be positive and finite")
        values.append(value)
    if not values:
        raise ValueError(f"{option}: the list is empty")
    return list(dict.fromkeys(values))  # a repeated value once


def plan_variants(methods: list[str], ranks: list[int], noise: list[float], dp_rank: int) -> list[Variant]:
    """The frontier's curves for the selected methods (see :func:`frontier_variants`)."""
    check_methods(methods)
    every = frontier_variants(tuple(ranks), tuple(noise), dp_rank)
    extra = [Variant(m, dp_rank) for m in methods if m in ("lorafa", "rowscale")]
    return [v for v in every if v.method in methods] + extra


def parse_shard(text: str) -> tuple[int, int]:
    parts = text.split("/")
    try:
        index, count = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"--shard: expected i/n (for instance 0/2), got {text!r}") from None
    if not 0 <= index < count:
        raise ValueError(f"--shard: must be i/n with 0 <= i < n, got {text}")
    return index, count


def check_ranks_given(ranks_given: bool, methods: list[str]) -> None:
    """Refuse --ranks when no selected method has a rank: the user meant something else."""
    if ranks_given and not any(m in RANKED for m in methods):
        raise ValueError(
            f"--ranks: given, but none of the methods {', '.join(methods)} has a rank (ranked: {', '.join(RANKED)})"
        )


# DP-SGD on different sets of weights (``dp_compare``)
WEIGHT_SETS = ("full", "adapter", "lorafa", "lora", "compressed")
LOW_RANK = ("lorafa", "lora", "compressed")


@dataclass(frozen=True)
class DPCell:
    """One DP training: a weight set, DP-SGD's noise multiplier (0: clipping only), a dataset and a seed.

    For ``compressed`` the noise multiplier names the plain DP-SGD certificate matched (the training itself
    uses the smaller noise that gives compressed DP-SGD that epsilon; the record stores both)."""

    weights: str
    noise: float
    dataset: str = "ptb"
    seed: int = 0
    rank: int | None = None

    def __post_init__(self) -> None:
        if self.weights not in WEIGHT_SETS:
            raise ValueError(f"unknown weight set {self.weights!r}; choose one of {', '.join(WEIGHT_SETS)}")
        if (self.weights in LOW_RANK) != (self.rank is not None):
            raise ValueError(f"weight set {self.weights!r} {'needs' if self.weights in LOW_RANK else 'takes no'} rank")
        if not (math.isfinite(self.noise) and self.noise >= 0):
            raise ValueError(f"the noise multiplier must be finite and >= 0 (0: clipping only), got {self.noise}")
        if self.weights == "compressed" and self.noise == 0:
            raise ValueError("compressed DP-SGD matches a DP-SGD certificate: give a noise multiplier > 0")

    @property
    def name(self) -> str:
        return cell_name(self.weights, self.rank, self.noise, self.seed, self.dataset)
