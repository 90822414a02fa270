import math

import numpy as np
import pytest
from scipy import integrate, stats

from lorapriv_utils.theory import normal_distance as nd


def _tv_by_quadrature(pdf_f, pdf_g, lo=-60.0, hi=60.0):
    points = np.linspace(lo, hi, 121)
    return 0.5 * sum(
        integrate.quad(lambda x: abs(pdf_f(x) - pdf_g(x)), a, b, limit=200, epsabs=1e-13)[0]
        for a, b in zip(points[:-1], points[1:], strict=True)
    )


def test_distances_between_two_gaussians_match_the_closed_form():
    f, g = stats.norm(scale=1.0), stats.norm(scale=math.sqrt(2.0))
    x = np.linspace(-10, 10, 2001)
    guess = nd._sign_changes(x, f.pdf(x) - g.pdf(x))
    d = nd.distances_at_crossings(f.cdf, f.pdf, g.cdf, g.pdf, guess)
    crossing = math.sqrt(2 * math.log(math.sqrt(2)) / (1 - 1 / 2))
    expected = 2 * (f.cdf(crossing) - g.cdf(crossing)) - (f.cdf(crossing) - g.cdf(crossing)) * 0
    tv = (f.cdf(crossing) - f.cdf(-crossing)) - (g.cdf(crossing) - g.cdf(-crossing))
    assert d.tv == pytest.approx(tv, abs=1e-12)
    assert d.kolmogorov == pytest.approx(abs(f.cdf(-crossing) - g.cdf(-crossing)), abs=1e-12)
    assert len(d.crossings) == 2 and expected > 0


@pytest.mark.parametrize(("c", "s2", "r"), [(0.0, 1.0, 1), (0.3, 1.0, 2), (-0.5, 2.0, 4), (0.1, 1.0, 32)])
def test_fast_rules_agree_with_adaptive_quadrature(c, s2, r):
    law = nd.NoiseElementLaw(c, s2, r)
    x = np.array([-4.0, -1.3, -0.05, 0.7, 2.5, 6.0])
    assert np.allclose(law.pdf_fast(x), [law.pdf(v) for v in x], atol=1e-10)
    assert np.allclose(law.cdf_fast(x), [law.cdf(v) for v in x], atol=1e-11)


@pytest.mark.slow
def test_law_is_a_probability_distribution():
    law = nd.NoiseElementLaw(0.4, 1.5, 3)
    assert law.cdf(-80) == pytest.approx(0, abs=1e-12) and law.cdf(80) == pytest.approx(1, abs=1e-12)
    x = np.linspace(-40, 40, 40_001)  # the fast density (checked against quad above) on a fine grid
    f = law.pdf_fast(x)
    assert np.trapezoid(f, x) == pytest.approx(1, abs=1e-4)  # the r = 3 density has a kink at 0
    mean, var = np.trapezoid(x * f, x), np.trapezoid(x * x * f, x)
    assert mean == pytest.approx(0, abs=1e-4) and var == pytest.approx(law.variance, rel=1e-4)


@pytest.mark.parametrize(("c", "s2", "r", "sigma2"), [(0.0, 1.0, 1, 1.0), (0.2, 1.0, 2, 1.1), (0.0, 1.0, 16, 1.0)])
def test_tv_matches_brute_force_quadrature(c, s2, r, sigma2):
    law = nd.NoiseElementLaw(c, s2, r)
    d = nd.distance_to_normal(law, sigma2)
    g = stats.norm(scale=math.sqrt(sigma2))
    assert d.tv == pytest.approx(_tv_by_quadrature(lambda v: float(law.pdf_fast(v)[0]), g.pdf), abs=1e-7)


def test_cdf_against_monte_carlo():
    law = nd.NoiseElementLaw(0.3, 0.8, 2)
    u = law.sample(400_000, np.random.default_rng(5))
    for x in (-1.0, 0.2, 1.5):
        p = np.mean(u <= x)
        assert abs(p - law.cdf(x)) < 4 * math.sqrt(p * (1 - p) / u.size)


def test_degenerate_law_without_a_gaussian_part():
    law = nd.NoiseElementLaw(2.0, 0.0, 3)
    assert law.cdf(0.0) == pytest.approx(stats.chi2(3).cdf(3))
    with pytest.raises(ValueError, match="s2 > 0"):
        nd.distance_to_normal(law, 1.0)


def test_limit_law_distance_decays_like_one_over_r():
    tv = [nd.distance_to_normal(nd.limit_law(r), 1.0).tv for r in (16, 64)]
    assert tv[0] / tv[1] == pytest.approx(4, rel=0.05)


def test_law_of_element_depends_on_q_only_through_q_i_and_the_rest():
    q = np.array([1.0, 2.0, 2.0])
    law = nd.law_of_element(q, 0, 2)
    assert law.c == 1.0 and law.s2 == pytest.approx(8 / 2)


def test_lyapunov_ratio_and_bound():
    q = np.ones(64)
    assert nd.lyapunov_ratio_eq45(q, 4) == pytest.approx(8 / (math.pi * 2) / 8)
    assert nd.tv_bound_eq46(q, 4) == pytest.approx(1 / 8)
    assert nd.tv_bound_eq46(q, 4, c_d=1.0) == pytest.approx(nd.lyapunov_ratio_eq45(q, 4))


def test_power_law_fit():
    x = np.array([1.0, 10.0, 100.0, 1000.0])
    fit = nd.fit_power_law(x, 3 * x**-0.5)
    assert fit.slope == pytest.approx(-0.5) and fit.slope_stderr < 1e-6
    noisy = nd.fit_power_law(x, x**-0.5 * np.array([1.0, 1.2, 0.8, 1.1]))
    lo, hi = noisy.interval()
    assert lo < noisy.slope < hi and noisy.slope_stderr > 0
    assert noisy.interval(0.99)[0] < lo
    with pytest.raises(ValueError, match="at least 3 positive"):
        nd.fit_power_law(np.array([1.0, 2.0]), np.array([1.0, 2.0]))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: nd.NoiseElementLaw(0.0, -1.0, 2), "s2"),
        (lambda: nd.NoiseElementLaw(0.0, 0.0, 2), "point mass"),
        (lambda: nd.NoiseElementLaw(0.0, 1.0, 0), "r"),
        (lambda: nd.distance_to_normal(nd.limit_law(2), 0.0), "sigma2"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_power_law_fit_reports_how_straight_the_points_are():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    exact = nd.fit_power_law(x, 3.0 * x**-0.5)
    assert exact.slope == pytest.approx(-0.5) and exact.max_log_residual < 1e-12
    bent = nd.fit_power_law(x, x**-0.5 + 0.1)  # levels off: not a straight line in log-log
    assert bent.max_log_residual > 0.01
