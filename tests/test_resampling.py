import numpy as np
import pytest

from lorapriv_utils.mia.attacks import resampling


def test_the_draw_order_is_resample_after_resample_group_after_group():
    """The committed intervals depend on this order: a change to it must bump the attack-metrics version."""
    draws = resampling.resamples(np.random.default_rng(5), (3, 2), 10)
    rng = np.random.default_rng(5)
    for draw in draws:
        assert [d.tolist() for d in draw] == [rng.integers(0, 3, 3).tolist(), rng.integers(0, 2, 2).tolist()]


def test_the_percentile_interval_of_a_mean_covers_the_truth_about_95_percent_of_the_time():
    """The plain percentile interval runs a little short of 95% at n = 60; the book's (its ends widened by their
    Monte Carlo error) covers at least as often, and not always."""
    rng = np.random.default_rng(0)
    covered, widened = 0, 0
    for _ in range(300):
        sample = rng.normal(0.0, 1.0, 60)
        means = [sample[i].mean() for (i,) in resampling.resamples(rng, (sample.size,), 200)]
        low, high = resampling.percentile(means, monte_carlo=False)
        covered += low <= 0.0 <= high
        low, high = resampling.percentile(means)
        widened += low <= 0.0 <= high
    assert 0.88 <= covered / 300 <= 0.98
    assert covered <= widened < 300


def test_pairing_cancels_what_two_arms_share():
    """Two arms that score the same texts up to a small difference: resampling the texts once for both (paired)
    gives a much narrower interval for their difference than resampling each arm on its own."""
    rng = np.random.default_rng(1)
    texts = rng.normal(0.0, 1.0, 200)
    a, b = texts + 0.1 + rng.normal(0.0, 0.05, 200), texts
    paired = [a[i].mean() - b[i].mean() for (i,) in resampling.resamples(rng, (200,), 300)]
    unpaired = [a[i].mean() - b[j].mean() for i, j in resampling.resamples(rng, (200, 200), 300)]
    width = {name: np.subtract(*resampling.percentile(d)[::-1]) for name, d in (("p", paired), ("u", unpaired))}
    assert width["p"] < 0.1 * width["u"]
    assert resampling.percentile(paired)[0] > 0.08  # the shift of 0.1 is resolved only with pairing


def test_a_two_stage_resample_draws_units_then_each_units_groups():
    """The order behind every interval over seeds: the units of a resample, then each drawn unit's groups."""
    draws = resampling.nested_resamples(np.random.default_rng(3), [(3, 2), (4, 1)], 10)
    rng = np.random.default_rng(3)
    sizes = [(3, 2), (4, 1)]
    for draw in draws:
        units = rng.integers(0, 2, 2).tolist()
        assert [k for k, _ in draw] == units
        for k, groups in draw:
            assert [g.tolist() for g in groups] == [rng.integers(0, n, n).tolist() for n in sizes[k]]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: resampling.resamples(np.random.default_rng(0), (3,), 5), "at least 10 resamples"),
        (lambda: resampling.resamples(np.random.default_rng(0), (3, 0), 20), "at least one element"),
        (lambda: resampling.nested_resamples(np.random.default_rng(0), [(3,)], 5), "at least 10 resamples"),
        (lambda: resampling.nested_resamples(np.random.default_rng(0), [], 20), "at least one unit"),
        (lambda: resampling.nested_resamples(np.random.default_rng(0), [(3,), (0,)], 20), "at least one element"),
        (lambda: resampling.percentile([1.0, 2.0], level=1.0), "level"),
        (lambda: resampling.percentile([]), "non-empty"),
    ],
)
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_monte_carlo_interval_holds_the_percentile_ends_whichever_resamples_were_drawn():
    """500 draws from N(0, 1) stand for one bootstrap: their plain 2.5% end falls on either side of the
    distribution's own (-1.96) about half the time, which is how a seed of the resampling can move an end across a
    threshold; the Monte Carlo interval's ends lie outside the distribution's own in about 95% of bootstraps, and
    always outside the plain interval."""
    rng = np.random.default_rng(7)
    truth = 1.959964
    outside, plain_outside = 0, 0
    for _ in range(400):
        draws = rng.normal(size=500)
        low, high = resampling.percentile(draws, monte_carlo=False)
        mc_low, mc_high = resampling.percentile(draws)  # the default: every interval of the book
        assert mc_low <= low and high <= mc_high
        outside += mc_low <= -truth and truth <= mc_high
        plain_outside += low <= -truth
    assert 0.3 < plain_outside / 400 < 0.7
    assert outside / 400 > 0.88
    few = rng.normal(size=10)  # too few draws to bound an end: the extreme draw
    assert resampling.percentile(few) == (few.min(), few.max())
    assert all(np.isnan(resampling.percentile([*few, np.nan])))  # no half interval from a NaN draw
