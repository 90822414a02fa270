"""The figure house rule (issue 60): every figure of the book draws its text at 9 px or more where it is shown, on a
phone's column as on a desktop's, and says so in its file for the browser check."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from lorapriv_utils import plots


def test_rendered_text_px_scales_text_with_the_figure_where_the_column_is_narrower():
    # a figure no wider than the column is shown at its own size: 96 CSS px to the inch
    assert plots.rendered_text_px(9, 3.0, column_px=358) == pytest.approx(12.0)
    # a wider one is scaled to the column: 11 pt on 5.5 in in the phone's column is 11 / 72 * column / 5.5 px
    assert plots.rendered_text_px(11, 5.5) == pytest.approx(11 / 72 * plots.PHONE_COLUMN_PX / 5.5)
    assert plots.rendered_text_px(8, 7.5) < plots.MIN_TEXT_PX  # the book's old 7.5 in figures with 8 pt legends


def test_a_figure_whose_text_is_too_small_on_a_phone_is_refused_with_one_line():
    plots.style()
    fig, ax = plt.subplots(figsize=(11, 3))
    ax.plot([1, 2], [1, 2], label="a")
    ax.legend(fontsize=7)
    with pytest.raises(ValueError, match=r"renders at \d+\.\d px on a phone .* draw it narrower or its text larger"):
        plots._checked(fig)
    plt.close(fig)


def test_a_saved_figure_and_an_inline_png_record_their_smallest_text(tmp_path):
    fig = plots.ratio_plot(pd.DataFrame({"r": [1, 2, 4], "y": [1.0, 1.1, 0.9]}), "r", "y", "rank", "ratio")
    pt, width = plots.smallest_text(fig)
    assert pt >= 11 and width <= plots.WIDTH + 2 * plots.PAD_IN
    svg = plots.save_figure(fig, "probe", root=tmp_path).read_bytes()
    assert plots.text_record(svg) == pt
    png = plots.png_bytes(fig)
    assert png.startswith(b"\x89PNG") and plots.text_record(png) == pt
    assert plots.text_record(b"<svg>no record</svg>") is None
    plt.close(fig)


def _frames():
    rng = np.random.default_rng(0)
    steps = [10, 100, 1000]
    drift = pd.DataFrame(
        {"eta_L": [0.01, 0.1, 1.0] * 2, "drift": [1e-4, 1e-2, 0.5] * 2, "problem": ["a"] * 3 + ["b"] * 3}
    ).assign(steps=[10, 100, 10, 100, 10, 100])
    adversarial = pd.DataFrame(
        {"angle": [30] * 3, "lr": [0.1] * 3, "steps": steps, "f_a_norm": [1.0, 2.0, 3.0], "f_a_bound": [2.0, 4, 8]}
    )
    kurt = pd.DataFrame({"r": [1, 1, 8, 8], "m": [10, 100, 10, 100], "excess_kurtosis": [7.0, 6.1, 0.9, 0.8]})
    tv = pd.DataFrame({"r": [1, 1], "m": [10, 100], "tv": [0.1, 0.05], "bound_eq46": [0.3, 0.1]})
    limits = pd.DataFrame({"r": [1, 4, 16], "tv_limit": [0.2, 0.1, 0.05]})
    rules = pd.DataFrame({"problem": ["a", "b"], "r": [1, 4]} | {rule: [0.1, 0.2] for rule in plots.RULE_LABELS})
    profile = pd.DataFrame(
        {"d": 8, "r": 2, "rho": 0.5, "eps": [0.5, 1.0], "delta": [0.1, 0.01], "gaussian_equal_mse": [0.2, 0.02]}
    ).assign(delta_mc=[0.1, 0.0], mc_se=[0.01, 0.0])
    dpmap = pd.DataFrame({"r": [1, 1, 4, 4], "rho": [0.5, 0.9] * 2, "eps_wishart": [1.0, np.inf, 0.5, 2.0]}).assign(
        eps_gaussian_equal_mse=[0.8, 3.0, 0.4, 1.5]
    )
    fig2 = pd.DataFrame({"rho": [0.5, 0.5, 0.9, 0.9], "r": [1, 4] * 2, "d": 100}).assign(
        eps_exact=[1.0, 2.0, 3.0, 4.0], eps_theorem=[2.0, 3.0, 4.0, 5.0], eps_clipped=[1.5, 2.5, 3.5, 4.5]
    )
    read = pd.DataFrame({"curve": ["exact", "Theorem 1"], "rho": [0.5, 0.9], "r": [1, 4], "eps_read": [1.0, 5.0]})
    mult = pd.DataFrame({"r": [1, 4, 4], "geometry": ["orthogonal", "random", "correlated"], "ratio": [1.1, 1.2, 1e-5]})
    m2 = pd.DataFrame({"steps": steps, "d": 8, "r": 2, "eps_noise_alone": [1.0, 3.0, 9.0]}).assign(
        eps_m2_fresh_A=[0.5, 1.5, 4.0], eps_m2_frozen_A_fixed_difference=[0.9, 2.9, 8.9]
    )
    m1 = pd.DataFrame({"eps": [0.5, 1.0], "r": 2, "delta_noise_alone": [0.1, 0.01]}).assign(
        delta_m1_secret_A=[0.05, 0.005], secret_se=[0.001, 0.001], delta_m1_published_A=[0.09, 0.009]
    )
    dp = pd.DataFrame({"weights": ["lora", "full"], "noise": [0.0, 1.0], "perplexity": [20.0, 21.0]}).assign(
        reference_auc=[0.6, 0.5], reference_low=[0.55, 0.45], reference_high=[0.65, 0.55]
    )
    audit = pd.DataFrame(
        {"method": ["full fine-tuning", "LoRA, frozen A"], "canary_auc": [0.9, 0.5], "auc_low": [0.85, 0.45]}
    ).assign(auc_high=[0.95, 0.55], eps_lower_bound=[2.0, 0.0])
    member = np.arange(40) % 2 == 0
    return [
        (plots.zscore_plot, ({"t": pd.DataFrame({"z": rng.normal(size=9)})},)),
        (plots.drift_plot, (drift,)),
        (plots.adversarial_plot, (adversarial,)),
        (plots.noise_histograms, ({"Lemma 3.1": rng.normal(size=500), "eq. 11": rng.normal(size=500)},)),
        (plots.kurtosis_plot, (kurt,)),
        (plots.distance_plot, (tv, limits)),
        (plots.rules_plot, (rules,)),
        (plots.privacy_profile_plot, (profile,)),
        (plots.dp_map_plot, (dpmap, 1e-5)),
        (plots.figure2_plot, (fig2, read, 1e-5)),
        (plots.attack_scores_plot, ({"distance": rng.normal(size=40), "norm": rng.normal(size=40)}, member)),
        (plots.multiplier_plot, (mult,)),
        (plots.composition_plot, (m2, 1e-5)),
        (plots.m1_profile_plot, (m1,)),
        (plots.dp_weights_plot, (dp, {"lora": "LoRA factors", "full": "all weights"}, 22.0)),
        (plots.audit_plot, (audit,)),
    ]


@pytest.mark.parametrize("index", range(len(_frames())), ids=lambda i: _frames()[i][0].__name__)
def test_every_figure_of_the_book_keeps_its_text_readable_on_a_phone(index):
    draw, args = _frames()[index]
    fig = draw(*args)  # each plot function refuses a figure that breaks the rule (plots._checked)
    pt, width = plots.smallest_text(fig)
    assert plots.rendered_text_px(pt, width) >= plots.MIN_TEXT_PX
    assert fig.get_figwidth() <= plots.WIDTH
    plt.close(fig)


def test_a_legend_below_takes_fewer_columns_where_its_rows_would_widen_the_figure():
    plots.style()
    fig = plots._figure(3.0)
    ax = fig.subplots()
    for k in range(4):
        ax.plot([0, 1], [k, k], label=f"a long legend entry number {k} of four")
    plots._legend_below(fig, ax, ncol=4)
    assert fig.legends[0]._ncols < 4 and fig.get_tightbbox().width <= plots.WIDTH + 0.05
    plt.close(fig)
