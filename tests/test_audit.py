"""The empirical privacy audit: Clopper-Pearson bounds and the epsilon lower bound, on a Gaussian mechanism."""

import math

import numpy as np
import pytest

from lorapriv_utils.theory import audit


def test_clopper_pearson():
    low, high = audit.clopper_pearson(0, 100, 0.95)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 100), rel=1e-9)
    low, high = audit.clopper_pearson(50, 100)
    assert low < 0.5 < high
    with pytest.raises(ValueError, match="successes"):
        audit.clopper_pearson(5, 4)
    with pytest.raises(ValueError, match="confidence"):
        audit.clopper_pearson(1, 4, 1.0)


@pytest.mark.parametrize(
    ("counts", "match"), [((1, 0, 5, 5), "at least 2"), ((-1, 3, 3, 3), "count"), ((2, 2, 2, 2.5), "count")]
)
def test_bad_counts_are_refused(counts, match):
    with pytest.raises(ValueError, match=match):
        audit.epsilon_lower_bound(*counts)


def test_a_useless_test_proves_nothing():
    assert audit.epsilon_lower_bound(50, 50, 50, 50).epsilon_low == 0.0


@pytest.mark.slow
def test_the_audit_stays_below_the_true_epsilon_and_approaches_it():
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu, delta = 2.0, 1e-3  # Gaussian mechanism: score ~ N(mu, 1) with the target in, N(0, 1) without
    true_eps = pld.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=1e-4).get_epsilon_for_delta(delta)
    rng = np.random.default_rng(0)
    bounds = []
    for n in (200, 2000, 20000):
        result = audit.audit_scores(rng.normal(mu, 1, n), rng.normal(0, 1, n), delta=delta)
        assert result.epsilon_low <= true_eps
        bounds.append(result.epsilon_low)
    assert bounds[0] < bounds[1] < bounds[2] and bounds[2] > 0.25 * true_eps
    assert math.isfinite(true_eps)


def test_threshold_counts_match_a_direct_count():
    rng = np.random.default_rng(1)
    s_in, s_out = rng.integers(0, 6, 40).astype(float), rng.integers(0, 6, 30).astype(float)
    tp, fp = audit.threshold_counts(s_in, s_out)
    for k, t in enumerate(np.unique(np.concatenate([s_in, s_out]))):
        assert (tp[k], fp[k]) == (np.sum(s_in >= t), np.sum(s_out >= t))
    with pytest.raises(ValueError, match="finite"):
        audit.threshold_counts([0.0, np.nan], [1.0, 2.0])


@pytest.mark.slow
def test_the_tv_bound_stays_below_the_true_distance_and_approaches_it():
    from scipy import stats

    mu = 1.5
    true_tv = 2 * stats.norm.cdf(mu / 2) - 1  # TV(N(mu, 1), N(0, 1))
    rng = np.random.default_rng(2)
    bounds = [audit.tv_lower_bound(rng.normal(mu, 1, n), rng.normal(0, 1, n)) for n in (200, 20000)]
    assert 0 < bounds[0] < bounds[1] <= true_tv and bounds[1] > 0.9 * true_tv
    assert audit.tv_lower_bound(rng.normal(0, 1, 500), rng.normal(0, 1, 500)) < 0.1


def test_the_one_run_audit_stays_below_the_true_epsilon_and_grows_with_canaries():
    """Randomized response with known epsilon: the one-run bound must stay below it and approach it."""
    eps_true = 2.0
    rng = np.random.default_rng(3)
    bounds = []
    for m in (200, 2000, 20000):
        included = rng.random(m) < 0.5
        keep = rng.random(m) < 1 / (1 + math.exp(-eps_true))  # each answer right with prob e^eps/(1+e^eps)
        scores = np.where(keep == included, 1.0, 0.0) + 1e-9 * rng.random(m)
        r, v = audit.one_run_guesses(scores, included, m // 2)
        bounds.append(audit.one_run_epsilon_lower_bound(m, r, v, delta=0.0))
    assert all(b <= eps_true for b in bounds)
    assert bounds[0] < bounds[2] and bounds[2] > 0.85 * eps_true


def test_the_one_run_audit_of_a_gaussian_mechanism():
    """Canaries shift a Gaussian score by mu: the (eps, delta) of the Gaussian mechanism bounds the audit."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu, delta, m = 3.0, 1e-5, 5000
    true_eps = pld.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=1e-4).get_epsilon_for_delta(delta)
    rng = np.random.default_rng(4)
    included = rng.random(m) < 0.5
    scores = rng.normal(0, 1, m) + mu * included
    r, v = audit.one_run_guesses(scores, included, 200)
    bound = audit.one_run_epsilon_lower_bound(m, r, v, delta=delta)
    assert 0.5 < bound <= true_eps


def test_the_one_run_p_value_and_bad_inputs():
    assert audit.one_run_p_value(100, 10, 5, 0.0, 0.0) == pytest.approx(0.623046875)  # P[Bin(10, 1/2) >= 5]
    assert audit.one_run_p_value(100, 10, 5, 0.0, 1e-3) > audit.one_run_p_value(100, 10, 5, 0.0, 0.0)
    assert audit.one_run_epsilon_lower_bound(100, 20, 10) == 0.0  # chance level proves nothing
    with pytest.raises(ValueError, match="m >= 2"):
        audit.one_run_epsilon_lower_bound(1, 1, 1)
    with pytest.raises(ValueError, match="integer"):
        audit.one_run_epsilon_lower_bound(10, 4, 2.5)
    with pytest.raises(ValueError, match="guesses_each_side"):
        audit.one_run_guesses(np.zeros(4), np.zeros(4, bool), 3)
