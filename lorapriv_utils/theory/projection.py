"""Paper A, section 5: the Johnson-Lindenstrauss step, row scaling, and the noise multiplier of §5.1.

For A of shape (r, m) with i.i.d. N(0, 1/r) entries and any fixed x, ||x A^T||^2 / ||x||^2 has exactly
the law chi^2_r / r, whatever m is, so Theorem 5.1's two one-sided probabilities are chi-square tails.

Row scaling (eq. 22) rescales each row of a per-sample gradient with respect to B, g_l A^T, to the
norm (1 - Delta) sqrt(r) c; since the map is linear, the matching row g_l of the gradient with
respect to W is rescaled by the same factor.  LoRA then adds to the summed gradient S the noise
S (A^T A - I), whose element (l, j) has variance (||S_l||^2 + S_lj^2) / r (Lemma 3.1) for S fixed; but S
is scaled with the same A, so the multiplier of DP-SGD with the same noise is measured: the noise's standard
deviation over A, over the clipping norm.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..numbers import check_rank
from .noise import sample_projection

GEOMETRIES = ("orthogonal", "random", "correlated", "cancelling")


def check_jl(delta: float, p: float) -> None:
    """Theorem 5.1's ranges: Delta in (0, 1/2], p in (0, 1); a clear error otherwise."""
    if not (isinstance(delta, (int, float)) and 0 < delta <= 0.5):
        raise ValueError(f"Delta must lie in (0, 1/2], got {delta!r}")
    if not (isinstance(p, (int, float)) and 0 < p < 1):
        raise ValueError(f"p must lie in (0, 1), got {p!r}")


def jl_rank(delta: float, p: float) -> int:
    """The rank of Theorem 5.1, r = Delta^-2 log(2 / p), rounded up to an integer."""
    check_jl(delta, p)
    return math.ceil(math.log(2 / p) / delta**2 - 1e-12)


def jl_tails(delta: float, r: int) -> tuple[float, float]:
    """Exact P(||x A^T|| >= (1 + Delta)||x||) and P(||x A^T|| <= (1 - Delta)||x||) for rank r."""
    if r < 1:
        raise ValueError(f"the rank r must be >= 1, got {r}")
    return float(stats.chi2.sf(r * (1 + delta) ** 2, r)), float(stats.chi2.cdf(r * (1 - delta) ** 2, r))


def jl_monte_carlo(
    m: int, r: int, delta: float, draws: int, rng: np.random.Generator, chunk: int = 256
) -> tuple[float, float]:
    """The same two probabilities from real Gaussian matrices A (r x m, any r) and one fixed x (a check)."""
    x = rng.standard_normal(m)
    ratios = []
    for start in range(0, draws, chunk):
        A = rng.standard_normal((min(chunk, draws - start), r, m)) / math.sqrt(r)
        ratios.append(np.linalg.norm(A @ x, axis=1) / np.linalg.norm(x))
    ratio = np.concatenate(ratios)
    return float(np.mean(ratio >= 1 + delta)), float(np.mean(ratio <= 1 - delta))


