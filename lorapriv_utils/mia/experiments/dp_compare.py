"""DP-SGD on different sets of weights at one noise multiplier (paper B: "low-rank fine-tuning can be more
private than full fine-tuning at the same noise level").

Four weight sets of the engine's GPT-2 are trained by the engine's DP-SGD (``dp.dp_train``: Opacus, a text
as the privacy unit, Poisson sampling, per-text clipping to C, noise N(0, (sigma C)^2)):

* ``full``: every weight but GPT-2's position embedding (see :func:`dp_parameters`);
* ``adapter``: the ``c_attn`` matrices that LoRA adapts, at full rank;
* ``lorafa``: B of a rank-r LoRA on ``c_attn`` with A frozen at its N(0, 1/r) start (paper A's frozen-A
  setting made private, paper B's DP-LoRA-FA);
* ``lora``: both factors (the engine's ``dpsgd``);
* ``compressed``: paper B's M2 in training (:mod:`.compressed`): DP-SGD on the ``c_attn`` matrices in their
  full space, then a fresh secret rank-r projection of each noisy gradient, at the noise multiplier whose
  certificate (Renyi DP, any difference) matches plain DP-SGD's at the cell's noise (so its row sits beside
  the others at one epsilon and less added noise: paper B's "tighter accounting lets DP fine-tuning use less
  noise").

At one (sigma, sampling rate, steps) the DP-SGD certificate is one number for the first four: the
accountant sees the clipped sensitivity C and the noise, not how many weights carry them.  Whatever "more
private" means then has to show in the attacks, so each cell measures validation perplexity and two attacks
on members against non-members: the loss attack and eq. 24's reference attack, whose reference is the same
weight set trained on the auxiliary part at the rate the rule picks (lowest validation perplexity over the
engine's grid widened by one step at each end), with its own noise, sampling and LoRA start (a reference
that shared the target's noise would cancel it in eq. 24's difference and overstate the leakage).
sigma = 0 (clipping alone, no certificate) shows what the attacks see without noise.  Each record keeps
every text's loss under the target and the reference, so that two weight sets can be compared text by
text (a paired bootstrap).

Results: one JSON record per cell, written atomically with a manifest, its spec and key, under
``OUT/dp_compare/SCALE/``; a rerun skips the cells that are intact and current
(``python -m lorapriv_utils.mia.experiments.dp_compare --out results/published``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from ...scale import Scale
from ...store import read_record, seal, write_record
from ..attacks import metrics as mia_metrics
from ..engine import compressed, dp, families, finetune
from ..engine.training import text_losses
from ..records import specs
from .cell_metrics import attack_metrics
from .cell_record import write_refreshed
from .grid import LOW_RANK, WEIGHT_SETS, DPCell, reference_seed
from .reuse import reused_or_computed
from .scoring import perplexity
from .workspace import Workspace

NOISE = (0.0, 0.5, 1.0, 2.0)
RANK = 8
SEEDS = (0, 1)
KIND = "dp-compare"


def plan(
    noise: tuple[float, ...] = NOISE, rank: int = RANK, dataset: str = "ptb", seeds: tuple[int, ...] = SEEDS
) -> list[DPCell]:
    """Every weight set at every noise multiplier and seed (compressed DP-SGD only where there is noise)."""
    return [
        DPCell(w, z, dataset, seed, rank if w in LOW_RANK else None)
        for seed in seeds
        for z in noise
        for w in WEIGHT_SETS
        if not (w == "compressed" and z == 0)
    ]


def lr_grid(work: Workspace, weights: str) -> dict:
    """The engine's learning-rate rule for the weight set's method, its grid widened by one step (the ratio of
    its first and last neighbours) at each end: DP training often picks a rate at the engine's edges.
    ``compressed`` trains the full-rank matrices and takes ``adapter``'s grid."""
    return specs.widened_lr_rule(work.lr_rule("adapter" if weights == "compressed" else weights))


def dp_parameters(
    model, weights: str, rank: int | None, seed: int, a_seed: int | None = None
) -> tuple[torch.nn.Module, list]:
    """The model to train and the weights DP-SGD trains for a weight set.

    GPT-2's position embedding is looked up with positions shared by the whole batch (shape (1, T)), so
    Opacus gives it one gradient per batch instead of one per text: it cannot be clipped per text and stays
    frozen under ``full`` (Llama's rotary positions have no weight).  The token embedding, tied to the output
    layer, trains (Opacus adds its two uses).
    """
    trained, params, _ = finetune.prepare(model, weights, rank, seed, a_seed)
    position = families.family_of(trained).position_embedding(trained)
    if weights == "full" and position is not None:
        position.requires_grad_(False)
        params = [p for p in params if p is not position]
    return trained, params


