"""Chapter b3_noisy_variants (paper B, M1 and M2) at a tiny scale: tables and verdicts."""

import dataclasses

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from conftest import registered

from lorapriv_utils import plots
from lorapriv_utils.chapters import b3_noisy_variants as b3


def test_noisy_variants_chapter(tiny_scale):
    scale = dataclasses.replace(tiny_scale, attack_trials=400, element_draws=200_000)
    ratios = b3.ratio_table([8, 64], scale)
    m2 = b3.m2_table([8, 768], [1, 10])
    m1 = b3.m1_table([8, 512], [0.0, 1.0], scale)
    instr = b3.instrument_table(scale)
    assert bool(instr["passed"].all())
    assert (ratios["kappa_100_fresh"] < ratios["kappa_100_frozen"]).all()
    full = m2[m2["r"] == 768]
    assert (full["eps_m2_fresh_A"] - full["eps_noise_alone"]).abs().max() < 0.01 * full["eps_noise_alone"].max()
    claims = b3.claims(ratios, m2, m1, instr, scale)
    assert {c.claim_id for c in claims} <= registered(b3.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    assert verdicts == {"B-3.m2": "qualified", "B-3.m1": "qualified", "B-3.stronger": "qualified"}
    composition = plots.composition_plot(m2, b3.DELTA)
    assert "10^{-5}" in composition.axes[0].get_ylabel()  # a power of ten in mathtext, not 1e-05
    for fig in (composition, plots.m1_profile_plot(m1)):
        assert fig.axes[0].get_lines()
        plt.close(fig)
    numbers = b3.key_numbers(ratios, m2, m1)
    assert numbers["b3_noisy_variants_eps_fresh_T"] < numbers["b3_noisy_variants_eps_frozen_T"]
    assert numbers["b3_noisy_variants_m1_secret"] < numbers["b3_noisy_variants_m1_noise"]


def _dp_frame(full_ref, lorafa_ref, eps=(3.0, 1.0)):
    """A dp_compare.summary-like frame: two noise levels, the four weight sets, reference-attack AUCs given."""
    rows = []
    for i, sigma in enumerate((0.5, 1.0)):
        for w, auc in (("full", full_ref[i]), ("adapter", 0.55), ("lorafa", lorafa_ref[i]), ("lora", 0.55)):
            rows.append(
                {
                    "weights": w,
                    "rank": 8 if w in ("lorafa", "lora") else None,
                    "noise": sigma,
                    "trainable": 10,
                    "epsilon": eps[i],
                    "epsilon_rdp": eps[i] * 1.2,
                    "lr": 1e-3,
                    "perplexity": 100.0 + i,
                    "loss_auc": 0.5,
                    "loss_low": 0.48,
                    "loss_high": 0.52,
                    "reference_auc": auc,
                    "reference_low": auc - 0.02,
                    "reference_high": auc + 0.02,
                }
            )
    return pd.DataFrame(rows)


def test_the_dp_weight_sets_claim_reads_certificate_and_attacks(tiny_scale):
    m2 = b3.m2_table([8, 768], [1, 10])
    separated = b3.lowrank_claim(_dp_frame((0.70, 0.65), (0.55, 0.52)), m2, tiny_scale)
    assert separated.claim_id in registered(b3.KEY)
    caveats = [c for c in separated.checks if c.role == "caveat"]
    assert [c.passed for c in caveats] == [False, False, True, True]  # same certificate; attacks resolved
    assert separated.verdict == "qualified"
    overlapping = b3.lowrank_claim(_dp_frame((0.56, 0.53), (0.55, 0.52)), m2, tiny_scale)
    assert [c.passed for c in overlapping.checks if c.role == "caveat"][2:] == [False, False]
    assert overlapping.verdict == "qualified"
    table = b3.dp_table(_dp_frame((0.7, 0.6), (0.5, 0.5)))
    assert table["reference attack AUC"].iloc[0] == "0.700 [0.680, 0.720]"
    numbers = b3.dp_numbers(_dp_frame((0.7, 0.6), (0.5, 0.5)))
    assert numbers["b3_noisy_variants_dp_z0p5_full_ref"] == 0.7 and numbers["b3_noisy_variants_dp_z1_eps"] == 1
    fig = plots.dp_weights_plot(_dp_frame((0.7, 0.6), (0.5, 0.5)), b3.WEIGHT_LABELS)
    assert len(fig.axes[0].get_legend().get_texts()) == 6
    plt.close(fig)


def test_missing_dp_runs_say_how_to_make_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="make results-b3"):
        b3.load_dp_compare("cpu-small", tmp_path / "nothing")
