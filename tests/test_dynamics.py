import numpy as np
import pytest

from lorapriv_utils.theory import dynamics as dyn


@pytest.fixture(params=sorted(dyn.PROBLEMS))
def problem(request):
    return dyn.PROBLEMS[request.param](4, 12, 64, np.random.default_rng(0))


def test_gradients_are_exact(problem):
    rng = np.random.default_rng(1)
    W = problem.w0 + 0.1 * rng.standard_normal(problem.w0.shape)
    idx = np.arange(problem.samples)
    _, G = problem.grad(W, idx)
    E = rng.standard_normal(W.shape)
    h = 1e-6
    numeric = (problem.grad(W + h * E, idx)[0] - problem.grad(W - h * E, idx)[0]) / (2 * h)
    assert np.sum(G * E) == pytest.approx(numeric, rel=1e-5, abs=1e-8)


def test_frozen_a_training_is_eq10(problem):
    run = dyn.train(problem, "lora_frozen_a", 0.05, 30, 3, seed=4, record_grads=True)
    predicted = problem.w0 - 0.05 * (np.sum(run.grads, axis=0) @ run.a0.T) @ run.a0
    assert np.allclose(run.w_final, predicted, atol=1e-12)


def test_lora_factors_follow_the_representation_of_eq6(problem):
    lr = 0.05
    run = dyn.train(problem, "lora", lr, 40, 3, seed=2, record_grads=True)
    history, f_b = dyn.f_recursion(run.grads, lr)
    assert np.allclose(run.a0 @ (np.eye(problem.m) + lr * history[-1]), run.a_final, atol=1e-10)
    assert np.allclose(lr * f_b @ run.a0.T, run.b_final, atol=1e-10)


def test_rules_share_batches_and_a0():
    problem = dyn.least_squares(4, 12, 64, np.random.default_rng(0))
    a = dyn.train(problem, "lora", 0.01, 5, 2, seed=9)
    b = dyn.train(problem, "lora_frozen_a", 0.01, 5, 2, seed=9)
    assert np.array_equal(a.a0, b.a0)
    assert a.losses[0] == b.losses[0]


def test_full_fine_tuning_reduces_the_loss():
    problem = dyn.least_squares(4, 12, 256, np.random.default_rng(0))
    run = dyn.train(problem, "full", 0.5, 200, 2, seed=1)
    assert run.losses[-1] < 0.5 * run.losses[0]


def test_flora_resamples_and_still_trains():
    problem = dyn.least_squares(4, 12, 256, np.random.default_rng(0))
    run = dyn.train(problem, "flora", 0.5, 300, 4, seed=1)
    assert run.losses[-1] < 0.5 * run.losses[0]


def test_training_is_deterministic():
    problem = dyn.mlp_layer(4, 12, 64, np.random.default_rng(0))
    a = dyn.train(problem, "lora", 0.05, 10, 2, seed=3)
    b = dyn.train(problem, "lora", 0.05, 10, 2, seed=3)
    assert np.array_equal(a.w_final, b.w_final)


def test_bound_and_partial_sums():
    grads = [np.ones((2, 2)), -np.ones((2, 2)), np.ones((2, 2))]
    assert dyn.partial_sum_bound(grads) == pytest.approx(2.0)
    assert dyn.f_a_bound(0.1, 2.0, 1) == pytest.approx(0.1 * 4)
    assert dyn.f_a_bound(1.0, 2.0, 5) == np.inf


def test_rotating_gradients_have_bounded_partial_sums_but_break_the_bound():
    grads = dyn.rotating_gradients(4, 10, 300, L=1.0, angle=0.5)
    assert dyn.partial_sum_bound(grads) == pytest.approx(1.0)
    history, _ = dyn.f_recursion(grads, 0.1)
    assert np.linalg.norm(history[-1], 2) > 10 * dyn.f_a_bound(0.1, 1.0, 300)


def test_relative_drift():
    w0 = np.zeros((2, 2))
    assert dyn.relative_drift(np.ones((2, 2)) * 1.1, np.ones((2, 2)), w0) == pytest.approx(0.1)


def test_divergence_is_reported():
    problem = dyn.least_squares(4, 12, 64, np.random.default_rng(0))
    with pytest.raises(FloatingPointError, match="lower lr"), np.errstate(all="ignore"):
        dyn.train(problem, "full", 1e6, 500, 2, seed=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"rule": "adam"}, "unknown rule"), ({"r": 0}, "1 <= r <= m"), ({"r": 13}, "1 <= r <= m"), ({"lr": -1.0}, "lr")],
)
def test_bad_arguments(kwargs, match):
    problem = dyn.least_squares(4, 12, 64, np.random.default_rng(0))
    args = {"rule": "lora", "lr": 0.1, "steps": 2, "r": 2, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        dyn.train(problem, **args)
    with pytest.raises(ValueError, match="at least one"):
        dyn.f_recursion([], 0.1)


def test_optimiser_hook_keeps_state_per_matrix():
    problem = dyn.least_squares(4, 12, 64, np.random.default_rng(0))
    plain = dyn.train(problem, "lora", 0.01, 20, 2, seed=1)
    momentum = dyn.train(problem, "lora", 0.01, 20, 2, seed=1, make_optimizer=dyn.Momentum)
    assert not np.allclose(plain.w_final, momentum.w_final)
    zero_beta = dyn.train(problem, "lora", 0.01, 20, 2, seed=1, make_optimizer=lambda lr: dyn.Momentum(lr, beta=0.0))
    assert np.allclose(plain.w_final, zero_beta.w_final)


def test_flora_records_its_fresh_projections():
    problem = dyn.PROBLEMS["least_squares"](4, 16, 32, np.random.default_rng(0))
    run = dyn.train(problem, "flora", 0.05, 5, 2, seed=1, record_grads=True)
    assert len(run.projections) == len(run.grads) == 5
    assert not np.array_equal(run.projections[0], run.projections[1]) and run.projections[0].shape == (2, 16)
    assert dyn.train(problem, "flora", 0.05, 5, 2, seed=1).projections == []
