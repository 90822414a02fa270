"""Paper B's noisy variants of the Wishart projection, M1 (project, then add noise) and M2 (add noise,
then project), and the privacy each buys over the Gaussian noise alone.

Notation: a query difference dv of norm Delta, Gaussian noise of standard deviation sigma per
coordinate, mu = Delta / sigma (the noise alone is the Gaussian mechanism with parameter mu),
A an r x d matrix of N(0, 1/r) entries, M = A^T A, P_A the orthogonal projection onto A's row space.

M2, v -> M (v + e).  M (v + e) = A^T [A (v + e)] is a post-processing of (A, A (v + e)), and given
A, A (v + e) is the Gaussian mechanism with parameter mu |P_A u| (u = dv / Delta; whiten A e).  For
a fixed u and a uniformly oriented r-dim row space, beta = |P_A u|^2 ~ Beta(r/2, (d - r)/2), mean r/d
(paper B's effective-sensitivity ratio).  By joint convexity of the hockey-stick divergence,

    delta_M2(eps) <= E_beta[ delta_G(eps; sqrt(beta) mu) ],

with equality when A is published with the output: the bound holds whether A is secret or not, for
a difference fixed before A is drawn.  T steps with a fresh A each are the T-fold composition of
that mixture (:func:`m2_fresh_epsilon`, dp-accounting's PLD); T steps with one frozen A and the same
difference at every step give E_beta[delta_G(eps; sqrt(T beta) mu)] (:func:`m2_delta`).  If A is
known and the differences may depend on it (adaptive composition), nothing is left: a difference in
A's row space has beta = 1.

M1, v -> M v + e.  With A published, given A it is the Gaussian mechanism with parameter
mu |M u|, and |M u|^2 = U^2 + U C / r with U ~ chi^2_r / r and C ~ chi^2_{d-1} independent (the
decomposition of :mod:`.wishart`), mean 1 + (d + 1) / r: larger than 1, so publishing A makes M1
*less* private than the noise alone.  With A secret and unit queries v, v' (alignment rho), given U
the output is Gaussian, N(U v, sigma^2 v v^T + (sigma^2 + U / r)(I - v v^T)), so each density is a
one-dimensional integral over U (:func:`m1_secret_losses`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special, stats

from ..numbers import check_positive, check_rank
from .noise import sample_projection
from .wishart import epsilon_at
from .wishart import gaussian_deltas as gauss_delta  # the Gaussian mechanism's exact delta(eps), mu >= 0


def _check_mu(mu: float) -> float:
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu = sensitivity / noise standard deviation must be positive and finite, got {mu}")
    return float(mu)


def _check_dims(d: int, r: int) -> None:
    check_rank(r)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"the dimension d must be an integer >= 2, got {d!r}")


def _check_steps(steps: int) -> int:
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    return int(steps)


def ratio_law(d: int, r: int) -> stats.rv_continuous:
    """The law of beta = |P_A u|^2 for a fixed unit u: Beta(r/2, (d - r)/2) (needs r < d)."""
    _check_dims(d, r)
    if r >= d:
        raise ValueError(f"with r = {r} >= d = {d} the row space is all of R^d and the ratio is 1: no law to draw")
    return stats.beta(r / 2, (d - r) / 2)


def m2_delta(eps: float | np.ndarray, mu: float, d: int, r: int, steps: int = 1) -> np.ndarray:
    """delta(eps) of M2 with A drawn once, over ``steps`` releases of the same difference (A published or not):
    E_beta[delta_G(eps; sqrt(steps * beta) mu)] by adaptive quadrature over beta's law (r >= d: no reduction)."""
    mu, steps = _check_mu(mu), _check_steps(steps)
    _check_dims(d, r)
    eps_arr = np.atleast_1d(np.asarray(eps, dtype=float))
    if r >= d:
        return np.array([float(gauss_delta(e, math.sqrt(steps) * mu)) for e in eps_arr])
    law = ratio_law(d, r)
    points = [float(law.ppf(q)) for q in (0.5, 0.99, 1 - 1e-6, 1 - 1e-10)]
    out = []
    for e in eps_arr:
        value, _ = integrate.quad(
            lambda b, e=e: float(gauss_delta(e, math.sqrt(steps * b) * mu)) * law.pdf(b),
            0.0,
            1.0,
            points=points,
            limit=400,
            epsabs=1e-16,
            epsrel=1e-9,
        )
        out.append(value)
    return np.array(out)


