"""The privacy-utility frontier: methods compared at matched utility, and the rank sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ...catalogue import regenerate_kind
from ...numbers import rounded_frame
from ...scale import Scale
from .common import DATASETS, KEY, label, results_dir


# ---------------------------------------------------------------- the frontier (matched utility)
def load_frontier(scale: Scale, datasets: list[str] | None = None, seed: int = 0) -> dict:
    """{dataset: {variant: Curve}} of seed ``seed`` from the committed frontier records (default: every dataset
    there)."""
    return {d: by_seed[seed] for d, by_seed in load_frontier_seeds(scale, datasets, (seed,)).items() if by_seed}


def load_frontier_seeds(scale: Scale, datasets: list[str] | None = None, only: tuple[int, ...] | None = None) -> dict:
    """{dataset: {seed: {variant: Curve}}}: every seed of the committed frontier records (a seed per base-model
    record ``base-s<seed>.json``; default: every dataset there), or those of ``only`` among them."""
    from ...mia.attacks import matching

    folder = results_dir(scale) / "frontier"
    if datasets is None:
        found = [p.name for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []
        datasets = sorted(found, key=lambda d: (list(DATASETS).index(d) if d in DATASETS else len(DATASETS), d))
    seeds = {d: sorted(int(p.stem.removeprefix("base-s")) for p in (folder / d).glob("base-s*.json")) for d in datasets}
    if not datasets or not all(seeds.values()):
        raise FileNotFoundError(
            f"no frontier results under {folder}; regenerate them with: {regenerate_kind(scale.name, 'frontier')}"
        )
    return {
        d: {s: matching.load_curves(folder / d, s) for s in seeds[d] if only is None or s in only} for d in datasets
    }


def points_frame(curves: dict, attack: str = "reference") -> pd.DataFrame:
    """Every checkpoint of every variant: learning rate, epoch, perplexity, AUC and TPR at 1% FPR."""
    from ...mia.attacks import metrics as mia_metrics

    rows = []
    for dataset, by_variant in curves.items():
        for name, curve in by_variant.items():
            for p in curve.points:
                m, n = p.signals[attack]
                rows.append(
                    {
                        "dataset": dataset,
                        "variant": name,
                        "lr": np.nan if p.lr is None else p.lr,
                        "epoch": p.epoch,
                        "ppl": p.perplexity,
                        "auc": mia_metrics.roc_auc(m, n),
                        "tpr1": mia_metrics.tpr_at_fpr(m, n, 0.01).tpr,
                        "epsilon": np.nan if p.epsilon is None else p.epsilon,
                    }
                )
    columns = ["dataset", "variant", "lr", "epoch", "ppl", "auc", "tpr1", "epsilon"]
    return rounded_frame(pd.DataFrame(rows, columns=columns), 4)


def frontier_design(points: pd.DataFrame) -> dict[str, str | int]:
    """A frontier's design read from its points, so that no page or note types it: the epochs it scored checkpoints
    after, in words (``checkpoints``: "1, 2 and 4"), the runs' length (``epochs``), the fewest and most learning
    rates a method ran at on one corpus (``rates_min``, ``rates_max``) and the fewest seeds (``seeds``; 1 without a
    ``seed`` column)."""
    epochs = sorted(int(e) for e in set(points["epoch"]) if e > 0)
    if not epochs:
        raise ValueError("the frontier has no checkpoint after epoch 0")
    words = ", ".join(map(str, epochs[:-1])) + " and " + str(epochs[-1]) if len(epochs) > 1 else str(epochs[0])
    trained = points.loc[points["epoch"] > 0]
    rates = trained.groupby(["dataset", "variant"])["lr"].nunique()
    seeds = int(trained.groupby(["dataset", "variant"])["seed"].nunique().min()) if "seed" in trained else 1
    return {
        "checkpoints": words,
        "epochs": epochs[-1],
        "rates_min": int(rates.min()),
        "rates_max": int(rates.max()),
        "seeds": seeds,
    }


def frontier_design_numbers(design: dict[str, str | int], prefix: str) -> dict[str, str | int]:
    """A frontier's ``design`` (:func:`frontier_design`) as the notebook glues it, keyed
    ``a6_membership_<prefix><name>``."""
    return {f"{KEY}_{prefix}{name}": value for name, value in design.items()}


def design_sentence(design: dict | None) -> str:
    """A frontier's checkpoints and rates as a note states them (:func:`frontier_design`), or where to find them."""
    if design is None:
        return "checkpoints and learning rates as the chapter's frontier lists them"
    rates = (
        f"{design['rates_min']}"
        if design["rates_min"] == design["rates_max"]
        else f"{design['rates_min']} to {design['rates_max']}"
    )
    return (
        f"checkpoints after {design['checkpoints']} epochs of runs of {design['epochs']} epochs, {rates} learning "
        "rate" + ("" if rates == "1" else "s") + " per method and corpus"
    )


