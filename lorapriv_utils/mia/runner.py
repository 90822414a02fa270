"""The membership-inference grid runner: (dataset, method, rank, seed) cells at a named scale.

Every finished cell is written atomically as one JSON file holding its metrics and a
manifest (full configuration, seeds, split hashes, package versions, git commit, device,
wall time) plus a checksum.  A rerun skips cells whose file is present, intact and made
with the same configuration; a corrupted, partial or stale file is reported and recomputed,
never trusted.  ``shard=(i, n)`` runs every n-th cell starting at i, so a grid can be split
across processes or machines.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import platform
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from ..files import atomic_write_text
from ..provenance import git_commit, package_versions
from ..scale import EngineScale, Scale
from . import data as data_mod
from . import finetune, models
from . import metrics as mia_metrics
from .training import block_losses

ALPHAS = (0.01, 0.001, 0.0001)
SCHEMA = 1


@dataclass(frozen=True)
class Overrides:
    """Command-line overrides of every method's defaults (None: the scale's default)."""

    epochs: int | None = None
    lr: float | None = None
    optimizer: str | None = None


@dataclass(frozen=True)
class Cell:
    dataset: str
    method: str
    rank: int | None
    seed: int

    @property
    def name(self) -> str:
        rank = f"-r{self.rank}" if self.rank is not None else ""
        return f"{self.dataset}/{self.method}{rank}-s{self.seed}"


def plan(datasets: list[str], methods: list[str], ranks: list[int], seeds: list[int]) -> list[Cell]:
    """All cells of a grid: ranked methods once per rank, the others once."""
    for name in datasets:
        data_mod._check_name(name)
    for method in methods:
        if method not in finetune.METHODS:
            raise ValueError(f"unknown method {method!r}; choose from {', '.join(finetune.METHODS)} or 'all'")
    if any(isinstance(r, bool) or not isinstance(r, int) or r < 1 for r in ranks):
        raise ValueError(f"ranks must be integers >= 1, got {ranks}")
    cells = []
    for seed in seeds:
        for dataset in datasets:
            for method in methods:
                for rank in ranks if method in finetune.RANKED else [None]:
                    cells.append(Cell(dataset, method, rank, seed))
    return cells


def check_ranks(cells: list[Cell], scale: Scale) -> None:
    """Every rank must fit the adapted matrix c_attn (3 n_embd x n_embd) of the scale's model."""
    limit = scale.engine.model.n_embd
    bad = sorted({c.rank for c in cells if c.rank is not None and c.rank > limit})
    if bad:
        raise ValueError(
            f"rank(s) {bad} exceed min(n, m) = {limit} of c_attn at scale {scale.name}; use ranks <= {limit}"
        )


def shard(cells: list[Cell], index: int, count: int) -> list[Cell]:
    if not 0 <= index < count:
        raise ValueError(f"shard must be i/n with 0 <= i < n, got {index}/{count}")
    return cells[index::count]


def pick_device(requested: str = "auto") -> tuple[torch.device, torch.dtype | None]:
    """CUDA, then Apple MPS, then CPU; bf16 autocast on GPUs that support it."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch sees no CUDA GPU; use --device auto or cpu")
    device = torch.device(requested)
    bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    return device, torch.bfloat16 if bf16 else None


def make_accelerator(device: torch.device, autocast: torch.dtype | None):
    """Data-parallel training through accelerate, in as many processes as the launcher started.

    ``split_batches``: each optimiser step sees the configured batch size in total, split across
    the processes, so the hyperparameters mean the same with 1 GPU or 8.  Accelerate completes
    an epoch's last partial batch with blocks from the epoch's start (its ``even_batches``), so a
    multi-process run equals a single-process run only when the blocks fill whole batches.
    """
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration

    return Accelerator(
        cpu=device.type == "cpu",
        mixed_precision="bf16" if autocast == torch.bfloat16 else "no",
        dataloader_config=DataLoaderConfiguration(split_batches=True),
    )


def _checksum(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def result_path(out: Path, scale: Scale, cell: Cell) -> Path:
    return Path(out) / scale.name / f"{cell.name}.json"


def load_result(path: Path, config_digest: str) -> dict | None:
    """A finished cell's record, or None (with a warning) when it is missing, corrupt or from another config."""
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        payload = {k: v for k, v in record.items() if k != "checksum"}
        if record.get("checksum") != _checksum(payload) or record.get("schema") != SCHEMA:
            raise ValueError("checksum mismatch")
    except (ValueError, json.JSONDecodeError) as err:
        tqdm.write(f"lorapriv: {path} is corrupted or partial ({err}); recomputing it")
        return None
    if record["manifest"]["config_digest"] != config_digest:
        tqdm.write(f"lorapriv: {path} was made with another configuration; recomputing it")
        return None
    return record


