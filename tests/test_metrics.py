import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from lorapriv_utils.mia.attacks import metrics as mm
from lorapriv_utils.mia.attacks import resampling


@pytest.fixture
def signals():
    rng = np.random.default_rng(0)
    return rng.normal(-0.5, 1, 3000), rng.normal(0, 1, 5000)


def test_auc_matches_scikit_learn(signals):
    m, n = signals
    labels = np.r_[np.ones(m.size), np.zeros(n.size)]
    expected = roc_auc_score(labels, -np.r_[m, n])  # low signal = member
    assert mm.roc_auc(m, n) == pytest.approx(expected, abs=1e-12)


def test_auc_with_ties_matches_scikit_learn():
    m, n = np.array([0.0, 1.0, 1.0, 2.0]), np.array([1.0, 1.0, 3.0])
    labels = np.r_[np.ones(4), np.zeros(3)]
    assert mm.roc_auc(m, n) == pytest.approx(roc_auc_score(labels, -np.r_[m, n]))


@pytest.mark.parametrize("alpha", [0.1, 0.01, 0.001])
def test_tpr_at_fpr_follows_the_papers_rule_and_matches_the_roc_curve(signals, alpha):
    m, n = signals
    rate = mm.tpr_at_fpr(m, n, alpha)
    assert rate.achieved_fpr < alpha
    # the next larger threshold would reach alpha: the rule picks the highest admissible gamma
    assert np.mean(n <= rate.threshold) >= alpha
    labels = np.r_[np.ones(m.size), np.zeros(n.size)]
    fpr, tpr, _ = roc_curve(labels, -np.r_[m, n])
    best = tpr[fpr < alpha].max()
    assert rate.tpr == pytest.approx(best, abs=1.0 / m.size + 1e-12)


def test_tpr_at_an_unresolvable_fpr_is_flagged():
    rng = np.random.default_rng(1)
    rate = mm.tpr_at_fpr(rng.normal(-3, 1, 100), rng.normal(0, 1, 100), 0.0001)
    assert rate.at_zero_fpr and rate.achieved_fpr == 0.0 and rate.min_resolvable_fpr == 0.01
    assert not mm.tpr_at_fpr(rng.normal(size=100), rng.normal(size=1000), 0.01).at_zero_fpr


def test_perfectly_separated_attack():
    m, n = np.arange(10.0), np.arange(10.0) + 100
    assert mm.roc_auc(m, n) == 1.0
    assert mm.tpr_at_fpr(m, n, 0.05).tpr == 1.0


def test_reference_signal_and_perplexity():
    assert np.allclose(mm.reference_signal([3.0, 2.0], [1.0, 2.5]), [2.0, -0.5])
    assert mm.perplexity(10 * np.log(7.0), 10) == pytest.approx(7.0)


def test_bootstrap_interval_covers_the_value(signals):
    m, n = signals
    ci = mm.bootstrap(mm.roc_auc, m[:500], n[:500], np.random.default_rng(2), resamples=200)
    assert ci.low < ci.value < ci.high and ci.level == 0.95
    again = mm.bootstrap(mm.roc_auc, m[:500], n[:500], np.random.default_rng(2), resamples=200)
    assert again == ci


def _arm(rng, texts_m, texts_n, shift):
    """Signals on shared texts: each text's own difficulty plus a little noise, members lowered by ``shift``."""
    return texts_m - shift + rng.normal(0, 0.1, texts_m.size), texts_n + rng.normal(0, 0.1, texts_n.size)


def test_a_paired_difference_resolves_a_shift_the_arms_share_texts_for():
    rng = np.random.default_rng(4)
    texts_m, texts_n = rng.normal(0, 1, 300), rng.normal(0, 1, 300)
    arms = mm.Arms(_arm(rng, texts_m, texts_n, 0.5), _arm(rng, texts_m, texts_n, 0.3))
    ci = mm.paired_difference(mm.roc_auc, [arms], np.random.default_rng(1), resamples=300)
    assert ci.value == pytest.approx(mm.roc_auc(*arms.a) - mm.roc_auc(*arms.b))
    assert 0 < ci.low < ci.value < ci.high  # a gap of about 0.1 in AUC, resolved
    assert mm.paired_difference(mm.roc_auc, [arms], np.random.default_rng(1), resamples=300) == ci
    # its draws are the interval's: the same point, and the percentile ends of the same resamples
    point, draws = mm.paired_draws(mm.roc_auc, [arms], np.random.default_rng(1), resamples=300)
    assert point == ci.value and draws.shape == (300,)
    assert resampling.percentile(draws) == (ci.low, ci.high)


