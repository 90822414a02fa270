"""Chapter a5_row_scaling (paper A §5) at a tiny scale: tables, accounting and verdicts."""

import dataclasses

from conftest import registered

from lorapriv_utils.chapters import a5_row_scaling as a5


def test_row_scaling_chapter(tiny_scale):
    scale = dataclasses.replace(tiny_scale, noise_draws=2000, attack_trials=400)
    jl = a5.jl_table([0.5], [0.1, 0.5], 16, scale)
    eq23 = a5.eq23_table(64, [8], [8], 0.5, scale, m=16)
    mult = a5.multiplier_table(4, 8, 32, [4], 0.5, scale, repeats=4)
    acct = a5.accounting_table(768, [8], 0.5)
    assert bool(acct["rdp_best_order_at_grid_edge"].all()) and acct["eps_rdp_at_formula"].iloc[0] > 1e6
    assert abs(acct["eps_prv_at_needed"].iloc[0] / acct["eps_pld_at_needed"].iloc[0] - 1) < 0.05
    claims = a5.claims(jl, eq23, mult, acct, scale)
    assert {c.claim_id for c in claims} <= registered(a5.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    assert verdicts == {"A-5.1-JL": "holds", "A-5.eq22": "holds", "A-5.eq23": "qualified", "A-5.1-z": "fails"}
    assert a5.key_numbers(eq23, mult, acct)["a5_row_scaling_z_formula"] < 0.02