def per_sample_gradients(geometry: str, b: int, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """b per-sample gradients (b, n, m) with a controlled geometry across samples:
    ``orthogonal`` (disjoint columns), ``random`` (i.i.d.), ``correlated`` (one shared gradient plus 10%
    noise), ``cancelling`` (pairs g and -g, so the batch sum is zero)."""
    if geometry == "orthogonal":
        if b > m:
            raise ValueError(f"orthogonal geometry needs b <= m, got b = {b}, m = {m}")
        g = np.zeros((b, n, m))
        cols = np.array_split(np.arange(m), b)
        for i, c in enumerate(cols):
            g[i][:, c] = rng.standard_normal((n, len(c)))
        return g
    if geometry == "random":
        return rng.standard_normal((b, n, m))
    if geometry == "correlated":
        return rng.standard_normal((1, n, m)) + 0.1 * rng.standard_normal((b, n, m))
    if geometry == "cancelling":
        if b % 2:
            raise ValueError(f"cancelling geometry needs an even batch size, got {b}")
        half = rng.standard_normal((b // 2, n, m))
        return np.concatenate([half, -half])
    raise ValueError(f"unknown geometry {geometry!r}; choose one of {', '.join(GEOMETRIES)}")


def row_scale(g: np.ndarray, A: np.ndarray, delta: float, c: float) -> np.ndarray:
    """Eq. 22: rescale every row l of every per-sample gradient so that ||g_l A^T|| = (1 - Delta) sqrt(r) c."""
    if c <= 0 or not math.isfinite(c):
        raise ValueError(f"the clipping scale c must be a finite number > 0, got {c!r}")
    r = A.shape[0]
    norms = np.linalg.norm(g @ A.T, axis=-1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a row of a per-sample gradient is zero: row scaling needs non-zero rows")
    return g * ((1 - delta) * math.sqrt(r) * c / norms)


def formula_multiplier(delta: float, b: int, n: int, r: int) -> float:
    """§5.1's noise multiplier, z = (1 - Delta) / (1 + Delta) sqrt(b / (n r))."""
    return (1 - delta) / (1 + delta) * math.sqrt(b / (n * r))


def lora_noise_std(S: np.ndarray, r: int) -> np.ndarray:
    """Per-element standard deviation of the noise S (A^T A - I) added to a summed gradient S (Lemma 3.1)."""
    return np.sqrt((np.sum(S * S, axis=-1, keepdims=True) + S * S) / r)


def equivalent_multiplier(
    geometry: str, b: int, n: int, m: int, r: int, delta: float, c: float, rng: np.random.Generator, draws: int = 50
) -> dict[str, float]:
    """One batch of per-sample gradients with a controlled ``geometry``, its noise multiplier measured over
    ``draws`` matrices A (:func:`batch_multiplier`)."""
    return batch_multiplier(per_sample_gradients(geometry, b, n, m, rng), r, delta, c, draws, rng)


def batch_multiplier(
    g: np.ndarray, r: int, delta: float, c: float, draws: int, rng: np.random.Generator
) -> dict[str, float]:
    """LoRA's noise on one batch of per-sample gradients ``g`` (b, n, m), as a DP-SGD multiplier.

    For each of ``draws`` matrices A, the rows are scaled by eq. 22 with that A and summed, S(A), and LoRA adds
    S(A) (A^T A - I); since S depends on the same A, Lemma 3.1's variance does not apply verbatim, so the
    variance of that noise over A (its mean over A removed) is measured, per element, and its root mean over
    the elements divided by the clipping norm sqrt(n r) c is ``z_equivalent``.  ``z_plugin`` is Lemma 3.1's
    variance with S(A) held fixed, averaged over the same draws (the reading that ignores the dependence);
    ``largest_per_sample_norm`` is the largest scaled per-sample norm seen, over the clipping norm."""
    g = np.asarray(g, dtype=float)
    check_rank(r)
    if g.ndim != 3:
        raise ValueError(f"g must be per-sample gradients of shape (b, n, m), got shape {g.shape}")
    if draws < 2:
        raise ValueError(f"draws must be >= 2 to measure a variance, got {draws}")
    b, n, m = g.shape
    total, squares, plugin, largest = np.zeros((n, m)), np.zeros((n, m)), 0.0, 0.0
    for _ in range(draws):
        A = sample_projection(rng, r, m)
        scaled = row_scale(g, A, delta, c)
        S = scaled.sum(axis=0)
        noise = (S @ A.T) @ A - S
        total += noise
        squares += noise * noise
        plugin += float(np.mean(lora_noise_std(S, r) ** 2))
        largest = max(largest, float(np.max(np.linalg.norm(scaled, axis=(1, 2)))))
    variance = (squares - total * total / draws) / (draws - 1)
    clip = math.sqrt(n * r) * c
    return {
        "z_equivalent": float(np.sqrt(max(np.mean(variance), 0.0)) / clip),
        "z_plugin": float(math.sqrt(plugin / draws) / clip),
        "z_formula": formula_multiplier(delta, b, n, r),
        "largest_per_sample_norm": largest / clip,
    }


def simultaneous_probabilities(
    n: int, b: int, r: int, m: int, delta: float, structure: str, draws: int, rng: np.random.Generator
) -> dict[str, float]:
    """Monte Carlo over A, for a batch of b per-sample gradients of n rows each, rows scaled as in eq. 22:

    ``all_rows``: every row keeps its norm within a factor 1 +- Delta under x -> x A^T (the event that
    eq. 23's union bound controls); ``frobenius``: every per-sample gradient's Frobenius norm lies in
    [(1 - Delta)/(1 + Delta), 1] sqrt(n r) c (eq. 23's conclusion).  ``independent`` rows, or ``rank1``
    per-sample gradients (each one's rows are multiples of one vector: a linear layer, one token).
    """
    rows_ok = frob_ok = 0
    for _ in range(draws):
        A = sample_projection(rng, r, m)
        if structure == "independent":
            x = rng.standard_normal((b, n, m))
            ratio = np.linalg.norm(x @ A.T, axis=-1) / np.linalg.norm(x, axis=-1)
        elif structure == "rank1":
            x = rng.standard_normal((b, m))  # the n rows of a sample are multiples of its one input vector
            ratio = np.repeat((np.linalg.norm(x @ A.T, axis=-1) / np.linalg.norm(x, axis=-1))[:, None], n, axis=1)
        else:
            raise ValueError(f"unknown structure {structure!r}; choose independent or rank1")
        rows_ok += bool(np.all((ratio > 1 - delta) & (ratio < 1 + delta)))
        # scaled rows have norm (1 - Delta) sqrt(r) c / ratio: Frobenius^2 / (n r c^2) = (1 - Delta)^2 mean(1 / ratio^2)
        frob = (1 - delta) * np.sqrt(np.mean(1.0 / ratio**2, axis=1))
        frob_ok += bool(np.all((frob >= (1 - delta) / (1 + delta)) & (frob <= 1.0)))
    return {"all_rows": rows_ok / draws, "frobenius": frob_ok / draws}


def row_scaled_noise(
    g_row: np.ndarray, r: int, delta: float, c: float, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """``draws`` samples of LoRA's noise on one row-scaled gradient row, g~ (A^T A - I) with g~ = g scaled by
    eq. 22 (the same A scales and projects), from real Gaussian matrices: shape (draws, m)."""
    check_rank(r)
    g_row = np.asarray(g_row, dtype=float)
    if g_row.ndim != 1 or not np.any(g_row):
        raise ValueError("g_row must be one non-zero gradient row (a 1-d array)")
    m = g_row.size
    out = np.empty((draws, m))
    for k in range(draws):
        A = sample_projection(rng, r, m)
        scaled = row_scale(g_row[None, :], A, delta, c)[0]
        out[k] = (scaled @ A.T) @ A - scaled
    return out


def _along_moments(r: int) -> tuple[float, float]:
    """Variance and fourth cumulant of |a| - 1/|a|, |a|^2 = chi^2_r / r (infinite when r <= 2, resp. r <= 4)."""
    from math import comb

    from scipy.special import gammaln

    def raw_norm(k: int) -> float:  # E |a|^k = (2/r)^(k/2) Gamma(r/2 + k/2) / Gamma(r/2), finite for k > -r
        if k <= -r:
            return math.inf
        return math.exp(0.5 * k * math.log(2 / r) + gammaln((r + k) / 2) - gammaln(r / 2))

    def raw(n: int) -> float:  # E (|a| - 1/|a|)^n
        return sum(comb(n, i) * (-1) ** (n - i) * raw_norm(2 * i - n) for i in range(n + 1))

    if r <= 2:
        return math.inf, math.inf
    m1, m2 = raw(1), raw(2)
    var = m2 - m1 * m1
    if r <= 4:
        return var, math.inf
    m3, m4 = raw(3), raw(4)
    mu4 = m4 - 4 * m1 * m3 + 6 * m1 * m1 * m2 - 3 * m1**4
    return var, mu4 - 3 * var * var


def row_scaled_noise_law(g_row: np.ndarray, r: int, delta: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-element variance and excess kurtosis of :func:`row_scaled_noise`.  With u = g / |g| and a = A u ~
    N(0, I_r / r), the noise is K [(|a| - 1/|a|) u + w], K = (1 - Delta) sqrt(r) c, w ~ N(0, (I - u u^T) / r)
    independent of a, so Var_j = K^2 [u_j^2 Var(|a| - 1/|a|) + (1 - u_j^2) / r] (infinite for r <= 2) and the
    excess kurtosis is u_j^4 k4(|a| - 1/|a|) K^4 / Var_j^2 (infinite for r <= 4 where u_j != 0)."""
    check_rank(r)
    u = np.asarray(g_row, dtype=float) / np.linalg.norm(g_row)
    var_along, k4_along = _along_moments(r)
    K2 = (1 - delta) ** 2 * r * c * c
    u2 = u * u
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(u2 > 0, K2 * (u2 * var_along + (1 - u2) / r), K2 / r)
        kurt = np.where(u2 > 0, K2 * K2 * u2 * u2 * k4_along / var**2, 0.0)
    kurt = np.where((u2 > 0) & ~np.isfinite(k4_along), np.inf, kurt)  # inf / inf at r <= 2: the tail wins
    return var, kurt


def row_scaled_update_variance(g_row: np.ndarray, r: int, delta: float, c: float) -> np.ndarray:
    """Per-element variance of the update LoRA applies for one row-scaled row, g~ A^T A = K (|a| u + w), about its
    mean: K^2 [u_j^2 Var|a| + (1 - u_j^2) / r] (a second reading of paper A's "noise": fixed gradient plus
    zero-mean noise).  Light-tailed: the 1/|a| of the scaled row cancels."""
    from scipy.special import gammaln

    check_rank(r)
    u = np.asarray(g_row, dtype=float) / np.linalg.norm(g_row)
    mean_a = math.exp(0.5 * math.log(2 / r) + gammaln((r + 1) / 2) - gammaln(r / 2))
    K2 = (1 - delta) ** 2 * r * c * c
    return K2 * (u * u * (1 - mean_a**2) + (1 - u * u) / r)


def paper_noise_bound(delta: float, c: float) -> float:
    """Paper A's lower bound on that variance (after eq. 23): ((1 - Delta) / (1 + Delta))^2 c^2."""
    return ((1 - delta) / (1 + delta)) ** 2 * c * c
