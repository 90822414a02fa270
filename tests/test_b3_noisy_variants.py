"""Chapter b3_noisy_variants (paper B, M1 and M2) at a tiny scale: tables and verdicts."""

import dataclasses

import matplotlib.pyplot as plt
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
