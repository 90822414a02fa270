"""Chapter b2_matrix_queries (paper B, matrix queries) at a tiny scale: tables and verdicts."""

import dataclasses

from conftest import registered

from lorapriv_utils.chapters import b2_matrix_queries as b2


def test_matrix_queries_chapter(tiny_scale):
    scale = dataclasses.replace(tiny_scale, attack_trials=200)
    attacks = b2.attack_table([(32, 8, 4, 4, "outer"), (32, 8, 4, 4, "gaussian")], scale)
    assert (attacks["auc"] == 1.0).all() and attacks["separated"].all()
    growth = b2.audit_growth((32, 8, 4, 4, "outer"), [50, 200], scale)
    assert growth["eps_low"].is_monotonic_increasing
    residuals = b2.residual_table((32, 8, 4, 4, "outer"), 50, scale)
    claims = b2.claims(attacks, growth, residuals, scale)
    assert {c.claim_id for c in claims} <= registered(b2.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    assert verdicts == {
        "B-2.not-dp": "holds",
        "B-2.mia": "holds",
        "B-2.lora-not-private": "holds",
        "A-v8.dp-by-design": "fails",  # the laws do not overlap
    }
    assert b2.key_numbers(attacks, growth, residuals)["b2_matrix_queries_auc_min"] == 1


def test_lora_step_is_the_projection_only_with_plain_sgd(tiny_scale):
    instance = b2.instance_table([4], steps=2)
    assert instance["sgd_worst_residual"].iloc[0] < 1e-5 and instance["adamw_best_residual"].iloc[0] > 0.1
    inits = b2.init_table(4)
    claim = b2.instance_claim(instance, inits, tiny_scale)
    assert claim.claim_id in registered(b2.KEY)
    assert claim.verdict == "qualified"  # AdamW and PEFT's default initialisation are the caveats
    assert instance["sgd_residual_shown"].iloc[0].startswith("< 1e-")
