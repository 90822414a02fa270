"""Closed-form moments used in paper A's appendices, and independent cross-checks.

* Chi-square raw moments, Lemma A.2 (eq. 26) and its gamma-function form (eq. 28).
* The absolute moments of the symmetric variance-gamma law, which is the law of
  the difference of two independent chi-square variables (Appendix B, the step
  after eq. 36); paper A uses E|V|^3 for V = nu1 - nu2, nu_i ~ chi^2_1, in eq. 44.
* The absolute central moments E|X - k|^p of a chi-square variable, by
  quadrature, which eq. 44 bounds from below by the third central moment 8k.

Parametrisation of the variance-gamma law (Gaunt's): VG(nu, alpha, beta=0, mu=0)
has moment generating function (alpha^2 / (alpha^2 - t^2))^(nu + 1/2).  The
difference of two independent chi^2_k variables has MGF (1 - 4 t^2)^(-k/2), that is
alpha = 1/2 and nu = (k - 1)/2.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special, stats

from ..numbers import check_order as _check_order
from ..numbers import check_positive as _check_positive


def chi2_raw_moment(k: float, order: int) -> float:
    """E[X^order] for X ~ chi^2_k as the product prod_{i<order} (k + 2i) (eq. 26)."""
    k = _check_positive("k (degrees of freedom)", k)
    order = _check_order("order", order)
    return math.prod(k + 2 * i for i in range(order))


def chi2_raw_moment_gamma(k: float, order: int) -> float:
    """E[X^order] = 2^order Gamma(k/2 + order) / Gamma(k/2), the intermediate form in eq. 28."""
    k = _check_positive("k (degrees of freedom)", k)
    order = _check_order("order", order)
    return math.exp(order * math.log(2.0) + special.gammaln(k / 2 + order) - special.gammaln(k / 2))


def chi2_raw_moment_quadrature(k: float, order: int) -> float:
    """E[X^order] for X ~ chi^2_k by adaptive quadrature of x^order times the density: a check of eq. 26
    that shares no algebra with it (the density is integrated numerically; split at the mean)."""
    k = _check_positive("k (degrees of freedom)", k)
    order = _check_order("order", order)
    law = stats.chi2(k)

    def integrand(x: float) -> float:
        return x**order * law.pdf(x)

    left, _ = integrate.quad(integrand, 0.0, k, limit=200, epsabs=0.0, epsrel=1e-12)
    right, _ = integrate.quad(integrand, k, np.inf, limit=200, epsabs=0.0, epsrel=1e-12)
    return left + right


def chi2_third_central_moment(k: float) -> float:
    """E[(X - k)^3] = 8k for X ~ chi^2_k (skewness sqrt(8/k) times (2k)^(3/2)), as used in eq. 44."""
    return 8.0 * _check_positive("k (degrees of freedom)", k)


def chi2_central_abs_moment(k: float, order: float) -> float:
    """E|X - k|^order for X ~ chi^2_k by adaptive quadrature (split at the mean)."""
    k = _check_positive("k (degrees of freedom)", k)
    order = _check_positive("order", order)
    law = stats.chi2(k)

    def integrand(x: float) -> float:
        return abs(x - k) ** order * law.pdf(x)

    # For k < 2 the density has an integrable singularity at 0; quad copes with it
    # when 0 is an end point of the interval.
    left, _ = integrate.quad(integrand, 0.0, k, limit=200, epsabs=0.0, epsrel=1e-12)
    right, _ = integrate.quad(integrand, k, np.inf, limit=200, epsabs=0.0, epsrel=1e-12)
    return left + right


def vg_abs_moment(order: float, nu: float, alpha: float) -> float:
    """E|V|^order for V ~ VG(nu, alpha, 0, 0) (symmetric variance-gamma; Gaunt's formula).

    E|V|^p = 2^p / (sqrt(pi) alpha^p) * Gamma(nu + (p+1)/2) Gamma((p+1)/2) / Gamma(nu + 1/2),
    valid for nu > -1/2 and p > -1.
    """
    order = float(order)
    if not math.isfinite(order) or order <= -1:
        raise ValueError(f"order must be a finite number > -1, got {order!r}")
    if not math.isfinite(nu) or nu <= -0.5:
        raise ValueError(f"nu must be a finite number > -1/2, got {nu!r}")
    alpha = _check_positive("alpha", alpha)
    log_value = (
        order * math.log(2.0)
        - 0.5 * math.log(math.pi)
        - order * math.log(alpha)
        + special.gammaln(nu + (order + 1) / 2)
        + special.gammaln((order + 1) / 2)
        - special.gammaln(nu + 0.5)
    )
    return math.exp(log_value)


def vg_pdf(x: np.ndarray | float, nu: float, alpha: float) -> np.ndarray:
    """Density of VG(nu, alpha, 0, 0): alpha^(2nu+1) |x|^nu K_nu(alpha|x|) / (sqrt(pi) Gamma(nu+1/2) (2 alpha)^nu)."""
    if not math.isfinite(nu) or nu <= -0.5:
        raise ValueError(f"nu must be a finite number > -1/2, got {nu!r}")
    alpha = _check_positive("alpha", alpha)
    ax = np.abs(np.asarray(x, dtype=np.float64))
    log_const = (
        (2 * nu + 1) * math.log(alpha) - 0.5 * math.log(math.pi) - special.gammaln(nu + 0.5) - nu * math.log(2 * alpha)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        # kve(nu, z) = K_nu(z) exp(z) keeps the tail finite.
        dens = np.exp(log_const + nu * np.log(ax) - alpha * ax) * special.kve(nu, alpha * ax)
    return dens


def vg_abs_moment_quadrature(order: float, nu: float, alpha: float) -> float:
    """E|V|^order for V ~ VG(nu, alpha, 0, 0) by integrating the density: an independent check of Gaunt's formula."""
    order = float(order)

    def integrand(x: float) -> float:
        return x**order * float(vg_pdf(x, nu, alpha))

    scale = 1.0 / alpha
    pieces = [(0.0, scale), (scale, 50 * scale * (1 + nu + order)), (50 * scale * (1 + nu + order), np.inf)]
    total = sum(integrate.quad(integrand, a, b, limit=200, epsabs=0.0, epsrel=1e-11)[0] for a, b in pieces)
    return 2.0 * total


def chi2_difference_vg_params(k: float) -> tuple[float, float]:
    """(nu, alpha) of the variance-gamma law of nu1 - nu2, nu_i ~ chi^2_k independent."""
    k = _check_positive("k (degrees of freedom)", k)
    return (k - 1) / 2, 0.5


def chi2_difference_abs_moment(k: float, order: float) -> float:
    """E|nu1 - nu2|^order for independent nu1, nu2 ~ chi^2_k, through the variance-gamma law."""
    nu, alpha = chi2_difference_vg_params(k)
    return vg_abs_moment(order, nu, alpha)


def normal_product_abs_moment(order: int) -> float:
    """E|2ab|^order for independent standard normals a, b (= nu1 - nu2 with k = 1, eq. 36).

    Uses scipy's half-normal moments: E|2ab|^p = 2^p (E|a|^p)^2, with a and b independent.
    """
    order = _check_order("order", order)
    return 2.0**order * float(stats.halfnorm.moment(order)) ** 2
