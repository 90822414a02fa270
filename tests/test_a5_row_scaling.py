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
    assert a5.key_numbers(eq23, mult, acct, _cost(1.0, 1.0))["a5_row_scaling_z_formula"] < 0.02


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
    assert table["seconds_per_epoch"].tolist() == [1.1, 1.0, 1.3, 1.3]


def test_the_committed_cost_measurement_loads():
    cost = a5.load_cost()
    assert cost["time_ratio"] > 0 and cost["memory_ratio"] > 0 and cost["runs"] >= 3


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
    with pytest.raises(ValueError, match="not a multiplier record"):
        a5.load_real_multiplier(other)
    with pytest.raises(FileNotFoundError, match="regenerate"):
        a5.load_audits(tmp_path)


def test_audit_records_are_tabulated_and_verified(tmp_path):
    import json

    import pytest

    from lorapriv_utils.mia.report import record_checksum

    def record(method, sigma=None):
        training = {"steps": 10} | ({"noise_multiplier": sigma, "epsilon": 2.0, "epsilon_rdp": 2.5} if sigma else {})
        rec = {
            "audit": {"canaries": 100, "right": 12, "guesses": 20, "epsilon_lower_bound": 0.0, "auc": 0.5},
            "training": training,
            "manifest": {"cell": {"method": method, "rank": 8}, "train_config": {"epochs": 4, "lr": 0.01}},
        }
        rec["checksum"] = record_checksum(rec)
        return rec

    for name, rec in (("a", record("lora")), ("b", record("dpsgd", 1.0)), ("c", record("rowscale"))):
        (tmp_path / f"{name}.json").write_text(json.dumps(rec))
    table = a5.audit_table(a5.load_audits(tmp_path))
    assert table["method"].tolist() == ["LoRA r=8", "LoRA, row-scaled r=8", "DP-SGD r=8, sigma=1"]
    assert table["certified_eps_prv"].isna().tolist() == [True, True, False]
    (tmp_path / "a.json").write_text(json.dumps({**record("lora"), "audit": {}}))
    with pytest.raises(ValueError, match="checksum"):
        a5.load_audits(tmp_path)


def test_one_sample_noise_verdict(tiny_scale):
    scale = dataclasses.replace(tiny_scale, attack_trials=400)
    table = a5.noise_variance_table([4, 16], scale)
    assert (table["var_min_mc"] > table["paper_bound"]).all()
    claim = a5.noise_variance_claim(table, scale)
    assert claim.claim_id in registered(a5.KEY)
    assert claim.verdict == "qualified"  # heavy tails along a dominant entry at rank 4
    assert a5.noise_numbers(table)["a5_row_scaling_noise_kurt_r"] == 16
