"""The membership-inference grid runner: (dataset, method, rank, seed) cells at a named scale.

Per cell:

1. the corpus is de-duplicated and split (``data.split_corpus``), each text tokenized into
   context windows (the attack's unit is a text);
2. the method's learning rate is chosen by one rule for every method: train it on the
   auxiliary part at each rate of the scale's grid and keep the rate with the lowest
   validation perplexity (``--lr`` fixes it instead);
3. the reference model of eq. 24 is, by default, the sweep's winner: the target's own method
   and hyperparameters trained on the auxiliary part (the calibrated reference);
   ``reference="full"`` uses full fine-tuning's sweep winner instead.  The sweep draws the
   training's secret randomness itself (:func:`reference_seed`): DP-SGD's noise and sampling, the
   data order and FLoRA's resampling are independent of the target's, as an adversary's would be
   (with shared noise, eq. 24's difference cancels DP-SGD's noise and overstates the leakage).
   The reference shares the target's start A: public for LoRA-FA and row scaling, whose frozen A
   ships with the adapter; for LoRA, which trains A, a little more than the release gives (a
   conservative attacker);
4. the target is trained on the members, and every member and non-member text is scored by
   both models.

A finished cell is written atomically as one JSON file (metrics, manifest, checksum) with its
per-text scores beside it (``.scores.npz``, covered by the checksum).  A rerun skips a cell only
when its files are intact and its key matches that of its spec (``specs.cell_spec``: the method and
its settings, the corpus's digest and caps, the base model, the numerics versions of the components
it uses and the versions of the packages that compute; ``lorapriv_utils.store``).  Otherwise the
cell is recomputed, and one line says which part, and which fields, changed.  When only the
learning-rate grid changed, the rates the old record swept are not trained again, nor its reference
and target when their rate wins again (``earlier_work``); the manifest's ``reused`` says what was
taken over.  An unfinished cell keeps its sweep in a journal (:class:`SweepJournal`): a rerun under
the same key trains only the rates the journal lacks.  ``shard=(i, n)`` runs every n-th cell starting at i.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import sys
import time
import zipfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from ...catalogue import wall_seconds
from ...declared import UndeclaredError
from ...files import Lock
from ...provenance import git_commit, git_dirty, package_versions, refresh_stamp, runtime
from ...scale import EngineScale, Scale
from ...store import (
    changed_parts,
    key_of,
    read_record,
    read_scores,
    scores_digest,
    scores_path,
    seal,
    spec_differences,
    trained_key,
    write_record,
)
from ..attacks import metrics as mia_metrics
from ..engine import data as data_mod
from ..engine import finetune, models
from ..engine.training import row_sums, text_losses, text_scores
from ..records import specs
from .grid import REFERENCES, Cell, check_ranks, plan, result_path, shard

__all__ = ["Cell", "Overrides", "Runner", "check_ranks", "plan", "read_scores", "scores_digest", "scores_path", "shard"]
ALPHAS = (0.01, 0.001, 0.0001)
REFERENCE_SEED_OFFSET = 1000


def reference_seed(seed: int) -> int:
    """The seed of a reference model's training randomness: independent of the target's (``seed``)."""
    return seed + REFERENCE_SEED_OFFSET


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


DAMAGED = (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile)  # what reading a damaged record raises


def read_intact(path: Path, with_scores: bool = True) -> tuple[dict, dict[str, np.ndarray] | None]:
    """A record whose envelope and checksum verify, and (``with_scores``) its arrays, which must match the digest
    it holds (None for a kind without arrays); one of :data:`DAMAGED` says what is wrong otherwise."""
    return read_record(path, with_arrays=True) if with_scores else (read_record(path), None)


def load_result(path: Path, spec: dict, with_scores: bool = True, refresh=None) -> dict | None:
    """A finished record (a cell's, or an audit's with ``with_scores=False``), or None, with one line saying why,
    when it is missing, corrupt, partial or stale (its key is not that of ``spec``).  ``refresh(record)``: how
    to bring a record whose ``derived`` part alone is stale up to date from its stored scores."""
    if not path.is_file():
        return None
    try:
        record, _ = read_intact(path, with_scores)
    except UndeclaredError:  # a record the published store's declaration does not name as it is: never retrained
        raise
    except DAMAGED as err:
        tqdm.write(f"lorapriv: {path} is damaged or partial ({err}); recomputing it", file=sys.stderr)
        return None
    stored = record["manifest"].get("key", {})
    changed = changed_parts(stored, key_of(spec))
    if changed:
        fields = spec_differences(record["manifest"].get("spec", {}), spec) if "spec" in record["manifest"] else []
        detail = f": {', '.join(fields[:4])}" if fields else ""
        if changed == ["derived"] and refresh is not None:
            tqdm.write(
                f"lorapriv: {path}: only its metrics' settings changed{detail}; recomputing them from its scores",
                file=sys.stderr,
            )
            return refresh(record)
        tqdm.write(
            f"lorapriv: {path} is stale ({', '.join(changed)} changed{detail}); not reused as it stands",
            file=sys.stderr,
        )
        return None
    return record


TARGET_SCORES = {
    "members": ("members_target", "members_minkpp"),
    "nonmembers": ("nonmembers_target", "nonmembers_minkpp"),
}
GRID_FIELD = "method.lr_rule.grid"


def _sweep_rates(rows: list[dict]) -> dict[float, float]:
    """A sweep's table (a record's ``lr_selection.sweep``, a journal's ``rates``) as {rate: validation perplexity}."""
    return {float(row["lr"]): float(row["validation_perplexity"]) for row in rows}


