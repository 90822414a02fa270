"""The noise that a frozen LoRA projection injects into a batch gradient (paper A, section 3).

With LoRA's down-projection A (r x m, i.i.d. N(0, 1/r) entries) frozen, the adapted
weight W (n x m) moves by -eta * G A^T A for a batch gradient G (eq. 10).  Writing
G A^T A = G + N gives the injected noise

    N = G (A^T A - I_m) = (G A^T) A - G.                                  (eq. 11)

Paper A prints eq. 11 with the opposite sign in front of the noise term; the
decomposition only reproduces eq. 10 with the sign used here (see the chapter).

Everything here costs O(n m r) time and O((n + r) m) memory per draw: the m x m
matrix A^T A is never formed (except in :func:`naive_injected_noise`, the reference
used by the tests and the benchmark).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..numbers import check_positive


def _as_gradient(G: np.ndarray, name: str = "G") -> np.ndarray:
    G = np.asarray(G, dtype=np.float64)
    if G.ndim == 1:
        G = G[None, :]
    if G.ndim != 2 or G.shape[1] < 1 or G.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty vector or n x m matrix, got shape {G.shape}")
    if not np.all(np.isfinite(G)):
        raise ValueError(f"{name} has non-finite entries (nan or inf)")
    return G


def check_rank(r: int, m: int) -> int:
    """Validate a LoRA rank against the input dimension m: 1 <= r <= m."""
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 1 <= r <= m:
        raise ValueError(f"r (LoRA rank) must be an integer with 1 <= r <= m = {m}, got {r!r}")
    return int(r)


def sample_projection(rng: np.random.Generator, r: int, m: int, batch: int | None = None) -> np.ndarray:
    """LoRA's initial A: shape (r, m), or (batch, r, m), with i.i.d. N(0, 1/r) entries."""
    r = check_rank(r, m)
    shape = (r, m) if batch is None else (batch, r, m)
    return rng.standard_normal(shape) / math.sqrt(r)


def injected_noise(G: np.ndarray, A: np.ndarray) -> np.ndarray:
    """N = G (A^T A - I) for one A of shape (r, m) or a batch of shape (b, r, m); O(n m r)."""
    G = _as_gradient(G)
    A = np.asarray(A, dtype=np.float64)
    if A.ndim not in (2, 3) or A.shape[-1] != G.shape[1]:
        raise ValueError(f"A must have shape (r, m) or (b, r, m) with m = {G.shape[1]}, got {A.shape}")
    return (G @ np.swapaxes(A, -1, -2)) @ A - G


