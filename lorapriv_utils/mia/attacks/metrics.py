"""Membership-inference signals and metrics (paper A, section 6, eq. 24).

Convention: a *signal* is lower for examples that look like members.  The reference-model
attack of eq. 24 uses s(x) = L(x; target) - L(x; reference) and predicts "member" when
s(x) < gamma; the plain loss attack uses s(x) = L(x; target); the zlib-ratio and Min-K%++ attacks
(:func:`zlib_signal`, :func:`minkpp_signal`) need no reference model either.

TPR at FPR alpha follows paper A's rule: gamma is the highest threshold whose false-positive
rate over the non-members stays strictly below alpha.  With N non-members, FPRs come in steps
of 1/N: when alpha <= 1/N the only admissible FPR is 0, which :class:`RateAtFPR` flags, since
such a number is a TPR at FPR = 0, not at alpha.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import resampling


def _signals(values: np.ndarray, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError(f"{name} is empty: an attack needs at least one example of each kind")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} has non-finite values (nan or inf): check the losses it was computed from")
    return values


def reference_signal(target_losses: np.ndarray, reference_losses: np.ndarray) -> np.ndarray:
    """Eq. 24's calibrated signal: target loss minus reference-model loss, per example."""
    t, r = _signals(target_losses, "target_losses"), _signals(reference_losses, "reference_losses")
    if t.shape != r.shape:
        raise ValueError(f"target and reference losses must be paired, got {t.size} and {r.size} values")
    return t - r


def zlib_signal(losses: np.ndarray, texts: list[str]) -> np.ndarray:
    """The zlib-ratio attack (Carlini et al. 2021, as in MIMIR): a text's mean token loss divided by the
    length in bytes of its zlib compression, so that texts that are easy for any compressor do not look
    like members."""
    values = _signals(losses, "losses")
    if len(texts) != values.size:
        raise ValueError(f"need one text per loss, got {len(texts)} texts for {values.size} losses")
    sizes = np.array([len(zlib.compress(text.encode("utf-8"))) for text in texts], dtype=np.float64)
    return values / sizes


def minkpp_signal(scores: np.ndarray) -> np.ndarray:
    """Min-K%++ as a signal: its score is higher for members, a signal lower, so the sign flips."""
    return -_signals(scores, "scores")


@dataclass(frozen=True)
class Attack:
    """A membership-inference attack: a name (a record stores its metrics under ``<name>_attack``), a label,
    the per-text scores it needs (``<part>_<score>`` arrays of a record's scores file; ``text``: the texts
    themselves) and its signal, lower for members."""

    name: str
    label: str
    needs: tuple[str, ...]
    signal: Callable[[dict, str], np.ndarray]  # (scores and texts, part) -> the part's signals

    def signals(self, scores: dict, texts: dict, part: str) -> np.ndarray:
        return self.signal({**scores, **{f"{p}_text": t for p, t in texts.items()}}, part)


# The attacks every grid cell reports, in the order their bootstrap intervals draw from the cell's stream.
ATTACKS: dict[str, Attack] = {
    a.name: a
    for a in (
        Attack(
            "reference",
            "eq. 24 (reference-calibrated loss)",
            ("target", "reference"),
            lambda s, part: reference_signal(s[f"{part}_target"], s[f"{part}_reference"]),
        ),
        Attack("loss", "loss", ("target",), lambda s, part: _signals(s[f"{part}_target"], f"{part}_target")),
        Attack(
            "zlib",
            "zlib ratio",
            ("target", "text"),
            lambda s, part: zlib_signal(s[f"{part}_target"], s[f"{part}_text"]),
        ),
        Attack("minkpp", "Min-K%++", ("minkpp",), lambda s, part: minkpp_signal(s[f"{part}_minkpp"])),
    )
}


def roc_auc(member_signal: np.ndarray, nonmember_signal: np.ndarray) -> float:
    """Probability that a random member has a lower signal than a random non-member (ties count 1/2)."""
    m, n = _signals(member_signal, "member_signal"), _signals(nonmember_signal, "nonmember_signal")
    # Mann-Whitney U, counted by sorting the non-members once: for each member, the non-members above it
    # and half of those tied with it (the book's one AUC; frontier bootstraps call it thousands of times)
    n_sorted = np.sort(n)
    right = np.searchsorted(n_sorted, m, side="right")
    ties = right - np.searchsorted(n_sorted, m, side="left")
    return float(((n_sorted.size - right) + 0.5 * ties).sum() / (m.size * n_sorted.size))


@dataclass(frozen=True)
class RateAtFPR:
    """TPR at a target FPR alpha, with what the number of non-members allows."""

    alpha: float
    tpr: float
    achieved_fpr: float
    threshold: float
    min_resolvable_fpr: float  # 1 / number of non-members

    @property
    def at_zero_fpr(self) -> bool:
        """True when the non-members cannot resolve alpha, so the TPR is really at FPR = 0."""
        return self.alpha <= self.min_resolvable_fpr


