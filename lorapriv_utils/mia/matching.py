"""Methods compared at matched utility: the privacy-utility frontier read from its result files.

A variant's *points* are its checkpoints (every learning rate, every scored epoch, and the base
model at epoch 0), each with a validation perplexity and, per attack, the signals of the same
member and non-member texts.  Its *front* keeps the points that no other point of the variant beats
on both perplexity and attack strength; between two front points the attack metric is
interpolated linearly in log-perplexity.  Comparing two variants at a perplexity both reach then
compares the most private checkpoint each can offer at that utility.

Intervals come from a paired bootstrap over texts: one resample of the member and non-member
texts is applied to every point of every variant, the fronts are rebuilt and the interpolation
redone, so the choice of the front is inside the interval.  Perplexities are held fixed (they
are measured on a separate validation part).  Torch-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .report import read_record

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
    from .runner import read_scores, scores_digest, scores_path

    record = read_record(path)
    scores = read_scores(scores_path(path))
    if scores_digest(scores) != record["scores_sha256"]:
        raise ValueError(f"{scores_path(path)} does not match its record: rerun the frontier command")
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
    from .grid import Variant

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


def fast_auc(members: np.ndarray, nonmembers: np.ndarray) -> float:
    """ROC AUC with lower signal = member (ties count 1/2), by sorting the non-members once."""
    n_sorted = np.sort(nonmembers)
    above = n_sorted.size - np.searchsorted(n_sorted, members, side="right")
    ties = np.searchsorted(n_sorted, members, side="right") - np.searchsorted(n_sorted, members, side="left")
    return float((above + 0.5 * ties).sum() / (members.size * n_sorted.size))


def fast_tpr(members: np.ndarray, nonmembers: np.ndarray, alpha: float) -> float:
    """TPR at FPR strictly below ``alpha`` (paper A's rule, as ``metrics.tpr_at_fpr``)."""
    n_sorted = np.sort(nonmembers)
    allowed = math.ceil(alpha * n_sorted.size) - 1
    gamma = n_sorted[allowed] if allowed < n_sorted.size else np.inf
    return float(np.mean(members < gamma))


def metric_value(metric: str, members: np.ndarray, nonmembers: np.ndarray) -> float:
    if metric == "auc":
        return fast_auc(members, nonmembers)
    if metric.startswith("tpr@"):
        return fast_tpr(members, nonmembers, float(metric[4:]))
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


def value_at(perplexity: np.ndarray, value: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The front's metric at each target perplexity, linear in log-perplexity between front points and
    constant beyond the front's most private point (a checkpoint of better utility already reaches it);
    NaN below the best perplexity and above the worst one of all points (utilities the variant never had)."""
    idx = front(perplexity, value)
    x, y = np.log(perplexity[idx]), value[idx]
    t = np.log(np.asarray(targets, dtype=np.float64))
    out = np.interp(t, x, y)  # np.interp holds the end values beyond the ends
    out[(t < x[0] - 1e-12) | (t > np.log(perplexity.max()) + 1e-12)] = np.nan
    return out


def _point_values(curve: Curve, attack: str, metric: str, pick=None) -> np.ndarray:
    values = []
    for p in curve.points:
        m, n = p.signals[attack]
        if pick is not None:
            m, n = m[pick[0]], n[pick[1]]
        values.append(metric_value(metric, m, n))
    return np.array(values)


@dataclass(frozen=True)
class Matched:
    """A metric at target perplexities: the estimate and a percentile bootstrap interval (NaN: not reached)."""

    targets: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray


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
    difference from the baseline variant (key ``"<variant> - <baseline>"``), from the same resamples."""
    if attack not in ATTACKS:
        raise ValueError(f"unknown attack {attack!r}; choose one of {', '.join(ATTACKS)}")
    if baseline is not None and baseline not in curves:
        raise ValueError(f"baseline {baseline!r} is not among the curves ({', '.join(curves)})")
    if resamples < 10:
        raise ValueError(f"need resamples >= 10, got {resamples}")
    targets = np.asarray(targets, dtype=np.float64)
    first = next(iter(curves.values())).points[0].signals[attack]
    sizes = (first[0].size, first[1].size)
    ppl = {name: np.array([p.perplexity for p in c.points]) for name, c in curves.items()}

    def estimate(pick) -> dict[str, np.ndarray]:
        out = {name: value_at(ppl[name], _point_values(c, attack, metric, pick), targets) for name, c in curves.items()}
        if baseline is not None:
            out.update({f"{name} - {baseline}": out[name] - out[baseline] for name in curves if name != baseline})
        return out

    point = estimate(None)
    rng = np.random.default_rng(seed)
    draws = [
        estimate((rng.integers(0, sizes[0], sizes[0]), rng.integers(0, sizes[1], sizes[1]))) for _ in range(resamples)
    ]
    result = {}
    for key, value in point.items():  # perplexities are fixed, so a target unreached is unreached in every draw
        stack = np.array([d[key] for d in draws])
        low, high = np.full_like(value, np.nan), np.full_like(value, np.nan)
        ok = np.isfinite(value)
        if ok.any():
            low[ok], high[ok] = np.quantile(stack[:, ok], [(1 - level) / 2, (1 + level) / 2], axis=0)
        result[key] = Matched(targets, value, low, high)
    return result


def best_point(curve: Curve) -> Point:
    """The variant's checkpoint with the lowest validation perplexity (its best utility)."""
    return min(curve.points, key=lambda p: p.perplexity)
