"""Chapter a5_row_scaling (paper A §5) at a tiny scale: tables, accounting and verdicts."""

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import registered

from lorapriv_utils.chapters import a5_row_scaling as a5


@pytest.mark.slow
def test_row_scaling_chapter(tiny_scale):
    scale = dataclasses.replace(tiny_scale, noise_draws=2000, attack_trials=400)
    jl = a5.jl_table([0.5], [0.1, 0.5], 16, scale)
    eq23 = a5.eq23_table(64, [8], [8], 0.5, scale, m=16)
    mult = a5.multiplier_table(4, 8, 32, [4], 0.5, scale, repeats=4)
    acct = a5.accounting_table(768, [8], 0.5)
    assert bool(acct["rdp_best_order_at_grid_edge"].all()) and acct["eps_rdp_at_formula"].iloc[0] > 1e6
    assert abs(acct["eps_prv_at_needed"].iloc[0] / acct["eps_pld_at_needed"].iloc[0] - 1) < 0.05
    # why PRV is not run at the formula's multiplier: its grid is beyond any machine's memory, where eps = 8's fits
    assert acct["prv_gib_at_formula"].iloc[0] > 1024 and acct["prv_gib_at_needed"].iloc[0] < 0.1
    claims = a5.claims(jl, eq23, mult, acct, scale)
    assert {c.claim_id for c in claims} <= registered(a5.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    assert verdicts == {"A-5.1-JL": "holds", "A-5.eq22": "holds", "A-5.eq23": "qualified", "A-5.1-z": "fails"}
    assert a5.key_numbers(eq23, mult, acct, _cost(1.0, 1.0))["a5_row_scaling_z_formula"] < 0.02
    both = a5.key_numbers(eq23, mult, acct, _cost(1.0, 1.0), larger=_cost(1.1, 0.93))
    assert both["a5_row_scaling_larger_memory_ratio"] == 0.93 and "a5_row_scaling_larger_time_ratio" in both


def test_the_prv_grid_size_is_the_one_opacus_allocates():
    """prv_grid_points reads Opacus's own domain rule without allocating; at a multiplier whose grid fits, it is
    the length of the discretised privacy loss the accountant builds (a changed rule or default is caught)."""
    from opacus.accountants import PRVAccountant

    z, q, steps = 1.0, 8 / a5.PTB_MEMBERS, 2000
    accountant = PRVAccountant()
    accountant.history = [(z, q, steps)]
    built = accountant._get_dprv(a5.PRV_EPS_ERROR, a5.DELTA_DP * a5.PRV_DELTA_ERROR_SHARE)
    assert a5.prv_grid_points(z, q, steps) == len(built.pmf) > 1000
    assert a5.prv_grid_points(z / 10, q, steps) > 10 * a5.prv_grid_points(z, q, steps)  # less noise, wider loss


def _cost(time_ratio, memory_ratio):
    return {
        "lora_seconds": 1.1,
        "lorafa_seconds": 1.0,
        "rowscale_seconds": time_ratio,
        "lora_peak_mb": 11.0,
        "lorafa_peak_mb": 10.0,
        "rowscale_peak_mb": 10.0 * memory_ratio,
        "time_ratio": time_ratio,
        "memory_ratio": memory_ratio,
        "runs": 3,
        "model": "test",
        "measured_on": {"cpu_count": 2, "versions": {"torch": "x"}},
    }


def test_the_cost_verdict_follows_the_measured_ratios(tiny_scale):
    assert a5.cost_claim(_cost(1.05, 1.02), tiny_scale).verdict == "holds"
    assert a5.cost_claim(_cost(1.3, 1.02), tiny_scale).verdict == "qualified"
    assert a5.cost_claim(_cost(1.05, 2.0), tiny_scale).verdict == "fails"
    table = a5.cost_table(_cost(1.3, 1.5))
    assert table["seconds per epoch"].tolist() == [1.1, 1.0, 1.3]  # one unit per column: ratios have their own
    assert table["time / LoRA-FA"].tolist() == [1.1, 1.0, 1.3] and table["memory / LoRA-FA"].tolist() == [1.1, 1.0, 1.5]
    larger = _cost(1.3, 1.02) | {"scale": "cpu-large"}
    # the larger model's ratios are caveats: above the strict reading they qualify the verdict, never fail it
    assert a5.cost_claim(_cost(1.05, 1.02), tiny_scale, larger=larger).verdict == "qualified"
    assert a5.cost_claim(_cost(1.05, 1.02), tiny_scale, larger=_cost(1.05, 1.02)).verdict == "holds"
    assert a5.cost_claim(_cost(1.05, 2.0), tiny_scale, larger=_cost(1.05, 1.02)).verdict == "fails"
    both = a5.cost_table(_cost(1.3, 1.5), larger)
    assert both["scale"].tolist() == ["cpu-small"] * 3 + ["cpu-large"] * 3


def test_the_committed_cost_measurement_loads():
    cost = a5.load_cost()
    assert cost["time_ratio"] > 0 and cost["memory_ratio"] > 0 and cost["runs"] >= 3


@pytest.mark.slow
def test_the_committed_real_gradient_multiplier_loads_and_enters_the_verdict(tiny_scale):
    record = a5.load_real_multiplier()
    table = a5.real_multiplier_table(record)
    assert list(table.columns[:3]) == ["b", "r", "z_formula"] and (table["batches"] >= 20).all()
    assert (table["ratio_min"] <= table["ratio_mean"]).all() and (table["ratio_mean"] <= table["ratio_max"]).all()
    assert (table["ratio_se"] > 0).all() and (record["n"], record["m"]) == (192, 64) and record["base"]["source"]
    numbers = a5.real_multiplier_numbers(table, record)
    assert numbers["a5_row_scaling_real_b_max"] == 32 and numbers["a5_row_scaling_real_texts"] == record["texts"]
    scale = dataclasses.replace(tiny_scale, noise_draws=2000, attack_trials=400)
    args = (
        a5.jl_table([0.5], [0.1], 16, scale),
        a5.eq23_table(64, [8], [8], 0.5, scale, m=16),
        a5.multiplier_table(4, 8, 32, [4], 0.5, scale, repeats=4),
        a5.accounting_table(768, [8], 0.5),
        scale,
    )
    low = table.assign(ratio_min=[0.5] + [2.0] * (len(table) - 1))
    for frame, failing in ((table, 0), (low, 1)):
        z = {c.claim_id: c for c in a5.claims(*args, real=frame)}["A-5.1-z"]
        real = [c for c in z.checks if c.name.startswith("real per-text")]
        assert len(real) == len(table) and sum(not c.passed for c in real) == failing
    assert "real GPT-2" in z.summary


def test_missing_results_say_how_to_regenerate_them(tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError, match="regenerate"):
        a5.load_cost(tmp_path / "none.json")
    with pytest.raises(FileNotFoundError, match="regenerate"):
        a5.load_real_multiplier(tmp_path / "none.json")
    other = tmp_path / "elsewhere" / "other.json"
    other.parent.mkdir()
    other.write_text("{}")
    with pytest.raises(ValueError, match="checksum mismatch"):  # every committed record carries a checksum
        a5.load_real_multiplier(other)
    from lorapriv_utils.store import seal

    other.write_text(json.dumps(seal({"manifest": {}, "curve": [], "wall_seconds": 1.0}, kind="alignment")))
    with pytest.raises(ValueError, match="of kind alignment, not multiplier; regenerate it with: make results-a5 "):
        a5.load_real_multiplier(other)
    with pytest.raises(FileNotFoundError, match="regenerate"):
        a5.load_audits(tmp_path)


DESIGN = {"dataset": "synthetic-email", "seeds": (1, 2), "canaries": 400, "guesses_each_side": 50, "epochs": 16}


def audit_records(
    shifts: dict[str, float], certified: float = 2.0, m: int = 400, seeds=(1, 2), ppl: dict | None = None
) -> list[dict]:
    """Synthetic audit records of ``DESIGN``: per seed, canaries shared by all methods, each canary's score its own
    difficulty plus a little noise, the included ones' shifted by each method's value; validation perplexity 100 + the
    method's position, or ``ppl``'s."""
    from lorapriv_utils.mia.attacks import canary
    from lorapriv_utils.store import seal

    config = canary.CanaryConfig(m, 50)
    records = []
    for seed in seeds:
        included = canary.inclusion(m, seed=seed)
        difficulty = np.random.default_rng([seed]).normal(0, 1, m)
        for k, (name, shift) in enumerate(shifts.items()):
            method, *rest = name.split("-")
            rank = int(rest[0][1:]) if rest and rest[0].startswith("r") else None
            sigma = float(name.split("-z")[1]) if "-z" in name else None
            fixed = float(name.split("-lr")[1]) if "-lr" in name else None
            scores = difficulty + np.random.default_rng([seed, k]).normal(0, 0.2, m) + shift * included
            training = {"steps": 10}
            if sigma is not None:
                training |= {
                    "noise_multiplier": sigma,
                    "epsilon": certified if sigma >= 1 else None,
                    "epsilon_rdp": None,
                }
            rec = {
                "audit": canary.canary_audit(scores, included, config),
                "scores": scores.tolist(),
                "included": included.tolist(),
                "validation_perplexity": (ppl or {}).get(name, 100.0 + k),
                "training": training,
                "manifest": {
                    "canary_config": dataclasses.asdict(config),
                    "cell": {"method": method, "rank": rank, "seed": seed, "dataset": "synthetic-email"},
                    "train_config": {"epochs": 16, "lr": 0.01, "batch_size": 16},
                    "model": {"n_embd": 64, "n_layer": 2},
                    "config": {"engine": {"rowscale": {"delta": 0.5}}, "overrides": {"lr": fixed}},
                    "wall_seconds": 60.0,
                },
            }
            records.append(seal(rec, kind="canary-audit"))
    return records


SHIFTS = {
    "full": 3.0,
    "lora-r8": 0.3,
    "rowscale-r8": 0.3,
    "dpsgd-r8-z0.0340207": 0.3,
    "dpsgd-r8-z1": 0.0,
}


def judged(records, scale):
    table = a5.audit_table(records, scale)
    diffs = a5.audit_differences(records, a5.audit_pairs(records), scale)
    return table, diffs, a5.audit_claim(table, diffs, records, scale)


@pytest.mark.slow
def test_audit_records_are_tabulated_compared_and_verified(tmp_path, tiny_scale):
    import json

    import pytest

    records = audit_records(SHIFTS)
    for rec in records:
        (tmp_path / f"{a5.audit_name(rec)}.json").write_text(json.dumps(rec))
    loaded = a5.load_audits(tmp_path, DESIGN)
    assert a5.implied_multiplier(loaded[0]) == pytest.approx(0.0340207, rel=1e-6)
    table, diffs, claim = judged(loaded, tiny_scale)
    assert table["method"].tolist()[:2] == ["full fine-tuning", "LoRA r=8"] and (table["seeds"] == 2).all()
    assert table["certified_eps_prv"].isna().sum() == 4 and (table["auc_low"] <= table["canary_auc"]).all()
    assert (table["canary_auc"] <= table["auc_high"]).all()
    full = table.set_index("name").loc["full"]
    assert full["canary_auc"] > 0.9 and full["eps_lower_bound"] > 1 and full["right"] <= full["guesses"] == 200
    assert diffs["comparison"].tolist()[2] == "rowscale_dp" and diffs["minus"].tolist()[2] == "dpsgd-r8-z0.0340207"
    assert (diffs["low"] <= diffs["difference"]).all() and (diffs["difference"] <= diffs["high"]).all()
    assert diffs["high"].iloc[0] < 0 and diffs["low"].iloc[2] < 0 < diffs["high"].iloc[2]
    # equal leakage and utility: the equivalence passes; DP-SGD at the multiplier certifies nothing (a caveat)
    assert claim.verdict == "qualified"
    core = [c for c in claim.checks if c.role == "core"]
    assert len(core) == 3 and all(c.outcome == "passes" for c in core)
    assert [c.name for c in claim.checks if not c.passed] == [claim.checks[-1].name]
    assert "meaningful epsilon" in claim.checks[-1].name
    assert [c.role for c in claim.checks[:2]] == ["instrument", "instrument"]
    numbers = a5.audit_numbers(table, diffs, loaded)
    assert numbers["a5_row_scaling_audit_canaries"] == 400 and numbers["a5_row_scaling_audit_eps_full"] > 1
    assert numbers["a5_row_scaling_audit_ppl_full"] == 100.0 and numbers["a5_row_scaling_audit_rows"] == 192
    assert numbers["a5_row_scaling_audit_implied_z_joint"] == 0.0241  # n = 2 layers x 192 rows
    assert numbers["a5_row_scaling_audit_wall_minutes"] == 10.0 and numbers["a5_row_scaling_audit_seeds"] == 2
    from lorapriv_utils import plots

    assert len(plots.audit_plot(table).axes) == 2
    (tmp_path / "full-s1.json").write_text(json.dumps({**records[0], "audit": {}}))
    with pytest.raises(ValueError, match="checksum"):
        a5.load_audits(tmp_path, DESIGN)
    assert not any("fixed" in key for key in a5.audit_pairs(loaded)) and "fixed rate" not in claim.summary


@pytest.mark.slow
def test_full_fine_tuning_at_a_fixed_rate_is_audited_beside_the_swept_one(tiny_scale):
    """Full fine-tuning audited at FIXED_FULL_LR (``--lr``) is its own row, compared with each LoRA-factor audit;
    it informs the summary and never the power rule, which reads the swept run."""
    fixed = {**SHIFTS, a5.FIXED_FULL: 0.2}  # a weak signal
    records = audit_records(fixed, ppl={a5.FIXED_FULL: 150.0})
    assert a5.audit_name(records[-1]) == f"full-lr{a5.FIXED_FULL_LR:g}-s2"  # the last record: seed 2
    table, diffs, claim = judged(records, tiny_scale)
    assert table["name"].tolist()[0] == "full" and table["name"].tolist()[-1] == a5.FIXED_FULL
    assert table["method"].tolist()[-1] == f"full fine-tuning, rate {a5.FIXED_FULL_LR:g} fixed"
    swept = table.iloc[:-1].reset_index(drop=True)  # the swept audits' rows (their intervals too) as without it
    pd.testing.assert_frame_equal(swept, judged(audit_records(SHIFTS), tiny_scale)[0])
    assert set(a5.FIXED_PAIRS) <= set(diffs["comparison"]) and (diffs["minus"] == a5.FIXED_FULL).sum() == 3
    assert claim.verdict == judged(audit_records(SHIFTS), tiny_scale)[2].verdict  # the rule reads the swept run
    assert "fixed rate" in claim.summary and "validation PPL 150" in claim.summary
    numbers = a5.audit_numbers(table, diffs, records)
    assert numbers["a5_row_scaling_audit_ppl_full_fixed"] == 150.0
    assert numbers["a5_row_scaling_audit_fixed_lr"] == a5.FIXED_FULL_LR
    row = table.set_index("name").loc[a5.FIXED_FULL]
    assert numbers["a5_row_scaling_audit_auc_full_fixed"] == pytest.approx(row["canary_auc"], abs=1e-3)
    high = diffs.set_index("comparison").loc["rowscale_full_fixed", "high"]
    assert numbers["a5_row_scaling_audit_diff_rowscale_full_fixed_high"] == high  # the table's digits: one rounding
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    recipe = re.search(r"\$\(AUDIT\) --methods full --lr (\S+)", makefile)
    assert recipe and float(recipe[1]) == a5.FIXED_FULL_LR  # make results-a5 audits at the chapter's rate


@pytest.mark.slow
def test_every_core_check_of_the_audit_can_fail(tiny_scale):
    """Row scaling that leaks more, or less, than DP-SGD at its multiplier fails the equivalence on that side; one
    that learns unlike it fails matched utility; an audit too weak to catch full fine-tuning, or to tell the noise
    levels apart, judges nothing."""
    for shift, side in ((1.5, "upper side"), (-1.0, "lower side")):
        claim = judged(audit_records({**SHIFTS, "rowscale-r8": shift}), tiny_scale)[2]
        assert claim.verdict == "fails"
        assert [c.name for c in claim.checks if c.outcome == "fails" and c.role == "core"] == [
            next(c.name for c in claim.checks if side in c.name)
        ]
    claim = judged(audit_records(SHIFTS, ppl={"rowscale-r8": 150.0}), tiny_scale)[2]
    assert claim.verdict == "fails" and any("matched utility" in c.name and not c.passed for c in claim.checks)
    close = judged(audit_records({**SHIFTS, "rowscale-r8": 0.45}), tiny_scale)[2]  # interval across the margin
    assert close.verdict == "unresolved" and any(c.outcome == "unresolved" for c in close.checks if c.role == "core")
    for weak, reason in (({"full": 0.1}, "full fine-tuning"), ({"dpsgd-r8-z1": 0.3}, "cannot tell DP-SGD")):
        claim = judged(audit_records({**SHIFTS, **weak}), tiny_scale)[2]
        assert claim.verdict == "not testable here" and "too weak" in claim.summary and reason in claim.summary


@pytest.mark.slow
def test_the_audit_refuses_records_it_cannot_trust(tmp_path, tiny_scale):
    import pytest

    from lorapriv_utils.ledger import InstrumentError

    broken = audit_records({**SHIFTS, "dpsgd-r8-z1": 3.0}, certified=0.5)  # an audit above a certificate: a bug
    with pytest.raises(InstrumentError):
        judged(broken, tiny_scale)
    other = audit_records(SHIFTS)
    other[1]["included"] = list(~np.asarray(other[1]["included"]))
    with pytest.raises(ValueError, match="of seed 1 do not share their canaries"):
        a5.audit_table(other, tiny_scale)
    stale = audit_records(SHIFTS)
    stale[0]["audit"]["epsilon_lower_bound"] += 0.1  # a bound from other code than today's
    with pytest.raises(ValueError, match="full-s1: the stored audit is not what the bound computes now"):
        a5.audit_table(stale, tiny_scale)
    with pytest.raises(ValueError, match="no audit named lora-r4"):
        a5.audit_differences(stale[1:], {"x": ("lora-r4", "full")}, tiny_scale)
    with pytest.raises(ValueError, match=r"full-s0 is not of the audit's fixed design \(seed=0"):
        a5.check_design(audit_records(SHIFTS, seeds=(0, 1)), DESIGN)
    with pytest.raises(ValueError, match="epochs=4"):
        wrong = audit_records(SHIFTS)
        wrong[0]["manifest"]["train_config"]["epochs"] = 4
        a5.check_design(wrong, DESIGN)
    with pytest.raises(ValueError, match="not every seed of \\(1, 2\\) is audited"):
        a5.check_design(audit_records(SHIFTS, seeds=(1,)), DESIGN)


def test_one_sample_noise_verdict(tiny_scale):
    scale = dataclasses.replace(tiny_scale, attack_trials=400)
    table = a5.noise_variance_table([4, 16], scale)
    assert (table["var_min_mc"] > table["paper_bound"]).all()
    claim = a5.noise_variance_claim(table, scale)
    assert claim.claim_id in registered(a5.KEY)
    assert claim.verdict == "qualified"  # heavy tails along a dominant entry at rank 4
    assert a5.noise_numbers(table)["a5_row_scaling_noise_kurt_r"] == 16
