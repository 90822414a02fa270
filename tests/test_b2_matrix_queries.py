"""Chapter b2_matrix_queries (paper B, matrix queries) at a tiny scale: tables and verdicts."""

import dataclasses

import pytest
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
        "B-2.theorem2": "holds",
        "B-2.mia": "holds",
        "B-2.lora-not-private": "holds",
        "A-v8.dp-by-design": "fails",  # the laws do not overlap
    }
    assert b2.key_numbers(attacks, growth, residuals)["b2_matrix_queries_auc_min"] == 1
    # Theorem 2's event must separate the worlds: a true-world residual as large as the other world's breaks it
    overlapping = residuals.copy()
    wrong = overlapping.loc[overlapping["query"] == "the other world's", "smallest"].iloc[0]
    overlapping.loc[overlapping["query"] == "the true one", "largest"] = 2 * wrong
    broken = {c.claim_id: c for c in b2.claims(attacks, growth, overlapping, scale)}
    assert broken["B-2.theorem2"].verdict == "fails" and broken["B-2.not-dp"].verdict == "fails"


def test_b_alone_with_a_secret(tiny_scale):
    scale = dataclasses.replace(tiny_scale, attack_trials=200)
    # rank(V0) = 4 < n = 12: the support test; rank 12 = n: the likelihood-ratio test, with a large target
    table = b2.b_alone_table([(32, 12, 4, 4, "outer", 1.0), (32, 12, 4, 64, "outer", 10.0)], scale)
    assert table[["b", "attack"]].values.tolist() == [[4, "support"], [64, "likelihood"]]
    support, likely = table.iloc[0], table.iloc[1]
    assert support["separated"] and support["auc"] == 1.0 and support["rank_below_n"]
    assert likely["auc"] > 0.9 and not likely["rank_below_n"]
    not_private, by_design = b2.b_alone_checks(table)
    assert [c.passed for c in not_private] == [True, True] and [c.passed for c in by_design] == [False]
    attacks = b2.attack_table([(32, 8, 4, 4, "outer")], scale)
    growth = b2.audit_growth((32, 8, 4, 4, "outer"), [50, 200], scale)
    residuals = b2.residual_table((32, 8, 4, 4, "outer"), 50, scale)
    claims = {c.claim_id: c for c in b2.claims(attacks, growth, residuals, scale, b_alone=table)}
    assert any("B alone" in c.name for c in claims["A-v8.dp-by-design"].checks)
    assert "B alone with A secret: told apart" in claims["B-2.lora-not-private"].summary
    numbers = b2.b_alone_numbers(table)
    assert numbers["b2_matrix_queries_b_alone_support_separated"] == 1
    assert numbers["b2_matrix_queries_b_alone_lr_auc_big_target"] == pytest.approx(likely["auc"], abs=1e-3)
    # without the B-alone table the notes say it is untested
    plain = {c.claim_id: c for c in b2.claims(attacks, growth, residuals, scale)}
    assert "B alone is not tested" in plain["B-2.lora-not-private"].note


def test_lora_step_is_the_projection_only_with_plain_sgd(tiny_scale):
    instance = b2.instance_table([4], steps=2)
    assert instance["sgd_worst_residual"].iloc[0] < 1e-5 and instance["adamw_best_residual"].iloc[0] > 0.1
    quoted = b2.instance_numbers(instance)["b2_matrix_queries_adamw_residual_min"]
    assert quoted == pytest.approx(instance["adamw_best_residual"].min(), rel=1e-3)  # the page's "at least"
    inits = b2.init_table(4)
    claim = b2.instance_claim(instance, inits, tiny_scale)
    assert claim.claim_id in registered(b2.KEY)
    assert claim.verdict == "qualified"  # AdamW and PEFT's default initialisation are the caveats
    assert instance["sgd_residual_shown"].iloc[0].startswith("< 1e-")
    # below float32's rounding level even the power of ten differs by machine: one bucket for all of it
    assert [b2._bound(x) for x in (0.0, 2e-9, 4.6e-7, 3e-6)] == ["< 1e-6", "< 1e-6", "< 1e-6", "< 1e-5"]
    # the ledger records the same bucket, so that a rerun on another machine writes the same record
    assert [b2._ceiling(x) for x in (4.6e-7, 4.8e-7, 3e-6)] == [1e-6, 1e-6, 1e-5]
    assert {c.measured for c in claim.checks if "power of ten" in c.name} == {1e-6}
    # and each core check fails where LoRA is not the projection
    for broken in (
        instance.assign(sgd_worst_residual=3e-5),
        instance.assign(fitted_multiple=instance["derived_multiple"] * 1.001),
    ):
        assert b2.instance_claim(broken, inits, tiny_scale).verdict == "fails"


