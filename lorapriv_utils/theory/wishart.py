"""Paper B's Wishart projection mechanism, S -> M f(S) with M = A^T A ~ W_d(I_d / r, r).

A is r x d with i.i.d. N(0, 1/r) entries; M is never formed: M V = A^T (A V) costs O(r d k)
for a d x k query V.

Vector queries (paper B, Theorem 1).  For a unit vector x, write each row of A as
a_t = s_t x + w_t with s_t ~ N(0, 1/r) and w_t ~ N(0, P / r) independent (P projects onto
the complement of x).  Then

    y = M x = U x + sum_t s_t w_t,   U = sum_t s_t^2 = X / r,  X ~ chi^2_r,

and given U the second term is N(0, (U / r) P).  So y has a density on the half-space
<y, x> > 0 and none elsewhere:

    p_x(y) = f_U(u) (2 pi u / r)^(-(d-1)/2) exp(-r |P y|^2 / (2 u)),   u = <y, x> > 0.

For neighbouring unit queries x, x' with <x, x'> = rho, the privacy loss
L(y) = log p_x(y) - log p_x'(y) under y ~ P_x depends on three independent variables: X, the
component Z of y along the unit vector e orthogonal to x in span(x, x') (scaled), and the
squared norm R of the rest (a scaled chi^2_{d-2}).  L is affine in R, so the expectation over
R in the hockey-stick divergence has a closed form (an exponentially tilted chi-square), and
delta(eps) is a two-dimensional integral, computed here by tanh-sinh quadrature in
probability space.  Where <y, x'> <= 0 the loss is +infinity: that mass,
E_X[Phi(-rho sqrt(X) / sqrt(1 - rho^2))], is the first term of paper B's delta_rho.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

from ..numbers import check_positive, check_rank
from .noise import sample_projection


def project(V: np.ndarray, A: np.ndarray) -> np.ndarray:
    """M V = A^T (A V) for A of shape (r, d) and V of shape (d,) or (d, k), never forming the d x d matrix M."""
    V = np.asarray(V, dtype=float)
    if A.ndim != 2 or V.shape[0] != A.shape[1]:
        raise ValueError(f"a query of shape {V.shape} does not fit a projection of shape {A.shape}: need (d, ...)")
    if not np.all(np.isfinite(V)):
        raise ValueError("the query has non-finite entries (nan or inf)")
    return A.T @ (A @ V)


def sample_outputs(V: np.ndarray, r: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` independent releases M V, M = A^T A with a fresh A each time: shape (draws, *V.shape)."""
    V = np.asarray(V, dtype=float)
    d = V.shape[0]
    check_rank(r)
    out = np.empty((draws, *V.shape))
    for k in range(draws):
        out[k] = project(V, sample_projection(rng, r, d))
    return out


def wishart_mean_and_variance(d: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """E[M] and the entrywise Var[M] of W_d(I/r, r): the identity; 2/r on the diagonal, 1/r off it."""
    check_rank(r)
    variance = np.full((d, d), 1.0 / r)
    np.fill_diagonal(variance, 2.0 / r)
    return np.eye(d), variance


@dataclass(frozen=True)
class VectorPair:
    """Neighbouring unit vector queries in dimension d, with alignment rho = <x, x'>, released at rank r."""

    d: int
    r: int
    rho: float

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, (int, np.integer)) or self.d < 2:
            raise ValueError(f"the dimension d must be an integer >= 2, got {self.d!r}")
        check_rank(self.r)
        if not (isinstance(self.rho, (int, float, np.floating)) and math.isfinite(self.rho)):
            raise ValueError(f"the alignment rho must be a finite number, got {self.rho!r}")
        if self.rho >= 1:
            raise ValueError("rho = 1: the neighbouring queries are identical, so there is nothing to distinguish")
        if self.rho <= -1:
            raise ValueError(f"the alignment rho must lie in (-1, 1), got {self.rho!r}")

    @property
    def sigma(self) -> float:
        return math.sqrt(1.0 - self.rho**2)

    def queries(self) -> tuple[np.ndarray, np.ndarray]:
        """x = e_1 and x' = rho e_1 + sqrt(1 - rho^2) e_2 in R^d."""
        x, x2 = np.zeros(self.d), np.zeros(self.d)
        x[0] = 1.0
        x2[0], x2[1] = self.rho, self.sigma
        return x, x2


