"""Paper A §5: Theorem 5.1's exact tails, row scaling, the multiplier of §5.1, eq. 23's probabilities."""

import math

import numpy as np
import pytest

from lorapriv_utils.theory import projection as P


@pytest.mark.parametrize(("delta", "p"), [(0.0, 0.1), (0.6, 0.1), (0.5, 0.0), (0.5, 1.0)])
def test_jl_ranges_are_enforced(delta, p):
    with pytest.raises(ValueError, match="Delta|p must"):
        P.jl_rank(delta, p)


def test_jl_rank_and_tails():
    assert P.jl_rank(0.5, 0.1) == math.ceil(4 * math.log(20))
    upper, lower = P.jl_tails(0.5, 12)
    assert 0 < upper < 0.05 and 0 < lower < 0.05
    with pytest.raises(ValueError, match="rank"):
        P.jl_tails(0.5, 0)


@pytest.mark.parametrize("m", [8, 512])
def test_jl_tails_match_real_matrices_whatever_m(m):
    rng = np.random.default_rng(m)
    up, lo = P.jl_monte_carlo(m, 6, 0.5, 40_000, rng)
    exact_up, exact_lo = P.jl_tails(0.5, 6)
    for mc, exact in ((up, exact_up), (lo, exact_lo)):
        assert abs(mc - exact) < 4.5 * math.sqrt(exact * (1 - exact) / 40_000)


def test_row_scaling_sets_every_projected_row_norm():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 16)) / 2.0
    g = P.row_scale(rng.standard_normal((3, 5, 16)), A, 0.5, 2.0)
    assert np.allclose(np.linalg.norm(g @ A.T, axis=-1), 0.5 * math.sqrt(4) * 2.0)
    with pytest.raises(ValueError, match="zero"):
        P.row_scale(np.zeros((1, 2, 16)), A, 0.5, 1.0)
    with pytest.raises(ValueError, match="clipping scale"):
        P.row_scale(g, A, 0.5, 0.0)


def test_geometries_and_the_multiplier():
    rng = np.random.default_rng(1)
    assert np.allclose(P.per_sample_gradients("cancelling", 4, 3, 8, rng).sum(axis=0), 0)
    g = P.per_sample_gradients("orthogonal", 4, 3, 8, rng)
    assert np.allclose(np.einsum("inm,jnm->ij", g, g)[~np.eye(4, dtype=bool)], 0)
    with pytest.raises(ValueError, match="geometry"):
        P.per_sample_gradients("zigzag", 4, 3, 8, rng)
    with pytest.raises(ValueError, match="even"):
        P.per_sample_gradients("cancelling", 3, 3, 8, rng)
    assert P.formula_multiplier(0.5, 8, 768, 8) == pytest.approx((1 / 3) * math.sqrt(8 / (768 * 8)))
    random = P.equivalent_multiplier("random", 8, 16, 64, 4, 0.5, 1.0, rng)
    assert random["z_equivalent"] > random["z_formula"]  # per-sample norms may exceed the clip: eq. 23 is a probability
    assert P.equivalent_multiplier("cancelling", 8, 16, 64, 4, 0.5, 1.0, rng)["z_equivalent"] < 1e-12


def test_lora_noise_std_is_lemma_3_1():
    rng = np.random.default_rng(2)
    S = rng.standard_normal((2, 12))
    A = rng.standard_normal((200_000, 3, 12)) / math.sqrt(3)
    noise = np.einsum("nm,bkm,bkj->bnj", S, A, A) - S
    assert np.allclose(noise.std(axis=0), P.lora_noise_std(S, 3), rtol=0.02)


def test_simultaneous_probabilities():
    rng = np.random.default_rng(3)
    rank1 = P.simultaneous_probabilities(16, 4, 16, 32, 0.5, "rank1", 400, rng)
    assert rank1["all_rows"] == rank1["frobenius"]  # one ratio per sample: the two events coincide
    indep = P.simultaneous_probabilities(256, 8, 8, 32, 0.5, "independent", 20, rng)
    assert indep["all_rows"] < indep["frobenius"]
    with pytest.raises(ValueError, match="structure"):
        P.simultaneous_probabilities(4, 2, 2, 8, 0.5, "blocks", 1, rng)


def test_jl_as_quoted_fails_for_very_small_p():
    # without Matousek's constant the chi-square tail decays like (p/2)^c with c < 1
    for p, holds in ((1e-9, True), (1e-12, False)):
        upper, _ = P.jl_tails(0.5, P.jl_rank(0.5, p))
        assert (upper <= p / 2) is holds


def test_row_scaled_noise_matches_its_exact_law_and_exceeds_paper_as_bound():
    from scipy import stats

    g = np.zeros(20)
    g[0], g[1:10] = math.sqrt(0.8), math.sqrt(0.2 / 9)  # entries 10 to 19 are zero
    noise = P.row_scaled_noise(g, 12, 0.5, 1.0, 20000, np.random.default_rng(4))
    var, kurt = P.row_scaled_noise_law(g, 12, 0.5, 1.0)
    np.testing.assert_allclose(noise.var(axis=0), var, rtol=0.06)
    assert stats.kurtosis(noise[:, 0]) == pytest.approx(kurt[0], abs=0.3)
    assert var.min() >= (1 - 0.5) ** 2 * 0.999 > P.paper_noise_bound(0.5, 1.0)
    # orthogonal to the row the noise is exactly Gaussian (and centred)
    assert stats.kstest(noise[:, 15] / math.sqrt(var[15]), "norm").pvalue > 1e-3


def test_row_scaled_noise_has_no_variance_at_rank_two_and_no_kurtosis_at_rank_four():
    g = np.ones(8)
    var2, _ = P.row_scaled_noise_law(g, 2, 0.5, 1.0)
    var4, kurt4 = P.row_scaled_noise_law(g, 4, 0.5, 1.0)
    assert np.isinf(var2).all() and np.isfinite(var4).all() and np.isinf(kurt4).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: P.row_scaled_noise(np.zeros(4), 2, 0.5, 1.0, 3, np.random.default_rng(0)), "non-zero"),
        (lambda: P.row_scaled_noise(np.ones(4), 0, 0.5, 1.0, 3, np.random.default_rng(0)), "rank"),
        (lambda: P.row_scaled_noise_law(np.ones(4), 0, 0.5, 1.0), "rank"),
    ],
)
def test_row_scaled_noise_rejects_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()