def earlier_work(path: Path, spec: dict) -> dict | None:
    """What an intact cell record at ``path`` already trained, when it differs from ``spec`` only in its
    learning-rate grid (and its metrics' settings, which are recomputed anyway): the validation perplexity of
    each rate it swept, its reference model's scores and its target's scores, each tied to its rate.  None
    otherwise, and for a reference model of another method (``reference="full"``), whose sweep is not the
    cell's own.  The expensive unit is one trained model's scores: a widened grid trains only its new rates."""
    if not path.is_file():
        return None
    try:
        record, scores = read_intact(path)
        manifest, metrics = record["manifest"], record["metrics"]
        fields = spec_differences(manifest["spec"], spec)
        if GRID_FIELD not in fields or any(f != GRID_FIELD and not f.startswith("derived.") for f in fields):
            return None
        if manifest["spec"]["method"].get("reference") != "same":
            return None
        return {
            "rates": _sweep_rates(metrics["lr_selection"]["sweep"]),
            "reference": {
                "lr": float(manifest["reference"]["lr"]),
                "training": manifest["reference"]["training"],
                "members": scores["members_reference"],
                "nonmembers": scores["nonmembers_reference"],
            },
            "target": {
                "lr": float(manifest["train_config"]["lr"]),
                "training": {**metrics["training"], "seconds": manifest["training_seconds"]},
                "validation_perplexity": metrics["validation_perplexity"],
                **{
                    part: {"loss": scores[loss], "minkpp": scores[minkpp]}
                    for part, (loss, minkpp) in TARGET_SCORES.items()
                },
            },
            "provenance": {
                "from_key": manifest["key"],
                "from_commit": manifest.get("git_commit"),
                "wall_seconds": wall_seconds(record),  # its own, and that of the rates it took over in turn
            },
        }
    except (*DAMAGED, TypeError):
        return None


def reused_or_computed(path: Path, spec: dict, compute, with_scores: bool = True, refresh=None) -> dict:
    """The current record at ``path`` (:func:`load_result`, with its ``refresh``), or the one ``compute()`` writes
    there, under the record's lock: another run computing the same record is waited for, and its record reused."""
    with Lock(path):
        done = load_result(path, spec, with_scores, refresh)
        return done if done is not None else compute()


