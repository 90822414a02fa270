"""LoRA training dynamics on small exact problems (paper A, section 2; Theorem 2.1, eqs. 4-10).

Four update rules share one training loop (:func:`train`), each moving the effective
weight W_eff (n x m) of one linear layer:

* ``full``: plain SGD on W;
* ``lora``: W_eff = W0 + B A, SGD on both factors (eqs. 4-5), B = 0 and A ~ N(0, 1/r) at start;
* ``lora_frozen_a``: the same with A frozen at A0 (eqs. 9-10): W moves by -eta G A0^T A0;
* ``flora``: A resampled every step (FLoRA), so W moves by -eta G A_t^T A_t.

Gradients are exact; mini-batches are drawn from a seeded generator that every rule
shares, so differences between rules come from the rules alone.  The optimiser is plain
SGD as in the paper; :class:`SGD` is the hook for another one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .noise import check_rank, sample_projection

RULES = ("full", "lora", "lora_frozen_a", "flora")


@dataclass(frozen=True)
class Problem:
    """A loss of the weight W (n x m) of one linear layer, with its exact gradient on a mini-batch."""

    name: str
    n: int
    m: int
    samples: int
    grad: Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]]  # (W, batch indices) -> (loss, dL/dW)
    w0: np.ndarray


def least_squares(n: int, m: int, samples: int, rng: np.random.Generator, noise: float = 0.1) -> Problem:
    """Linear regression Y = X W*^T + noise, loss 1/(2b) ||X W^T - Y||^2."""
    X = rng.standard_normal((samples, m)) / math.sqrt(m)
    w_star = rng.standard_normal((n, m))
    Y = X @ w_star.T + noise * rng.standard_normal((samples, n))

    def grad(W: np.ndarray, idx: np.ndarray) -> tuple[float, np.ndarray]:
        R = X[idx] @ W.T - Y[idx]
        return 0.5 * float(np.sum(R**2)) / idx.size, R.T @ X[idx] / idx.size

    return Problem("least squares", n, m, samples, grad, np.zeros((n, m)))


def logistic_regression(n: int, m: int, samples: int, rng: np.random.Generator) -> Problem:
    """Softmax regression with n classes, labels drawn from a random teacher."""
    X = rng.standard_normal((samples, m)) / math.sqrt(m)
    teacher = 3.0 * rng.standard_normal((n, m))
    logits = X @ teacher.T
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(n, p=p) for p in P])
    onehot = np.eye(n)[labels]

    def grad(W: np.ndarray, idx: np.ndarray) -> tuple[float, np.ndarray]:
        z = X[idx] @ W.T
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        loss = -float(np.mean(np.log(p[np.arange(idx.size), labels[idx]] + 1e-300)))
        return loss, (p - onehot[idx]).T @ X[idx] / idx.size

    return Problem("logistic regression", n, m, samples, grad, np.zeros((n, m)))


def mlp_layer(n: int, m: int, samples: int, rng: np.random.Generator, out: int = 4) -> Problem:
    """The first layer W (n x m) of a two-layer ReLU network with a frozen random head, squared loss."""
    X = rng.standard_normal((samples, m)) / math.sqrt(m)
    head = rng.standard_normal((out, n)) / math.sqrt(n)
    teacher = rng.standard_normal((n, m))
    Y = np.maximum(X @ teacher.T, 0) @ head.T
    w0 = rng.standard_normal((n, m))  # a "pre-trained" layer that LoRA adapts

    def grad(W: np.ndarray, idx: np.ndarray) -> tuple[float, np.ndarray]:
        H = X[idx] @ W.T
        R = np.maximum(H, 0) @ head.T - Y[idx]
        dH = (R @ head) * (H > 0)
        return 0.5 * float(np.sum(R**2)) / idx.size, dH.T @ X[idx] / idx.size

    return Problem("MLP layer", n, m, samples, grad, w0)


PROBLEMS = {"least_squares": least_squares, "logistic": logistic_regression, "mlp": mlp_layer}


@dataclass
class SGD:
    """Plain SGD, the paper's optimiser.

    Another optimiser plugs into :func:`train` through ``make_optimizer``: a callable that
    takes the learning rate and returns an object with ``step(param, grad) -> new param``.
    :func:`train` makes one instance per trained matrix, so a stateful optimiser (momentum,
    Adam) keeps its state per matrix.
    """

    lr: float

    def step(self, param: np.ndarray, grad: np.ndarray) -> np.ndarray:
        return param - self.lr * grad


@dataclass
class Momentum(SGD):
    """Heavy-ball momentum, an example of the optimiser hook (not used by paper A)."""

    beta: float = 0.9
    velocity: np.ndarray | None = None

    def step(self, param: np.ndarray, grad: np.ndarray) -> np.ndarray:
        self.velocity = grad if self.velocity is None else self.beta * self.velocity + grad
        return param - self.lr * self.velocity


@dataclass
class Trajectory:
    rule: str
    w_final: np.ndarray
    losses: list[float]
    grads: list[np.ndarray] = field(repr=False)  # dL/dW_eff at every step (kept when record_grads)
    a0: np.ndarray | None = None
    a_final: np.ndarray | None = None
    b_final: np.ndarray | None = None
    projections: list[np.ndarray] = field(default_factory=list, repr=False)  # FLoRA's A_t (kept when record_grads)


def train(
    problem: Problem,
    rule: str,
    lr: float,
    steps: int,
    r: int,
    seed: int,
    batch_size: int = 32,
    record_grads: bool = False,
    make_optimizer: Callable[[float], SGD] = SGD,
) -> Trajectory:
    """Run ``steps`` steps of ``rule`` on ``problem``; batches and A0 depend only on ``seed``.

    The optimiser is plain SGD unless ``make_optimizer`` says otherwise (see :class:`SGD`).
    """
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    r = check_rank(r, problem.m)
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    batch_rng = np.random.default_rng([seed, 1])
    a_rng = np.random.default_rng([seed, 2])
    a0 = sample_projection(a_rng, r, problem.m)
    opt_w, opt_a, opt_b = make_optimizer(lr), make_optimizer(lr), make_optimizer(lr)
    W = problem.w0.copy()
    A, B = a0.copy(), np.zeros((problem.n, r))
    losses, grads, projections = [], [], []
    for _ in range(steps):
        idx = batch_rng.choice(problem.samples, size=min(batch_size, problem.samples), replace=False)
        w_eff = W + B @ A if rule in ("lora", "lora_frozen_a") else W
        loss, G = problem.grad(w_eff, idx)
        if not np.all(np.isfinite(G)):
            raise FloatingPointError(f"{rule}: gradient diverged at step {len(losses)}; lower lr (now {lr})")
        losses.append(loss)
        if record_grads:
            grads.append(G)
        if rule == "full":
            W = opt_w.step(W, G)
        elif rule == "lora":
            A, B = opt_a.step(A, B.T @ G), opt_b.step(B, G @ A.T)  # eqs. 4-5, simultaneous
        elif rule == "lora_frozen_a":
            B = opt_b.step(B, G @ A.T)
        else:
            A_t = sample_projection(a_rng, r, problem.m)
            if record_grads:
                projections.append(A_t)
            W = opt_w.step(W, (G @ A_t.T) @ A_t)
    w_final = W + B @ A if rule in ("lora", "lora_frozen_a") else W
    return Trajectory(rule, w_final, losses, grads, a0, A, B, projections)


def f_recursion(grads: list[np.ndarray], lr: float) -> tuple[list[np.ndarray], np.ndarray]:
    """f_A(t) (m x m) for t = 0..T and f_B(T) from eq. 6's representation A^t = A0 (I + eta f_A(t)),
    B^t = eta f_B(t) A0^T, for LoRA's SGD on the gradient sequence ``grads``.

    Substituting the representation into eqs. 4-5 gives f_A(0) = f_B(0) = 0 and
      f_B(t+1) = f_B(t) - G_t (I + eta f_A(t)^T),   f_A(t+1) = f_A(t) - eta f_B(t)^T G_t.
    """
    if not grads:
        raise ValueError("grads must hold at least one gradient")
    n, m = grads[0].shape
    f_a, f_b = np.zeros((m, m)), np.zeros((n, m))
    history = [f_a]
    for G in grads:
        f_a, f_b = f_a - lr * f_b.T @ G, f_b - G - lr * G @ f_a.T
        history.append(f_a)
    return history, f_b


def partial_sum_bound(grads: list[np.ndarray]) -> float:
    """L of Theorem 2.1: the largest Frobenius norm of a partial sum of the gradients."""
    return float(max(np.linalg.norm(s) for s in np.cumsum(np.asarray(grads), axis=0)))


def f_a_bound(lr: float, L: float, t: int) -> float:
    """Theorem 2.1's bound on ||f_A(t)||_2: eta L^2 (1 - (eta^2 L^2)^t) / (1 - eta^2 L^2), for eta L < 1."""
    x = (lr * L) ** 2
    if x >= 1:
        return math.inf
    return lr * L**2 * (1 - x**t) / (1 - x)


def rotating_gradients(n: int, m: int, steps: int, L: float, angle: float, seed: int = 0) -> list[np.ndarray]:
    """An adversarial gradient sequence for Theorem 2.1: the partial sums S_T = L u (cos(T angle) a + sin(T angle) b)^T
    rotate on a circle of radius L (so ||S_T|| = L for every T), and G_t = S_{t+1} - S_t."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    basis, _ = np.linalg.qr(rng.standard_normal((m, 2)))
    a, b = basis[:, 0], basis[:, 1]
    sums = [L * np.outer(u, math.cos(k * angle) * a + math.sin(k * angle) * b) for k in range(steps + 1)]
    sums[0] = np.zeros((n, m))
    return [sums[k + 1] - sums[k] for k in range(steps)]


def relative_drift(w_lora: np.ndarray, w_frozen: np.ndarray, w0: np.ndarray) -> float:
    """||W_LoRA - W_frozen||_F / ||W_frozen - W0||_F: how far LoRA is from eq. 9's frozen-A approximation."""
    return float(np.linalg.norm(w_lora - w_frozen) / np.linalg.norm(w_frozen - w0))
