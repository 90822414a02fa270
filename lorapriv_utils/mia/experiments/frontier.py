"""The privacy-utility frontier: attack strength against validation perplexity over training budgets.

Paper A compares methods one point each (Table 1), where every drop in attack success comes with
a rise in perplexity.  To compare at matched utility, each *variant* (a method, its rank, and for
DP-SGD its noise multiplier) is trained at every learning rate of its grid for ``max(checkpoints)``
epochs on the members, and its calibrated reference (same method and rate, its own secret training
randomness, ``grid.reference_seed``, and the target's public LoRA start A) on the auxiliary part;
after each epoch listed in ``checkpoints`` both are scored.  A checkpoint is a model one could
release, so each (learning rate, epoch) pair is one point of the variant's frontier; the base
model is every variant's point at epoch 0.  The points are compared by
``lorapriv_utils.mia.attacks.matching``, which needs no torch.

One record per (dataset, variant, learning rate, seed) is written atomically (JSON, with the
per-text scores of every checkpoint in a float32 ``.scores.npz`` beside it, covered by the
checksum); an intact, current record is reused, so an interrupted run resumes.  A point stopped between its
two trainings keeps its finished target in a journal (:func:`save_target`), so the rerun trains only the
reference.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ...provenance import git_commit
from ...store import scores_digest, scores_path, seal, write_record
from ..engine import finetune
from ..engine.dp import epsilons
from ..engine.training import text_losses, text_scores
from ..records import specs
from .grid import Variant, frontier_path, point_name, reference_seed
from .reuse import journal_path, journal_provenance, read_journal, reused_or_computed
from .scoring import perplexity
from .workspace import Workspace

__all__ = ["Variant", "frontier_path", "resumed_target", "run_base", "run_frontier", "run_point", "save_target"]


def _float32(scores: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.float32) for k, v in scores.items()}  # small files; AUCs need no more


def _write(path: Path, record: dict, scores: dict[str, np.ndarray]) -> dict:
    scores = _float32(scores)
    record["scores_sha256"] = scores_digest(scores)
    return write_record(path, seal(record), scores)


def save_target(path: Path, spec: dict, target: dict, seconds: float) -> None:
    """Journal the finished target of the frontier point whose record will lie at ``path``: its checkpoints'
    rows, its training statistics and scores (``target``) and the wall time spent so far, as a sealed record
    under the point's spec (kind ``frontier-journal``), hidden beside the record until it is written."""
    scores = _float32(target["scores"])
    record = {
        "kind": "frontier-journal",
        "checkpoints": target["checkpoints"],
        "training": target["training"],
        "scores_sha256": scores_digest(scores),
        "manifest": {"wall_seconds": seconds, "git_commit": git_commit()},
    }
    write_record(journal_path(path, "target"), seal(record, spec), scores)


def resumed_target(path: Path, spec: dict) -> dict | None:
    """The target a stopped run of the point at ``path`` finished (:func:`save_target`), with the journal's
    provenance, or None when there is no intact journal under the point's key."""
    read = read_journal(journal_path(path, "target"), "frontier-journal", spec, "the target is trained again", True)
    if read is None:
        return None
    record, scores = read
    tqdm.write(
        f"lorapriv: {path}: its target was trained by a stopped run; training the reference only", file=sys.stderr
    )
    return {
        "checkpoints": record["checkpoints"],
        "training": record["training"],
        "scores": scores,
        "provenance": journal_provenance(record, "target journal"),
    }


def _remove_journal(path: Path) -> None:
    journal = journal_path(path, "target")
    scores_path(journal).unlink(missing_ok=True)
    journal.unlink(missing_ok=True)


def run_base(work: Workspace, dataset: str, seed: int) -> dict:
    """Epoch 0 of every variant: the base model's scores and perplexity (its reference is itself)."""
    path = frontier_path(work.out, work.scale.name, dataset, "base", seed)
    spec = specs.frontier_base_spec(work.engine, dataset, seed, work.corpus(dataset, seed))

    def compute() -> dict:
        start = time.perf_counter()
        prepared = work.dataset(dataset, seed)
        model = work.base()[0]
        members, nonmembers = (
            text_scores(model, p, device=work.device) for p in (prepared.members, prepared.nonmembers)
        )
        scores = {
            "e0_members_target": members["loss"],
            "e0_nonmembers_target": nonmembers["loss"],
            "e0_members_minkpp": members["minkpp"],
            "e0_nonmembers_minkpp": nonmembers["minkpp"],
        }
        record = {
            "kind": "frontier-base",
            "dataset": dataset,
            "seed": seed,
            "checkpoints": [
                {"epoch": 0, "steps": 0, "validation_perplexity": perplexity(model, prepared.validation, work.device)}
            ],
            "manifest": {**work.provenance(spec, start), "split_hashes": prepared.split_hashes},
        }
        return _write(path, record, scores)

    return reused_or_computed(path, spec, compute)


