"""Empirical privacy audits: a lower bound on epsilon from how well a test tells two worlds apart.

If a mechanism is (epsilon, delta)-DP, every test of "the target is in" against "the target is
out" has TPR <= e^epsilon FPR + delta and TNR <= e^epsilon FNR + delta.  Counting a test's
true and false positives over independent trials, with Clopper-Pearson intervals, turns its
success into an epsilon that the mechanism cannot be below (at the stated confidence):

    epsilon >= max(log((TPR_low - delta) / FPR_high), log((TNR_low - delta) / FNR_high)).

A lower bound from an audit never certifies privacy; it can only show that a claimed epsilon
is too small.

:func:`one_run_epsilon_lower_bound` is the audit of Steinke, Nasr and Jagielski (2023) that needs a
single training run: m canaries, each included independently with probability 1/2; the auditor
guesses in or out for r of them and gets v right.  Under (epsilon, delta)-DP,
P[v or more right] <= P[Binomial(r, q) >= v] + 2 m delta max_{i=1..v} P[v - i <= Binomial(r, q) < v] / i
with q = e^epsilon / (1 + e^epsilon) (their Theorem 3 with the form of their Appendix D); the bound
is the largest epsilon that this p-value rejects at the chosen confidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided exact binomial interval for a proportion."""
    from scipy import stats  # imported here: the command line's argument checks stay fast

    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {successes} of {trials}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = 1.0 if successes == trials else float(stats.beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return low, high


@dataclass(frozen=True)
class AuditResult:
    """Counts of a distinguishing test and the epsilon lower bound they support."""

    tp: int
    fn: int
    fp: int
    tn: int
    delta: float
    confidence: float
    epsilon_low: float

    @property
    def tpr(self) -> float:
        return self.tp / (self.tp + self.fn)

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn)


def epsilon_lower_bound(
    tp: int, fn: int, fp: int, tn: int, delta: float = 0.0, confidence: float = 0.95
) -> AuditResult:
    """The epsilon that a test with these counts proves the mechanism exceeds, at ``confidence`` overall.

    Each of the four rates gets a one-sided Clopper-Pearson bound at level (1 - confidence) / 2 (a union bound).
    """
    for name, value in (("tp", tp), ("fn", fn), ("fp", fp), ("tn", tn)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a count >= 0, got {value!r}")
    if tp + fn < 2 or fp + tn < 2:
        raise ValueError("an audit needs at least 2 trials in each world (target in, target out)")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1), got {delta}")
    level = 1 - (1 - confidence) / 2  # each one-sided bound holds with this probability
    two_sided = 2 * level - 1  # clopper_pearson's two-sided level whose lower end is the one-sided bound
    tpr_low, _ = clopper_pearson(tp, tp + fn, two_sided)
    _, fpr_high = clopper_pearson(fp, fp + tn, two_sided)
    tnr_low, _ = clopper_pearson(tn, fp + tn, two_sided)
    _, fnr_high = clopper_pearson(fn, tp + fn, two_sided)
    bounds = [0.0]
    if tpr_low - delta > 0:
        bounds.append(math.log((tpr_low - delta) / fpr_high))
    if tnr_low - delta > 0:
        bounds.append(math.log((tnr_low - delta) / fnr_high))
    return AuditResult(int(tp), int(fn), int(fp), int(tn), float(delta), float(confidence), max(bounds))