def log_density(y: np.ndarray, x: np.ndarray, r: int) -> np.ndarray:
    """log p_x(y) of the vector mechanism for unit x; -inf off the half-space <y, x> > 0.  y: (n, d)."""
    y = np.atleast_2d(np.asarray(y, dtype=float))
    d = y.shape[1]
    u = y @ x
    perp = np.sum(y * y, axis=1) - u**2
    out = np.full(u.shape, -np.inf)
    ok = u > 0
    uo = u[ok]
    log_fu = math.log(r) + stats.chi2.logpdf(r * uo, r)
    out[ok] = log_fu - 0.5 * (d - 1) * np.log(2 * np.pi * uo / r) - r * perp[ok] / (2 * uo)
    return out


def _loss_parts(pair: VectorPair, X: np.ndarray, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, k, u') with L = a + k W, W ~ chi^2_{d-2}, for y ~ P_x written through (X, Z)."""
    r, d = pair.r, pair.d
    u = X / r
    y2 = np.sqrt(u / r) * Z
    u2 = pair.rho * u + pair.sigma * y2
    safe = np.where(u2 > 0, u2, np.nan)
    log_f = lambda v: math.log(r) + stats.chi2.logpdf(r * v, r)  # noqa: E731  (density of U = X / r)
    a = (
        log_f(u)
        - log_f(safe)
        - 0.5 * (d - 1) * np.log(u / safe)
        - r * y2**2 / (2 * u)
        + r * (u**2 + y2**2 - safe**2) / (2 * safe)
    )
    k = 0.5 * (u / safe - 1.0)
    return a, k, u2


def loss_samples(pair: VectorPair, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of the privacy loss L(y), y ~ P_x (+inf where <y, x'> <= 0), from (X, Z, W)."""
    X = rng.chisquare(pair.r, n)
    Z = rng.standard_normal(n)
    W = rng.chisquare(pair.d - 2, n) if pair.d > 2 else np.zeros(n)
    a, k, u2 = _loss_parts(pair, X, Z)
    return np.where(u2 > 0, a + k * W, np.inf)


def loss_samples_direct(pair: VectorPair, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of L(y) with y = A^T A x sampled from real Gaussian matrices (slow; a check on :func:`loss_samples`)."""
    x, x2 = pair.queries()
    y = np.stack([project(x, sample_projection(rng, pair.r, pair.d)) for _ in range(n)])
    return log_density(y, x, pair.r) - log_density(y, x2, pair.r)


def infinite_loss_mass(pair: VectorPair) -> float:
    """P_x(<y, x'> <= 0) = E_X[Phi(-rho sqrt(X) / sqrt(1 - rho^2))], X ~ chi^2_r: mass where p_x' is 0.

    Z / sqrt(X / r) is Student-t with r degrees of freedom, so this is exactly F_{t_r}(-rho sqrt(r) / sigma):
    accurate far into the tail, where a quadrature would underflow.
    """
    return float(stats.t.cdf(-pair.rho * math.sqrt(pair.r) / pair.sigma, pair.r))


NODES = 401  # per dimension; hockey_stick(..., nodes=2 * NODES - 1) is the convergence check


@lru_cache(maxsize=8)
def _tanh_sinh(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes in (0, 1) and weights of the tanh-sinh rule (clusters nodes at both ends, for tails)."""
    h = 3.2 / (n // 2)  # |sinh| stays below ~20, where tanh still resolves 1 - t in double precision
    k = np.arange(-(n // 2), n // 2 + 1) * h
    s = 0.5 * np.pi * np.sinh(k)
    t = 0.5 * (1.0 + np.tanh(s))
    w = 0.5 * h * 0.5 * np.pi * np.cosh(k) / np.cosh(s) ** 2
    keep = (t > 0) & (t < 1)
    return t[keep], w[keep]


def _tilted_tail(c: np.ndarray, k: np.ndarray, nu: int) -> np.ndarray:
    """E[(1 - exp(c - k W))_+] for W ~ chi^2_nu, elementwise (1 + 2k > 0 always holds here)."""
    out = np.zeros(np.broadcast(c, k).shape)
    c, k = np.broadcast_to(c, out.shape), np.broadcast_to(k, out.shape)
    plain = np.clip(-np.expm1(np.minimum(c, 700.0)), 0.0, None)  # (1 - e^c)_+; exp overflows beyond 700
    if nu == 0:
        return plain
    tilt = 1.0 + 2.0 * k
    pos, neg, flat = k > 1e-12, k < -1e-12, np.abs(k) <= 1e-12
    # k > 0: the loss exceeds eps when W > c / k
    w0 = np.where(pos, np.maximum(c / np.where(pos, k, 1.0), 0.0), 0.0)
    p = stats.chi2.sf(w0, nu)
    log_q = c - 0.5 * nu * np.log(tilt) + stats.chi2.logsf(tilt * w0, nu)
    out = np.where(pos, p - np.exp(np.minimum(log_q, 50.0)), out)
    # k < 0: the loss exceeds eps when W < c / k, possible only for c < 0
    w1 = np.where(neg & (c < 0), c / np.where(neg, k, -1.0), 0.0)
    p = stats.chi2.cdf(w1, nu)
    log_q = c - 0.5 * nu * np.log(tilt) + stats.chi2.logcdf(tilt * w1, nu)
    out = np.where(neg & (c < 0), p - np.exp(np.minimum(log_q, 50.0)), out)
    out = np.where(flat, plain, out)
    return np.clip(out, 0.0, 1.0)


@lru_cache(maxsize=64)
def _grid(pair: VectorPair, nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Quadrature grid over (X, Z > z0) for one pair: loss parts (a, k), weights, and the infinite-loss mass."""
    t, w = _tanh_sinh(nodes)
    X = stats.chi2.ppf(t, pair.r)[:, None]
    z0 = -pair.rho * np.sqrt(X) / pair.sigma  # <y, x'> > 0 exactly when Z > z0
    tail = special.ndtr(-z0)  # P(Z > z0)
    Z = -special.ndtri(tail * t[None, :])  # Z > z0, spread by tanh-sinh over its probability range
    weight = w[:, None] * tail * w[None, :]
    a, k, _ = _loss_parts(pair, np.broadcast_to(X, Z.shape), Z)
    keep = np.isfinite(a) & np.isfinite(k)
    return a[keep], k[keep], weight[keep], infinite_loss_mass(pair)


def hockey_stick(eps: float | np.ndarray, pair: VectorPair, nodes: int = NODES) -> np.ndarray:
    """delta(eps) = E_{y ~ P_x}[(1 - e^(eps - L(y)))_+] for each eps, by quadrature (infinite-loss mass included)."""
    a, k, weight, infinite = _grid(pair, nodes)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    return np.array([infinite + float(np.sum(weight * _tilted_tail(e - a, k, pair.d - 2))) for e in eps])


def hockey_stick_mc(eps: float, losses: np.ndarray) -> tuple[float, float]:
    """delta(eps) from loss samples, with its standard error."""
    vals = np.where(np.isinf(losses), 1.0, np.clip(-np.expm1(np.minimum(eps - losses, 700.0)), 0.0, None))
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(vals.size))


def epsilon_at(delta: float, delta_fn, eps_max: float = 1e4, xtol: float = 1e-7, rtol: float = 1e-9) -> float:
    """The eps at which a decreasing delta(eps) function reaches ``delta``: 0 if delta(0) <= delta, inf if not
    reached below ``eps_max``."""
    check_positive("delta", delta)
    if delta_fn(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while delta_fn(hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > eps_max:
            return math.inf
    return float(optimize.brentq(lambda e: delta_fn(e) - delta, lo, hi, xtol=xtol, rtol=rtol))


def epsilon_for_delta(delta: float, pair: VectorPair, eps_max: float = 1e5) -> float:
    """The smallest eps with delta(eps) <= delta; +inf when even the infinite-loss mass exceeds delta."""
    check_positive("delta", delta)
    if infinite_loss_mass(pair) >= delta:
        return math.inf
    return epsilon_at(delta, lambda e: hockey_stick(e, pair)[0], eps_max, xtol=1e-6, rtol=1e-8)


@dataclass(frozen=True)
class Theorem1:
    """Paper B's Theorem 1 evaluated at (d, r, rho, delta'): ``applies`` is its alignment condition."""

    applies: bool
    epsilon: float
    delta: float
    threshold: float
    K: float


def theorem1(pair: VectorPair, delta_prime: float) -> Theorem1:
    """(eps_rho, delta_rho) of Theorem 1, reading t_r(q) as the Student-t quantile with r degrees of freedom
    and kappa_n(q) as the chi-square quantile with n degrees of freedom (the blog post defines neither)."""
    check_positive("delta_prime", delta_prime)
    if delta_prime >= 1:
        raise ValueError(f"delta_prime must be below 1, got {delta_prime}")
    t = float(stats.t.ppf(1 - delta_prime, pair.r))
    threshold = t / math.sqrt(pair.r + t * t)
    K = math.sqrt((1 - pair.rho**2) / pair.r) * t
    delta = infinite_loss_mass(pair) + 3 * delta_prime
    if pair.rho <= threshold:
        return Theorem1(False, math.inf, delta, threshold, K)
    kappa = float(stats.chi2.ppf(1 - delta_prime, pair.d + pair.r - 1))
    eps = 0.5 * (pair.d + pair.r - 1) * math.log(pair.rho + K) + (1 - pair.rho + K) * kappa / (2 * (pair.rho - K))
    return Theorem1(True, eps, delta, threshold, K)


def mean_squared_error(d: int, r: int) -> float:
    """E|M x - x|^2 for a unit x: Var(U) + (d - 1) E[U] / r = (d + 1) / r."""
    return (d + 1) / check_rank(r)


def gaussian_deltas(eps: float | np.ndarray, mu: float | np.ndarray) -> np.ndarray:
    """delta(eps) of Gaussian mechanisms with sensitivity / noise standard deviation = ``mu`` (>= 0; 0 gives 0),
    elementwise with broadcasting (exact)."""
    mu, eps = np.asarray(mu, dtype=float), np.asarray(eps, dtype=float)
    safe = np.where(mu > 0, mu, 1.0)
    val = special.ndtr(safe / 2 - eps / safe) - np.exp(eps) * special.ndtr(-safe / 2 - eps / safe)
    return np.where(mu > 0, np.clip(val, 0.0, None), 0.0)


def gaussian_delta(eps: float | np.ndarray, mu: float) -> np.ndarray:
    """delta(eps) of the Gaussian mechanism with sensitivity / noise standard deviation = mu > 0 (exact)."""
    return gaussian_deltas(eps, check_positive("mu", mu))


def equal_mse_gaussian_mu(pair: VectorPair) -> float:
    """mu = |x - x'| / s of the Gaussian mechanism x + N(0, s^2 I_d) whose mean squared error equals the
    Wishart mechanism's, (d + 1) / r = d s^2."""
    s = math.sqrt(mean_squared_error(pair.d, pair.r) / pair.d)
    return math.sqrt(2 * (1 - pair.rho)) / s


# ---------------------------------------------------------------- matrix queries


def symmetry_residual(Y: np.ndarray, V: np.ndarray) -> float:
    """||V^T Y - Y^T V||_F / ||V^T Y||_F: exactly 0 (to rounding) when Y = M V for a symmetric M.

    With A secret, this is a test between two candidate queries V0, V1 for an observed Y = M V_b:
    only the true one makes V^T Y = V^T M V symmetric (paper B's point that the other columns
    reveal M, needing no knowledge of A).
    """
    Y, V = np.asarray(Y, dtype=float), np.asarray(V, dtype=float)
    if Y.shape != V.shape or Y.ndim != 2:
        raise ValueError(f"Y and V must be d x k matrices of one shape, got {Y.shape} and {V.shape}")
    G = V.T @ Y
    return float(np.linalg.norm(G - G.T) / max(np.linalg.norm(G), 1e-300))


def gradient_batch(d: int, n: int, b: int, rng: np.random.Generator, kind: str = "outer") -> np.ndarray:
    """A batch gradient query V (d x n): ``outer`` = sum of b per-sample outer products h_s delta_s^T (the
    shape of a linear layer's gradient), ``gaussian`` = i.i.d. entries."""
    if kind == "gaussian":
        return rng.standard_normal((d, n))
    if kind == "outer":
        return rng.standard_normal((d, b)) @ rng.standard_normal((b, n)) / math.sqrt(b)
    raise ValueError(f"unknown gradient kind {kind!r}; choose outer or gaussian")


def matrix_attack_trials(
    d: int, n: int, r: int, b: int, trials: int, rng: np.random.Generator, kind: str = "outer"
) -> dict[str, np.ndarray]:
    """Scores of two white-box attacks on the noise-free release of a batch gradient, target in or out.

    Each trial draws the other samples' gradient V0 (d x n, from b samples), a target's per-sample gradient
    h delta^T, a fresh A, and a coin: the release is M V_b with V1 = V0 + h delta^T.  Scores ("target in"
    is higher):
    ``secret_A``: symmetry_residual(Y, V0) - symmetry_residual(Y, V1), knowing the data but not A;
    ``released_A``: the same test on what a LoRA checkpoint ships (B's update, V^T A^T, with A known):
    |V0^T A^T - B| - |V1^T A^T - B|.
    """
    check_rank(r)
    if r > d:
        raise ValueError(f"the rank r = {r} exceeds the dimension d = {d}")
    out = {"member": np.zeros(trials, dtype=bool), "secret_A": np.zeros(trials), "released_A": np.zeros(trials)}
    for t in range(trials):
        V0 = gradient_batch(d, n, b, rng, kind)
        target = np.outer(rng.standard_normal(d), rng.standard_normal(n)) / math.sqrt(b)
        V1 = V0 + target
        member = bool(rng.integers(2))
        A = sample_projection(rng, r, d)
        V = V1 if member else V0
        Y = project(V, A)
        released = V.T @ A.T  # B's update up to -eta: what the adapter holds besides A
        out["member"][t] = member
        out["secret_A"][t] = symmetry_residual(Y, V0) - symmetry_residual(Y, V1)
        out["released_A"][t] = np.linalg.norm(V0.T @ A.T - released) - np.linalg.norm(V1.T @ A.T - released)
    return out


RANGE_TOLERANCE = 1e-9  # an eigenvalue of V0^T V0 below this share of the largest counts as zero


def outside_range(Y: np.ndarray, V0: np.ndarray) -> float:
    """||(I - P) Y||_F / ||Y||_F, P the orthogonal projection onto the column space of V0^T.

    The release of B alone (A secret): B's first update -eta V^T A^T has its columns in the column space of
    V^T, so a release made without the target lies in that of the others' gradient V0^T, exactly (0 to
    rounding); one made with the target has a component outside it whenever the target's output direction
    leaves that space, which happens when rank(V0) < n (the layer's output width).
    """
    Y, V0 = np.asarray(Y, dtype=float), np.asarray(V0, dtype=float)
    if Y.ndim != 2 or V0.ndim != 2 or Y.shape[0] != V0.shape[1]:
        raise ValueError(f"Y must be n x r and V0 d x n, got {Y.shape} and {V0.shape}")
    # The column space of V0^T is that of the n x n Gram matrix V0^T V0: its eigenvectors above rounding level.
    values, vectors = np.linalg.eigh(V0.T @ V0)
    basis = vectors[:, values > max(values.max(), 0.0) * RANGE_TOLERANCE]
    residual = Y - basis @ (basis.T @ Y)
    return float(np.linalg.norm(residual) / max(np.linalg.norm(Y), 1e-300))


def sketch_log_likelihood_ratio(Y: np.ndarray, V0: np.ndarray, V1: np.ndarray, r: int) -> float:
    """log p1(Y) - p0(Y) for Y = V^T A^T with A's entries N(0, 1/r): its r columns are i.i.d. N(0, V^T V / r).

    The most powerful test between the two worlds (Neyman-Pearson) when both covariances have full rank n;
    NaN when V0^T V0 is singular (then ``outside_range`` decides with certainty).
    """
    check_rank(r)
    if min(V0.shape) < V0.shape[1]:  # rank(V0) <= d < n: the covariance is singular
        return math.nan
    S0, S1 = V0.T @ V0 / r, V1.T @ V1 / r
    if np.linalg.matrix_rank(S0) < S0.shape[0]:
        return math.nan
    (_, log0), (_, log1) = np.linalg.slogdet(S0), np.linalg.slogdet(S1)
    quad0, quad1 = np.sum(Y * np.linalg.solve(S0, Y)), np.sum(Y * np.linalg.solve(S1, Y))
    return float(-(r / 2) * (log1 - log0) - 0.5 * (quad1 - quad0))


def b_alone_trials(
    d: int,
    n: int,
    r: int,
    b: int,
    trials: int,
    rng: np.random.Generator,
    kind: str = "outer",
    target_scale: float = 1.0,
) -> dict[str, np.ndarray]:
    """Two white-box attacks on the release of B's first LoRA-FA update alone, A secret (B^T = -eta A V).

    Each trial draws the others' gradient V0 (d x n from b rank-one terms), a target h delta^T (times
    ``target_scale``), a fresh secret A and a coin; the release is V^T A^T (the -eta changes nothing).  Scores
    ("target in" is higher): ``support``, :func:`outside_range` of the release against V0; ``likelihood``,
    :func:`sketch_log_likelihood_ratio` (NaN when V0's rank is below n).  The attacker knows the data, as in
    the DP game, not A.
    """
    check_rank(r)
    check_positive("target_scale", target_scale)
    out = {"member": np.zeros(trials, dtype=bool), "support": np.zeros(trials), "likelihood": np.zeros(trials)}
    for t in range(trials):
        V0 = gradient_batch(d, n, b, rng, kind)
        V1 = V0 + target_scale * np.outer(rng.standard_normal(d), rng.standard_normal(n)) / math.sqrt(b)
        member = bool(rng.integers(2))
        Y = (V1 if member else V0).T @ sample_projection(rng, r, d).T
        out["member"][t] = member
        out["support"][t] = outside_range(Y, V0)
        out["likelihood"][t] = sketch_log_likelihood_ratio(Y, V0, V1, r) if min(d, b) >= n else math.nan
    return out


def sensitivity_ratio(d: int, r: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of |P_M u|^2 / |u|^2 for a fixed u, P_M the projection onto the range of M = A^T A (an r-dim
    subspace with a uniformly random orientation): Beta(r/2, (d - r)/2), mean r/d (paper B's M2 ratio)."""
    check_rank(r)
    if r > d:
        raise ValueError(f"the rank r = {r} exceeds the dimension d = {d}")
    u = np.zeros(d)
    u[0] = 1.0
    out = np.empty(draws)
    for k in range(draws):
        Q, _ = np.linalg.qr(sample_projection(rng, r, d).T)  # orthonormal basis of range(M) = row space of A
        out[k] = float(np.sum((Q.T @ u) ** 2))
    return out
