"""Paper B's Wishart mechanism: sampling, the law of M x, the exact privacy profile, Theorem 1, attacks."""

import math

import numpy as np
import pytest
from scipy import stats

from lorapriv_utils.theory import wishart as w
from lorapriv_utils.theory.noise import sample_projection


def test_project_never_needs_m_and_matches_it():
    rng = np.random.default_rng(0)
    A = sample_projection(rng, 3, 10)
    V = rng.standard_normal((10, 4))
    assert np.allclose(w.project(V, A), (A.T @ A) @ V)
    assert w.sample_outputs(V[:, 0], 3, 5, rng).shape == (5, 10)
    with pytest.raises(ValueError, match="does not fit"):
        w.project(np.ones(9), A)
    with pytest.raises(ValueError, match="non-finite"):
        w.project(np.full(10, np.nan), A)


def test_m_follows_the_wishart_law():
    rng = np.random.default_rng(1)
    d, r, n = 3, 6, 20_000
    draws = rng.standard_normal((n, r, d)) / math.sqrt(r)  # r > d here: scipy's Wishart needs df >= d
    samples = np.einsum("nri,nrj->nij", draws, draws)
    mean, var = w.wishart_mean_and_variance(d, r)
    z = (samples.mean(0) - mean) / np.sqrt(var / n)
    assert np.abs(z).max() < 4.5
    reference = stats.wishart(df=r, scale=np.eye(d) / r).rvs(n, random_state=2)
    for i, j in ((0, 0), (0, 1)):
        assert stats.ks_2samp(samples[:, i, j], reference[:, i, j]).pvalue > 1e-3


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1, 2, 0.5), "dimension d"),
        ((4, 0, 0.5), "rank r"),
        ((4, 2, 1.0), "identical"),
        ((4, 2, -1.0), "rho"),
        ((4, 2, float("nan")), "finite"),
    ],
)
def test_vector_pair_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        w.VectorPair(*args)


def test_law_of_mx_matches_real_matrices():
    rng = np.random.default_rng(3)
    pair = w.VectorPair(12, 3, 0.8)
    x, _ = pair.queries()
    y = w.sample_outputs(x, 3, 20_000, rng)
    assert stats.kstest(3 * (y @ x), stats.chi2(3).cdf).pvalue > 1e-3  # <y, x> = X / r
    fast, direct = w.loss_samples(pair, 20_000, rng), w.loss_samples_direct(pair, 20_000, rng)
    assert stats.ks_2samp(fast[np.isfinite(fast)], direct[np.isfinite(direct)]).pvalue > 1e-3
    assert abs(np.isinf(fast).mean() - np.isinf(direct).mean()) < 0.01


def test_support_mass_has_a_closed_form_at_rank_one():
    # X = chi^2_1 = Z'^2: P(Z < -rho |Z'| / sigma) = arctan(sigma / rho) / pi, independent of our quadrature
    for rho in (0.5, 0.9, 0.999):
        pair = w.VectorPair(5, 1, rho)
        expected = math.atan(pair.sigma / rho) / math.pi
        assert w.infinite_loss_mass(pair) == pytest.approx(expected, rel=1e-6)


def test_hockey_stick_matches_monte_carlo_and_tends_to_the_support_mass():
    rng = np.random.default_rng(4)
    pair = w.VectorPair(16, 4, 0.9)
    losses = w.loss_samples(pair, 400_000, rng)
    for eps in (0.0, 1.0, 3.0):
        mean, se = w.hockey_stick_mc(eps, losses)
        assert abs(mean - w.hockey_stick(eps, pair)[0]) < 4.5 * se
    # beyond the support mass, delta decays only like 1 / eps (the loss grows like 1 / <y, x'> near the boundary)
    mass = w.infinite_loss_mass(pair)
    excess = w.hockey_stick([1e3, 1e4], pair) - mass
    assert excess[1] == pytest.approx(excess[0] / 10, rel=0.05)
    profile = w.hockey_stick([0.0, 1.0, 2.0, 4.0], pair)
    assert np.all(np.diff(profile) < 0)


def test_hockey_stick_at_huge_epsilon_is_not_biased():
    # regression: an overflow guard once moved the chi-square threshold and tripled delta at eps ~ 7000
    pair = w.VectorPair(768, 4, 0.999)
    assert w.hockey_stick(6759.0, pair)[0] < 1.3 * w.infinite_loss_mass(pair)


def test_epsilon_for_delta():
    pair = w.VectorPair(64, 16, 0.99)
    eps = w.epsilon_for_delta(1e-5, pair)
    assert w.hockey_stick(eps, pair)[0] == pytest.approx(1e-5, rel=1e-4)
    assert w.epsilon_for_delta(1e-3, pair) < eps
    assert w.epsilon_for_delta(1e-5, w.VectorPair(64, 1, 0.99)) == math.inf  # support mass above delta
    with pytest.raises(ValueError, match="delta"):
        w.epsilon_for_delta(0.0, pair)


