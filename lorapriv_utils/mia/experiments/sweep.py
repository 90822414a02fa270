"""A cell's training stage before its target: the learning-rate sweep on the auxiliary part, whose winner is the
calibrated reference model of eq. 24.

One rule for every method: train it on the auxiliary part at each rate of the scale's grid and keep the rate with
the lowest validation perplexity (``--lr`` fixes it instead).  The sweep draws the training's secret randomness
itself (:func:`grid.reference_seed`): DP-SGD's noise and sampling, the data order and FLoRA's resampling are
independent of the target's, as an adversary's would be (with shared noise, eq. 24's difference cancels DP-SGD's
noise and overstates the leakage).  The reference shares the target's start A: public for LoRA-FA and row scaling,
whose frozen A ships with the adapter; for LoRA, which trains A, a little more than the release gives (a
conservative attacker).
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace

from tqdm.auto import tqdm

from .grid import reference_seed
from .reuse import SweepJournal
from .scoring import perplexity, reference_scores
from .workspace import Workspace


def sweep(
    ws: Workspace,
    name: str,
    method: str,
    rank: int | None,
    seed: int,
    earlier: dict | None = None,
    journal: SweepJournal | None = None,
) -> dict:
    """The sweep of ``method`` on ``name`` for ``seed`` (cached in ``ws.sweeps``): its table, chosen rate, and the
    reference model's training statistics and per-text scores.

    ``earlier`` (``reuse.earlier_work``, ``reuse.resumed_work``): the rates a record of the same cell under another
    grid, or an unfinished run's journal, trained, and the record's reference model's scores; those rates are not
    trained again (a rate's model does not depend on the other rates of its grid).  ``journal``: where each trained
    rate is written as it finishes."""
    slot = (name, method, rank, seed)
    if slot in ws.sweeps:
        return ws.sweeps[slot]
    prepared = ws.dataset(name, seed)
    known = earlier["rates"] if earlier else {}
    rows, best = [], None

    def train(lr):
        cfg = replace(ws.train_config(method, seed, lr), seed=reference_seed(seed))
        label = f"{name} {method}{'' if rank is None else f'-r{rank}'} aux lr={lr:g}"
        return ws.fine_tune(method, prepared.auxiliary, cfg, rank, desc=label, a_seed=seed)

    for lr in ws.lr_rule(method)["grid"]:
        trained = lr not in known
        if not trained:
            model, stats, ppl = None, None, known[lr]
        else:
            try:
                model, stats = train(lr)
                ppl = perplexity(model, prepared.validation, ws.device)
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
        scores = reference_scores(ws, model, prepared, f"{name} {method}")
    ws.sweeps[slot] = {
        "lr": lr,
        "table": rows,
        "reference_training": stats,
        "reused": {"rates": sorted(r for r in known if r in {row["lr"] for row in rows}), "reference": reused},
        **scores,
    }
    return ws.sweeps[slot]
