import math

import numpy as np
import pytest

from lorapriv_utils.theory.montecarlo import Estimate, batch_estimate, mc_mean, rng_for


def test_estimate_z_score_and_interval():
    est = Estimate(mean=1.0, stderr=0.5, n=100)
    assert est.z_score(0.0) == pytest.approx(2.0)
    lo, hi = est.interval(0.95)
    assert lo == pytest.approx(1.0 - 1.959964 * 0.5, rel=1e-6) and hi == pytest.approx(1.0 + 1.959964 * 0.5, rel=1e-6)
    assert est.agrees_with(2.9) and not est.agrees_with(3.1)


def test_estimate_with_zero_error():
    est = Estimate(mean=1.0, stderr=0.0, n=10)
    assert est.z_score(1.0) == 0.0
    assert est.z_score(0.0) == math.inf and est.z_score(2.0) == -math.inf
    with pytest.raises(ValueError, match="level"):
        est.interval(1.5)


def test_mc_mean_recovers_a_known_mean_with_a_correct_error_bar():
    est = mc_mean(lambda rng, size: rng.normal(3.0, 2.0, size), 200_000, rng_for(1, 2), chunk=30_000)
    assert est.n == 200_000
    assert est.stderr == pytest.approx(2.0 / math.sqrt(200_000), rel=0.02)
    assert abs(est.z_score(3.0)) < 4


def test_mc_mean_does_not_depend_on_chunking():
    def sampler(rng, size):
        return rng.standard_normal(size) ** 2

    a = mc_mean(sampler, 10_000, rng_for(3), chunk=10_000)
    b = mc_mean(sampler, 10_000, rng_for(3), chunk=777)
    assert a.mean == pytest.approx(b.mean, rel=1e-12)
    assert a.stderr == pytest.approx(b.stderr, rel=1e-9)


def test_mc_mean_is_deterministic():
    def sampler(rng, size):
        return rng.exponential(size=size)

    assert mc_mean(sampler, 5000, rng_for(9, 1)) == mc_mean(sampler, 5000, rng_for(9, 1))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n": 1}, "at least 2"), ({"n": 10, "chunk": 0}, "chunk")],
)
def test_mc_mean_rejects_bad_sizes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mc_mean(lambda rng, size: rng.random(size), rng=rng_for(0), **kwargs)


def test_mc_mean_rejects_a_bad_sampler():
    with pytest.raises(ValueError, match="shape"):
        mc_mean(lambda rng, size: rng.random((size, 2)), 10, rng_for(0))
    with pytest.raises(ValueError, match="non-finite"):
        mc_mean(lambda rng, size: np.full(size, np.nan), 10, rng_for(0))


def test_rng_streams_are_independent_of_order_and_distinct():
    first = rng_for(5, 1, 2).random(3)
    rng_for(5, 9).random(100)
    assert np.array_equal(first, rng_for(5, 1, 2).random(3))
    assert not np.array_equal(first, rng_for(5, 2, 1).random(3))


@pytest.mark.parametrize("keys", [(-1,), (1.5,), (True,)])
def test_rng_for_rejects_bad_keys(keys):
    with pytest.raises(ValueError, match="non-negative integers"):
        rng_for(1, *keys)


def test_batch_estimate():
    rng = np.random.default_rng(0)
    est = batch_estimate(rng.standard_normal(100_000), lambda v: float(np.var(v)), batches=20)
    assert abs(est.z_score(1.0)) < 4 and est.n == 100_000
    with pytest.raises(ValueError, match="batches"):
        batch_estimate(np.ones(10), np.mean, batches=20)