def naive_injected_noise(G: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Reference implementation that forms the m x m matrix A^T A - I (tests and benchmark only)."""
    G = _as_gradient(G)
    m = G.shape[1]
    return G @ (A.T @ A - np.eye(m))


def stream_noise(G: np.ndarray, r: int, draws: int, rng: np.random.Generator, batch: int = 64) -> Iterator[np.ndarray]:
    """Yield independent draws of N = G (A^T A - I), ``batch`` at a time, shape (b, n, m).

    Memory is O(batch (n + r) m) whatever ``draws`` is.
    """
    G = _as_gradient(G)
    r = check_rank(r, G.shape[1])
    if draws < 1 or batch < 1:
        raise ValueError(f"draws and batch must be positive, got draws={draws}, batch={batch}")
    remaining = draws
    while remaining:
        b = min(batch, remaining)
        yield injected_noise(G, sample_projection(rng, r, G.shape[1], b))
        remaining -= b


def sample_element_full(
    q: np.ndarray, i: int, r: int, draws: int, rng: np.random.Generator, batch: int = 256
) -> np.ndarray:
    """Draws of u_i = [q (A^T A - I)]_i through the full streaming sampler (a check on :func:`sample_element`)."""
    q = _as_gradient(q, "q")
    if q.shape[0] != 1 or not 0 <= i < q.shape[1]:
        raise ValueError(f"q must be one gradient row and 0 <= i < m = {q.shape[1]}, got shape {q.shape}, i={i!r}")
    return np.concatenate([b[:, 0, i] for b in stream_noise(q, r, draws, rng, batch=batch)])


def element_summands(q: np.ndarray, A: np.ndarray, i: int) -> np.ndarray:
    """The summands of u_i = [q (A^T A - I)]_i as Appendix B groups them (eqs. 42-43): one diagonal summand
    q_i (sum_t a_ti^2 - 1) and, for every l != i and every row t of A, q_l a_tl a_ti (A has N(0, 1/r)
    entries, so no 1/r appears here)."""
    q, A = _as_gradient(q, "q"), _as_gradient(A, "A")
    if q.shape[0] != 1 or A.shape[1] != q.shape[1] or not 0 <= i < q.shape[1]:
        raise ValueError(f"need one row q of length m, A of shape (r, m) and 0 <= i < m; got {q.shape}, {A.shape}, {i}")
    q = q[0]
    others = np.delete(np.arange(q.size), i)
    off = (q[others][None, :] * A[:, others] * A[:, [i]]).ravel()  # q_l a_tl a_ti for t < r, l != i
    return np.concatenate([[q[i] * (np.sum(A[:, i] ** 2) - 1.0)], off])


def _split_row(q: np.ndarray, i: int) -> tuple[float, float]:
    q = _as_gradient(q, "q")
    if q.shape[0] != 1:
        raise ValueError(f"q must be a single gradient row, got shape {q.shape}")
    q = q[0]
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < q.size:
        raise ValueError(f"i must be an index with 0 <= i < m = {q.size}, got {i!r}")
    if not np.any(q):
        raise ValueError("q is the zero vector: the injected noise is identically zero (paper A assumes rows != 0)")
    rest = float(np.sum(q**2) - q[i] ** 2)
    return float(q[i]), max(rest, 0.0)


def element_law_params(q: np.ndarray, i: int, r: int) -> tuple[float, float]:
    """(c, s2) such that u_i = c (X/r - 1) + sqrt(s2 X / r) Z with X ~ chi^2_r, Z ~ N(0, 1) independent.

    This is the exact law of the i-th element u_i of q (A^T A - I): conditionally on the
    i-th column of A, the other columns enter only through a Gaussian (c = q_i,
    s2 = sum_{l != i} q_l^2 / r).  It depends on m only through q.
    """
    c, rest = _split_row(q, i)
    r = check_rank(r, np.asarray(q).size)
    return c, rest / r


def sample_element(q: np.ndarray, i: int, r: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Exact draws of u_i = [q (A^T A - I)]_i in O(1) each, through :func:`element_law_params`."""
    c, s2 = element_law_params(q, i, r)
    x = rng.chisquare(r, draws) / r
    return c * (x - 1.0) + np.sqrt(s2 * x) * rng.standard_normal(draws)


def element_moments(q: np.ndarray, i: int, r: int) -> dict[str, float]:
    """Mean, variance (exact and paper A's approximation), skewness and excess kurtosis of u_i.

    With Y = X/r - 1 (central moments 2/r, 8/r^2, 12/r^2 + 48/r^3) and
    u = c Y + s sqrt(1 + Y) Z:
      E u^2 = c^2 2/r + s2,  E u^3 = c^3 8/r^2 + 6 c s2 / r,
      E u^4 = c^4 (12/r^2 + 48/r^3) + 6 c^2 s2 (2/r + 8/r^2) + 3 s2^2 (1 + 2/r).
    """
    c, s2 = element_law_params(q, i, r)
    m2 = 2 * c**2 / r + s2
    m3 = 8 * c**3 / r**2 + 6 * c * s2 / r
    m4 = c**4 * (12 / r**2 + 48 / r**3) + 6 * c**2 * s2 * (2 / r + 8 / r**2) + 3 * s2**2 * (1 + 2 / r)
    q = np.asarray(q, dtype=np.float64).ravel()
    return {
        "mean": 0.0,
        "var_exact": m2,  # = (||q||^2 + q_i^2) / r, eq. 41 before its approximation
        "var_paper": float(q @ q) / r,  # Lemma 3.1
        "skewness": m3 / m2**1.5,
        "excess_kurtosis": m4 / m2**2 - 3.0,
    }


def limit_excess_kurtosis(r: int) -> float:
    """Excess kurtosis of the law that u_i tends to when q_i / ||q|| -> 0 (e.g. m -> infinity): 6/r."""
    return 6.0 / check_positive("r", r)


def gradient_row(kind: str, m: int, rng: np.random.Generator) -> np.ndarray:
    """A gradient row q of length m: ``uniform`` (all ones), ``gaussian``, ``heavy`` (Student t, 3 d.o.f.) or
    ``spike`` (all ones but q_0 = sqrt(m), so that q_0^2 carries about half of ||q||^2)."""
    if kind == "uniform":
        return np.ones(m)
    if kind == "spike":
        q = np.ones(m)
        q[0] = math.sqrt(m)
        return q
    if kind == "gaussian":
        return rng.standard_normal(m)
    if kind == "heavy":
        return rng.standard_t(3, m)
    raise ValueError(f"unknown gradient kind {kind!r}; choose uniform, gaussian, heavy or spike")