def journal_path(path: Path, what: str = "sweep") -> Path:
    """Where the unfinished work (``what``: a cell's sweep, a frontier point's target) of the record that will lie
    at ``path`` is journaled until the record is written: hidden beside it, under a name that no record pattern
    matches."""
    return Path(path).with_name(f".{Path(path).stem}.{what}")


class SweepJournal:
    """A cell's learning-rate sweep, written after each rate it trains, so that a run stopped in the middle
    (a session's end, a killed job) resumes at the next rate rather than at the cell's start: each rate trained
    with its validation perplexity.  The models are not kept: when a rate of a stopped run wins the sweep, the
    resumed run trains it again for the reference model (the same training, the same seed), one training where
    scoring every best-so-far as it appeared would cost a scoring pass each time.  It is a sealed record under
    the cell's spec (kind ``sweep-journal``); a rerun takes it over only when its key is the cell's
    (:func:`resumed_work`).  ``seconds``: the wall time of the work it already holds (earlier runs'), to which
    this run's time since ``start`` is added."""

    def __init__(self, path: Path, spec: dict, seconds: float = 0.0):
        self.path, self.spec, self.seconds, self.start = journal_path(path), spec, seconds, time.perf_counter()

    def save(self, rows: list[dict]) -> None:
        """Journal the sweep's ``rows`` so far (rate and validation perplexity)."""
        record = {
            "kind": "sweep-journal",
            "manifest": {"wall_seconds": self.seconds + time.perf_counter() - self.start, "git_commit": git_commit()},
            "rates": rows,
        }
        write_record(self.path, seal(record, self.spec))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def read_journal(journal: Path, kind: str, spec: dict, otherwise: str, with_arrays: bool = False):
    """The intact journal of ``kind`` at ``journal`` written under ``spec``'s key (with its arrays, as
    :func:`read_record` returns them, when ``with_arrays``), or None: none there, a damaged one or one of another
    key, each said in one line ending with ``otherwise`` (what the run does instead).  The key's ``derived`` part
    (the metrics computed from the scores when the record is written) does not count: a journal holds training
    work, which it does not change."""
    if not journal.is_file():
        return None
    try:
        read = read_record(journal, kind, with_arrays=with_arrays)
    except DAMAGED as err:
        tqdm.write(f"lorapriv: {journal}: its journal is damaged ({err}); {otherwise}", file=sys.stderr)
        return None
    record = read[0] if with_arrays else read
    if trained_key(record["manifest"].get("key") or {}) != trained_key(key_of(spec)):
        tqdm.write(f"lorapriv: {journal}: its journal is of another key; {otherwise}", file=sys.stderr)
        return None
    return read


def journal_provenance(record: dict, source: str) -> dict:
    """What a record built on a journal's work notes of it (its ``manifest.reused``): the journal's key, commit and
    wall time, and ``source``, which journal it was."""
    return {
        "from_key": record["manifest"]["key"],
        "from_commit": record["manifest"].get("git_commit"),
        "from": source,
        "wall_seconds": record["manifest"]["wall_seconds"],
    }


def resumed_work(path: Path, spec: dict, earlier: dict | None) -> dict | None:
    """What the journal of an unfinished run of the cell at ``path`` holds, in the form of :func:`earlier_work`
    (its rates; the reference model and target of ``earlier``, the record of another grid, when there is one),
    or None when there is no intact journal under the cell's key."""
    record = read_journal(journal_path(path), "sweep-journal", spec, "the sweep starts again")
    if record is None:
        return None
    tqdm.write(f"lorapriv: {path}: resuming its sweep after {len(record['rates'])} rates", file=sys.stderr)
    return {
        "rates": _sweep_rates(record["rates"]),
        "reference": earlier["reference"] if earlier else None,
        "target": earlier["target"] if earlier else None,
        "provenance": journal_provenance(record, "sweep journal"),
    }


