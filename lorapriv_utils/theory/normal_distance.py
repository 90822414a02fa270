"""Exact distances between the law of one injected-noise element and a Gaussian (paper A, section 4).

The element u_i of q (A^T A - I) has the exact law (see :mod:`lorapriv_utils.noise`)

    u = c (X/r - 1) + sqrt(s2 X / r) Z,    X ~ chi^2_r,  Z ~ N(0, 1),

so its CDF and density are one-dimensional integrals over X, computed here by adaptive
quadrature.  Total variation and Kolmogorov distances to a Gaussian are then exact up
to quadrature error (about 1e-9): both are decided at the points where the two densities
cross, so they need the CDFs only there (:func:`distances_at_crossings`).  Monte Carlo
histograms are never used to estimate a distance, only to cross-check CDF values.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special, stats

from ..numbers import check_positive

Fn = Callable[[float], float]


@functools.lru_cache(maxsize=64)
def _log_x_rule(r: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t = X/r and weights of a trapezoid rule in v = log X against the chi^2_r law.

    The integrands of the fast density and CDF are smooth and decay fast in v, so the rule
    converges exponentially (checked against adaptive quadrature in the tests).  It depends
    only on (r, nodes), so it is built once and shared by every evaluation.
    """
    law = stats.chi2(r)
    v = np.linspace(math.log(law.ppf(1e-15)), math.log(law.isf(1e-17)), nodes)
    w = law.pdf(np.exp(v)) * np.exp(v) * (v[1] - v[0])
    w[[0, -1]] *= 0.5
    t = np.exp(v) / r
    t.flags.writeable = w.flags.writeable = False  # shared through the cache
    return t, w


@dataclass(frozen=True)
class NoiseElementLaw:
    """The law of c (X/r - 1) + sqrt(s2 X / r) Z with X ~ chi^2_r (see the module docstring)."""

    c: float
    s2: float
    r: int

    def __post_init__(self) -> None:
        check_positive("r", self.r)
        if not math.isfinite(self.c) or not math.isfinite(self.s2) or self.s2 < 0:
            raise ValueError(f"c must be finite and s2 finite and >= 0, got c={self.c}, s2={self.s2}")
        if self.s2 == 0 and self.c == 0:
            raise ValueError("c = s2 = 0 is the point mass at 0, not a law with a density")

    @property
    def variance(self) -> float:
        return 2 * self.c**2 / self.r + self.s2

    def _integrate(self, fn: Callable[[np.ndarray], np.ndarray]) -> float:
        # Integrate fn(t) against the law of t = X/r in probability space u = F_X(X), on [0, 1]:
        # the integrand is bounded for the CDF and the integration range is finite.
        law = stats.chi2(self.r)

        def integrand(u: float) -> float:
            t = law.ppf(u) / self.r
            return float(fn(np.asarray(t))) if t > 0 else 0.0

        pieces = [0.0, 1e-8, 1e-4, 0.01, 0.5, 0.99, 1 - 1e-4, 1 - 1e-8, 1.0]
        return sum(
            integrate.quad(integrand, a, b, limit=200, epsabs=1e-13, epsrel=1e-11)[0]
            for a, b in zip(pieces[:-1], pieces[1:], strict=True)
        )

    def cdf(self, x: float) -> float:
        if self.s2 == 0:  # a scaled, shifted chi-square
            t = x / self.c + 1
            p = stats.chi2(self.r).cdf(self.r * t)
            return float(p if self.c > 0 else 1 - p)
        return self._integrate(lambda t: special.ndtr((x - self.c * (t - 1)) / np.sqrt(self.s2 * t)))

    def pdf(self, x: float) -> float:
        if self.s2 == 0:
            return float(stats.chi2(self.r).pdf(self.r * (x / self.c + 1)) * self.r / abs(self.c))

        def density(t: np.ndarray) -> np.ndarray:
            sd = np.sqrt(self.s2 * t)
            return np.exp(-0.5 * ((x - self.c * (t - 1)) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))

        return self._integrate(density)

    def pdf_fast(self, x: np.ndarray | float, nodes: int = 6000) -> np.ndarray:
        """The density, vectorised (log-X trapezoid rule); accurate except within ~1e-3 sd of a singularity at 0."""
        t, w = _log_x_rule(self.r, nodes)
        sd = np.sqrt(self.s2 * t)

        def block(xs: np.ndarray) -> np.ndarray:
            z = (xs[:, None] - self.c * (t - 1)) / sd
            return (np.exp(-0.5 * z**2) / (sd * math.sqrt(2 * math.pi))) @ w

        return self._blocked(block, x)

    def cdf_fast(self, x: np.ndarray | float, nodes: int = 6000) -> np.ndarray:
        """The CDF, vectorised (log-X trapezoid rule)."""
        t, w = _log_x_rule(self.r, nodes)
        sd = np.sqrt(self.s2 * t)
        return self._blocked(lambda xs: special.ndtr((xs[:, None] - self.c * (t - 1)) / sd) @ w, x)

    @staticmethod
    def _blocked(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray | float, size: int = 1024) -> np.ndarray:
        # Evaluate in blocks of points so that memory stays O(size * nodes) for any grid.
        xs = np.atleast_1d(np.asarray(x, dtype=np.float64))
        return np.concatenate([fn(xs[k : k + size]) for k in range(0, xs.size, size)]) if xs.size else xs

    def sample(self, draws: int, rng: np.random.Generator) -> np.ndarray:
        t = rng.chisquare(self.r, draws) / self.r
        return self.c * (t - 1) + np.sqrt(self.s2 * t) * rng.standard_normal(draws)


