"""The book's one bootstrap: resampling indices and percentile intervals (torch-free).

Every interval over texts, canaries or targets in the book comes from these two functions. A paired bootstrap
applies one resample's indices to every arm it compares (the texts' own variation then cancels in a
difference); an unpaired one resamples each group on its own. Both draw the same way: resample after resample,
group after group, ``rng.integers(0, size, size)``. The committed intervals depend on that order, so it is
pinned by a test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

MONTE_CARLO_LEVEL = 0.95  # the confidence of the band around each percentile end (``percentile``'s monte_carlo)


def resamples(rng: np.random.Generator, sizes: Sequence[int], count: int) -> list[tuple[np.ndarray, ...]]:
    """``count`` bootstrap resamples of groups of ``sizes``: each a tuple of one index array per group, drawn with
    replacement."""
    sizes = [int(size) for size in sizes]
    if count < 10:
        raise ValueError(f"a bootstrap needs at least 10 resamples, got {count}")
    if not sizes or min(sizes) < 1:
        raise ValueError(f"every group to resample needs at least one element, got sizes {sizes}")
    return [tuple(rng.integers(0, size, size) for size in sizes) for _ in range(count)]


def nested_resamples(
    rng: np.random.Generator, sizes: Sequence[Sequence[int]], count: int
) -> list[list[tuple[int, tuple[np.ndarray, ...]]]]:
    """``count`` two-stage resamples of units (training seeds, say) holding groups of ``sizes[k]``: each resample
    draws ``len(sizes)`` units with replacement, then resamples the groups of each unit drawn (as
    :func:`resamples` does), and is a list of (unit, index arrays)."""
    if count < 10:
        raise ValueError(f"a bootstrap needs at least 10 resamples, got {count}")
    if not sizes:
        raise ValueError("a two-stage bootstrap needs at least one unit")
    units = [[int(size) for size in unit] for unit in sizes]
    if min(min(unit, default=0) for unit in units) < 1:
        raise ValueError(f"every group to resample needs at least one element, got sizes {units}")
    out = []
    for _ in range(count):
        chosen = rng.integers(0, len(units), len(units))
        out.append([(int(k), tuple(rng.integers(0, size, size) for size in units[k])) for k in chosen])
    return out


def percentile(draws, level: float = 0.95, monte_carlo: bool = True) -> tuple[float, float]:
    """The percentile interval of level ``level`` of the bootstrap draws of one quantity: every interval of the
    book (``monte_carlo=False``, the plain percentile ends, only to show what the band adds).

    ``monte_carlo``: each end moved out to the far end of its own 95% Monte Carlo band, the order statistics that
    bound that quantile of the bootstrap distribution given only these draws (``scipy.stats.quantile_test``'s
    interval; the extreme draw where too few draws bound it).  An interval that excludes a value then excludes it
    whichever resamples were drawn, where a plain percentile end within Monte Carlo error of the value could fall
    on either side of it with another seed of the resampling.  With few draws the band reaches the extreme draws
    (at 200 both ends are the draws' range), so the interval is conservative: at least ``level``, never less.
    Draws that are not all finite give no interval (NaN, NaN)."""
    if not 0 < level < 1:
        raise ValueError(f"the level must lie in (0, 1), got {level!r}")
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 1 or draws.size == 0:
        raise ValueError(f"need a non-empty 1-d array of draws, got shape {draws.shape}")
    if not monte_carlo:
        low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        return float(low), float(high)
    if not np.isfinite(draws).all():  # no order statistic bounds an end: no interval, not half of one
        return math.nan, math.nan
    from scipy.stats import quantile_test

    low = quantile_test(draws, p=(1 - level) / 2).confidence_interval(MONTE_CARLO_LEVEL).low
    high = quantile_test(draws, p=(1 + level) / 2).confidence_interval(MONTE_CARLO_LEVEL).high
    return (
        float(low) if np.isfinite(low) else float(draws.min()),
        float(high) if np.isfinite(high) else float(draws.max()),
    )


def tail_shares(draws, bound: float) -> tuple[float, float]:
    """One-sided bootstrap p-values of a quantity against ``bound``: ``(p_above, p_below)``, the shares of the draws
    at or above and at or below it, each counted with the point itself as one more draw ((k + 1) / (B + 1), never
    0), so that a check "value <= bound" is resolved at level alpha when ``p_above`` < alpha and its opposite when
    ``p_below`` < alpha (what Holm's procedure over a claim's checks reads, ``ledger.holm``).  Draws that are not all
    finite give no p-values (NaN, NaN)."""
    draws = np.asarray(draws, dtype=np.float64)
    if draws.ndim != 1 or draws.size == 0:
        raise ValueError(f"need a non-empty 1-d array of draws, got shape {draws.shape}")
    if not np.isfinite(draws).all() or not math.isfinite(bound):
        return math.nan, math.nan
    count = draws.size + 1
    return float((np.sum(draws >= bound) + 1) / count), float((np.sum(draws <= bound) + 1) / count)
