"""What the runs of one command share: the scale, the options, the device, and caches keyed like the store.

A :class:`Workspace` is plain settings plus three caches that every cell of a run reuses: the prepared base model
(one per scale; on disk, ``models.pretrained_base`` keys it by its spec), each corpus's split as text windows (by
corpus and seed, :mod:`.prepare`) and each learning-rate sweep (by corpus, method, rank and seed, :mod:`.sweep`).
It runs nothing itself: the stages of a cell (:mod:`.runner`) and the other experiments read it.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from ...provenance import code_at_start, git_commit, git_dirty, package_versions, runtime
from ...scale import Scale
from ...store import key_of
from ..engine import finetune, models
from ..records import specs
from .grid import REFERENCES, Cell
from .prepare import PreparedData, prepare_dataset


@dataclass(frozen=True)
class Overrides:
    """Command-line overrides of every method's defaults (None: the scale's default; ``lr`` skips the sweep,
    ``lr_grid`` replaces the sweep's rates, for instance SGD's, which the scale's AdamW grids do not fit)."""

    epochs: int | None = None
    lr: float | None = None
    optimizer: str | None = None
    lr_grid: tuple[float, ...] | None = None


def pick_device(requested: str = "auto") -> tuple[torch.device, torch.dtype | None]:
    """CUDA, then Apple MPS, then CPU; bf16 autocast on GPUs that support it."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device: 'cuda' requested but torch sees no CUDA GPU; use --device auto or cpu")
    device = torch.device(requested)
    bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    return device, torch.bfloat16 if bf16 else None


def make_accelerator(device: torch.device, autocast: torch.dtype | None):
    """Data-parallel training through accelerate, in as many processes as the launcher started.

    ``split_batches``: each optimiser step sees the configured batch size in total, split across
    the processes, so the hyperparameters mean the same with 1 GPU or 8.  Accelerate completes
    an epoch's last partial batch with rows from the epoch's start (its ``even_batches``), so a
    multi-process run equals a single-process run only when the rows fill whole batches.
    """
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration

    return Accelerator(
        cpu=device.type == "cpu",
        mixed_precision="bf16" if autocast == torch.bfloat16 else "no",
        dataloader_config=DataLoaderConfiguration(split_batches=True),
    )


def set_threads(threads: int | None) -> int:
    """Use ``threads`` CPU threads in torch (default: every core); returns the number set."""
    count = threads or os.cpu_count() or 1
    if count < 1:
        raise ValueError(f"--threads: must be >= 1, got {count}")
    torch.set_num_threads(count)
    return count


class Workspace:
    """One command's settings and caches (see the module docstring); ``reference`` is eq. 24's reference model
    (``grid.REFERENCES``), ``accelerate`` trains data-parallel in the processes ``accelerate launch`` started."""

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
        reference: str = "same",
    ):
        if reference not in REFERENCES:
            raise ValueError(f"--reference: choose one of {', '.join(REFERENCES)}, got {reference!r}")
        self.scale, self.engine, self.overrides = scale, scale.engine, overrides or Overrides()
        self.out, self.data_dir, self.hub, self.progress = Path(out), data_dir, hub, progress
        self.reference = reference
        self.device, self.autocast = pick_device(device)
        self.accelerator = None
        if accelerate:  # data-parallel training; start several processes with `accelerate launch`
            self.accelerator = make_accelerator(self.device, self.autocast)
            self.device, self.autocast = self.accelerator.device, None  # the accelerator owns mixed precision
            self.progress = progress and self.accelerator.is_local_main_process
        self.cache = cache
        self.code = code_at_start()  # the code this process loaded: the checkout may move on before a record
        self._base = None
        self._datasets: dict[tuple[str, int], PreparedData] = {}
        self.sweeps: dict = {}  # (dataset, method, rank, seed) -> the sweep's result (:func:`.sweep.sweep`)

    @property
    def config(self) -> dict:
        """Everything in the scale record and the options that determines a grid's numbers."""
        return {
            "scale": self.scale.name,
            "engine": asdict(self.engine),
            "overrides": asdict(self.overrides),
            "reference": self.reference,
        }

    def corpus(self, name: str, seed: int) -> dict:
        """The digest of a dataset's texts as this run loads them (no tokenizer needed)."""
        return specs.dataset_corpus(self.engine, name, seed, self.data_dir, self.hub)

    def options(self) -> dict:
        """The run's options that enter a spec: the overrides and the reference model."""
        return {"overrides": asdict(self.overrides), "reference": self.reference}

    def spec(self, cell: Cell) -> dict:
        """What a cell's numbers depend on (``specs.cell_spec``); its key decides whether a record is reused."""
        return specs.cell_spec(self.engine, cell, self.corpus(cell.dataset, cell.seed), **self.options())

    def key(self, cell: Cell) -> dict:
        """The key of a cell: one digest per part of its spec."""
        return key_of(self.spec(cell))

    def base(self):
        """The prepared base model, its tokenizer and its description (cached)."""
        if self._base is None:
            # under several processes, one pre-trains and caches the base model, the others then load it
            first = contextlib.nullcontext() if self.accelerator is None else self.accelerator.main_process_first()
            with first:
                self._base = models.pretrained_base(self.scale, directory=self.cache, progress=self.progress)
        return self._base

    def dataset(self, name: str, seed: int) -> PreparedData:
        """A corpus's split for ``seed`` as the base model's text windows (cached)."""
        if (name, seed) not in self._datasets:
            _, tokenizer, _ = self.base()
            context = self.engine.model.block_size
            self._datasets[(name, seed)] = prepare_dataset(
                name, seed, self.engine, tokenizer, context, self.data_dir, self.hub
            )
        return self._datasets[(name, seed)]

    def lr_rule(self, method: str) -> dict:
        return specs.lr_rule(self.engine, method, self.overrides.lr, self.overrides.lr_grid)

    def train_config(self, method: str, seed: int, lr: float | None = None):
        tc = finetune.default_train_config(self.engine, method, seed, lr)
        fields = {k: v for k, v in asdict(self.overrides).items() if v is not None and k != "lr_grid"}
        tc = replace(tc, **fields)
        processes = 1 if self.accelerator is None else self.accelerator.num_processes
        if tc.batch_size % processes:
            raise ValueError(
                f"{method}'s batch size {tc.batch_size} does not split over {processes} processes; "
                "launch a number of processes that divides it"
            )
        return tc

    def fine_tune(self, method, windows, cfg, rank=None, desc="", a_seed=None):
        """A copy of the base model fine-tuned with ``method`` on ``windows`` (``finetune.fine_tune``)."""
        return finetune.fine_tune(
            copy.deepcopy(self.base()[0]),
            method,
            windows,
            cfg,
            rank=rank,
            dp=self.engine.dp,
            rowscale=self.engine.rowscale,
            progress=self.progress,
            desc=desc,
            device=self.device,
            autocast_dtype=self.autocast,
            accelerator=self.accelerator,
            a_seed=a_seed,
            recipe=json.loads(self.engine.peft_config) if self.engine.peft_config and method == "lora" else None,
        )

    def provenance(self, spec: dict, start: float) -> dict:
        """The manifest entries every record shares: its spec and key, the configuration, the model, the
        versions, runtime, commit, device and wall time since ``start`` (``time.perf_counter()``)."""
        _, _, base_info = self.base()
        return {
            "spec": spec,
            "key": key_of(spec),
            "config": json.loads(json.dumps(self.config)),  # as the record reads back (tuples become lists)
            "model": {**self.engine.model.identity(), "base": base_info},
            "versions": package_versions(),
            "runtime": runtime(),
            "torch_threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # the vector kernels torch chose
            "git_commit": git_commit(),
            "git_dirty": git_dirty(),
            "code_at_start": self.code,
            "device": str(self.device),
            "wall_seconds": time.perf_counter() - start,
        }