@dataclass
class PreparedData:
    """A dataset's split, each part as text windows, with the hashes and counts that manifests record."""

    members: data_mod.TextWindows
    auxiliary: data_mod.TextWindows
    nonmembers: data_mod.TextWindows
    validation: data_mod.TextWindows
    split_hashes: dict
    dedup: dict
    provenance: dict
    texts: dict  # the texts behind each part (the canary audit adds canaries to the members)


def dataset_texts(name: str, seed: int, engine: EngineScale, data_dir=None, hub: bool = False) -> dict[str, list[str]]:
    """The texts of each part of a dataset's split, as a cell of ``seed`` uses them (no tokenizer needed)."""
    corpus = data_mod.load_corpus(name, data_dir=data_dir, hub=hub, seed=seed, synthetic_count=engine.synthetic_count)
    return _parts(name, data_mod.split_corpus(corpus, seed), engine)


def _parts(name: str, split, engine: EngineScale) -> dict[str, list[str]]:
    cap, vcap = engine.texts_per_part(name), engine.max_validation_texts
    parts = {
        "members": split.members[:cap],
        "auxiliary": split.auxiliary[:cap],
        "nonmembers": split.nonmembers[:cap],
        "validation": split.validation[:vcap],
    }
    small = {
        part: len(parts[part])
        for part in ("members", "auxiliary", "nonmembers")
        if len(parts[part]) < data_mod.MIN_TEXTS_PER_PART
    }
    if small:
        raise ValueError(
            f"dataset {name!r}: after de-duplication its parts hold "
            + ", ".join(f"{n} {part}" for part, n in small.items())
            + f" texts, below the {data_mod.MIN_TEXTS_PER_PART} each that an attack's AUC and its interval need; "
            "give a larger corpus"
        )
    return parts


def prepare_dataset(
    name: str, seed: int, engine: EngineScale, tokenizer, context: int, data_dir=None, hub: bool = False
) -> PreparedData:
    corpus = data_mod.load_corpus(name, data_dir=data_dir, hub=hub, seed=seed, synthetic_count=engine.synthetic_count)
    split = data_mod.split_corpus(corpus, seed)
    parts = _parts(name, split, engine)
    hashes = {part: data_mod.texts_digest(texts) for part, texts in parts.items()}  # of the texts actually used
    return PreparedData(
        **{
            part: models.encode_texts(tokenizer, texts, context, engine.max_windows_per_text)
            for part, texts in parts.items()
        },
        split_hashes=hashes,
        dedup=split.dedup,
        provenance=corpus.provenance,
        texts=parts,
    )


def rate_metrics(member_signal: np.ndarray, nonmember_signal: np.ndarray, alpha: float, rng, resamples: int) -> dict:
    """TPR at FPR alpha with its interval, or a statement that the non-members cannot resolve alpha."""
    rate = mia_metrics.tpr_at_fpr(member_signal, nonmember_signal, alpha)
    if rate.at_zero_fpr:
        return {"resolvable": False, "note": f"not resolvable with {len(nonmember_signal)} non-members"}
    ci = mia_metrics.bootstrap(
        lambda m, n: mia_metrics.tpr_at_fpr(m, n, alpha).tpr, member_signal, nonmember_signal, rng, resamples
    )
    return {"resolvable": True, **asdict(ci), "achieved_fpr": rate.achieved_fpr}


def attack_metrics(
    member_signal: np.ndarray, nonmember_signal: np.ndarray, rng: np.random.Generator, resamples: int
) -> dict:
    out = {"auc": asdict(mia_metrics.bootstrap(mia_metrics.roc_auc, member_signal, nonmember_signal, rng, resamples))}
    for alpha in ALPHAS:
        out[f"tpr_at_{alpha:g}"] = rate_metrics(member_signal, nonmember_signal, alpha, rng, resamples)
    return out


def perplexity(model, windows: data_mod.TextWindows, device) -> float:
    """Validation perplexity: exp of the mean token loss over every validation token."""
    totals, counts = row_sums(model, windows.ids, device=device)
    return float(np.exp(totals.sum() / counts.sum()))