def _gaussian_rounded_pmf(mu: float, interval: float, tail: float = 1e-18) -> tuple[np.ndarray, np.ndarray, float]:
    """The Gaussian mechanism's privacy loss N(mu^2/2, mu^2), rounded up to multiples of ``interval``:
    (indices, masses, mass beyond the upper truncation); the lower truncation is moved to the lowest index
    (both pessimistic)."""
    m = mu * mu / 2
    z = -float(special.ndtri(tail))
    lo, hi = math.floor((m - z * mu) / interval), math.ceil((m + z * mu) / interval)
    idx = np.arange(lo, hi + 1)
    cdf = special.ndtr((idx * interval - m) / mu)
    mass = np.diff(np.concatenate([[0.0], cdf]))  # the first index takes everything below it
    return idx, mass, float(special.ndtr(-(hi * interval - m) / mu))


def m2_fresh_pld(mu: float, d: int, r: int, interval: float = 1e-3, bins: int = 400):
    """dp-accounting's PLD of one M2 step with a fresh A (the joint law of (A, release)): a mixture of Gaussian
    PLDs over beta, each bin of beta's law represented by its upper end (pessimistic), the last 1e-12 of mass
    at beta = 1.  Compose with ``.self_compose(T)``."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu = _check_mu(mu)
    _check_dims(d, r)
    check_positive("interval", interval)
    if r >= d:  # the projection is onto all of R^d: every bit of mass at beta = 1
        weights, uppers = np.array([1.0]), np.array([1.0])
        rest = 0.0
    else:
        law = ratio_law(d, r)
        # quantile levels: even in the bulk, geometric towards 1 (where delta is decided), then the rest at beta = 1
        bulk = np.linspace(0.0, 0.99, bins // 2 + 1)[1:]
        tail = 1 - np.geomspace(1e-2, 1e-12, bins // 2 + 1)[1:]
        levels = np.concatenate([bulk, tail])
        weights = np.diff(np.concatenate([[0.0], levels]))
        uppers = law.ppf(levels)
        rest = 1.0 - levels[-1]
    pmf: dict[int, float] = {}
    infinity = 0.0
    for w, b in [*zip(weights, uppers, strict=True), (rest, 1.0)]:
        if w <= 0:
            continue
        idx, mass, inf_mass = _gaussian_rounded_pmf(math.sqrt(b) * mu, interval)
        for i, p in zip(idx.tolist(), (w * mass).tolist(), strict=True):
            if p > 0:
                pmf[i] = pmf.get(i, 0.0) + p
        infinity += w * inf_mass
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        pmf, infinity, interval, pessimistic_estimate=True, symmetric=True
    )


def m2_fresh_epsilon(delta: float, mu: float, d: int, r: int, steps: int = 1, interval: float = 1e-3) -> float:
    """eps at ``delta`` of ``steps`` M2 releases, each with a fresh A (PLD composition, pessimistic)."""
    check_positive("delta", delta)
    dist = m2_fresh_pld(mu, d, r, interval)
    steps = _check_steps(steps)
    if steps > 1:
        dist = dist.self_compose(steps)
    return float(dist.get_epsilon_for_delta(delta))


def m2_fresh_same_difference_epsilon(
    delta: float, mu: float, d: int, r: int, steps: int, draws: int, rng: np.random.Generator
) -> float:
    """eps at ``delta`` of ``steps`` M2 releases of one fixed difference, a fresh A each: the composition given the
    A's is Gaussian with parameter sqrt(S) mu, S the sum of the steps' ratios, so delta(eps) = E_S[delta_G(eps;
    sqrt(S) mu)], here averaged over ``draws`` draws of S (common to every eps).  No adaptivity: a check on the
    PLD, which must lie above it."""
    mu, steps = _check_mu(mu), _check_steps(steps)
    S = ratio_law(d, r).rvs(size=(draws, steps), random_state=rng).sum(axis=1)
    scaled = np.sqrt(S) * mu
    return epsilon_at(delta, lambda e: float(gauss_delta(e, scaled).mean()))


def gaussian_epsilon(delta: float, mu: float, steps: int = 1) -> float:
    """eps at ``delta`` of ``steps`` compositions of the Gaussian mechanism with parameter mu (closed form)."""
    mu, steps = _check_mu(mu), _check_steps(steps)
    return epsilon_at(delta, lambda e: float(gauss_delta(e, math.sqrt(steps) * mu)))


def m1_norm_samples(d: int, r: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """|M u|^2 for a fixed unit u: U^2 + U C / r, U ~ chi^2_r / r, C ~ chi^2_{d-1} (mean 1 + (d + 1) / r)."""
    _check_dims(d, r)
    U = rng.chisquare(r, draws) / r
    return U * U + U * rng.chisquare(d - 1, draws) / r


def m1_norm_samples_direct(d: int, r: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """|M u|^2 with real Gaussian matrices A (an instrument for :func:`m1_norm_samples`)."""
    _check_dims(d, r)
    out = np.empty(draws)
    for k in range(draws):
        A = sample_projection(rng, r, d)
        out[k] = float(np.sum((A.T @ A[:, 0]) ** 2))  # u = e_1
    return out


def m1_released_delta(eps: float, mu: float, norms2: np.ndarray) -> tuple[float, float]:
    """delta(eps) of M1 with A published, E[delta_G(eps; |M u| mu)], from draws of |M u|^2; with its standard error."""
    mu = _check_mu(mu)
    vals = gauss_delta(eps, np.sqrt(norms2) * mu)
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(vals.size))


class M1Pair:
    """Unit neighbouring queries v, v' with <v, v'> = rho under M1 with A secret: y = M v + e, e ~ N(0, sigma^2 I).

    Coordinates: y1 along v, y2 along the unit e orthogonal to v in span(v, v'), R = the squared norm of
    the remaining d - 2 coordinates.  ``sigma`` is set by mu = |v - v'| / sigma.
    """

    def __init__(self, d: int, r: int, rho: float, mu: float) -> None:
        _check_dims(d, r)
        if d < 3:
            raise ValueError(f"M1's loss needs d >= 3, got {d}")
        if not -1 < rho < 1:
            raise ValueError(
                f"the alignment rho must lie in (-1, 1): identical queries have nothing to protect, got {rho}"
            )
        self.d, self.r, self.rho, self.mu = int(d), int(r), float(rho), _check_mu(mu)
        self.sigma = math.sqrt(2 * (1 - rho)) / self.mu

    def u_grid(self, refine: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Trapezoid nodes over U's law (1e-15 quantiles), spaced at most sigma/16 and U's sd/16; log-weights."""
        law = stats.gamma(self.r / 2, scale=2 / self.r)
        lo, hi = float(law.ppf(1e-15)), float(law.isf(1e-15))
        step = min(self.sigma, math.sqrt(2 / self.r)) / (16 * refine)
        n = max(64 * refine, int(math.ceil((hi - lo) / step)) + 1)
        u = np.linspace(lo, hi, n)
        w = np.full(n, u[1] - u[0])
        w[0] = w[-1] = w[0] / 2
        return u, np.log(w) + law.logpdf(u)

    def _log_density(self, along: np.ndarray, orth2: np.ndarray, refine: int) -> np.ndarray:
        u, logw = self.u_grid(refine)
        s2 = self.sigma**2 + u / self.r  # variance orthogonal to the query, given U = u
        k = self.d - 1
        terms = (
            logw[None, :]
            - 0.5 * (along[:, None] - u[None, :]) ** 2 / self.sigma**2
            - 0.5 * math.log(2 * math.pi * self.sigma**2)
            - 0.5 * k * np.log(2 * math.pi * s2)[None, :]
            - 0.5 * orth2[:, None] / s2[None, :]
        )
        return special.logsumexp(terms, axis=1)

    def log_density(self, y1: np.ndarray, y2: np.ndarray, R: np.ndarray, refine: int = 1) -> np.ndarray:
        """log p_v(y) at outputs given by (y1, y2, R) (a density on R^d)."""
        y1, y2, R = (np.atleast_1d(np.asarray(a, dtype=float)) for a in (y1, y2, R))
        return self._log_density(y1, y2 * y2 + R, refine)

    def log_density_direct(self, y: np.ndarray, draws: int, rng: np.random.Generator) -> tuple[float, float]:
        """log p_v(y) at one output y in R^d (v = e_1) by averaging the Gaussian density over real matrices A, with
        the standard error of that log (an instrument for :meth:`log_density`, practical at small d)."""
        y = np.asarray(y, dtype=float)
        logs = np.empty(draws)
        for k in range(draws):
            A = sample_projection(rng, self.r, self.d)
            diff = y - A.T @ A[:, 0]
            logs[k] = -0.5 * diff @ diff / self.sigma**2
        w = np.exp(logs - logs.max())
        log_mean = float(logs.max() + math.log(w.mean()) - 0.5 * self.d * math.log(2 * math.pi * self.sigma**2))
        return log_mean, float(w.std(ddof=1) / (w.mean() * math.sqrt(draws)))

    def losses(self, y1: np.ndarray, y2: np.ndarray, R: np.ndarray, refine: int = 1) -> np.ndarray:
        """L = log p_v(y) - log p_v'(y) at outputs given by (y1, y2, R)."""
        c = math.sqrt(1 - self.rho**2)
        total = y1 * y1 + y2 * y2 + R
        along2 = self.rho * y1 + c * y2
        out = np.empty(y1.size)
        for s in range(0, y1.size, 4096):  # chunks bound the (outputs x nodes) memory
            sl = slice(s, s + 4096)
            out[sl] = self._log_density(y1[sl], total[sl] - y1[sl] ** 2, refine) - self._log_density(
                along2[sl], total[sl] - along2[sl] ** 2, refine
            )
        return out

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(y1, y2, R) of n outputs under v, from the representation (U, then Gaussians)."""
        U = rng.chisquare(self.r, n) / self.r
        s = np.sqrt(self.sigma**2 + U / self.r)
        y1 = U + self.sigma * rng.standard_normal(n)
        y2 = s * rng.standard_normal(n)
        R = s * s * rng.chisquare(self.d - 2, n)
        return y1, y2, R

    def sample_direct(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(y1, y2, R) of n outputs y = A^T A v + e from real Gaussian matrices (an instrument; v = e_1, e = e_2)."""
        out = np.empty((3, n))
        for k in range(n):
            A = sample_projection(rng, self.r, self.d)
            y = A.T @ A[:, 0] + self.sigma * rng.standard_normal(self.d)
            out[:, k] = y[0], y[1], float(np.sum(y[2:] ** 2))
        return out[0], out[1], out[2]


def m1_secret_losses(pair: M1Pair, n: int, rng: np.random.Generator, refine: int = 1) -> np.ndarray:
    """n draws of M1's privacy loss with A secret (outputs from v, loss against v')."""
    return pair.losses(*pair.sample(n, rng), refine=refine)