def run_point(
    work: Workspace, dataset: str, variant: Variant, lr: float, seed: int, checkpoints: tuple[int, ...]
) -> dict:
    """Train ``variant`` at rate ``lr`` on the members (target) and on the auxiliary part (reference),
    scoring both after each epoch in ``checkpoints``; returns the record (reused when current)."""
    if not checkpoints or min(checkpoints) < 1 or list(checkpoints) != sorted(set(checkpoints)):
        raise ValueError(f"--checkpoints: increasing epochs >= 1, got {list(checkpoints)}")
    name = point_name(variant.name, lr)
    path = frontier_path(work.out, work.scale.name, dataset, name, seed)
    point = {"variant": asdict(variant), "lr": lr, "checkpoints": list(checkpoints)}
    spec = specs.frontier_point_spec(
        work.engine, dataset, variant, lr, seed, checkpoints, work.corpus(dataset, seed), asdict(work.overrides)
    )

    def compute() -> dict:
        start = time.perf_counter()
        prepared = work.dataset(dataset, seed)
        cfg = replace(work.train_config(variant.method, seed, lr), epochs=max(checkpoints))
        dp = (
            work.engine.dp
            if variant.noise_multiplier is None
            else replace(work.engine.dp, noise_multiplier=variant.noise_multiplier)
        )
        scores: dict[str, np.ndarray] = {}
        rows: list[dict] = []

        def score_target(epoch: int, model, steps: int) -> None:
            if epoch not in checkpoints:
                return
            for part, windows in (("members", prepared.members), ("nonmembers", prepared.nonmembers)):
                values = text_scores(model, windows, device=work.device)
                scores[f"e{epoch}_{part}_target"], scores[f"e{epoch}_{part}_minkpp"] = values["loss"], values["minkpp"]
            row = {
                "epoch": epoch,
                "steps": steps,
                "validation_perplexity": perplexity(model, prepared.validation, work.device),
            }
            if variant.method == "dpsgd":
                eps = epsilons(dp.noise_multiplier, cfg.batch_size / prepared.members.n_texts, steps, dp.delta)
                row.update(epsilon=eps["prv"], epsilon_rdp=eps["rdp"])
            rows.append(row)

        def score_reference(epoch: int, model, steps: int) -> None:
            if epoch in checkpoints:
                for part, windows in (("members", prepared.members), ("nonmembers", prepared.nonmembers)):
                    scores[f"e{epoch}_{part}_reference"] = text_losses(model, windows, device=work.device)

        base = work.base()[0]
        common = dict(
            rank=variant.rank, dp=dp, rowscale=work.engine.rowscale, progress=work.progress, device=work.device
        )
        stopped = resumed_target(path, spec)
        if stopped is None:
            _, target = finetune.fine_tune(
                copy.deepcopy(base),
                variant.method,
                prepared.members,
                cfg,
                desc=f"{dataset} {name}",
                epoch_hook=score_target,
                **common,
            )
            save_target(
                path, spec, {"checkpoints": rows, "training": target, "scores": scores}, time.perf_counter() - start
            )
        else:
            rows[:], target = stopped["checkpoints"], stopped["training"]
            scores.update(stopped["scores"])
        _, reference = finetune.fine_tune(
            copy.deepcopy(base),
            variant.method,
            prepared.auxiliary,
            replace(cfg, seed=reference_seed(seed)),
            desc=f"{dataset} {name} reference",
            epoch_hook=score_reference,
            a_seed=seed,
            **common,
        )
        record = {
            "kind": "frontier-point",
            "dataset": dataset,
            "seed": seed,
            **point,
            "checkpoints": rows,
            "training": {k: v for k, v in target.items() if k != "seconds"},
            "manifest": {
                **work.provenance(spec, start),
                "train_config": asdict(cfg),
                "dp": asdict(dp) if variant.method == "dpsgd" else None,
                "split_hashes": prepared.split_hashes,
                "reference": "the variant at the same rate and epochs, trained on the auxiliary part with its own "
                f"secret randomness (seed {reference_seed(seed)}) and the target's public LoRA start A (seed {seed})",
                # the reference's own training, so that two runs of one point can be told apart where they differ
                "reference_training": {k: v for k, v in reference.items() if k != "seconds"},
                "training_seconds": target["seconds"] + reference["seconds"],
            },
        }
        if stopped is not None:
            record["manifest"]["reused"] = stopped["provenance"]
        written = _write(path, record, scores)
        _remove_journal(path)
        return written

    return reused_or_computed(path, spec, compute)


def run_frontier(
    work: Workspace,
    datasets: list[str],
    variants: list[Variant],
    seeds: list[int],
    checkpoints: tuple[int, ...],
    shard: tuple[int, int] = (0, 1),
) -> list[dict]:
    """Every point of the frontier grid (each variant at each rate of its method's grid), base models included;
    ``shard=(i, n)``: every n-th of those records, starting at the i-th."""
    bases = [("base", dataset, None, None, seed) for seed in seeds for dataset in datasets]
    points = [
        ("point", dataset, variant, lr, seed)
        for seed in seeds
        for dataset in datasets
        for variant in variants
        for lr in work.lr_rule(variant.method)["grid"]
    ]
    index, count = shard
    jobs = (bases + points)[index::count]
    if not jobs:
        raise ValueError(
            f"--shard: {index}/{count} gets no work: the frontier has {len(bases) + len(points)} records; "
            "use fewer shards"
        )
    records = []
    for kind, dataset, variant, lr, seed in tqdm(jobs, desc=f"frontier ({work.scale.name})", disable=not work.progress):
        if kind == "base":
            records.append(run_base(work, dataset, seed))
        else:
            records.append(run_point(work, dataset, variant, lr, seed, checkpoints))
    return records