def test_the_dp_game_on_a_trained_gpt2_is_loaded_and_read(tiny_scale, tmp_path):
    import json

    from lorapriv_utils.store import record_checksum, seal

    def row(rank, separated, fitted=True):
        return {
            "rank": rank,
            "validation_perplexity": 100.0,
            # the refits' history: after one refit the out-world distance falls below the in-world one where fitted
            "targets": [{"fitted_history_in": [1.0, 0.5], "fitted_history_out": [1.0, 0.1 if fitted else 0.9]}] * 4,
            "known": {
                "auc": {"value": 1.0 if separated else 0.9, "low": 0.9, "high": 1.0},
                "max_out": 0.0,
                "min_in": 0.01,
                "separated": separated,
            },
            "blind": {
                "auc": {"value": 0.5, "low": 0.3, "high": 0.7},
                "max_out": 1.0,
                "min_in": 0.9,
                "separated": False,
            },
            "fitted": {
                "auc": {"value": 1.0 if fitted else 0.7, "low": 0.6, "high": 1.0},
                "max_out": 0.01,
                "min_in": 0.09 if fitted else 0.005,
                "separated": fitted,
            },
        }

    scale = dataclasses.replace(tiny_scale, attack_trials=50)
    attacks = b2.attack_table([(32, 8, 4, 4, "outer")], scale)
    growth = b2.audit_growth((32, 8, 4, 4, "outer"), [50], scale)
    residuals = b2.residual_table((32, 8, 4, 4, "outer"), 20, scale)
    cases = ((True, True, "holds"), (False, True, "fails"), (True, False, "holds"), (True, None, "qualified"))
    for separated, fitted, verdict in cases:
        record = {
            "rows": [row(1, True, fitted is not None), row(8, separated, bool(fitted))],
            "game": {"texts": 10, "steps": 2},
            "fit": {"rounds": 5, "relax": 1.5},
            "base": {"spec": {"n_embd": 64, "n_layer": 2}},
            "wall_seconds": 60,
            "manifest": {},
        }
        record = seal(record, kind="whitebox")
        path = tmp_path / "game.json"
        path.write_text(json.dumps(record))
        game, loaded = b2.load_game("cpu-small", path)
        assert list(game["r"]) == [1, 8] and game["released_A_auc_95"].iloc[0] == "[0.90, 1.00]"
        assert not game["tuned_elsewhere"].any()  # a record without the version of its numerics: the first
        shape = b2.shape_table(game, loaded)
        assert len(shape) == len(b2.PAPER_B_CIFAR) + 6 and "10 texts, 2 full-batch" in shape["model and data"].iloc[-1]
        assert [c.passed for c in b2.game_checks(game)] == [True, separated, fitted is not None]
        numbers = b2.game_numbers(game, loaded)
        assert numbers["b2_matrix_queries_game_minutes"] == 1
        # the attack's settings as this record played them (5 rounds, relax 1.5; no list of relaxes: that one)
        assert [numbers[f"b2_matrix_queries_game_fit_{k}"] for k in ("rounds", "relax", "relax_low", "relax_high")] == [
            5,
            1.5,
            1.5,
            1.5,
        ]
        assert numbers["b2_matrix_queries_game_fitted_separated"] == (fitted is not None) + bool(fitted)
        assert (
            numbers["b2_matrix_queries_game_fitted_peak"] == 1.0
            and numbers["b2_matrix_queries_game_fitted_peak_rank"] == 8
        )
        assert numbers["b2_matrix_queries_game_fitted_free_per_layer"] == 36
        held = b2.held_out_fit(loaded)  # two folds per rank; one refit wins where the fit separates
        assert len(held) == 4 and list(held["tuned_on"][:2]) == ["first half", "second half"]
        assert list(held["held_out_separated"]) == [fitted is not None] * 2 + [bool(fitted)] * 2
        assert (held["refits"][held["held_out_separated"]] == 1).all()
        assert numbers["b2_matrix_queries_game_heldout_separated"] == (fitted is not None) + bool(fitted)
        claims = {c.claim_id: c for c in b2.claims(attacks, growth, residuals, scale, game)}
        assert claims["B-2.lora-not-private"].verdict == verdict
        assert claims["A-v8.dp-by-design"].verdict == "fails"
        fitted_check = claims["A-v8.dp-by-design"].checks[-1]
        assert "where DP needs none" in fitted_check.name and fitted_check.passed == (fitted is None)
        assert fitted_check.role == "caveat"  # separating nothing is the attack's limit, not support for the claim
        assert "trained with LoRA-FA" in claims["A-v8.dp-by-design"].summary
    old = {**record, "rows": [{k: v for k, v in r.items() if k != "fitted"} for r in record["rows"]]}
    del old["checksum"]
    path.write_text(json.dumps({**old, "checksum": record_checksum(old)}))
    with pytest.raises(ValueError, match="predates the fitted"):
        b2.load_game("cpu-small", path)
    path.write_text(json.dumps({**record, "checksum": "0"}))
    with pytest.raises(ValueError, match="checksum"):
        b2.load_game("cpu-small", path)
    with pytest.raises(FileNotFoundError, match="make results-b2"):
        b2.load_game("cpu-small", tmp_path / "missing.json")


