"""Empirical privacy audits: a lower bound on epsilon from how well a test tells two worlds apart.

If a mechanism is (epsilon, delta)-DP, every test of "the target is in" against "the target is
out" has TPR <= e^epsilon FPR + delta and TNR <= e^epsilon FNR + delta.  Counting a test's
true and false positives over independent trials, with Clopper-Pearson intervals, turns its
success into an epsilon that the mechanism cannot be below (at the stated confidence):

    epsilon >= max(log((TPR_low - delta) / FPR_high), log((TNR_low - delta) / FNR_high)).

A lower bound from an audit never certifies privacy; it can only show that a claimed epsilon
is too small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided exact binomial interval for a proportion."""
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


def audit_scores(
    scores_in: np.ndarray, scores_out: np.ndarray, delta: float = 0.0, confidence: float = 0.95
) -> AuditResult:
    """The best epsilon lower bound over thresholds of a score (higher: "target in").

    Choosing the threshold on the same trials that are counted makes the bound optimistic; use
    :func:`epsilon_lower_bound` on held-out trials when the number matters, or many trials.
    """
    scores_in, scores_out = np.asarray(scores_in, dtype=float), np.asarray(scores_out, dtype=float)
    if scores_in.size < 2 or scores_out.size < 2:
        raise ValueError("an audit needs at least 2 trials in each world (target in, target out)")
    best = None
    for threshold in np.unique(np.concatenate([scores_in, scores_out])):
        tp = int(np.sum(scores_in >= threshold))
        fp = int(np.sum(scores_out >= threshold))
        result = epsilon_lower_bound(tp, scores_in.size - tp, fp, scores_out.size - fp, delta, confidence)
        if best is None or result.epsilon_low > best.epsilon_low:
            best = result
    return best
