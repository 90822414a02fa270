import math

import numpy as np
import pytest
from scipy import integrate, stats

from lorapriv_utils.theory import moments


@pytest.mark.parametrize("k", [0.5, 1, 2, 3, 7.5, 64])
@pytest.mark.parametrize("order", [0, 1, 2, 3, 5, 8])
def test_chi2_raw_moment_matches_scipy_and_the_gamma_form(k, order):
    expected = float(stats.chi2(k).moment(order)) if order else 1.0
    # scipy integrates numerically for non-integer k (about 1e-9 relative error seen).
    assert moments.chi2_raw_moment(k, order) == pytest.approx(expected, rel=1e-7)
    assert moments.chi2_raw_moment_gamma(k, order) == pytest.approx(moments.chi2_raw_moment(k, order), rel=1e-12)


def test_chi2_raw_moment_small_cases_exactly():
    assert moments.chi2_raw_moment(3, 2) == 15.0  # 3 * 5
    assert moments.chi2_raw_moment(1, 4) == 105.0  # 1 * 3 * 5 * 7


@pytest.mark.parametrize("k", [1, 2, 5, 30])
def test_third_central_moment_is_8k(k):
    expected = stats.chi2(k).expect(lambda x: (x - k) ** 3)
    assert moments.chi2_third_central_moment(k) == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize("k", [1, 2, 4, 16, 100])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_chi2_central_abs_moment_matches_scipy_expect(k, order):
    law = stats.chi2(k)
    left = integrate.quad(lambda x: (k - x) ** order * law.pdf(x), 0, k)[0]
    right = integrate.quad(lambda x: (x - k) ** order * law.pdf(x), k, np.inf)[0]
    assert moments.chi2_central_abs_moment(k, order) == pytest.approx(left + right, rel=1e-7)


def test_chi2_central_abs_moment_second_order_is_the_variance():
    assert moments.chi2_central_abs_moment(6, 2) == pytest.approx(12.0, rel=1e-10)


@pytest.mark.parametrize("nu", [0.0, 0.5, 1.5, 3.5])
@pytest.mark.parametrize("alpha", [0.5, 2.0])
@pytest.mark.parametrize("order", [0, 1, 2, 3, 4.5])
def test_vg_closed_form_matches_density_quadrature(nu, alpha, order):
    assert moments.vg_abs_moment_quadrature(order, nu, alpha) == pytest.approx(
        moments.vg_abs_moment(order, nu, alpha), rel=1e-7
    )


def test_vg_pdf_is_a_symmetric_density():
    x = np.array([-3.0, -0.2, 0.2, 3.0])
    values = moments.vg_pdf(x, 0.5, 0.5)
    assert np.allclose(values, values[::-1]) and np.all(values > 0)
    # nu = 1/2 is the Laplace law with scale 1/alpha.
    assert np.allclose(moments.vg_pdf(x, 0.5, 0.5), stats.laplace(scale=2).pdf(x))


@pytest.mark.parametrize("k", [1, 2, 5])
def test_difference_of_chi2_has_variance_4k(k):
    assert moments.chi2_difference_abs_moment(k, 2) == pytest.approx(4 * k, rel=1e-12)
    assert moments.chi2_difference_vg_params(k) == ((k - 1) / 2, 0.5)


def test_third_absolute_moment_used_in_lemma_4_2():
    assert moments.chi2_difference_abs_moment(1, 3) == pytest.approx(2**6 / math.pi, rel=1e-12)
    assert moments.normal_product_abs_moment(3) == pytest.approx(2**6 / math.pi, rel=1e-10)


def test_difference_abs_moment_against_monte_carlo():
    rng = np.random.default_rng(0)
    v = rng.chisquare(3, 400_000) - rng.chisquare(3, 400_000)
    draws = np.abs(v) ** 3
    stderr = draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - moments.chi2_difference_abs_moment(3, 3)) < 4 * stderr


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: moments.chi2_raw_moment(0, 2), "k"),
        (lambda: moments.chi2_raw_moment(-1, 2), "k"),
        (lambda: moments.chi2_raw_moment(float("nan"), 2), "k"),
        (lambda: moments.chi2_raw_moment(2, -1), "order"),
        (lambda: moments.chi2_raw_moment(2, 1.5), "order"),
        (lambda: moments.chi2_raw_moment_gamma(2, True), "order"),
        (lambda: moments.chi2_central_abs_moment(2, 0), "order"),
        (lambda: moments.vg_abs_moment(3, -0.5, 1.0), "nu"),
        (lambda: moments.vg_abs_moment(-1, 0.0, 1.0), "order"),
        (lambda: moments.vg_abs_moment(3, 0.0, 0.0), "alpha"),
        (lambda: moments.vg_pdf(1.0, -1.0, 1.0), "nu"),
        (lambda: moments.chi2_difference_abs_moment(0, 3), "k"),
        (lambda: moments.normal_product_abs_moment(-2), "order"),
    ],
)
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(("k", "order"), [(1, 1), (1, 4), (2.5, 3), (16, 4), (64, 2)])
def test_quadrature_of_the_density_gives_eq26(k, order):
    assert moments.chi2_raw_moment_quadrature(k, order) == pytest.approx(moments.chi2_raw_moment(k, order), rel=1e-8)
    with pytest.raises(ValueError, match="order"):
        moments.chi2_raw_moment_quadrature(k, -1)