@dataclass
class DatasetBlocks:
    members: np.ndarray
    auxiliary: np.ndarray
    nonmembers: np.ndarray
    validation: np.ndarray
    split_hashes: dict
    provenance: dict


def prepare_dataset(
    name: str, seed: int, engine: EngineScale, tokenizer, block_size: int, data_dir=None, hub: bool = False
) -> DatasetBlocks:
    corpus = data_mod.load_corpus(name, data_dir=data_dir, hub=hub, seed=seed, synthetic_count=engine.synthetic_count)
    split = data_mod.split_three_ways(corpus.train, seed)

    def enc(texts: list[str], cap: int | None) -> np.ndarray:
        return models.encode_blocks(tokenizer, texts[:cap] if cap else texts, block_size)

    cap = engine.max_texts_per_part
    return DatasetBlocks(
        enc(split.members, cap),
        enc(split.auxiliary, cap),
        enc(split.nonmembers, cap),
        enc(corpus.validation, engine.max_validation_texts),
        split.hashes,
        corpus.provenance,
    )


def attack_metrics(
    member_signal: np.ndarray, nonmember_signal: np.ndarray, rng: np.random.Generator, resamples: int
) -> dict:
    out = {"auc": asdict(mia_metrics.bootstrap(mia_metrics.roc_auc, member_signal, nonmember_signal, rng, resamples))}
    for alpha in ALPHAS:
        rate = mia_metrics.tpr_at_fpr(member_signal, nonmember_signal, alpha)
        ci = mia_metrics.bootstrap(
            lambda m, n, a=alpha: mia_metrics.tpr_at_fpr(m, n, a).tpr, member_signal, nonmember_signal, rng, resamples
        )
        out[f"tpr_at_{alpha:g}"] = {
            **asdict(ci),
            "achieved_fpr": rate.achieved_fpr,
            "min_resolvable_fpr": rate.min_resolvable_fpr,
            "at_zero_fpr": rate.at_zero_fpr,
        }
    return out


