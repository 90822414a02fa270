"""Methods at matched utility: fronts, interpolation and the paired bootstrap, on curves whose answer is known."""

import numpy as np
import pytest
from scipy import stats

from lorapriv_utils.mia.attacks import matching
from lorapriv_utils.mia.attacks import metrics as mm


def _point(name, ppl, shift, rng, n=400):
    """A checkpoint whose members' signals sit ``shift`` below the non-members' (AUC = Phi(shift / sqrt 2))."""
    members, nonmembers = rng.normal(-shift, 1, n), rng.normal(0, 1, n)
    return matching.Point(name, 1e-3, 1, ppl, {a: (members, nonmembers) for a in matching.ATTACKS})


def _curve(name, pairs, rng):
    return matching.Curve(name, "lora", 8, None, [_point(name, ppl, shift, rng) for ppl, shift in pairs])


def test_the_frontier_reads_the_one_auc_and_tpr():
    rng = np.random.default_rng(0)
    m, n = np.round(rng.normal(-0.5, 1, 301), 1), np.round(rng.normal(0, 1, 200), 1)  # many ties
    assert matching.metric_value("auc", m, n) == mm.roc_auc(m, n)
    for alpha in (0.01, 0.1, 0.5):
        assert matching.metric_value(f"tpr@{alpha}", m, n) == mm.tpr_at_fpr(m, n, alpha).tpr
    with pytest.raises(ValueError, match="unknown metric"):
        matching.metric_value("auroc", m, n)


def test_the_front_keeps_only_undominated_points_and_reads_as_a_step():
    ppl = np.array([10.0, 20.0, 15.0, 40.0, 12.0, 30.0])
    auc = np.array([0.90, 0.70, 0.80, 0.50, 0.95, 0.75])
    assert matching.front(ppl, auc).tolist() == [0, 2, 1, 3]  # 12 and 30 are dominated
    got = matching.value_at(ppl, auc, np.array([10.0, 17.0, 39.0, 40.0, 9.0, 50.0]))
    # the most private checkpoint at least as useful as the target (perplexity at most the target)
    assert got[:4].tolist() == [0.90, 0.80, 0.70, 0.50]
    assert np.isnan(got[4]) and np.isnan(got[5])  # better utility than reached, or worse than any point
    shown = auc + 0.01  # read on other texts: the same points, other values
    assert matching.value_at(ppl, auc, np.array([17.0]), evaluate=shown)[0] == pytest.approx(0.81)


def test_the_base_model_counts_only_at_its_own_perplexity():
    ppl = np.array([106.0, 105.3, 102.7])  # the base model first, then checkpoints
    auc = np.array([0.5, 0.77, 0.93])
    got = matching.value_at(ppl, auc, np.array([105.8, 106.0]))
    assert got.tolist() == [0.77, 0.5]  # below the base's perplexity, only a trained checkpoint is as useful


def test_two_variants_on_one_tradeoff_are_equal_at_matched_perplexity():
    rng = np.random.default_rng(1)
    # one trade-off, shift = 3 * log(50 / ppl); "lora" only reaches the less-fitted half of it
    full = _curve("full", [(p, 3 * np.log(50 / p)) for p in (20, 25, 30, 40, 50)], rng)
    lora = _curve("lora", [(p, 3 * np.log(50 / p)) for p in (30, 35, 40, 45, 50)], rng)
    at_its_best = matching.best_point(lora).perplexity
    assert at_its_best == 30
    out = matching.matched({"full": full, "lora": lora}, np.array([25.0, 30.0, 40.0]), baseline="full", resamples=100)
    diff = out["lora - full"]
    assert np.isnan(diff.value[0])  # lora does not reach 25
    truth = stats.norm.cdf(3 * np.log(50 / 30) / np.sqrt(2))
    assert out["full"].low[1] <= truth <= out["full"].high[1]
    assert all(diff.low[i] <= 0 <= diff.high[i] for i in (1, 2))  # no advantage at matched perplexity
    # yet at its best point lora's AUC is far below full fine-tuning's best: the one-point comparison misleads
    assert (
        out["lora"].value[1]
        < matching.value_at(
            np.array([p.perplexity for p in full.points]),
            np.array([mm.roc_auc(*p.signals["reference"]) for p in full.points]),
            np.array([20.0]),
        )[0]
        - 0.1
    )


def test_a_variant_that_is_more_private_at_every_utility_is_found():
    rng = np.random.default_rng(2)
    full = _curve("full", [(p, 3 * np.log(50 / p)) for p in (20, 30, 40, 50)], rng)
    dp = _curve("dp", [(p, 1 * np.log(50 / p)) for p in (20, 30, 40, 50)], rng)
    out = matching.matched({"full": full, "dp": dp}, np.array([25.0, 35.0]), baseline="full", resamples=100)
    assert np.all(out["dp - full"].high < 0)
    tpr = matching.matched({"full": full, "dp": dp}, np.array([25.0]), metric="tpr@0.01", resamples=50)
    assert tpr["dp"].value[0] < tpr["full"].value[0]