def test_theorem1_condition_and_validity():
    pair = w.VectorPair(16, 16, 0.99)
    th = w.theorem1(pair, 1e-6)
    assert th.applies and pair.rho > th.K  # the condition is rho > K
    assert w.hockey_stick(th.epsilon, pair)[0] <= th.delta
    assert not w.theorem1(w.VectorPair(16, 4, 0.99), 1e-6).applies
    with pytest.raises(ValueError, match="delta_prime"):
        w.theorem1(pair, 1.5)


def test_gaussian_reference_agrees_with_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld

    for mu in (0.3, 1.0):
        dist = pld.from_gaussian_mechanism(1.0 / mu, sensitivity=1.0, value_discretization_interval=1e-4)
        for eps in (0.5, 2.0):
            assert w.gaussian_delta(eps, mu) == pytest.approx(dist.get_delta_for_epsilon(eps), rel=1e-3, abs=1e-9)
    pair = w.VectorPair(768, 16, 0.99)
    assert w.mean_squared_error(768, 16) == pytest.approx(769 / 16)
    assert w.equal_mse_gaussian_mu(pair) == pytest.approx(math.sqrt(0.02) / math.sqrt(769 / (16 * 768)))


def test_symmetry_residual_separates_true_and_wrong_queries():
    rng = np.random.default_rng(5)
    V = w.gradient_batch(20, 6, 4, rng)
    other = V + np.outer(rng.standard_normal(20), rng.standard_normal(6))
    Y = w.project(V, sample_projection(rng, 3, 20))
    assert w.symmetry_residual(Y, V) < 1e-12 < 1e-3 < w.symmetry_residual(Y, other)
    with pytest.raises(ValueError, match="one shape"):
        w.symmetry_residual(Y, V[:, :3])
    with pytest.raises(ValueError, match="gradient kind"):
        w.gradient_batch(4, 2, 2, rng, "zipf")


def test_matrix_attacks_separate_perfectly():
    res = w.matrix_attack_trials(32, 8, 4, 4, 60, np.random.default_rng(6))
    member = res["member"]
    for name in ("secret_A", "released_A"):
        assert res[name][member].min() > res[name][~member].max()
    with pytest.raises(ValueError, match="exceeds"):
        w.matrix_attack_trials(4, 2, 8, 2, 1, np.random.default_rng(0))


def test_sensitivity_ratio_is_beta_with_mean_r_over_d():
    ratio = w.sensitivity_ratio(64, 8, 3000, np.random.default_rng(7))
    assert stats.kstest(ratio, stats.beta(4, 28).cdf).pvalue > 1e-3
    assert abs(ratio.mean() - 8 / 64) < 4.5 * ratio.std() / math.sqrt(ratio.size)


def test_outside_range_is_zero_inside_and_positive_outside():
    rng = np.random.default_rng(3)
    V0 = rng.standard_normal((8, 20))  # d = 8 < n = 20: the others' gradient spans 8 of 20 output directions
    inside = V0.T @ rng.standard_normal((8, 3))
    assert w.outside_range(inside, V0) < 1e-10
    assert w.outside_range(inside + 0.1 * rng.standard_normal((20, 3)), V0) > 0.01
    with pytest.raises(ValueError, match="n x r"):
        w.outside_range(inside.T, V0)


def test_sketch_likelihood_ratio_is_the_gaussian_densities():
    rng = np.random.default_rng(4)
    d, n, r = 12, 5, 3
    V0, V1 = rng.standard_normal((d, n)), rng.standard_normal((d, n))
    Y = rng.standard_normal((n, r))
    expected = sum(
        stats.multivariate_normal(cov=V1.T @ V1 / r).logpdf(y) - stats.multivariate_normal(cov=V0.T @ V0 / r).logpdf(y)
        for y in Y.T
    )
    assert w.sketch_log_likelihood_ratio(Y, V0, V1, r) == pytest.approx(expected, rel=1e-9)
    assert np.isnan(w.sketch_log_likelihood_ratio(Y, V0[:3], V1[:3], r))  # rank 3 < n = 5


def test_b_alone_is_told_apart_by_its_support_only_while_rank_v0_is_below_n():
    rng = np.random.default_rng(5)
    narrow = w.b_alone_trials(16, 40, 4, 8, 200, rng)  # rank(V0) = 8 < n = 40
    m = narrow["member"]
    assert narrow["support"][m].min() > narrow["support"][~m].max() and np.isnan(narrow["likelihood"]).all()
    wide = w.b_alone_trials(32, 8, 4, 32, 400, rng)  # rank(V0) = 8 = n: the support says nothing
    m = wide["member"]
    assert wide["support"].max() < 1e-8 and np.isfinite(wide["likelihood"]).all()
    assert wide["likelihood"][m].mean() > wide["likelihood"][~m].mean()  # the covariance still leaks
    with pytest.raises(ValueError, match="target_scale"):
        w.b_alone_trials(4, 4, 2, 2, 1, rng, target_scale=0.0)
