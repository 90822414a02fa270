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