class Runner:
    """Runs cells, reusing the base model, datasets, sweeps and reference models across cells."""

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
        self._base = None
        self._datasets: dict = {}
        self._sweeps: dict = {}

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
        if self._base is None:
            # under several processes, one pre-trains and caches the base model, the others then load it
            first = contextlib.nullcontext() if self.accelerator is None else self.accelerator.main_process_first()
            with first:
                self._base = models.pretrained_base(self.scale, directory=self.cache, progress=self.progress)
        return self._base

    def dataset(self, name: str, seed: int) -> PreparedData:
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

    def _fine_tune(self, method, windows, cfg, rank=None, desc="", a_seed=None):
        model = copy.deepcopy(self.base()[0])
        return finetune.fine_tune(
            model,
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
            "device": str(self.device),
            "wall_seconds": time.perf_counter() - start,
        }

    def sweep(
        self,
        name: str,
        method: str,
        rank: int | None,
        seed: int,
        earlier: dict | None = None,
        journal: SweepJournal | None = None,
    ) -> dict:
        """The learning-rate sweep on the auxiliary part; its winner is the calibrated reference model.

        ``earlier`` (:func:`earlier_work`, :func:`resumed_work`): the rates a record of the same cell under another
        grid, or an unfinished run's journal, trained, and the record's reference model's scores; those rates are
        not trained again (a rate's model does not depend on the other rates of its grid).  ``journal``: where each
        trained rate is written as it finishes."""
        slot = (name, method, rank, seed)
        if slot not in self._sweeps:
            prepared = self.dataset(name, seed)
            known = earlier["rates"] if earlier else {}
            rows, best = [], None

            def train(lr):
                cfg = replace(self.train_config(method, seed, lr), seed=reference_seed(seed))
                label = f"{name} {method}{'' if rank is None else f'-r{rank}'} aux lr={lr:g}"
                return self._fine_tune(method, prepared.auxiliary, cfg, rank, desc=label, a_seed=seed)

            for lr in self.lr_rule(method)["grid"]:
                trained = lr not in known
                if not trained:
                    model, stats, ppl = None, None, known[lr]
                else:
                    try:
                        model, stats = train(lr)
                        ppl = perplexity(model, prepared.validation, self.device)
                    except FloatingPointError as err:  # a rate whose loss diverges loses the sweep; the rest go on
                        tqdm.write(f"lorapriv: {err}; the sweep counts its perplexity as infinite", file=sys.stderr)
                        model, stats, ppl = None, None, math.inf
                    ppl = ppl if math.isfinite(ppl) else math.inf  # weights that overflowed on the last step
                rows.append({"lr": lr, "validation_perplexity": ppl})
                if best is None or ppl < best[0]:
                    best = (ppl, lr, model, stats)
                if journal is not None and trained:
                    journal.save(rows)
            if not math.isfinite(best[0]):
                raise ValueError(f"{name} {method}: every rate of the sweep diverged; pass lower rates with --lr-grid")
            _, lr, model, stats = best
            kept = earlier["reference"] if earlier else None
            reused = model is None and kept is not None and kept["lr"] == lr
            if reused:
                scores = {part: kept[part] for part in ("members", "nonmembers")}
                stats = kept["training"]
            else:
                if model is None:  # a rate an earlier run trained and did not keep: train it again
                    model, stats = train(lr)
                scores = {
                    part: text_losses(
                        model,
                        getattr(prepared, part),
                        device=self.device,
                        progress=self.progress,
                        desc=f"scoring {name} {method} reference, {part}",
                    )
                    for part in ("members", "nonmembers")
                }
            self._sweeps[slot] = {
                "lr": lr,
                "table": rows,
                "reference_training": stats,
                "reused": {"rates": sorted(r for r in known if r in {row["lr"] for row in rows}), "reference": reused},
                **scores,
            }
        return self._sweeps[slot]

    def seeds(self, cell: Cell) -> dict:
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

    def run_cell(self, cell: Cell, spec: dict | None = None, earlier: dict | None = None) -> dict:
        """Train and score one cell; ``earlier`` (:func:`earlier_work`) supplies what a record of the same cell
        under another learning-rate grid already trained: its rates, and its reference and target when the
        rule picks their rate again."""
        start = time.perf_counter()
        prepared = self.dataset(cell.dataset, cell.seed)
        spec = spec or self.spec(cell)
        path = result_path(self.out, self.scale, cell)
        journal = None
        if self.accelerator is None:  # under several processes, a stopped run starts the cell again
            journal = SweepJournal(path, spec, (earlier["provenance"]["wall_seconds"] or 0.0) if earlier else 0.0)
        chosen = self.sweep(cell.dataset, cell.method, cell.rank, cell.seed, earlier, journal)
        reference = chosen if self.reference == "same" else self.sweep(cell.dataset, "full", None, cell.seed)
        cfg = self.train_config(cell.method, cell.seed, chosen["lr"])
        target = (
            earlier["target"] if earlier and earlier["target"] and earlier["target"]["lr"] == chosen["lr"] else None
        )
        if target is None:
            model, stats = self._fine_tune(cell.method, prepared.members, cfg, cell.rank, desc=cell.name)
            members, nonmembers = (
                text_scores(
                    model, windows, device=self.device, progress=self.progress, desc=f"scoring {cell.name} {part}"
                )
                for part, windows in (("members", prepared.members), ("nonmembers", prepared.nonmembers))
            )
            target_perplexity = perplexity(model, prepared.validation, self.device)
        else:
            members, nonmembers = target["members"], target["nonmembers"]
            stats, target_perplexity = target["training"], target["validation_perplexity"]
        scores = {
            "members_target": members["loss"],
            "nonmembers_target": nonmembers["loss"],
            "members_reference": reference["members"],
            "nonmembers_reference": reference["nonmembers"],
            "members_minkpp": members["minkpp"],
            "nonmembers_minkpp": nonmembers["minkpp"],
        }
        metrics = {
            **self.cell_attacks(cell, scores, prepared.texts),
            "validation_perplexity": target_perplexity,
            "texts": {
                "members": prepared.members.n_texts,
                "nonmembers": prepared.nonmembers.n_texts,
                "validation": prepared.validation.n_texts,
            },
            "windows": {"members": int(len(prepared.members.ids)), "nonmembers": int(len(prepared.nonmembers.ids))},
            "lr_selection": {
                **self.lr_rule(cell.method),
                "chosen": chosen["lr"],
                "sweep": chosen["table"],
                # a winner at either end of a grid of several rates may lie beyond it: the grid should be widened
                "at_grid_edge": len(chosen["table"]) > 1
                and chosen["lr"] in (min(r["lr"] for r in chosen["table"]), max(r["lr"] for r in chosen["table"])),
            },
            "training": {k: v for k, v in stats.items() if k != "seconds"},  # wall time goes to the manifest
        }
        manifest = {
            **self.provenance(spec, start),
            "cell": asdict(cell),
            "train_config": asdict(cfg),
            "seeds": self.seeds(cell),
            "reference": {
                "kind": "target's method and hyperparameters" if self.reference == "same" else "full fine-tuning",
                "lr": reference["lr"],
                "training": reference["reference_training"],
            },
            "split_hashes": prepared.split_hashes,
            "dedup": prepared.dedup,
            "data_provenance": prepared.provenance,
            "accelerate": None
            if self.accelerator is None
            else {
                "num_processes": self.accelerator.num_processes,
                "mixed_precision": str(self.accelerator.mixed_precision),
            },
            "autocast": str(self.autocast),
            "training_seconds": stats["seconds"],
        }
        if earlier is not None:
            manifest["reused"] = {
                **earlier["provenance"],
                "rates": chosen["reused"]["rates"],
                "reference": chosen["reused"]["reference"],
                "target": target is not None,
            }
        record = {"kind": "cell", "metrics": metrics, "manifest": manifest, "scores_sha256": scores_digest(scores)}
        record = seal(record)
        if self.accelerator is None or self.accelerator.is_main_process:
            write_record(path, record, scores)
            if journal is not None:
                journal.remove()
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()
        return record

    def cell_attacks(self, cell: Cell, scores: dict[str, np.ndarray], texts: dict[str, list[str]]) -> dict:
        """The four attacks' metrics of a cell, from its per-text scores (and its texts, for zlib): what a
        record derives from its scores (``specs.derived_spec``), recomputed without training when only that
        changes."""
        rng = np.random.default_rng(self.seeds(cell)["bootstrap"])
        resamples = self.engine.bootstrap_resamples
        return {
            f"{name}_attack": attack_metrics(
                attack.signals(scores, texts, "members"), attack.signals(scores, texts, "nonmembers"), rng, resamples
            )
            for name, attack in mia_metrics.ATTACKS.items()
        }

    def refresh_metrics(self, cell: Cell, path: Path, record: dict, spec: dict) -> dict:
        """A record whose derived part alone is stale, its attacks recomputed from its stored scores."""
        texts = dataset_texts(cell.dataset, cell.seed, self.engine, self.data_dir, self.hub)
        scores = read_scores(scores_path(path))
        return self.write_refreshed(path, record, spec, self.cell_attacks(cell, scores, texts), scores)

    def write_refreshed(self, path: Path, record: dict, spec: dict, metrics: dict, scores=None) -> dict:
        """``record`` with its derived ``metrics`` recomputed: merged in, the refresh stamped (the key it came from,
        this commit) with today's configuration, re-sealed under ``spec`` and written (with its ``scores``)."""
        record["metrics"].update(metrics)
        record["manifest"]["metrics_refreshed"] = refresh_stamp(record)
        record["manifest"]["config"] = json.loads(json.dumps(self.config))
        return write_record(path, seal(record, spec), scores)

    def run(self, cells: list[Cell]) -> list[dict]:
        if self.accelerator is not None:  # data-parallel: every process runs every cell, in lockstep
            return [self._current_or_run(cell) for cell in cells]
        results: dict[Cell, dict] = {}
        deferred = []  # cells another run holds: taken up at the end
        for cell in tqdm(cells, desc=f"grid ({self.scale.name})", disable=not self.progress):
            lock = Lock(result_path(self.out, self.scale, cell))
            if not lock.acquire(blocking=False):  # another run is computing it: come back at the end
                deferred.append(cell)
                continue
            try:
                results[cell] = self._current_or_run(cell)
            finally:
                lock.release()
        for cell in deferred:
            if self.progress:
                tqdm.write(f"lorapriv: waiting for another run to finish {cell.name}", file=sys.stderr)
            with Lock(result_path(self.out, self.scale, cell)):
                results[cell] = self._current_or_run(cell)
        return [results[cell] for cell in cells]

    def _current_or_run(self, cell: Cell) -> dict:
        spec, path = self.spec(cell), result_path(self.out, self.scale, cell)
        done = load_result(path, spec, refresh=lambda record: self.refresh_metrics(cell, path, record, spec))
        if done is not None:
            return done
        earlier = earlier_work(path, spec)
        if earlier is not None and self.progress:
            tqdm.write(
                f"lorapriv: {path}: only its learning-rate grid changed; training only the rates it lacks",
                file=sys.stderr,
            )
        return self.run_cell(cell, spec, earlier=resumed_work(path, spec, earlier) or earlier)


def set_threads(threads: int | None) -> int:
    """Use ``threads`` CPU threads in torch (default: every core); returns the number set."""
    count = threads or os.cpu_count() or 1
    if count < 1:
        raise ValueError(f"--threads: must be >= 1, got {count}")
    torch.set_num_threads(count)
    return count