def test_seeds_that_disagree_widen_the_interval_of_their_mean():
    """Two training seeds whose gaps have opposite signs, each resolved on its own: their mean's interval holds
    the seed-to-seed variation, so it reaches both signs."""
    rng = np.random.default_rng(5)
    seeds = []
    for a, b in ((0.6, 0.2), (0.2, 0.6)):
        texts_m, texts_n = rng.normal(0, 1, 300), rng.normal(0, 1, 300)
        seeds.append(mm.Arms(_arm(rng, texts_m, texts_n, a), _arm(rng, texts_m, texts_n, b)))
    alone = [mm.paired_difference(mm.roc_auc, [s], np.random.default_rng(2), resamples=300) for s in seeds]
    assert alone[0].low > 0.05 and alone[1].high < -0.05  # gaps of about +0.11 and -0.11
    both = mm.paired_difference(mm.roc_auc, seeds, np.random.default_rng(2), resamples=300)
    assert abs(both.value) < 0.02 and both.low < -0.05 and both.high > 0.05
    assert both.high - both.low > 3 * (alone[0].high - alone[0].low)
    with pytest.raises(ValueError, match="same texts"):
        mm.Arms((np.zeros(3), np.zeros(2)), (np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="at least one seed"):
        mm.paired_difference(mm.roc_auc, [], np.random.default_rng(0))


def test_one_arms_interval_over_seeds_holds_their_spread():
    """Two seeds of one arm with different AUCs: the mean's interval reaches towards both, wider than either alone."""
    rng = np.random.default_rng(6)
    seeds = [(rng.normal(-shift, 1, 300), rng.normal(0, 1, 300)) for shift in (0.8, 0.1)]
    alone = [mm.seeds_interval(mm.roc_auc, [s], np.random.default_rng(3), resamples=300) for s in seeds]
    assert alone[0].value == pytest.approx(mm.roc_auc(*seeds[0])) and alone[0].low > alone[1].high
    both = mm.seeds_interval(mm.roc_auc, seeds, np.random.default_rng(3), resamples=300)
    assert both.value == pytest.approx((alone[0].value + alone[1].value) / 2)
    assert both.low < alone[1].high and both.high > alone[0].low
    assert both.high - both.low > 2 * (alone[0].high - alone[0].low)
    with pytest.raises(ValueError, match="at least one seed"):
        mm.seeds_interval(mm.roc_auc, [], np.random.default_rng(0))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mm.roc_auc([], [1.0]), "empty"),
        (lambda: mm.roc_auc([np.nan], [1.0]), "non-finite"),
        (lambda: mm.tpr_at_fpr([1.0], [1.0], 0.0), "alpha"),
        (lambda: mm.reference_signal([1.0, 2.0], [1.0]), "paired"),
        (lambda: mm.perplexity(1.0, 0), "tokens"),
        (lambda: mm.bootstrap(mm.roc_auc, [1.0], [2.0], np.random.default_rng(), resamples=1), "resamples"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zlib_and_min_k_plus_plus_signals():
    texts = ["ab" * 200, "the quick brown fox jumps over the lazy dog, then naps"]
    signal = mm.zlib_signal(np.array([2.0, 2.0]), texts)
    assert signal[0] > signal[1]  # equal losses: the compressible text has the smaller zlib size
    import zlib

    assert signal[1] == pytest.approx(2.0 / len(zlib.compress(texts[1].encode())))
    assert mm.minkpp_signal(np.array([1.0, -2.0])).tolist() == [-1.0, 2.0]
    with pytest.raises(ValueError, match="one text per loss"):
        mm.zlib_signal(np.array([1.0]), texts)


def test_every_registered_attack_says_member_where_training_lowered_the_loss():
    """Members' losses (and Min-K%++ scores' opposite) shifted the way training shifts them: every attack's AUC
    is above 1/2; with no shift, about 1/2."""
    rng = np.random.default_rng(3)
    texts = {part: [f"report {k:04d} on the market" for k in range(400)] for part in ("members", "nonmembers")}

    def scores(shift):
        out = {}
        for part, delta in (("members", shift), ("nonmembers", 0.0)):
            reference = rng.normal(3.0, 0.3, 400)
            out[f"{part}_reference"] = reference
            out[f"{part}_target"] = reference - delta + rng.normal(0, 0.05, 400)
            out[f"{part}_minkpp"] = delta + rng.normal(0, 0.3, 400)
        return out

    assert list(mm.ATTACKS) == ["reference", "loss", "zlib", "minkpp"]  # the order of a cell's bootstrap stream
    for name, attack in mm.ATTACKS.items():
        shifted, flat = scores(0.3), scores(0.0)
        auc = mm.roc_auc(attack.signals(shifted, texts, "members"), attack.signals(shifted, texts, "nonmembers"))
        null = mm.roc_auc(attack.signals(flat, texts, "members"), attack.signals(flat, texts, "nonmembers"))
        assert auc > 0.6 and abs(null - 0.5) < 0.08, name
