"""Monte Carlo expectations with error bars, streamed in chunks.

Every Monte Carlo number in the book is an :class:`Estimate`: a mean, its
standard error and the number of draws, so that a reader can judge agreement
with a closed form by a z-score rather than by eye.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

Sampler = Callable[[np.random.Generator, int], np.ndarray]


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean with its standard error over ``n`` independent draws."""

    mean: float
    stderr: float
    n: int

    def z_score(self, reference: float) -> float:
        """(mean - reference) / stderr; 0 when both agree exactly and stderr is 0."""
        diff = self.mean - reference
        if self.stderr == 0.0:
            return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
        return diff / self.stderr

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Normal-approximation confidence interval at ``level``."""
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must lie in (0, 1), got {level}")
        half = stats.norm.ppf(0.5 + level / 2.0) * self.stderr
        return self.mean - half, self.mean + half

    def agrees_with(self, reference: float, z_max: float = 4.0) -> bool:
        """True when ``reference`` lies within ``z_max`` standard errors."""
        return abs(self.z_score(reference)) <= z_max


def mc_mean(sampler: Sampler, n: int, rng: np.random.Generator, chunk: int = 1 << 20) -> Estimate:
    """Estimate E[g] from ``n`` draws of ``sampler(rng, size)`` (which returns values of g).

    Draws are generated ``chunk`` at a time and merged with Chan's pairwise
    update of mean and sum of squared deviations, so memory stays O(chunk)
    and the variance is numerically stable for any ``n``.
    """
    if n < 2:
        raise ValueError(f"n must be at least 2 to estimate an error bar, got {n}")
    if chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk}")
    count, mean, m2 = 0, 0.0, 0.0
    remaining = n
    while remaining > 0:
        size = min(chunk, remaining)
        values = np.asarray(sampler(rng, size), dtype=np.float64)
        if values.shape != (size,):
            raise ValueError(f"sampler returned shape {values.shape}, expected ({size},)")
        if not np.all(np.isfinite(values)):
            raise ValueError("sampler returned non-finite values")
        c_mean = float(values.mean())
        c_m2 = float(np.sum((values - c_mean) ** 2))
        total = count + size
        delta = c_mean - mean
        mean += delta * size / total
        m2 += c_m2 + delta * delta * count * size / total
        count = total
        remaining -= size
    return Estimate(mean=mean, stderr=math.sqrt(m2 / (count - 1) / count), n=count)


def rng_for(seed: int, *keys: int) -> np.random.Generator:
    """An independent random stream for one computation, named by integer keys.

    The stream depends only on the root seed and the keys, not on which other
    streams were drawn before it, so a cell of a table can be recomputed alone.
    """
    if any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0 for k in (seed, *keys)):
        raise ValueError(f"seed and keys must be non-negative integers, got {(seed, *keys)!r}")
    return np.random.default_rng(np.random.SeedSequence([int(seed), *map(int, keys)]))


def batch_estimate(values: np.ndarray, statistic: Callable[[np.ndarray], float], batches: int = 50) -> Estimate:
    """Estimate a statistic (skewness, a correlation, ...) with an error bar by batch means.

    ``values`` (draws along axis 0) is split into ``batches`` equal parts; the estimate is
    the mean of the statistic over the parts and its standard error their spread / sqrt(batches).
    """
    values = np.asarray(values)
    if batches < 2 or values.shape[0] < 2 * batches:
        raise ValueError(f"need batches >= 2 and at least 2 draws per batch, got {values.shape[0]} draws, {batches}")
    size = values.shape[0] // batches
    stats_ = np.array([statistic(values[k * size : (k + 1) * size]) for k in range(batches)], dtype=np.float64)
    return Estimate(mean=float(stats_.mean()), stderr=float(stats_.std(ddof=1) / math.sqrt(batches)), n=size * batches)