def frontier_points(frontier: dict) -> pd.DataFrame:
    """:func:`points_frame` of every seed of a frontier (:func:`load_frontier_seeds`), with a ``seed`` column."""
    parts = [
        points_frame({d: curves}).assign(seed=s) for d, by_seed in frontier.items() for s, curves in by_seed.items()
    ]
    return pd.concat(parts, ignore_index=True) if parts else points_frame({}).assign(seed=pd.Series(dtype=int))


def front_frame(points: pd.DataFrame, column: str = "auc") -> pd.DataFrame:
    """The points on each variant's front (most private checkpoint at each utility by ``column``, ``auc`` or
    ``tpr1``), by perplexity."""
    from ...mia.attacks import matching

    parts = []
    for _, part in points.groupby(["dataset", "variant"], sort=False):
        idx = matching.front(part["ppl"].to_numpy(), part[column].to_numpy())
        parts.append(part.iloc[idx])
    return pd.concat(parts, ignore_index=True) if parts else points.iloc[:0]


COMPARED = ("adapter", "lora-r8", "lora-r16", "flora-r8", "dpsgd-r8-z1")


def _targets(pair: dict, baseline: str, levels: tuple[float, ...] = (0.0, 1 / 3, 2 / 3)) -> np.ndarray:
    """The perplexities a pair of curves is compared at: the worse of their best perplexities (level 0), and the
    fractions ``levels`` of the way (in log) from there to the base model's (every curve's epoch-0 point)."""
    from ...mia.attacks import matching

    start = max(matching.best_point(c).perplexity for c in pair.values())
    base_ppl = pair[baseline].points[0].perplexity
    return np.exp(np.log(start) + np.array(levels) * (np.log(base_ppl) - np.log(start)))


def matched_frame(
    curves: dict,
    scale: Scale,
    attack: str = "reference",
    metric: str = "auc",
    baseline: str = "full",
    compared: tuple[str, ...] = COMPARED,
) -> pd.DataFrame:
    """Each compared variant against the baseline at three perplexities: the worse of the two best
    perplexities (``level 0``, the best utility both reach), and one and two thirds of the way (in log)
    from there to the base model's.  Each value is the variant's most private checkpoint at least as useful
    as the target (:func:`lorapriv_utils.mia.attacks.matching.value_at`), cross-fitted.  ``curves``: one seed's
    (:func:`load_frontier`) or every seed's (:func:`load_frontier_seeds`); over several seeds, a comparison
    uses the seeds that ran both variants (column ``seeds``), each at its own targets (a seed's validation texts
    are its own), and its values are means over them with intervals over seeds and texts
    (``matching.matched_seeds``); ``ppl`` is then the targets' geometric mean."""
    from ...mia.attacks import matching

    rows = []
    for dataset, by_seed in curves.items():
        if all(isinstance(c, matching.Curve) for c in by_seed.values()):  # one seed's curves
            by_seed = {0: by_seed}
        for name in compared:
            units = [
                {baseline: c[baseline], name: c[name]} for _, c in sorted(by_seed.items()) if {baseline, name} <= set(c)
            ]
            if not units:  # a scale whose frontier has not run the pair on this corpus
                continue
            targets = np.array([_targets(pair, baseline) for pair in units])  # each seed's own texts and runs
            out = matching.matched_seeds(
                units, targets, attack, metric, baseline, scale.engine.bootstrap_resamples, seed=0
            )
            targets = out[name].targets
            diff = out[f"{name} - {baseline}"]
            for k, target in enumerate(targets):
                rows.append(
                    {
                        "dataset": dataset,
                        "variant": name,
                        "seeds": len(units),
                        "level": k,
                        "ppl": target,
                        "ours": out[name].value[k],
                        "ours_low": out[name].low[k],
                        "ours_high": out[name].high[k],
                        "baseline": out[baseline].value[k],
                        "baseline_low": out[baseline].low[k],
                        "baseline_high": out[baseline].high[k],
                        "diff": diff.value[k],
                        "diff_low": diff.low[k],
                        "diff_high": diff.high[k],
                    }
                )
    columns = ["dataset", "variant", "seeds", "level", "ppl", "ours", "ours_low", "ours_high", "baseline"]
    columns += ["baseline_low", "baseline_high", "diff", "diff_low", "diff_high"]
    return rounded_frame(pd.DataFrame(rows, columns=columns), 4)