def threshold_counts(scores_in: np.ndarray, scores_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(TP, FP) of the test "score >= threshold" at every distinct score, the one sweep behind every bound here."""
    scores_in, scores_out = np.asarray(scores_in, dtype=float).ravel(), np.asarray(scores_out, dtype=float).ravel()
    if scores_in.size < 2 or scores_out.size < 2:
        raise ValueError("an audit needs at least 2 trials in each world (target in, target out)")
    if not (np.all(np.isfinite(scores_in)) and np.all(np.isfinite(scores_out))):
        raise ValueError("audit scores must be finite")
    thresholds = np.unique(np.concatenate([scores_in, scores_out]))
    tp = scores_in.size - np.searchsorted(np.sort(scores_in), thresholds, side="left")
    fp = scores_out.size - np.searchsorted(np.sort(scores_out), thresholds, side="left")
    return tp.astype(int), fp.astype(int)


def audit_scores(
    scores_in: np.ndarray, scores_out: np.ndarray, delta: float = 0.0, confidence: float = 0.95
) -> AuditResult:
    """The best epsilon lower bound over thresholds of a score (higher: "target in").

    Choosing the threshold on the same trials that are counted makes the bound optimistic; use
    :func:`epsilon_lower_bound` on held-out trials when the number matters, or many trials.
    """
    tps, fps = threshold_counts(scores_in, scores_out)
    n_in, n_out = np.size(scores_in), np.size(scores_out)
    best = None
    for tp, fp in zip(tps.tolist(), fps.tolist(), strict=True):
        result = epsilon_lower_bound(tp, n_in - tp, fp, n_out - fp, delta, confidence)
        if best is None or result.epsilon_low > best.epsilon_low:
            best = result
    return best


def tv_lower_bound(scores_in: np.ndarray, scores_out: np.ndarray, confidence: float = 0.95) -> float:
    """A lower confidence bound on TV(P_in, P_out): the best threshold's TPR_low - FPR_high (0 at worst).

    Each rate gets a one-sided Clopper-Pearson bound at level (1 - confidence) / 2, as in
    :func:`epsilon_lower_bound`; the same caveat on choosing the threshold on the counted trials applies.
    """
    tps, fps = threshold_counts(scores_in, scores_out)
    n_in, n_out = np.size(scores_in), np.size(scores_out)
    two_sided = 2 * (1 - (1 - confidence) / 2) - 1
    best = 0.0
    for tp, fp in zip(tps.tolist(), fps.tolist(), strict=True):
        tpr_low, _ = clopper_pearson(tp, n_in, two_sided)
        _, fpr_high = clopper_pearson(fp, n_out, two_sided)
        best = max(best, tpr_low - fpr_high)
    return best


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """Steinke et al.'s bound on P[at least v of r guesses right] for an (epsilon, delta)-DP mechanism."""
    from scipy import stats  # imported here: the command line's argument checks stay fast

    q = 1.0 / (1.0 + math.exp(-epsilon))  # the accuracy of epsilon-DP randomized response
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta == 0 or v == 0:
        return min(tail, 1.0)
    below = np.cumsum(stats.binom.pmf(v - np.arange(1, v + 1), r, q))  # P[v - i <= Bin < v], i = 1..v
    return float(min(tail + 2 * m * delta * np.max(below / np.arange(1, v + 1)), 1.0))


def one_run_epsilon_lower_bound(
    m: int, r: int, v: int, delta: float = 0.0, confidence: float = 0.95, epsilon_max: float = 50.0
) -> float:
    """The largest epsilon that v right guesses out of r (m canaries) reject at ``confidence`` (0: none)."""
    for name, value in (("m", m), ("r", r), ("v", v)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer count, got {value!r}")
    if m < 2 or not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m and m >= 2 canaries, got m={m}, r={r}, v={v}")
    if not 0 <= delta < 1 or not 0 < confidence < 1:
        raise ValueError(f"need 0 <= delta < 1 and 0 < confidence < 1, got {delta}, {confidence}")
    alpha = 1 - confidence
    if one_run_p_value(m, r, v, 0.0, delta) >= alpha:
        return 0.0
    low, high = 0.0, epsilon_max
    if one_run_p_value(m, r, v, high, delta) < alpha:
        return high  # rejected even at epsilon_max: report the cap
    for _ in range(60):  # bisection: p-value(low) < alpha <= p-value(high)
        mid = (low + high) / 2
        if one_run_p_value(m, r, v, mid, delta) < alpha:
            low = mid
        else:
            high = mid
    return low


def one_run_guesses(scores: np.ndarray, included: np.ndarray, guesses_each_side: int) -> tuple[int, int]:
    """Guess "in" for the ``guesses_each_side`` highest scores and "out" for as many lowest; (r, v)."""
    scores, included = np.asarray(scores, dtype=float), np.asarray(included, dtype=bool)
    if scores.shape != included.shape or scores.ndim != 1:
        raise ValueError("scores and included must be 1-d and of the same length")
    k = int(guesses_each_side)
    if k < 1 or 2 * k > scores.size:
        raise ValueError(f"guesses_each_side must lie in [1, m/2] = [1, {scores.size // 2}], got {guesses_each_side}")
    order = np.argsort(scores, kind="stable")
    right = int(np.sum(included[order[-k:]])) + int(np.sum(~included[order[:k]]))
    return 2 * k, right