class Runner:
    """Runs cells, reusing the base model, datasets and reference models across cells."""

    def __init__(
        self,
        scale: Scale,
        out: Path,
        overrides: Overrides | None = None,
        data_dir=None,
        hub: bool = False,
        device: str = "auto",
        progress: bool = True,
        cache: Path | None = None,
        accelerate: bool = False,
    ):
        self.scale, self.engine, self.overrides = scale, scale.engine, overrides or Overrides()
        self.out, self.data_dir, self.hub, self.progress = Path(out), data_dir, hub, progress
        self.device, self.autocast = pick_device(device)
        self.accelerator = None
        if accelerate:  # data-parallel training; start several processes with `accelerate launch`
            self.accelerator = make_accelerator(self.device, self.autocast)
            self.device, self.autocast = self.accelerator.device, None  # the accelerator owns mixed precision
            self.progress = progress and self.accelerator.is_local_main_process
        self.cache = cache
        self._base = None
        self._datasets: dict = {}
        self._references: dict = {}

    @property
    def config(self) -> dict:
        """Everything in the scale record and the overrides that determines a grid's numbers."""
        return {"scale": self.scale.name, "engine": asdict(self.engine), "overrides": asdict(self.overrides)}

    @property
    def config_digest(self) -> str:
        return _checksum(self.config)[:16]

    def base(self):
        if self._base is None:
            # under several processes, one pre-trains and caches the base model, the others then load it
            first = contextlib.nullcontext() if self.accelerator is None else self.accelerator.main_process_first()
            with first:
                self._base = models.pretrained_base(self.scale, directory=self.cache, progress=self.progress)
        return self._base

    def dataset(self, name: str, seed: int) -> DatasetBlocks:
        if (name, seed) not in self._datasets:
            _, tokenizer, _ = self.base()
            self._datasets[(name, seed)] = prepare_dataset(
                name, seed, self.engine, tokenizer, self.engine.model.block_size, self.data_dir, self.hub
            )
        return self._datasets[(name, seed)]

    def train_config(self, method: str, seed: int):
        tc = finetune.default_train_config(self.engine, method, seed)
        tc = replace(tc, **{k: v for k, v in asdict(self.overrides).items() if v is not None})
        processes = 1 if self.accelerator is None else self.accelerator.num_processes
        if tc.batch_size % processes:
            raise ValueError(
                f"{method}'s batch size {tc.batch_size} does not split over {processes} processes; "
                "launch a number of processes that divides it"
            )
        return tc

    def _fine_tune(self, method, blocks, seed, rank=None, desc=""):
        model = copy.deepcopy(self.base()[0])
        return finetune.fine_tune(
            model,
            method,
            blocks,
            self.train_config(method, seed),
            rank=rank,
            dp=self.engine.dp,
            progress=self.progress,
            desc=desc,
            device=self.device,
            autocast_dtype=self.autocast,
            accelerator=self.accelerator,
        )

    def reference_losses(self, name: str, seed: int) -> dict:
        """Losses of the reference model (full fine-tuning on the auxiliary part) on members and non-members."""
        if (name, seed) not in self._references:
            blocks = self.dataset(name, seed)
            model, stats = self._fine_tune("full", blocks.auxiliary, seed, desc=f"{name} reference")
            self._references[(name, seed)] = {
                "members": block_losses(model, blocks.members, device=self.device),
                "nonmembers": block_losses(model, blocks.nonmembers, device=self.device),
                "stats": stats,
            }
        return self._references[(name, seed)]

    def run_cell(self, cell: Cell) -> dict:
        start = time.perf_counter()
        blocks = self.dataset(cell.dataset, cell.seed)
        reference = self.reference_losses(cell.dataset, cell.seed)
        model, stats = self._fine_tune(cell.method, blocks.members, cell.seed, cell.rank, desc=cell.name)
        members = block_losses(model, blocks.members, device=self.device)
        nonmembers = block_losses(model, blocks.nonmembers, device=self.device)
        validation = block_losses(model, blocks.validation, device=self.device)
        rng = np.random.default_rng([cell.seed, 99])
        resamples = self.engine.bootstrap_resamples
        metrics = {
            "reference_attack": attack_metrics(
                mia_metrics.reference_signal(members, reference["members"]),
                mia_metrics.reference_signal(nonmembers, reference["nonmembers"]),
                rng,
                resamples,
            ),
            "loss_attack": attack_metrics(members, nonmembers, rng, resamples),
            "validation_perplexity": float(np.exp(validation.mean())),
            "blocks": {
                "members": int(len(members)),
                "nonmembers": int(len(nonmembers)),
                "validation": int(len(validation)),
            },
            "training": {k: v for k, v in stats.items() if k != "seconds"},  # wall time goes to the manifest
        }
        _, _, base_info = self.base()
        manifest = {
            "cell": asdict(cell),
            "config": self.config,
            "config_digest": self.config_digest,
            "train_config": asdict(self.train_config(cell.method, cell.seed)),
            "model": {**asdict(self.engine.model), "base": base_info},
            "reference_training": reference["stats"],  # includes its wall time
            "split_hashes": blocks.split_hashes,
            "data_provenance": blocks.provenance,
            "versions": package_versions(),
            "git_commit": git_commit(),
            "device": str(self.device),
            "accelerate": None
            if self.accelerator is None
            else {
                "num_processes": self.accelerator.num_processes,
                "mixed_precision": str(self.accelerator.mixed_precision),
            },
            "autocast": str(self.autocast),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "torch_threads": torch.get_num_threads(),
            "training_seconds": stats["seconds"],
            "wall_seconds": time.perf_counter() - start,
        }
        record = {"schema": SCHEMA, "metrics": metrics, "manifest": manifest}
        record["checksum"] = _checksum(record)
        if self.accelerator is None or self.accelerator.is_main_process:
            atomic_write_text(result_path(self.out, self.scale, cell), json.dumps(record, indent=1, sort_keys=True))
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()
        return record

    def run(self, cells: list[Cell]) -> list[dict]:
        results = []
        for cell in tqdm(cells, desc=f"grid ({self.scale.name})", disable=not self.progress):
            done = load_result(result_path(self.out, self.scale, cell), self.config_digest)
            results.append(done if done is not None else self.run_cell(cell))
        return results