def train(
    work: Workspace, cell: DPCell, windows, lr: float, desc: str = "", reference: bool = False
) -> tuple[torch.nn.Module, dict]:
    """DP-SGD on ``cell``'s weights of a copy of the scale's base model, the engine's settings otherwise; a
    ``reference`` model draws its own secret randomness (sampling, noise) and shares the public LoRA start
    A, as the runner's do."""
    seed = reference_seed(cell.seed) if reference else cell.seed
    if cell.weights == "compressed":
        model, params = dp_parameters(copy.deepcopy(work.base()[0]), "adapter", None, seed)
        cfg = replace(work.train_config("adapter", cell.seed, lr), seed=seed)
        q, steps = compressed.steps_for(windows.n_texts, cfg.batch_size, cfg.epochs)
        matched = compressed.matched_noise(
            cell.noise,
            q,
            steps,
            work.engine.dp.delta,
            compressed.input_width(params, families.family_of(model)),
            cell.rank,
        )
        settings = replace(work.engine.dp, noise_multiplier=matched["noise_multiplier"])
        model.to(work.device)
        model, stats = compressed.compressed_train(
            model, params, windows, cfg, settings, cell.rank, work.device, work.progress, desc
        )
        stats = {**stats, "matched_noise_multiplier": cell.noise, "matched_epsilon": matched["matched_epsilon"]}
    else:
        model, params = dp_parameters(copy.deepcopy(work.base()[0]), cell.weights, cell.rank, seed, a_seed=cell.seed)
        model.to(work.device)
        cfg = replace(work.train_config(cell.weights, cell.seed, lr), seed=seed)
        settings = replace(work.engine.dp, noise_multiplier=cell.noise)
        model, stats = dp.dp_train(model, params, windows, cfg, settings, work.device, work.progress, desc)
    return model, {**stats, "trainable_parameters": int(sum(p.numel() for p in params))}


def result_path(out: Path, scale: Scale, cell: DPCell) -> Path:
    return Path(out) / "dp_compare" / scale.name / f"{cell.name}.json"


def cell_spec(work: Workspace, cell: DPCell) -> dict:
    """What a DP training's numbers depend on (``specs.dp_compare_spec``)."""
    return specs.dp_compare_spec(work.engine, cell, work.corpus(cell.dataset, cell.seed))


def run_cell(work: Workspace, cell: DPCell, spec: dict) -> dict:
    """Sweep the rate on the auxiliary part, train the target on the members, attack; write the record."""
    start = time.perf_counter()
    prepared = work.dataset(cell.dataset, cell.seed)
    sweep, best = [], None
    for lr in lr_grid(work, cell.weights)["grid"]:
        model, _ = train(work, cell, prepared.auxiliary, lr, desc=f"{cell.name} aux lr={lr:g}", reference=True)
        ppl = perplexity(model, prepared.validation, work.device)
        sweep.append({"lr": lr, "validation_perplexity": ppl})
        if best is None or ppl < best[0]:
            best = (ppl, lr, model)
    _, lr, reference = best
    target, stats = train(work, cell, prepared.members, lr, desc=cell.name)
    losses = {
        (who, part): text_losses(model, getattr(prepared, part), device=work.device)
        for who, model in (("target", target), ("reference", reference))
        for part in ("members", "nonmembers")
    }
    stored = {
        who: {part: [float(x) for x in losses[who, part]] for part in ("members", "nonmembers")}
        for who in ("target", "reference")
    }
    metrics = {
        **attacks(stored, cell, work.engine.bootstrap_resamples),
        "validation_perplexity": perplexity(target, prepared.validation, work.device),
        "lr": lr,
        "sweep": sweep,
        "texts": {"members": prepared.members.n_texts, "nonmembers": prepared.nonmembers.n_texts},
        "text_losses": stored,
        "training": {k: v for k, v in stats.items() if k != "seconds"},
    }
    record = {
        "kind": KIND,
        "cell": asdict(cell),
        "metrics": metrics,
        "manifest": {
            **work.provenance(spec, start),
            "split_hashes": prepared.split_hashes,
            "training_seconds": stats["seconds"],
        },
    }
    return write_record(result_path(work.out, work.scale, cell), seal(record))


