"""Paper B's noisy variants (theory.noisy): the laws behind M1 and M2 and the privacy they give."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy import stats

from lorapriv_utils.theory import noisy, wishart
from lorapriv_utils.theory.montecarlo import rng_for


@pytest.mark.slow
def test_gauss_delta_matches_the_closed_form_and_vanishes_at_zero():
    mus = np.array([0.0, 0.3, 1.0, 3.0])
    got = noisy.gauss_delta(0.7, mus)
    assert got[0] == 0.0
    ref = [
        pld.from_gaussian_mechanism(1 / m, value_discretization_interval=1e-5).get_delta_for_epsilon(0.7)
        for m in mus[1:]
    ]
    np.testing.assert_allclose(got[1:], ref, rtol=1e-3)


def test_gaussian_epsilon_matches_dp_accounting_and_composes_as_sqrt_steps():
    ref = pld.from_gaussian_mechanism(1 / 0.8, value_discretization_interval=1e-4).get_epsilon_for_delta(1e-5)
    assert noisy.gaussian_epsilon(1e-5, 0.8) == pytest.approx(ref, rel=1e-3)
    assert noisy.gaussian_epsilon(1e-5, 0.5, steps=16) == pytest.approx(noisy.gaussian_epsilon(1e-5, 2.0), rel=1e-9)


def test_epsilon_at_edges():
    assert noisy.epsilon_at(0.5, lambda e: 0.1) == 0.0
    assert math.isinf(noisy.epsilon_at(1e-5, lambda e: 0.1, eps_max=10))
    with pytest.raises(ValueError, match="delta"):
        noisy.epsilon_at(0.0, lambda e: 0.1)


def test_ratio_from_real_matrices_follows_the_beta_law_with_mean_r_over_d():
    beta = wishart.sensitivity_ratio(40, 5, 3000, rng_for(1))
    law = noisy.ratio_law(40, 5)
    assert law.mean() == pytest.approx(5 / 40)
    assert stats.kstest(beta, law.cdf).pvalue > 1e-3
    assert abs(beta.mean() - 5 / 40) < 4 * beta.std() / math.sqrt(beta.size)


@pytest.mark.parametrize(
    "call", [lambda: noisy.ratio_law(8, 8), lambda: wishart.sensitivity_ratio(8, 9, 3, rng_for(0))]
)
def test_ratio_needs_a_rank_below_the_dimension(call):
    with pytest.raises(ValueError, match="r = "):
        call()


def test_m2_delta_is_the_gaussian_average_over_the_ratio():
    d, r, mu = 50, 4, 2.0
    beta = wishart.sensitivity_ratio(d, r, 4000, rng_for(2))
    for eps in (0.0, 1.0):
        vals = noisy.gauss_delta(eps, np.sqrt(3 * beta) * mu)
        se = vals.std(ddof=1) / math.sqrt(vals.size)
        assert abs(float(noisy.m2_delta(eps, mu, d, r, steps=3)[0]) - vals.mean()) < 4 * se


def test_m2_amplifies_and_full_rank_gives_the_noise_alone():
    eps = [0.5, 1.0, 2.0]
    alone = noisy.gauss_delta(np.array(eps), 1.0)
    np.testing.assert_allclose(noisy.m2_delta(eps, 1.0, 16, 16), alone, rtol=1e-12)
    assert (noisy.m2_delta(eps, 1.0, 768, 8) < 0.2 * alone).all()


def test_m2_pld_is_pessimistic_and_close_to_the_quadrature_at_one_step():
    quad = noisy.epsilon_at(1e-5, lambda e: float(noisy.m2_delta(e, 1.0, 768, 16)[0]))
    fresh = noisy.m2_fresh_epsilon(1e-5, 1.0, 768, 16)
    assert quad <= fresh <= 1.02 * quad


def test_m2_fresh_a_composes_better_than_a_frozen_a():
    frozen = noisy.epsilon_at(1e-5, lambda e: float(noisy.m2_delta(e, 1.0, 768, 8, steps=50)[0]))
    fresh = noisy.m2_fresh_epsilon(1e-5, 1.0, 768, 8, steps=50)
    alone = noisy.gaussian_epsilon(1e-5, 1.0, steps=50)
    assert fresh < frozen < alone


def test_m1_norm_law_has_mean_one_plus_d_plus_one_over_r_and_matches_real_matrices():
    d, r = 30, 6
    fast = noisy.m1_norm_samples(d, r, 20000, rng_for(3))
    assert abs(fast.mean() - (1 + (d + 1) / r)) < 4 * fast.std() / math.sqrt(fast.size)
    direct = noisy.m1_norm_samples_direct(d, r, 3000, rng_for(4))
    assert stats.ks_2samp(fast, direct).pvalue > 1e-3


def test_m1_published_a_is_less_private_than_the_noise_alone():
    norms2 = noisy.m1_norm_samples(768, 16, 20000, rng_for(5))
    mean, se = noisy.m1_released_delta(1.0, 1.0, norms2)
    assert mean - 4 * se > float(noisy.gauss_delta(1.0, 1.0))


def test_m1_loss_is_a_likelihood_ratio():
    # E_P[exp(-L)] = 1 for any pair of laws with the same support, and the mean loss (a KL divergence) is >= 0
    pair = noisy.M1Pair(20, 3, 0.9, 1.5)
    losses = noisy.m1_secret_losses(pair, 20000, rng_for(6))
    w = np.exp(-losses)
    assert abs(w.mean() - 1) < 4 * w.std() / math.sqrt(w.size)
    assert losses.mean() > 0


def test_m1_loss_representation_matches_real_matrices():
    pair = noisy.M1Pair(24, 4, 0.95, 1.0)
    a = pair.losses(*pair.sample(2000, rng_for(7)))
    b = pair.losses(*pair.sample_direct(2000, rng_for(8)))
    assert stats.ks_2samp(a, b).pvalue > 1e-3


@pytest.mark.slow
def test_m1_secret_a_amplifies_at_small_rank_and_not_at_huge_rank():
    eps = 1.0
    small = noisy.m1_secret_losses(noisy.M1Pair(64, 4, 0.99, 1.0), 20000, rng_for(9))
    huge = noisy.m1_secret_losses(noisy.M1Pair(64, 10**6, 0.99, 1.0), 20000, rng_for(10))
    alone = float(noisy.gauss_delta(eps, 1.0))
    m, se = wishart.hockey_stick_mc(eps, small)
    assert m + 4 * se < alone
    m, se = wishart.hockey_stick_mc(eps, huge)
    assert abs(m - alone) < 4 * se


def test_subsampled_gaussian_delta_matches_dp_accounting():
    for sigma, q, eps in [(1.0, 0.02, 0.5), (0.7, 0.1, 1.0), (2.0, 1.0, 0.3)]:
        direct = pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-4)
        exact = noisy.subsampled_gaussian_delta(eps, 1 / sigma, q)
        assert exact <= direct.get_delta_for_epsilon(eps) <= exact * 1.05 + 1e-15  # PLD pessimistic, and close


def test_compressed_accounting_at_full_rank_is_plain_subsampled_dp_sgd():
    plain = pld.from_gaussian_mechanism(0.8, sampling_prob=0.05, value_discretization_interval=1e-3).self_compose(30)
    assert noisy.m2_subsampled_epsilon(1e-5, 0.8, 0.05, 30, 16, 16) == pytest.approx(
        plain.get_epsilon_for_delta(1e-5), rel=1e-12
    )


@pytest.mark.slow
def test_compressed_accounting_is_pessimistic_and_close_to_the_quadrature_at_one_step():
    for sigma, q, eps in [(0.5, 0.02, 2.0), (1.0, 0.2, 0.3)]:
        exact = noisy.m2_subsampled_delta_exact(eps, sigma, q, 64, 8)
        bound = noisy.m2_subsampled_pld(sigma, q, 64, 8, bins=200).get_delta_for_epsilon(eps)
        assert exact <= bound <= 1.25 * exact
        assert exact < noisy.subsampled_gaussian_delta(eps, 1 / sigma, q)  # the projection amplifies


@pytest.mark.slow
def test_compressed_accounting_without_sampling_is_the_symmetric_m2_pld():
    # q = 1: the mixture of subsampled Gaussians is M2's mixture of Gaussians (two roundings of one law)
    a = noisy.m2_subsampled_epsilon(1e-5, 1.0, 1.0, 20, 32, 4, bins=200)
    b = noisy.m2_fresh_epsilon(1e-5, 1.0, 32, 4, steps=20)
    assert a == pytest.approx(b, rel=0.02)


@pytest.mark.slow
def test_coarser_bins_only_loosen_the_certificate():
    fine = noisy.m2_subsampled_epsilon(1e-5, 0.6, 0.05, 40, 64, 8, bins=60)
    coarse = noisy.m2_subsampled_epsilon(1e-5, 0.6, 0.05, 40, 64, 8, bins=10)
    assert fine <= coarse


def test_beta_log_mgf_is_kummers_function():
    from scipy import special

    t = np.array([0.0, 1.0, 50.0, 300.0])
    assert noisy.beta_log_mgf(t, 4, 28) == pytest.approx(np.log(special.hyp1f1(4, 32, t)), rel=1e-6, abs=1e-9)
    big = np.array([1e4, 1e5])  # 1F1(a; c; t) ~ Gamma(c) / Gamma(a) e^t t^(a - c) (1 + O(1/t))
    asymptotic = special.gammaln(32) - special.gammaln(4) + big - 28 * np.log(big)
    assert noisy.beta_log_mgf(big, 4, 28) == pytest.approx(asymptotic, abs=0.02)
    draws = rng_for(0, 77).beta(0.5, 3.0, size=400_000)  # a density unbounded at 0: the grid's other end
    assert noisy.beta_log_mgf(np.array([2.0]), 0.5, 3.0)[0] == pytest.approx(np.log(np.exp(2 * draws).mean()), abs=0.01)


def test_compressed_rdp_at_full_rank_is_opacus_sampled_gaussian():
    from opacus.accountants.analysis.rdp import compute_rdp

    orders = list(range(2, 40))
    ours = noisy.m2_subsampled_rdp(0.9, 0.03, 32, 32, orders)
    assert ours == pytest.approx(compute_rdp(q=0.03, noise_multiplier=0.9, steps=1, orders=orders), rel=1e-10)


def test_compressed_rdp_certifies_any_difference_and_sits_above_the_rank_one_pld():
    rank_free = noisy.m2_rdp_epsilon(1e-5, 0.6, 0.02, 200, 64, 8)
    rank_one = noisy.m2_subsampled_epsilon(1e-5, 0.6, 0.02, 200, 64, 8, bins=40)
    plain = noisy.m2_rdp_epsilon(1e-5, 0.6, 0.02, 200, 64, 64)
    assert rank_one < rank_free < plain / 3  # RDP is looser than a PLD, and still far below plain DP-SGD's


def test_a_multi_direction_difference_has_a_smaller_renyi_moment_than_one_direction():
    # the Jensen step of m2_subsampled_rdp, by Monte Carlo with real projections: D spread over two orthogonal
    # directions (weights 0.7, 0.3) against the Beta law's exact moment
    d, r, sigma, q, alpha = 16, 2, 0.8, 0.1, 6
    rng = rng_for(0, 78)
    ratios = np.empty(40_000)
    for n in range(ratios.size):
        Q, _ = np.linalg.qr(rng.standard_normal((d, r)))  # an orthonormal basis of A's row space
        ratios[n] = 0.7 * np.sum(Q[0] ** 2) + 0.3 * np.sum(Q[1] ** 2)
    k = np.arange(alpha + 1)
    coeff = np.array([math.comb(alpha, j) for j in k]) * (1 - q) ** (alpha - k) * q**k
    spread = np.mean(np.exp(np.outer(ratios, k * (k - 1) / (2 * sigma**2))) @ coeff)
    one = math.exp((alpha - 1) * noisy.m2_subsampled_rdp(sigma, q, d, r, [alpha])[0])
    assert spread < one


def test_matched_noise_meets_the_target_from_below():
    plain = pld.from_gaussian_mechanism(1.0, sampling_prob=0.05, value_discretization_interval=1e-3).self_compose(20)
    target = plain.get_epsilon_for_delta(1e-5)

    def eps(sigma):
        return noisy.m2_rdp_epsilon(1e-5, sigma, 0.05, 20, 64, 8)

    sigma = noisy.matched_noise_multiplier(eps, target, upper=1.0, rtol=1e-2)
    assert sigma < 0.8  # rank 8 of 64: much less added noise for the same epsilon
    assert eps(sigma) <= target < eps(sigma / 1.02)  # within it, and not by much
    with pytest.raises(ValueError, match="raise `upper`"):
        noisy.matched_noise_multiplier(eps, target, upper=0.1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: noisy.m2_subsampled_pld(0.0, 0.1, 10, 2), "noise multiplier"),
        (lambda: noisy.m2_subsampled_pld(1.0, 1.5, 10, 2), "sampling rate"),
        (lambda: noisy.m2_subsampled_pld(1.0, 0.1, 10, 2, bins=1), "bins"),
        (lambda: noisy.m2_subsampled_epsilon(1e-5, 1.0, 0.1, 0, 10, 2), "steps"),
        (lambda: noisy.matched_noise_multiplier(lambda s: s, -1.0, upper=1.0), "epsilon"),
        (lambda: noisy.m2_subsampled_rdp(1.0, 0.1, 10, 2, orders=[1.5]), "integers >= 2"),
        (lambda: noisy.beta_log_mgf(np.array([-1.0]), 1.0, 1.0), "t >= 0"),
    ],
)
def test_compressed_accounting_rejects_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: noisy.M1Pair(20, 3, 1.0, 1.0), "identical"),
        (lambda: noisy.M1Pair(20, 3, 0.9, 0.0), "mu"),
        (lambda: noisy.M1Pair(2, 1, 0.9, 1.0), "d >= 3"),
        (lambda: noisy.m2_delta(1.0, 1.0, 10, 0), "rank"),
        (lambda: noisy.m2_delta(1.0, 1.0, 10, 2, steps=0), "steps"),
        (lambda: noisy.m2_fresh_epsilon(1e-5, float("nan"), 10, 2), "mu"),
        (lambda: noisy.m1_norm_samples(1, 1, 5, rng_for(0)), "dimension"),
    ],
)
def test_bad_inputs_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
