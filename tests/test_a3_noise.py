"""Chapter a3_noise (paper A, section 3) at a tiny scale: tables and verdicts."""

import numpy as np
import pytest
from conftest import registered

from lorapriv_utils.chapters import a3_noise
from lorapriv_utils.theory import noise


def test_noise_covariance_closed_form_against_monte_carlo():
    rng = np.random.default_rng(3)
    G = rng.standard_normal((2, 6))
    draws = np.concatenate(list(noise.stream_noise(G, 2, 200_000, rng, batch=5000)))
    for p, i, pp, j in [(0, 0, 1, 0), (0, 1, 0, 2), (1, 3, 1, 3)]:
        mc = np.mean(draws[:, p, i] * draws[:, pp, j])
        exact = a3_noise.noise_covariance(G, p, i, pp, j, 2)
        scale = np.sqrt(a3_noise.noise_covariance(G, p, i, p, i, 2) * a3_noise.noise_covariance(G, pp, j, pp, j, 2))
        assert abs(mc - exact) < 0.02 * scale


def test_section3_claims(small):
    eq11 = a3_noise.eq11_table([(2, 16, 2)], small)
    assert bool(eq11["plus_noise_exact"].all()) and (eq11["err_with_printed_sign"] > 0.5).all()
    moments = a3_noise.moment_tables(64, [("gaussian", [1, 8], True), ("spike", [8], False)], small)
    assert set(moments["sampler"]) == {"element", "full matrix"} and set(moments["q"]) == {"gaussian", "spike"}
    kurt = a3_noise.kurtosis_sweep([16, 4096], [1, 8])
    joint, ranks = a3_noise.joint_structure_table(4, 32, 2, small)
    assert ranks["rank_lora_update"] == 2 and ranks["rank_dpsgd_update"] == 4
    assert ranks["noise_std_ratio_when_gradient_doubles"] == pytest.approx(2.0)
    wishart = a3_noise.wishart_table([(8, 3), (3, 8)], small)
    assert wishart["rank"].tolist() == [3, 3]
    trajectory = a3_noise.trajectory_noise_table(small, m=32)
    frozen = trajectory[trajectory["rule"] == "lora_frozen_a"]
    assert (frozen["mean_z2"] < 1 - 4 * frozen["mean_z2_se"]).all()  # A frozen: the lemma does not apply
    claims = a3_noise.claims(eq11, moments, kurt, joint, ranks, small, wishart=wishart, trajectory=trajectory)
    assert {c.claim_id for c in claims} <= registered(a3_noise.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    numbers = a3_noise.key_numbers(eq11, kurt, ranks, trajectory)
    assert numbers["a3_noise_frozen_z2_max"] < 1
    assert numbers["a3_noise_rank_lora"] == 2 and numbers["a3_noise_rank_dpsgd"] == 4
    assert numbers["a3_noise_kurtosis_r_min"] == pytest.approx(6.0, rel=0.05)  # 6/r at r = 1, m = 4096
    assert verdicts == {
        "A-3.eq11": "qualified",
        "A-3.1-moments": "qualified",  # the spike row breaks the approximation ||q||^2/r
        "A-3.1-normal": "fails",
        "A-3.structure": "fails",
        "A-3.wishart": "qualified",  # singular when r < m
        "A-3.flora": "qualified",  # holds for FLoRA, not along training with A frozen
    }