def attacks(text_losses: dict, cell: DPCell, resamples: int) -> dict:
    """The loss attack's and eq. 24's metrics of a DP training, from its per-text losses as its record stores them:
    what the record derives (its spec's ``derived`` part), recomputed without training when only that changes."""
    losses = {
        (who, part): np.asarray(text_losses[who][part], dtype=np.float64)
        for who in text_losses
        for part in text_losses[who]
    }
    rng = np.random.default_rng([cell.seed, 98])
    return {
        "loss_attack": attack_metrics(losses["target", "members"], losses["target", "nonmembers"], rng, resamples),
        "reference_attack": attack_metrics(
            mia_metrics.reference_signal(losses["target", "members"], losses["reference", "members"]),
            mia_metrics.reference_signal(losses["target", "nonmembers"], losses["reference", "nonmembers"]),
            rng,
            resamples,
        ),
    }


def refresh(work: Workspace, cell: DPCell, path: Path, spec: dict, record: dict) -> dict:
    """A record whose derived part alone is stale, its attacks recomputed from its stored per-text losses."""
    metrics = attacks(record["metrics"]["text_losses"], cell, work.engine.bootstrap_resamples)
    return write_refreshed(work, path, record, spec, metrics)


def run(work: Workspace, cells: list[DPCell]) -> list[dict]:
    """Every cell, reusing those whose record is intact and current."""
    records = []
    for cell in tqdm(cells, desc=f"DP weight sets ({work.scale.name})", disable=not work.progress):
        spec = cell_spec(work, cell)
        path = result_path(work.out, work.scale, cell)
        compute, again = partial(run_cell, work, cell, spec), partial(refresh, work, cell, path, spec)
        records.append(reused_or_computed(path, spec, compute, with_scores=False, refresh=again))
    return records


def load(folder: Path) -> list[dict]:
    """The committed records under ``folder`` (``OUT/dp_compare/SCALE``), each checksum verified."""
    folder = Path(folder)
    paths = sorted(folder.rglob("*.json"))
    if not paths:
        raise FileNotFoundError(f"no DP comparison records under {folder}; run `make results-b3`")
    return [read_record(p, KIND) for p in paths]


def summary(records: list[dict]) -> pd.DataFrame:
    """One row per cell: weight set, noise (for ``compressed``: the DP-SGD certificate matched) and the noise
    trained with, seed, the certified epsilon, the rate chosen, perplexity and both attacks."""
    rows = []
    for r in records:
        m, cell = r["metrics"], r["cell"]
        rows.append(
            {
                "weights": cell["weights"],
                "rank": cell["rank"],
                "noise": cell["noise"],
                "noise_used": m["training"]["noise_multiplier"],
                "seed": cell["seed"],
                "trainable": m["training"]["trainable_parameters"],
                "epsilon": m["training"]["epsilon"],
                "epsilon_rdp": m["training"]["epsilon_rdp"],
                "lr": m["lr"],
                "perplexity": m["validation_perplexity"],
                **{
                    f"{attack}_{column}": m[f"{attack}_attack"]["auc"][part]
                    for attack in ("loss", "reference")
                    for column, part in (("auc", "value"), ("low", "low"), ("high", "high"))
                },
            }
        )
    order = {w: i for i, w in enumerate(WEIGHT_SETS)}
    frame = pd.DataFrame(rows)
    return frame.sort_values(
        ["noise", "weights", "seed"], key=lambda c: c.map(order) if c.name == "weights" else c
    ).reset_index(drop=True)


def main(argv: list[str] | None = None) -> None:
    """``python -m lorapriv_utils.mia.experiments.dp_compare --out DIR [--threads N]`` at the scale of
    ``LORAPRIV_SCALE``."""
    import sys

    from ...scale import current_scale
    from .producers import parse
    from .workspace import set_threads

    args = parse("dp-compare", sys.argv[1:] if argv is None else argv)
    seeds, (k, n) = args.seeds, args.shard
    set_threads(args.threads)
    scale = current_scale()
    work = Workspace(scale, args.out)
    records = run(work, plan(seeds=seeds)[k::n])
    print(summary(records).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