def test_bad_requests():
    rng = np.random.default_rng(3)
    curves = {"full": _curve("full", [(20, 1), (50, 0)], rng)}
    with pytest.raises(ValueError, match="unknown attack"):
        matching.matched(curves, np.array([30.0]), attack="lira")
    with pytest.raises(ValueError, match="baseline"):
        matching.matched(curves, np.array([30.0]), baseline="lora")
    with pytest.raises(ValueError, match="resamples"):
        matching.matched(curves, np.array([30.0]), resamples=3)
    with pytest.raises(FileNotFoundError, match="lorapriv_utils frontier"):
        matching.load_curves("/nonexistent/frontier/ptb")


def test_cross_fitting_removes_the_winners_curse_of_the_front():
    truth = stats.norm.cdf(0.74 / np.sqrt(2))  # about 0.70 at every one of 30 checkpoints
    target = np.array([49.0])
    naive, fitted = [], []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        many = _curve("many", [(20.0 + k, 0.74) for k in range(30)], rng)
        values = np.array([mm.roc_auc(*p.signals["reference"]) for p in many.points])
        ppl = np.array([p.perplexity for p in many.points])
        naive.append(matching.value_at(ppl, values, target)[0])  # the minimum of 30 noisy AUCs
        fitted.append(matching.matched({"many": many}, target, resamples=10, seed=seed)["many"].value[0])
    assert np.mean(naive) < truth - 0.03  # chosen and read on the same texts: biased low
    assert abs(np.mean(fitted) - truth) < 0.015  # chosen on one half, read on the other


def test_seeds_that_disagree_leave_a_difference_unresolved_that_each_seed_alone_resolves():
    rng = np.random.default_rng(4)
    full = [(p, 2 * np.log(50 / p)) for p in (20, 30, 40, 50)]
    # seed 0: the method is more private than full fine-tuning at every utility; seed 1: less private
    seeds = [
        {"full": _curve("full", full, rng), "m": _curve("m", [(p, s * np.log(50 / p)) for p in (20, 30, 40, 50)], rng)}
        for s in (1.0, 3.0)
    ]
    target = np.array([30.0])
    alone = [matching.matched(c, target, baseline="full", resamples=100)["m - full"] for c in seeds]
    assert alone[0].high[0] < 0 < alone[1].low[0]  # each seed resolves its own sign
    both = matching.matched_seeds(seeds, target, baseline="full", resamples=100)["m - full"]
    assert alone[0].value[0] < both.value[0] < alone[1].value[0]  # the mean over seeds (each cross-fitted anew)
    assert both.low[0] < 0 < both.high[0]  # the seeds' variation is in the interval: unresolved
    # two seeds that agree stay resolved
    agree = [
        {"full": _curve("full", full, rng), "m": _curve("m", [(p, np.log(50 / p)) for p in (20, 30, 40, 50)], rng)}
        for _ in range(2)
    ]
    assert matching.matched_seeds(agree, target, baseline="full", resamples=100)["m - full"].high[0] < 0


def test_matched_seeds_needs_the_same_variants_in_every_seed():
    rng = np.random.default_rng(5)
    one = {"full": _curve("full", [(20, 1), (50, 0)], rng), "m": _curve("m", [(20, 1), (50, 0)], rng)}
    with pytest.raises(ValueError, match="same variants"):
        matching.matched_seeds([one, {"full": one["full"]}], np.array([30.0]))
    with pytest.raises(ValueError, match="at least one seed"):
        matching.matched_seeds([], np.array([30.0]))


def test_each_seed_is_matched_at_its_own_targets():
    # seed 1's validation texts are harder: every perplexity 1.5 times seed 0's, the same trade-off otherwise
    rng = np.random.default_rng(6)
    pairs = [(p, 2 * np.log(50 / p)) for p in (20, 30, 40, 50)]
    seeds = [
        {
            "full": _curve("full", [(f * p, s) for p, s in pairs], rng),
            "m": _curve("m", [(f * p, s) for p, s in pairs], rng),
        }
        for f in (1.0, 1.5)
    ]
    own = matching.matched_seeds(seeds, np.array([[20.0], [30.0]]), baseline="full", resamples=50)
    assert np.isfinite(own["m - full"].value[0]) and own["m"].targets[0] == pytest.approx(np.sqrt(20.0 * 30.0))
    shared = matching.matched_seeds(seeds, np.array([20.0]), baseline="full", resamples=50)
    assert np.isnan(shared["m - full"].value[0])  # 20 is beyond seed 1's reach on its own texts
    with pytest.raises(ValueError, match="one row per seed"):
        matching.matched_seeds(seeds, np.array([[20.0], [30.0], [40.0]]))
