import numpy as np
import pytest
from scipy import stats

from lorapriv_utils.theory import noise


@pytest.fixture
def rng():
    return np.random.default_rng(123)


def test_streaming_noise_equals_the_naive_formula(rng):
    G = rng.standard_normal((3, 40))
    A = noise.sample_projection(rng, 5, 40)
    assert np.allclose(noise.injected_noise(G, A), noise.naive_injected_noise(G, A), atol=1e-12)


def test_batched_projection_matches_one_at_a_time(rng):
    G = rng.standard_normal((2, 16))
    A = noise.sample_projection(rng, 3, 16, batch=4)
    batched = noise.injected_noise(G, A)
    assert batched.shape == (4, 2, 16)
    for k in range(4):
        assert np.allclose(batched[k], noise.naive_injected_noise(G, A[k]))


def test_projection_has_variance_one_over_r(rng):
    A = noise.sample_projection(rng, 8, 5000)
    assert A.var() == pytest.approx(1 / 8, rel=0.02)


def test_stream_noise_yields_the_requested_number_of_draws(rng):
    G = rng.standard_normal((2, 10))
    batches = list(noise.stream_noise(G, 2, 10, rng, batch=4))
    assert [b.shape[0] for b in batches] == [4, 4, 2]


def test_update_direction_of_eq10_has_rank_at_most_r(rng):
    G = rng.standard_normal((12, 30))
    A = noise.sample_projection(rng, 3, 30)
    assert np.linalg.matrix_rank(G + noise.injected_noise(G, A)) == 3


@pytest.mark.parametrize("r", [1, 3, 16])
def test_element_moments_against_the_full_matrix_sampler(rng, r):
    q = rng.standard_normal(24)
    u = np.concatenate([b[:, 0, 2] for b in noise.stream_noise(q, r, 60_000, rng, batch=2000)])
    mom = noise.element_moments(q, 2, r)
    se = np.sqrt(mom["var_exact"] / u.size)
    assert abs(u.mean()) < 4 * se
    assert u.var() == pytest.approx(mom["var_exact"], rel=0.03)
    assert stats.skew(u) == pytest.approx(mom["skewness"], abs=0.08)


@pytest.mark.parametrize("r", [1, 2, 8])
def test_element_sampler_matches_closed_forms(rng, r):
    q = rng.standard_normal(50)
    u = noise.sample_element(q, 7, r, 1_000_000, rng)
    mom = noise.element_moments(q, 7, r)
    assert u.var() == pytest.approx(mom["var_exact"], rel=0.01)
    assert stats.skew(u) == pytest.approx(mom["skewness"], abs=0.05)
    assert stats.kurtosis(u) == pytest.approx(mom["excess_kurtosis"], rel=0.08)


def test_exact_variance_and_the_papers_approximation():
    q = np.array([3.0, 4.0])
    mom = noise.element_moments(q, 0, 2)
    assert mom["var_exact"] == pytest.approx((25 + 9) / 2)
    assert mom["var_paper"] == pytest.approx(25 / 2)


def test_kurtosis_tends_to_6_over_r_as_m_grows():
    for r in (1, 4, 32):
        big = noise.element_moments(np.ones(100_000), 0, r)["excess_kurtosis"]
        assert big == pytest.approx(noise.limit_excess_kurtosis(r), rel=1e-3)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: noise.check_rank(0, 10), "1 <= r <= m"),
        (lambda: noise.check_rank(11, 10), "1 <= r <= m"),
        (lambda: noise.check_rank(2.5, 10), "1 <= r <= m"),
        (lambda: noise.injected_noise(np.ones((2, 5)), np.ones((2, 4))), "A must have shape"),
        (lambda: noise.injected_noise(np.array([[np.nan, 1.0]]), np.ones((1, 2))), "non-finite"),
        (lambda: noise.injected_noise(np.ones((2, 2, 2)), np.ones((1, 2))), "vector or n x m"),
        (lambda: noise.element_moments(np.zeros(4), 0, 2), "zero vector"),
        (lambda: noise.element_moments(np.ones(4), 4, 2), "0 <= i < m"),
        (lambda: noise.element_moments(np.ones((2, 4)), 0, 2), "single gradient row"),
        (lambda: noise.sample_element(np.ones(4), 0, 5, 10, np.random.default_rng()), "1 <= r <= m"),
        (lambda: list(noise.stream_noise(np.ones(4), 2, 0, np.random.default_rng())), "positive"),
    ],
)
def test_bad_input_raises_a_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_full_matrix_element_sampler_agrees_with_the_exact_one(rng):
    q = rng.standard_normal(20)
    full = noise.sample_element_full(q, 3, 2, 40_000, rng, batch=1000)
    exact = noise.sample_element(q, 3, 2, 40_000, rng)
    assert full.shape == (40_000,)
    assert stats.ks_2samp(full, exact).pvalue > 1e-3
    with pytest.raises(ValueError, match="0 <= i < m"):
        noise.sample_element_full(q, 20, 2, 10, rng)


def test_gradient_rows():
    rng = np.random.default_rng(0)
    assert np.array_equal(noise.gradient_row("uniform", 3, rng), np.ones(3))
    assert noise.gradient_row("heavy", 5, rng).shape == (5,)
    spike = noise.gradient_row("spike", 16, rng)
    assert spike[0] ** 2 / np.sum(spike**2) == pytest.approx(16 / 31)
    with pytest.raises(ValueError, match="unknown gradient kind"):
        noise.gradient_row("zipf", 3, rng)


def test_element_summands_add_up_to_the_noise_element():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 12))
    A = noise.sample_projection(rng, 3, 12)
    for i in (0, 5, 11):
        terms = noise.element_summands(q, A, i)
        assert terms.size == 1 + 11 * 3
        assert terms.sum() == pytest.approx(noise.injected_noise(q, A)[0, i], abs=1e-12)
    with pytest.raises(ValueError, match="0 <= i < m"):
        noise.element_summands(q, A, 12)
