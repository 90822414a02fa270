"""Chapter b3_noisy_variants (paper B, M1 and M2) at a tiny scale: tables and verdicts."""

import dataclasses

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from conftest import registered

from lorapriv_utils import plots
from lorapriv_utils.chapters import b3_noisy_variants as b3
from lorapriv_utils.ledger import InstrumentError


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
    separated = b3.lowrank_claim(_dp_frame((0.70, 0.65), (0.50, 0.50)), m2, tiny_scale)
    assert separated.claim_id in registered(b3.KEY)
    assert [c.passed for c in separated.checks if c.role == "caveat"] == [True, True, True, True]
    assert [c.role for c in separated.checks].count("identity") == 2  # one certificate: shown, not counted
    assert separated.verdict == "holds"
    against_full_only = b3.lowrank_claim(_dp_frame((0.70, 0.65), (0.54, 0.52)), m2, tiny_scale)
    assert [c.passed for c in against_full_only.checks if c.role == "caveat"] == [True, False, True, False]
    assert against_full_only.verdict == "qualified"
    with pytest.raises(InstrumentError):  # different certificates at one noise would be a bug
        b3.lowrank_claim(_dp_frame((0.7, 0.6), (0.5, 0.5)).assign(epsilon=lambda f: f.index + 1.0), m2, tiny_scale)
    with pytest.raises(ValueError, match="no DP run of lorafa"):
        b3.lowrank_claim(_dp_frame((0.7, 0.6), (0.5, 0.5)).query("weights != 'lorafa'"), m2, tiny_scale)
    with pytest.raises(ValueError, match="no noise multiplier above 0"):
        b3.lowrank_claim(_dp_frame((0.7, 0.6), (0.5, 0.5)).assign(noise=0.0), m2, tiny_scale)
    table = b3.dp_table(_dp_frame((0.7, 0.6), (0.5, 0.5)))
    assert table["reference attack AUC"].iloc[0] == "0.700 [0.680, 0.720]"
    frame = _dp_frame((0.7, 0.6), (0.5, 0.5))
    ranked = frame["weights"].isin(["lorafa", "lora"])
    frame.loc[ranked, "lr"] = min(tiny_scale.engine.lora.lr_grid)  # the low-rank runs at the bottom of their grid
    numbers = b3.dp_numbers(frame, 106.0, tiny_scale)
    assert numbers["b3_noisy_variants_dp_z0p5_full_ref"] == 0.7 and numbers["b3_noisy_variants_dp_z1_eps"] == 1
    assert numbers["b3_noisy_variants_dp_base_ppl"] == 106 and numbers["b3_noisy_variants_dp_noisy_runs"] == 8
    assert numbers["b3_noisy_variants_dp_lowest_rate"] == 4
    fig = plots.dp_weights_plot(_dp_frame((0.7, 0.6), (0.5, 0.5)), b3.WEIGHT_LABELS, 106.0)
    assert len(fig.axes[0].get_legend().get_texts()) == 7
    plt.close(fig)


def test_missing_dp_runs_say_how_to_make_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="make results-b3"):
        b3.load_dp_compare("cpu-small", tmp_path / "nothing")
    with pytest.raises(FileNotFoundError, match="make results-a6"):
        b3.base_perplexity("cpu-small", tmp_path / "base.json")