def matched_display(frame: pd.DataFrame, baseline: str, metric: str = "AUC") -> pd.DataFrame:
    """A matched-perplexity table with readable labels: the method's metric, the baseline's, their difference."""
    names = {
        "ppl": "perplexity",
        "ours": metric,
        "ours_low": f"{metric} low",
        "ours_high": f"{metric} high",
        "baseline": f"{metric} {baseline}",
        "baseline_low": f"{baseline} low",
        "baseline_high": f"{baseline} high",
        "diff": f"{metric} - {baseline}",
        "diff_low": "difference low",
        "diff_high": "difference high",
    }
    out = frame.rename(columns=names)
    out["variant"] = out["variant"].map(label)
    return out


def base_perplexity(curves: dict) -> dict[str, float]:
    """Each dataset's base-model validation perplexity (every curve's epoch-0 point)."""
    return {d: next(iter(by_variant.values())).points[0].perplexity for d, by_variant in curves.items()}


RANK_LR_INDEX, RANK_EPOCH = 1, 4  # the fixed budget of the rank sweep: the middle rate of LoRA's grid, 4 epochs


def rank_frame(points: pd.DataFrame, scale: Scale) -> pd.DataFrame:
    """LoRA at every rank at one fixed budget: perplexity and AUC (the paper's comparison, extended to r = 1..64)."""
    lr = scale.engine.lora.lr_grid[RANK_LR_INDEX]
    lora = points[
        points["variant"].str.match(r"^lora-r\d+$") & np.isclose(points["lr"], lr) & (points["epoch"] == RANK_EPOCH)
    ]
    out = lora.assign(r=lora["variant"].str.slice(6).astype(int))[["dataset", "r", "lr", "epoch", "ppl", "auc", "tpr1"]]
    return out.sort_values(["dataset", "r"]).reset_index(drop=True)


def rank_trends(ranks: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation of the rank with AUC and with perplexity, per dataset."""
    rows = []
    for dataset, part in ranks.groupby("dataset", sort=False):
        rows.append(
            {
                "dataset": dataset,
                "ranks": len(part),
                "rho_rank_auc": stats.spearmanr(part["r"], part["auc"]).statistic,
                "rho_rank_ppl": stats.spearmanr(part["r"], part["ppl"]).statistic,
            }
        )
    return rounded_frame(pd.DataFrame(rows), 4)


def rank_matched(curves: dict, scale: Scale) -> pd.DataFrame:
    """LoRA r = 8 against r = 16 at the perplexities both reach (the rank claim at matched utility)."""
    from ...mia.attacks import matching

    rows = []
    for dataset, by_variant in curves.items():
        pair = {"lora-r16": by_variant["lora-r16"], "lora-r8": by_variant["lora-r8"]}
        target = _targets(pair, "lora-r16", (0.0, 0.5))  # the best utility both reach, and half way to the base
        out = matching.matched(pair, target, baseline="lora-r16", resamples=scale.engine.bootstrap_resamples)
        d = out["lora-r8 - lora-r16"]
        for k in range(len(target)):
            rows.append(
                {"dataset": dataset, "ppl": target[k], "diff": d.value[k], "diff_low": d.low[k], "diff_high": d.high[k]}
            )
    return rounded_frame(pd.DataFrame(rows), 4)