def tpr_at_fpr(member_signal: np.ndarray, nonmember_signal: np.ndarray, alpha: float) -> RateAtFPR:
    """TPR with gamma the highest threshold such that FPR = #{non-members with s < gamma} / N < alpha."""
    m, n = _signals(member_signal, "member_signal"), _signals(nonmember_signal, "nonmember_signal")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    n_sorted = np.sort(n)
    allowed = math.ceil(alpha * n.size) - 1  # largest count of non-members below gamma with count/N < alpha
    gamma = n_sorted[allowed] if allowed < n.size else np.inf
    fpr = float(np.mean(n < gamma))
    return RateAtFPR(alpha, float(np.mean(m < gamma)), fpr, float(gamma), 1.0 / n.size)


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    level: float


def bootstrap(
    metric: Callable[[np.ndarray, np.ndarray], float],
    member_signal: np.ndarray,
    nonmember_signal: np.ndarray,
    rng: np.random.Generator,
    resamples: int = 1000,
    level: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval of ``metric(members, non-members)``, resampling each group separately (its
    ends widened by their Monte Carlo error, as every interval of :func:`resampling.percentile`)."""
    m, n = _signals(member_signal, "member_signal"), _signals(nonmember_signal, "nonmember_signal")
    draws = [metric(m[i], n[j]) for i, j in resampling.resamples(rng, (m.size, n.size), resamples)]
    low, high = resampling.percentile(draws, level)
    return Interval(float(metric(m, n)), low, high, level)


@dataclass(frozen=True)
class Arms:
    """Two arms' signals on the same texts (one training seed): ``a`` and ``b`` are (members, non-members), the
    i-th member (non-member) of one arm the same text as the i-th of the other."""

    a: tuple[np.ndarray, np.ndarray]
    b: tuple[np.ndarray, np.ndarray]

    def __post_init__(self) -> None:
        for k, kind in enumerate(("members", "non-members")):
            if np.shape(self.a[k]) != np.shape(self.b[k]):
                raise ValueError(
                    f"the two arms score different {kind} ({np.shape(self.a[k])} against {np.shape(self.b[k])}): "
                    "a paired comparison needs both arms' signals on the same texts"
                )


def paired_difference(
    metric: Callable[[np.ndarray, np.ndarray], float],
    seeds: Sequence[Arms],
    rng: np.random.Generator,
    resamples: int = 1000,
    level: float = 0.95,
) -> Interval:
    """The mean over training seeds of ``metric(a) - metric(b)``, with a percentile interval from a two-stage
    bootstrap: each resample draws the seeds with replacement, then, within each drawn seed, its members and its
    non-members, applying the same texts to both arms.  With several seeds the interval so holds the seed-to-seed
    variation as well as the texts'; with one it is the texts' alone."""
    point, draws = paired_draws(metric, seeds, rng, resamples)
    low, high = resampling.percentile(draws, level)
    return Interval(point, low, high, level)


def paired_draws(
    metric: Callable[[np.ndarray, np.ndarray], float],
    seeds: Sequence[Arms],
    rng: np.random.Generator,
    resamples: int = 1000,
) -> tuple[float, np.ndarray]:
    """:func:`paired_difference`'s point and its bootstrap draws, for one-sided p-values against a threshold
    (:func:`resampling.tail_shares`, which Holm's procedure over a claim's checks reads)."""
    if not seeds:
        raise ValueError("a paired difference needs at least one seed's arms")
    m = [tuple(_signals(arm[k], "signal") for k in (0, 1)) for s in seeds for arm in (s.a, s.b)]
    arms = [(m[2 * k], m[2 * k + 1]) for k in range(len(seeds))]

    def difference(a, b, i=slice(None), j=slice(None)) -> float:
        return metric(a[0][i], a[1][j]) - metric(b[0][i], b[1][j])

    point = float(np.mean([difference(a, b) for a, b in arms]))
    sizes = [(a[0].size, a[1].size) for a, _ in arms]
    draws = [
        np.mean([difference(*arms[k], i, j) for k, (i, j) in draw])
        for draw in resampling.nested_resamples(rng, sizes, resamples)
    ]
    return point, np.asarray(draws, dtype=np.float64)


def seeds_interval(
    metric: Callable[[np.ndarray, np.ndarray], float],
    seeds: Sequence[tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator,
    resamples: int = 1000,
    level: float = 0.95,
) -> Interval:
    """One arm's ``metric`` averaged over training seeds (each seed's (members, non-members) signals), with the
    percentile interval of :func:`paired_difference`'s two-stage bootstrap: seeds, then texts within a seed."""
    if not seeds:
        raise ValueError("an interval over seeds needs at least one seed's signals")
    arms = [tuple(_signals(seed[k], "signal") for k in (0, 1)) for seed in seeds]
    point = float(np.mean([metric(m, n) for m, n in arms]))
    sizes = [(m.size, n.size) for m, n in arms]
    draws = [
        np.mean([metric(arms[k][0][i], arms[k][1][j]) for k, (i, j) in draw])
        for draw in resampling.nested_resamples(rng, sizes, resamples)
    ]
    low, high = resampling.percentile(draws, level)
    return Interval(point, low, high, level)


def perplexity(total_nll: float, tokens: int) -> float:
    """exp(mean negative log-likelihood per token)."""
    if tokens <= 0:
        raise ValueError(f"tokens must be positive, got {tokens}")
    return float(math.exp(total_nll / tokens))