def test_held_out_refits_are_chosen_on_one_half_and_read_on_the_other():
    """The first half's targets separate after one refit, the second half's only after two: tuned on the first half
    the attack stops at one refit and fails on the second; tuned on the second it takes two and separates the first."""
    early = {"fitted_history_in": [1.0, 0.5, 0.5], "fitted_history_out": [1.0, 0.1, 0.1]}
    late = {"fitted_history_in": [1.0, 0.5, 0.5], "fitted_history_out": [1.0, 0.9, 0.1]}
    record = {"rows": [{"rank": 4, "targets": [early] * 3 + [late] * 3}], "fit": {"relax": 1.5}}
    held = b2.held_out_fit(record)
    assert list(held["refits"]) == [1, 2] and list(held["held_out_separated"]) == [False, True]
    assert held["tuning_auc"].tolist() == [1.0, 1.0] and held["held_out_auc"].iloc[0] == 0.0
    by_rank = b2.held_out_by_rank(held)
    assert by_rank.to_dict("records") == [{"r": 4, "held_out_auc_min": 0.0, "held_out_separated": False}]


def test_held_out_relaxation_is_chosen_with_the_refits():
    """With histories per relaxation the split chooses the relaxation too: at 2 every target separates after one
    refit, at 1 none does; a tie in AUC goes to the fewest refits, then the smallest relaxation."""
    slow = {"in": [1.0, 0.5, 0.5], "out": [1.0, 0.9, 0.9]}
    fast = {"in": [1.0, 0.5, 0.5], "out": [1.0, 0.1, 0.1]}
    target = {
        "fitted_histories_in": {"1": slow["in"], "2": fast["in"]},
        "fitted_histories_out": {"1": slow["out"], "2": fast["out"]},
    }
    held = b2.held_out_fit({"rows": [{"rank": 8, "targets": [target] * 4}]})
    assert list(held["relaxation"]) == [2.0, 2.0] and list(held["refits"]) == [1, 1]
    assert held["held_out_separated"].all() and (held["held_out_auc"] == 1.0).all()
    tie = {**target, "fitted_histories_out": {"1": fast["out"], "2": fast["out"]}}
    assert list(b2.held_out_fit({"rows": [{"rank": 8, "targets": [tie] * 4}]})["relaxation"]) == [1.0, 1.0]
    # relaxation 2 separates after one refit, relaxation 1 only after two: the fewest refits win before the relaxation
    late = {"in": [1.0, 0.5, 0.5], "out": [1.0, 0.9, 0.1]}
    order = {**target, "fitted_histories_out": {"1": late["out"], "2": fast["out"]}}
    held = b2.held_out_fit({"rows": [{"rank": 8, "targets": [order] * 4}]})
    assert list(held["relaxation"]) == [2.0, 2.0] and list(held["refits"]) == [1, 1]


def test_the_game_summary_says_where_the_fitted_attack_was_tuned():
    import pandas as pd

    game = pd.DataFrame(
        {
            "r": [8],
            "released_A_auc": [1.0],
            "secret_A_auc": [0.5],
            "fitted_A_auc": [1.0],
            "fitted_A_separated": [True],
            "held_out_A_auc_min": [0.9],
            "held_out_A_separated": [False],
            "held_out_choice": ["number of refits"],
            "tuned_elsewhere": [False],  # numerics 1: the settings were tuned on the record's own targets
        }
    )
    assert "tuned on those targets" in b2.game_summary(game)
    fresh = game.assign(tuned_elsewhere=True)  # numerics 2: fresh targets
    assert "tuned on an earlier draw of targets" in b2.game_summary(fresh)
    assert b2.game_summary(None) == ""


def test_the_committed_game_drew_its_targets_apart_from_its_tuning(monkeypatch):
    from lorapriv_utils import ledger

    monkeypatch.delenv(ledger.LEDGER_ENV_VAR, raising=False)  # the checkout's record, not the tiny tree's
    game, record = b2.load_game("cpu-small")
    assert record["manifest"]["spec"]["numerics"]["whitebox"] >= b2.FRESH_TARGETS_SINCE
    assert game["tuned_elsewhere"].all() and "tuned on an earlier draw of targets" in b2.game_summary(game)
