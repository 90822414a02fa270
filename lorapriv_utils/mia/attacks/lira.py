"""A multi-reference attack: offline LiRA (Carlini et al. 2022) against a grid cell's target model.

Eq. 24 calibrates each text's loss with one reference model.  Offline LiRA uses several: ``k``
reference models of the cell's own method and learning rate, each trained on a random half of
the auxiliary part (so none has seen a member or a non-member), give for every text a mean and a
spread of its loss when it is *out*.  A member's target loss sits below its out-distribution; the
signal is the one-sided z-score (target loss - mean) / spread, with the spread pooled over texts
when ``k`` is small (LiRA's "global variance").

:func:`run_references` trains the references of one finished cell (its learning rate is read from
the cell's record, so no sweep is rerun) and writes their per-text losses atomically, with a
manifest, to ``<out>/<scale>/lira/<dataset>/<variant>-s<seed>.json`` and ``.scores.npz``;
:func:`lira_signals` (no torch) turns them into the attack's signal.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from ...store import seal, write_record
from ..experiments.grid import cell_name


def lira_signal(target: np.ndarray, references: np.ndarray, spread: float | None = None) -> np.ndarray:
    """Offline LiRA's signal per text: (target loss - mean reference loss) / spread (lower: member).

    ``references`` is (k, texts).  ``spread`` is one value for every text (LiRA's global variance, for
    few references; :func:`lira_signals` pools it over members and non-members alike, since a spread
    that depended on the label would leak it); None uses each text's own."""
    target = np.asarray(target, dtype=np.float64)
    refs = np.asarray(references, dtype=np.float64)
    if refs.ndim != 2 or refs.shape[1] != target.size:
        raise ValueError(f"references must be (k, {target.size}), got {refs.shape}")
    if refs.shape[0] < 2:
        raise ValueError(f"offline LiRA needs at least 2 reference models, got {refs.shape[0]}")
    if not (np.all(np.isfinite(refs)) and np.all(np.isfinite(target))):
        raise ValueError("losses must be finite")
    own = np.sqrt(np.maximum(refs.var(axis=0, ddof=1), 1e-12))
    return (target - refs.mean(axis=0)) / (own if spread is None else spread)


def lira_signals(
    members: np.ndarray, nonmembers: np.ndarray, member_refs: np.ndarray, nonmember_refs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Members' and non-members' LiRA signals with one spread, pooled over every scored text."""
    every = np.concatenate([np.asarray(member_refs, float), np.asarray(nonmember_refs, float)], axis=1)
    spread = float(np.sqrt(every.var(axis=0, ddof=1).mean()))
    return lira_signal(members, member_refs, spread), lira_signal(nonmembers, nonmember_refs, spread)


def lira_path(out: Path, scale_name: str, dataset: str, variant: str, seed: int) -> Path:
    return Path(out) / scale_name / "lira" / f"{cell_name(variant, seed=seed, dataset=dataset)}.json"


def halves(n_texts: int, k: int, seed: int) -> list[np.ndarray]:
    """``k`` random halves of the auxiliary texts (indices, sorted), one per reference model."""
    if k < 2:
        raise ValueError(f"--references: offline LiRA needs at least 2 reference models, got {k}")
    rng = np.random.default_rng([seed, 31])
    return [np.sort(rng.choice(n_texts, n_texts // 2, replace=False)) for _ in range(k)]


def run_cell_references(work, cell, k: int) -> dict:
    """:func:`run_references` at the learning rate the finished grid cell chose (its record must exist)."""
    from ..experiments.grid import result_path
    from ..experiments.reuse import load_result

    record = load_result(result_path(work.out, work.scale, cell), work.spec(cell))
    if record is None:
        raise FileNotFoundError(
            f"no current result for {cell.name} under {work.out}: run the grid first "
            "(python -m lorapriv_utils run with the same options)"
        )
    return run_references(work, cell, record["metrics"]["lr_selection"]["chosen"], k)


def lira_spec(work, cell, lr: float, k: int) -> dict:
    """What a cell's LiRA references depend on (``specs.lira_spec``)."""
    from ..records import specs

    return specs.lira_spec(work.engine, cell, work.corpus(cell.dataset, cell.seed), lr, k, **work.options())


def run_references(work, cell, lr: float, k: int) -> dict:
    """Train ``k`` reference models of ``cell``'s method at rate ``lr`` on random halves of the auxiliary
    part and score every member and non-member text; an intact, current record is reused."""
    from ...store import scores_digest
    from ..engine import finetune
    from ..engine.data import TextWindows
    from ..engine.training import text_losses
    from ..experiments.reuse import reused_or_computed

    variant = cell_name(cell.method, cell.rank)
    path = lira_path(work.out, work.scale.name, cell.dataset, variant, cell.seed)
    spec = lira_spec(work, cell, lr, k)

    def compute() -> dict:
        start = time.perf_counter()
        prepared = work.dataset(cell.dataset, cell.seed)
        aux = prepared.auxiliary
        cfg = work.train_config(cell.method, cell.seed, lr)
        scores = {"members": [], "nonmembers": []}
        for i, chosen in enumerate(halves(aux.n_texts, k, cell.seed)):
            keep = np.isin(aux.owner, chosen)
            local = np.searchsorted(chosen, aux.owner[keep])  # texts renumbered 0..len(chosen)-1
            windows = TextWindows(aux.ids[keep], local, len(chosen))
            model, _ = finetune.fine_tune(
                copy.deepcopy(work.base()[0]),
                cell.method,
                windows,
                replace(cfg, seed=cfg.seed + 100 * (i + 1)),
                rank=cell.rank,
                dp=work.engine.dp,
                rowscale=work.engine.rowscale,
                progress=work.progress,
                desc=f"lira {cell.name} reference {i + 1}/{k}",
                device=work.device,
                a_seed=cell.seed,  # the target's public LoRA start A
            )
            for part, texts in (("members", prepared.members), ("nonmembers", prepared.nonmembers)):
                scores[part].append(text_losses(model, texts, device=work.device))
        arrays = {part: np.asarray(values, dtype=np.float32) for part, values in scores.items()}
        record = {
            "kind": "lira-references",
            "cell": asdict(cell),
            "lr": lr,
            "references": k,
            "scores_sha256": scores_digest(arrays),
            "manifest": {
                **work.provenance(spec, start),
                "train_config": asdict(cfg),
                "split_hashes": prepared.split_hashes,
                "reference_seeds": {"secret": [cfg.seed + 100 * (i + 1) for i in range(k)], "lora_init": cell.seed},
            },
        }
        return write_record(path, seal(record), arrays)

    return reused_or_computed(path, spec, compute)
