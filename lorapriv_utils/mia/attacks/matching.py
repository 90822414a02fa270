"""Methods compared at matched utility: the privacy-utility frontier read from its result files.

A variant's *points* are its checkpoints (every learning rate, every scored epoch, and the base
model at epoch 0), each with a validation perplexity and, per attack, the signals of the same
member and non-member texts.  Its *front* keeps the points that no other point of the variant beats
on both perplexity and attack strength.  A variant's value at a target perplexity is that of its
most private checkpoint at least as useful as the target (the last front point at or below it: a
step function, since a line between checkpoints would assume models nobody trained).  Comparing
two variants at a perplexity both reach then compares the most private checkpoint each can offer
at that utility; where a variant's checkpoints are sparse, the step overstates its attack
strength, so the grids are made dense where methods are compared.

The front is a minimum over noisy values, so reading it on the texts that chose it would flatter
a variant with many checkpoints (a winner's curse).  :func:`matched` therefore cross-fits: it
chooses the front on one half of the texts and reads it on the other, both ways round.  AUCs
below chance (0.5) are clipped there when choosing, since they are noise, not privacy.  The base
model (epoch 0) is a point of every curve: it counts only at its own perplexity or above.

Intervals come from a paired bootstrap over texts within each half: one resample is applied to
every point of every variant and the fronts are rebuilt, so the choice of the front is inside the
interval.  They are conditional on the trained models: perplexities are held fixed (measured on a
separate validation part); :func:`matched_seeds` adds the variation between training seeds.  Torch-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...store import read_record
from . import metrics as mia_metrics
from . import resampling

UTILITY_MATCH = 1.05  # two runs compared as of matched utility: validation perplexities within this factor
ATTACKS = ("reference", "loss", "minkpp")  # eq. 24's calibrated attack, the loss attack, Min-K%++
METRICS = ("auc", "tpr@0.01")


@dataclass
class Point:
    """One checkpoint of a variant: its perplexity, and per attack the (member, non-member) signals."""

    variant: str
    lr: float | None
    epoch: int
    perplexity: float
    signals: dict[str, tuple[np.ndarray, np.ndarray]]
    epsilon: float | None = None


@dataclass
class Curve:
    """Every point of one variant (of one dataset and seed)."""

    variant: str
    method: str
    rank: int | None
    noise_multiplier: float | None
    points: list[Point] = field(default_factory=list)


def _signals(scores: dict[str, np.ndarray], epoch: int, base: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for part in ("members", "nonmembers"):
        target = scores[f"e{epoch}_{part}_target"].astype(np.float64)
        # the base model is its own reference: eq. 24's signal is 0 for every text there (chance)
        reference = target if base else scores[f"e{epoch}_{part}_reference"].astype(np.float64)
        out.setdefault("reference", []).append(target - reference)
        out.setdefault("loss", []).append(target)
        out.setdefault("minkpp", []).append(-scores[f"e{epoch}_{part}_minkpp"].astype(np.float64))
    return {attack: (pair[0], pair[1]) for attack, pair in out.items()}


def read_points(path: Path) -> tuple[dict, list[Point]]:
    """A frontier record (checksum and score digest verified) and its points."""
    try:
        record, scores = read_record(path, ("frontier-base", "frontier-point"), with_arrays=True)
    except ValueError as err:
        raise ValueError(f"{path}: {err}: rerun the frontier command") from None
    base = record["kind"] == "frontier-base"
    name = "base" if base else grid_name(record["variant"])
    points = [
        Point(
            name,
            None if base else record["lr"],
            row["epoch"],
            row["validation_perplexity"],
            _signals(scores, row["epoch"], base),
            row.get("epsilon"),
        )
        for row in record["checkpoints"]
    ]
    return record, points


def grid_name(variant: dict) -> str:
    from ..experiments.grid import Variant

    return Variant(**variant).name


def load_curves(folder: Path, seed: int = 0) -> dict[str, Curve]:
    """Every variant's curve in one dataset's frontier folder, each with the base model as its epoch-0 point."""
    folder = Path(folder)
    base_path = folder / f"base-s{seed}.json"
    if not base_path.is_file():
        raise FileNotFoundError(
            f"no frontier results in {folder} (missing {base_path.name}): run `python -m lorapriv_utils frontier`"
        )
    _, base = read_points(base_path)
    curves: dict[str, Curve] = {}
    for path in sorted(folder.glob(f"*-s{seed}.json")):
        if path == base_path:
            continue
        record, points = read_points(path)
        v = record["variant"]
        curve = curves.setdefault(
            points[0].variant, Curve(points[0].variant, v["method"], v["rank"], v["noise_multiplier"], list(base))
        )
        curve.points.extend(points)
    return curves


def metric_value(metric: str, members: np.ndarray, nonmembers: np.ndarray) -> float:
    if metric == "auc":
        return mia_metrics.roc_auc(members, nonmembers)
    if metric.startswith("tpr@"):
        return mia_metrics.tpr_at_fpr(members, nonmembers, float(metric[4:])).tpr
    raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")


def front(perplexity: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Indices of the Pareto front (lower perplexity and lower attack metric are both better),
    ordered by increasing perplexity (so by decreasing metric)."""
    order = np.lexsort((value, perplexity))
    keep, best = [], np.inf
    for i in order:
        if value[i] < best:
            keep.append(i)
            best = value[i]
    return np.array(keep, dtype=int)


