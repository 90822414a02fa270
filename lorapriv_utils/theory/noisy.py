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


def _ratio_bins(d: int, r: int, bins: int) -> list[tuple[float, float]]:
    """(weight, upper end) of ``bins`` bins of beta's law, each bin represented by its upper end (pessimistic),
    the last 1e-12 of mass at beta = 1; quantile levels even in the bulk, geometric towards 1 (where delta is
    decided).  r >= d: all the mass at beta = 1 (the projection is onto all of R^d)."""
    _check_dims(d, r)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins must be an integer >= 2, got {bins!r}")
    if r >= d:
        return [(1.0, 1.0)]
    bulk = np.linspace(0.0, 0.99, bins // 2 + 1)[1:]
    tail = 1 - np.geomspace(1e-2, 1e-12, bins // 2 + 1)[1:]
    levels = np.concatenate([bulk, tail])
    weights = np.diff(np.concatenate([[0.0], levels]))
    uppers = ratio_law(d, r).ppf(levels)
    pairs = [(float(w), float(b)) for w, b in zip(weights, uppers, strict=True)] + [(float(1.0 - levels[-1]), 1.0)]
    return [(w, b) for w, b in pairs if w > 0]


def m2_fresh_pld(mu: float, d: int, r: int, interval: float = 1e-3, bins: int = 400):
    """dp-accounting's PLD of one M2 step with a fresh A (the joint law of (A, release)): a mixture of Gaussian
    PLDs over beta, each bin of beta's law represented by its upper end (pessimistic), the last 1e-12 of mass
    at beta = 1.  Compose with ``.self_compose(T)``."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu = _check_mu(mu)
    check_positive("interval", interval)
    pmf: dict[int, float] = {}
    infinity = 0.0
    for w, b in _ratio_bins(d, r, bins):
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


def _check_rate(sample_rate: float) -> float:
    if not (math.isfinite(sample_rate) and 0 < sample_rate <= 1):
        raise ValueError(f"the sampling rate must lie in (0, 1], got {sample_rate}")
    return float(sample_rate)


def _check_noise(noise_multiplier: float) -> float:
    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise ValueError(
            f"the noise multiplier must be positive and finite, got {noise_multiplier} (sigma = 0 certifies nothing)"
        )
    return float(noise_multiplier)


def m2_subsampled_pld(
    noise_multiplier: float, sample_rate: float, d: int, r: int, bins: int = 100, interval: float = 1e-3
):
    """dp-accounting's PLD of one step of compressed DP-SGD (paper B's M2 in training): Poisson sampling at
    ``sample_rate``, a text's gradient clipped to C in the full d-dimensional input space, noise N(0, (sigma C)^2)
    there, then a fresh A.  Given A the step is the subsampled Gaussian mechanism with sensitivity sqrt(beta) C
    (whiten the released A (G + E)); the joint law of (A, release) mixes those PLDs over beta's law, for the
    "remove" and the "add" neighbour each, beta's bins at their upper ends (pessimistic).  Exact, up to that
    discretization, for a difference of rank one in one layer (beta ~ Beta(r/2, (d - r)/2)); for a text whose
    gradient has several directions beta is a weighted mean of such ratios, and treating it as one is the
    assumption this accounting makes (not proved here)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    sigma, q = _check_noise(noise_multiplier), _check_rate(sample_rate)
    check_positive("interval", interval)
    remove = add = None
    total = 0.0
    for w, b in _ratio_bins(d, r, bins):
        step = pld.from_gaussian_mechanism(
            sigma, sensitivity=math.sqrt(b), sampling_prob=q, value_discretization_interval=interval
        )
        if remove is None:
            remove, add, total = step._pmf_remove, step._pmf_add, w
            continue
        keep = total / (total + w)
        remove = remove.compute_mixture(step._pmf_remove, keep)
        add = add.compute_mixture(step._pmf_add, keep)
        total += w
    return pld.PrivacyLossDistribution(remove, add)


def m2_subsampled_epsilon(
    delta: float, noise_multiplier: float, sample_rate: float, steps: int, d: int, r: int, bins: int = 100
) -> float:
    """eps at ``delta`` of ``steps`` steps of compressed DP-SGD, a fresh A each (see :func:`m2_subsampled_pld`)."""
    check_positive("delta", delta)
    steps = _check_steps(steps)
    dist = m2_subsampled_pld(noise_multiplier, sample_rate, d, r, bins)
    if steps > 1:
        dist = dist.self_compose(steps)
    return float(dist.get_epsilon_for_delta(delta))


def _directions(eps: float, m: float, q: float) -> tuple[float, float]:
    """(remove, add) delta(eps) of the subsampled Gaussian with parameter m and rate q."""
    if m <= 0:
        return 0.0, 0.0
    x = (math.log((math.expm1(eps) + q) / q) + m * m / 2) / m
    remove = (1 - q) * special.ndtr(-x) + q * special.ndtr(m - x) - math.exp(eps) * special.ndtr(-x)
    add = 0.0
    if q == 1 or math.exp(-eps) > 1 - q:
        x = (math.log((math.exp(-eps) - 1 + q) / q) + m * m / 2) / m
        add = special.ndtr(x) - math.exp(eps) * ((1 - q) * special.ndtr(x) + q * special.ndtr(x - m))
    return float(max(remove, 0.0)), float(max(add, 0.0))


def subsampled_gaussian_delta(eps: float, m: float, sample_rate: float) -> float:
    """The exact delta(eps) of the Poisson-subsampled Gaussian mechanism N(0, 1) against (1 - q) N(0, 1) + q N(m, 1),
    the larger of its "remove" and "add" directions (the likelihood ratio is monotone in the output)."""
    q = _check_rate(sample_rate)
    return max(_directions(eps, m, q))


def m2_subsampled_delta_exact(eps: float, noise_multiplier: float, sample_rate: float, d: int, r: int) -> float:
    """One step's delta(eps) of compressed DP-SGD by quadrature over beta, E_beta[delta_subsampled(eps;
    sqrt(beta) / sigma)], each direction averaged on its own (an instrument for :func:`m2_subsampled_pld`)."""
    sigma, q = _check_noise(noise_multiplier), _check_rate(sample_rate)
    _check_dims(d, r)
    if r >= d:
        return subsampled_gaussian_delta(eps, 1 / sigma, q)
    law = ratio_law(d, r)
    points = [float(law.ppf(p)) for p in (0.5, 0.99, 1 - 1e-6, 1 - 1e-10)]

    def direction(which: int) -> float:
        def integrand(b: float) -> float:
            m = math.sqrt(b) / sigma
            return _directions(eps, m, q)[which] * law.pdf(b)

        value, _ = integrate.quad(integrand, 0.0, 1.0, points=points, limit=400, epsabs=1e-16, epsrel=1e-9)
        return value

    return float(max(direction(0), direction(1)))


RDP_ORDERS = tuple(range(2, 129))  # integer orders: the sampled Gaussian's Renyi moment is then a finite sum


def beta_log_mgf(t: np.ndarray, a: float, b: float, nodes: int = 4000) -> np.ndarray:
    """log E[exp(t beta)] for beta ~ Beta(a, b) and t >= 0 (log of Kummer's 1F1(a; a + b; t)), by the trapezoid rule
    in log space on an even grid joined with grids geometric towards both ends of [0, 1], so that large t (the mass
    near beta = 1) and the Beta density's end points stay resolved without overflow."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("the moment generating function is evaluated at finite t >= 0")
    ends = np.geomspace(1e-30, 0.5, nodes)
    middle = np.linspace(0.0, 1.0, 5 * nodes + 1)
    x = np.unique(np.concatenate([ends, 1.0 - ends, middle]))  # x = 1 - beta (the density's mass near 0)
    inner = x[1:-1]
    weights = np.diff(x)
    log_w = np.log((weights[:-1] + weights[1:]) / 2)
    log_pdf = stats.beta(b, a).logpdf(inner)  # 1 - beta ~ Beta(b, a)
    terms = log_pdf[None, :] + log_w[None, :] - np.concatenate([[0.0], t])[:, None] * inner[None, :]
    logs = special.logsumexp(terms, axis=1)
    return t + logs[1:] - logs[0]  # divided by the grid's own total mass (its normalization error cancels)


def m2_subsampled_rdp(noise_multiplier: float, sample_rate: float, d: int, r: int, orders=RDP_ORDERS) -> np.ndarray:
    """Renyi DP (at integer ``orders``) of one step of compressed DP-SGD, for any clipped difference.

    Given A the step is the Poisson-sampled Gaussian mechanism with sensitivity sqrt(beta') C, where beta' =
    |P_A D|^2 / |D|^2 for the text's gradient difference D.  Its Renyi moment at integer alpha is
    A_alpha(beta') = sum_k C(alpha, k) (1 - q)^(alpha - k) q^k exp(k (k - 1) beta' / (2 sigma^2)) (Mironov, Talwar
    and Zhang 2019; the other direction is no larger), a convex function of beta'.  Over every direction of D and
    every layer, beta' is a weighted mean of ratios each distributed as beta ~ Beta(r/2, (d - r)/2), so by Jensen
    E A_alpha(beta') <= E A_alpha(beta): the joint release (A, output) has RDP log E[A_alpha(beta)] / (alpha - 1)
    whatever the rank of D, and a fresh A each step composes adaptively.  r >= d: beta = 1, plain DP-SGD."""
    sigma, q = _check_noise(noise_multiplier), _check_rate(sample_rate)
    _check_dims(d, r)
    orders = np.asarray(orders)
    if orders.ndim != 1 or np.any(orders < 2) or np.any(orders != np.round(orders)):
        raise ValueError("the Renyi orders must be integers >= 2")
    top = int(orders.max())
    k = np.arange(top + 1)
    t = k * (k - 1) / (2 * sigma * sigma)
    log_mgf = t if r >= d else beta_log_mgf(t, r / 2, (d - r) / 2)
    out = []
    for alpha in orders.astype(int):
        kk = k[: alpha + 1]
        log_binom = special.gammaln(alpha + 1) - special.gammaln(kk + 1) - special.gammaln(alpha - kk + 1)
        with np.errstate(divide="ignore"):  # q = 1: log(1 - q) = -inf for the terms it zeroes
            terms = log_binom + (alpha - kk) * np.log1p(-q) + kk * math.log(q) + log_mgf[: alpha + 1]
        out.append(float(special.logsumexp(terms)) / (alpha - 1))
    return np.array(out)


def m2_rdp_epsilon(
    delta: float, noise_multiplier: float, sample_rate: float, steps: int, d: int, r: int, orders=RDP_ORDERS
) -> float:
    """eps at ``delta`` of ``steps`` steps of compressed DP-SGD by RDP (:func:`m2_subsampled_rdp`, valid for any
    difference), converted by dp-accounting's ``compute_epsilon`` (the conversion Opacus's RDP accountant uses)."""
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    check_positive("delta", delta)
    steps = _check_steps(steps)
    rdp = steps * m2_subsampled_rdp(noise_multiplier, sample_rate, d, r, orders)
    eps, _ = compute_epsilon(list(orders), list(rdp), delta)
    return float(eps)


def matched_noise_multiplier(eps_of_sigma, epsilon: float, upper: float, rtol: float = 1e-3) -> float:
    """The smallest noise multiplier (to ``rtol``) whose certificate ``eps_of_sigma(sigma)`` is within ``epsilon``:
    bisection on log sigma below ``upper`` (a sigma already within ``epsilon``, e.g. plain DP-SGD's); returns the
    bracket's upper end, so the certificate at the answer is within ``epsilon``."""
    check_positive("epsilon", epsilon)
    hi = _check_noise(upper)
    if eps_of_sigma(hi) > epsilon:
        raise ValueError(f"at sigma = {hi} the certificate exceeds eps = {epsilon}: raise `upper`")
    lo = hi / 2
    while eps_of_sigma(lo) <= epsilon:
        hi, lo = lo, lo / 2
        if lo < 1e-3:
            raise ValueError(f"eps = {epsilon} is reached below sigma = 1e-3: the accounting is degenerate there")
    while hi / lo > 1 + rtol:
        mid = math.sqrt(hi * lo)
        hi, lo = (mid, lo) if eps_of_sigma(mid) <= epsilon else (hi, mid)
    return hi


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