@dataclass(frozen=True)
class Distances:
    tv: float
    kolmogorov: float
    crossings: tuple[float, ...]
    cdf_at_crossings: tuple[float, ...]


def distances_at_crossings(cdf_f: Fn, pdf_f: Fn, cdf_g: Fn, pdf_g: Fn, crossings_guess: np.ndarray) -> Distances:
    """TV and Kolmogorov distances between two laws from the points where their densities cross.

    ``crossings_guess`` are grid points bracketing sign changes of pdf_f - pdf_g (pairs of
    consecutive grid points are refined with Brent's method).  Between consecutive crossings
    one density dominates, so TV = 1/2 sum_j |(F - G)(x_{j+1}) - (F - G)(x_j)|, and the
    supremum of |F - G| is attained at a crossing.
    """

    def gap(x: float) -> float:
        return pdf_f(x) - pdf_g(x)

    xs = []
    for a, b in crossings_guess:
        fa, fb = gap(a), gap(b)
        if fa == 0:
            xs.append(a)
        elif fa * fb < 0:
            xs.append(optimize.brentq(gap, a, b, xtol=1e-12))
        else:  # the bracket lost its sign change to rounding: the crossing is inside it anyway
            xs.append(0.5 * (a + b))
    xs = sorted(xs)
    cdf_at = [cdf_f(x) for x in xs]
    diffs = [0.0] + [f - cdf_g(x) for f, x in zip(cdf_at, xs, strict=True)] + [0.0]
    tv = 0.5 * sum(abs(b - a) for a, b in zip(diffs[:-1], diffs[1:], strict=True))
    kolmogorov = max(abs(d) for d in diffs)
    return Distances(tv, kolmogorov, tuple(xs), tuple(cdf_at))


def _sign_changes(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    idx = np.nonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)[0]
    return np.stack([x[idx], x[idx + 1]], axis=1) if idx.size else np.empty((0, 2))


def distance_to_normal(
    law: NoiseElementLaw, sigma2: float, grid_points: int = 4001, half_width_sd: float = 40.0
) -> Distances:
    """TV and Kolmogorov distances between ``law`` and N(0, sigma2), accurate to about 1e-9."""
    sigma2 = check_positive("sigma2", sigma2)
    if law.s2 == 0:
        raise ValueError("the law has no Gaussian component (s2 = 0); distance_to_normal needs s2 > 0")
    sd = math.sqrt(max(law.variance, sigma2))
    x = np.linspace(-half_width_sd * sd, half_width_sd * sd, grid_points)
    x = x[x != 0.0]
    normal = stats.norm(scale=math.sqrt(sigma2))
    guess = _sign_changes(x, law.pdf_fast(x, nodes=1500) - normal.pdf(x))
    return distances_at_crossings(
        lambda v: float(law.cdf_fast(v)[0]), lambda v: float(law.pdf_fast(v)[0]), normal.cdf, normal.pdf, guess
    )


def law_of_element(q: np.ndarray, i: int, r: int) -> NoiseElementLaw:
    """The exact law of u_i = [q (A^T A - I)]_i."""
    from .noise import element_law_params

    c, s2 = element_law_params(q, i, r)
    return NoiseElementLaw(c, s2, r)


def limit_law(r: int, sigma2: float = 1.0) -> NoiseElementLaw:
    """The law that u_i tends to when q_i / ||q|| -> 0 (m -> infinity at fixed r): sqrt(sigma2 X/r) Z."""
    return NoiseElementLaw(0.0, check_positive("sigma2", sigma2), int(r))


def lyapunov_ratio_eq45(q: np.ndarray, r: int) -> float:
    """Paper A's third Lyapunov ratio, eq. 45: 8 / (pi sqrt r) (||q||_3 / ||q||_2)^3."""
    q = np.asarray(q, dtype=np.float64).ravel()
    r = check_positive("r", r)
    return 8 / (math.pi * math.sqrt(r)) * (np.sum(np.abs(q) ** 3) ** (1 / 3) / np.linalg.norm(q)) ** 3


def tv_bound_eq46(q: np.ndarray, r: int, c_d: float | None = None) -> float:
    """The right-hand side of eq. 46, C_D times eq. 45.

    C_D defaults to the largest value that paper A allows, pi sqrt(r) / 8.
    """
    c_d = math.pi * math.sqrt(r) / 8 if c_d is None else check_positive("c_d", c_d)
    return c_d * lyapunov_ratio_eq45(q, r)


@dataclass(frozen=True)
class PowerLawFit:
    slope: float
    slope_stderr: float
    intercept: float
    n: int
    max_log_residual: float = 0.0  # largest |log y - fitted|: how far the points are from a straight line

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        half = stats.t.ppf(0.5 + level / 2, max(self.n - 2, 1)) * self.slope_stderr
        return self.slope - half, self.slope + half


def fit_power_law(x: np.ndarray, y: np.ndarray) -> PowerLawFit:
    """Least-squares fit of log y = intercept + slope log x, with the slope's standard error."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.size < 3 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("fit_power_law needs at least 3 positive (x, y) pairs of equal length")
    res = stats.linregress(np.log(x), np.log(y))
    residual = np.log(y) - (res.intercept + res.slope * np.log(x))
    return PowerLawFit(
        float(res.slope), float(res.stderr), float(res.intercept), int(x.size), float(np.max(np.abs(residual)))
    )
