"""The chapter modules of sections 2-4 at a tiny scale: tables have their columns and the
verdicts follow from the numbers."""

import dataclasses

import numpy as np
import pytest

from lorapriv_utils import s2_checks, s3_checks, s4_checks
from lorapriv_utils.montecarlo import batch_estimate


@pytest.fixture
def small(tiny_scale):
    return dataclasses.replace(
        tiny_scale,
        noise_draws=3000,
        element_draws=20_000,
        m_grid=(16, 256, 1024, 4096),
        r_grid=(1, 2, 4, 8, 16),
        dyn_steps=(10, 40),
        dyn_lrs=4,
    )


def test_batch_estimate():
    rng = np.random.default_rng(0)
    est = batch_estimate(rng.standard_normal(100_000), lambda v: float(np.var(v)), batches=20)
    assert abs(est.z_score(1.0)) < 4 and est.n == 100_000
    with pytest.raises(ValueError, match="batches"):
        batch_estimate(np.ones(10), np.mean, batches=20)


def test_gradient_rows():
    rng = np.random.default_rng(0)
    assert np.array_equal(s3_checks.gradient_row("uniform", 3, rng), np.ones(3))
    assert s3_checks.gradient_row("heavy", 5, rng).shape == (5,)
    with pytest.raises(ValueError, match="unknown gradient kind"):
        s3_checks.gradient_row("zipf", 3, rng)


def test_noise_covariance_closed_form_against_monte_carlo():
    rng = np.random.default_rng(3)
    G = rng.standard_normal((2, 6))
    from lorapriv_utils import noise

    draws = np.concatenate(list(noise.stream_noise(G, 2, 200_000, rng, batch=5000)))
    for p, i, pp, j in [(0, 0, 1, 0), (0, 1, 0, 2), (1, 3, 1, 3)]:
        mc = np.mean(draws[:, p, i] * draws[:, pp, j])
        exact = s3_checks.noise_covariance(G, p, i, pp, j, 2)
        scale = np.sqrt(s3_checks.noise_covariance(G, p, i, p, i, 2) * s3_checks.noise_covariance(G, pp, j, pp, j, 2))
        assert abs(mc - exact) < 0.02 * scale


def test_section3_claims(small):
    eq11 = s3_checks.eq11_table([(2, 16, 2)], small)
    assert bool(eq11["plus_noise_exact"].all()) and (eq11["err_with_printed_sign"] > 0.5).all()
    moments = s3_checks.moment_table(64, [1, 8], "gaussian", small)
    assert set(moments["sampler"]) == {"element", "full matrix"}
    kurt = s3_checks.kurtosis_sweep([16, 4096], [1, 8])
    joint, ranks = s3_checks.joint_structure_table(4, 32, 2, small)
    assert ranks["rank_lora_update"] == 2 and ranks["rank_dpsgd_update"] == 4
    assert ranks["noise_std_ratio_when_gradient_doubles"] == pytest.approx(2.0)
    verdicts = {c.claim_id: c.verdict for c in s3_checks.claims(eq11, moments, kurt, joint, ranks, small)}
    assert verdicts == {
        "A-3.eq11": "qualified",
        "A-3.1-moments": "holds",
        "A-3.1-normal": "fails",
        "A-3.structure": "fails",
    }


def test_section4_claims(small):
    table = s4_checks.distance_table(list(small.m_grid), list(small.r_grid))
    assert {"tv", "kolmogorov", "bound_eq46", "implied_c_d"} <= set(table.columns)
    limits = s4_checks.limit_table([1, 4, 16])
    assert limits["tv_limit"].is_monotonic_decreasing
    fits = s4_checks.rate_fits(table)
    assert set(fits["in"]) == {"m", "r"}
    mc = s4_checks.monte_carlo_crosscheck([(64, 2)], small)
    assert (mc["z"].abs() < 4.5).all()
    dep = s4_checks.summand_dependence(small)
    verdicts = {c.claim_id: c.verdict for c in s4_checks.claims(table, limits, fits, mc, dep, small)}
    assert verdicts == {"A-4.2": "fails", "A-4.2-rank": "holds", "A-4.3": "fails", "A-B.eq43-independence": "fails"}


def test_section2_claims(small):
    drift = s2_checks.drift_table(small, problems=("least_squares",))
    assert bool(drift["eq6_exact"][drift["eta_L"] < 1].all())
    eq10 = s2_checks.eq10_table(small)
    assert bool(eq10["eq10_exact"].all())
    adversarial = s2_checks.adversarial_table(small, angles=(0.5,), lrs=(0.1,))
    rules = s2_checks.rules_table(small, ranks=(2,))
    assert set(rules.columns) >= {"full", "lora", "lora_frozen_a", "flora"}
    verdicts = {c.claim_id: c.verdict for c in s2_checks.claims(drift, eq10, adversarial, small)}
    assert verdicts == {"A-2.eq10": "holds", "A-2.1-bound": "fails", "A-2.eq9": "holds"}


def test_drift_thresholds_interpolate_in_log_log():
    import pandas as pd

    drift = pd.DataFrame({"problem": ["p"] * 3, "eta_L": [0.1, 1.0, 10.0], "drift": [0.001, 0.1, 10.0]})
    row = s2_checks.drift_thresholds(drift).iloc[0]
    assert row["eta_L_at_0.01"] == pytest.approx(10**-0.5, rel=1e-4)
    assert row["eta_L_at_0.1"] == pytest.approx(1.0)