def value_at(
    perplexity: np.ndarray, value: np.ndarray, targets: np.ndarray, evaluate: np.ndarray | None = None
) -> np.ndarray:
    """The most private checkpoint at least as useful as each target: the value of the last front point
    whose perplexity is at most the target (a step function; no line between checkpoints is assumed).

    The front is chosen with ``value``; the numbers read off it are ``evaluate`` at the same points
    (default ``value``), so that choosing and measuring can use different texts.  NaN below the best
    perplexity and above the worst one of all points (utilities the variant never had).
    """
    idx = front(perplexity, value)
    shown = value if evaluate is None else evaluate
    x, y = perplexity[idx], shown[idx]
    t = np.asarray(targets, dtype=np.float64)
    pos = np.searchsorted(x, t * (1 + 1e-12), side="right") - 1
    out = np.where(pos >= 0, y[np.clip(pos, 0, None)], np.nan)
    out[t > perplexity.max() * (1 + 1e-12)] = np.nan
    return out


def _point_values(curve: Curve, attack: str, metric: str, pick=None) -> np.ndarray:
    values = []
    for p in curve.points:
        m, n = p.signals[attack]
        if pick is not None:
            m, n = m[pick[0]], n[pick[1]]
        values.append(metric_value(metric, m, n))
    return np.array(values)


CHANCE = {"auc": 0.5}  # a value below chance is noise, not privacy: fronts are chosen with it clipped there


@dataclass(frozen=True)
class Matched:
    """A metric at target perplexities: the estimate and a percentile bootstrap interval (NaN: not measured)."""

    targets: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray


def halves(size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two disjoint random halves of ``range(size)`` (the folds of cross-fitting)."""
    order = rng.permutation(size)
    return np.sort(order[: size // 2]), np.sort(order[size // 2 :])


def matched(
    curves: dict[str, Curve],
    targets: np.ndarray,
    attack: str = "reference",
    metric: str = "auc",
    baseline: str | None = None,
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Matched]:
    """Each variant's metric at the target perplexities; with ``baseline``, also each variant's
    difference from the baseline variant (key ``"<variant> - <baseline>"``), from the same resamples.

    Cross-fitted, so that the front's choice of the most private checkpoints (a minimum over noisy
    values) does not bias the value read off it: the texts are split into two halves, the front is
    chosen on one half and read on the other, and the two ways round are averaged.  The bootstrap
    resamples texts within each half, the same texts for every point of every variant (paired).
    One training seed: :func:`matched_seeds` is the same over several.
    """
    return matched_seeds([curves], targets, attack, metric, baseline, resamples, seed, level)


def matched_seeds(
    seeds: Sequence[dict[str, Curve]],
    targets: np.ndarray,
    attack: str = "reference",
    metric: str = "auc",
    baseline: str | None = None,
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Matched]:
    """:func:`matched` over training seeds (``seeds``: each seed's curves, the same variants in each): the mean
    over seeds of each seed's cross-fitted value, with the interval of a two-stage bootstrap that draws the seeds
    with replacement and then, within each seed drawn, the texts of each half
    (:func:`resampling.nested_resamples`).  The interval so holds the seed-to-seed variation as well as the
    texts'; with one seed it is the texts' alone, drawn as :func:`resampling.resamples` draws them.

    ``targets``: one row of perplexities for every seed, or one row per seed, since a seed's split holds its own
    validation texts and perplexities on different texts are not on one scale (level k is then the same utility
    relative to each seed's own runs).  The result's ``targets`` is their geometric mean over seeds.  The
    intervals' ends are widened by their Monte Carlo error, as every interval of :func:`resampling.percentile`."""
    if not seeds:
        raise ValueError("matched_seeds needs at least one seed's curves")
    names = list(seeds[0])
    if any(list(curves) != names for curves in seeds):
        raise ValueError(f"every seed needs the same variants; got {[list(c) for c in seeds]}")
    if attack not in ATTACKS:
        raise ValueError(f"unknown attack {attack!r}; choose one of {', '.join(ATTACKS)}")
    if baseline is not None and baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not among the curves ({', '.join(names)})")
    if resamples < 10:
        raise ValueError(f"need resamples >= 10, got {resamples}")
    targets = np.asarray(targets, dtype=np.float64)
    if targets.ndim == 2 and targets.shape[0] != len(seeds):
        raise ValueError(f"targets: one row per seed ({len(seeds)}), got {targets.shape[0]} rows")
    per_seed = np.broadcast_to(targets, (len(seeds), targets.shape[-1]))
    shown = per_seed[0] if len(seeds) == 1 else np.exp(np.log(per_seed).mean(axis=0))
    rng = np.random.default_rng(seed)
    folds = []  # per seed: its members' two halves and its non-members' two halves
    for curves in seeds:
        first = next(iter(curves.values())).points[0].signals[attack]
        (m_a, m_b), (n_a, n_b) = halves(first[0].size, rng), halves(first[1].size, rng)
        folds.append((m_a, m_b, n_a, n_b))
    ppl = [{name: np.array([p.perplexity for p in c.points]) for name, c in curves.items()} for curves in seeds]
    # below chance is noise, not privacy: an AUC under 0.5, a TPR at FPR alpha under alpha
    floor = float(metric[4:]) if metric.startswith("tpr@") else CHANCE.get(metric, -np.inf)

    def estimate(k: int, ma, mb, na, nb) -> dict[str, np.ndarray]:
        out = {}
        for name, c in seeds[k].items():
            va, vb = _point_values(c, attack, metric, (ma, na)), _point_values(c, attack, metric, (mb, nb))
            one = value_at(ppl[k][name], np.maximum(va, floor), per_seed[k], vb)
            two = value_at(ppl[k][name], np.maximum(vb, floor), per_seed[k], va)
            out[name] = (one + two) / 2
        if baseline is not None:
            out.update({f"{name} - {baseline}": out[name] - out[baseline] for name in names if name != baseline})
        return out

    def mean(estimates: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {key: np.mean([e[key] for e in estimates], axis=0) for key in estimates[0]}

    def resampled(k: int, index: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
        return estimate(k, *(fold[i] for fold, i in zip(folds[k], index, strict=True)))

    point = mean([estimate(k, *folds[k]) for k in range(len(seeds))])
    if len(seeds) == 1:
        draws = [resampled(0, draw) for draw in resampling.resamples(rng, [f.size for f in folds[0]], resamples)]
    else:
        sizes = [[f.size for f in unit] for unit in folds]
        draws = [
            mean([resampled(k, index) for k, index in draw])
            for draw in resampling.nested_resamples(rng, sizes, resamples)
        ]
    result = {}
    for key, value in point.items():
        stack = np.array([d[key] for d in draws])
        low, high = np.full_like(value, np.nan), np.full_like(value, np.nan)
        for k in range(value.size):  # a resample can move the front so that a target is unbracketed there
            finite = stack[:, k][np.isfinite(stack[:, k])]
            if np.isfinite(value[k]) and finite.size >= resamples / 2:
                low[k], high[k] = resampling.percentile(finite, level)
        result[key] = Matched(shown, value, low, high)
    return result


def best_point(curve: Curve) -> Point:
    """The variant's checkpoint with the lowest validation perplexity (its best utility)."""
    return min(curve.points, key=lambda p: p.perplexity)
