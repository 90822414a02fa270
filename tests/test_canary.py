"""The canary audit: held-out canaries, inclusion, scoring and the one-run bound, end to end on the tiny model."""

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import tiny_published

from lorapriv_utils import store
from lorapriv_utils.mia import cli
from lorapriv_utils.mia.attacks import canary
from lorapriv_utils.mia.engine import models
from lorapriv_utils.mia.experiments import audit, workspace
from lorapriv_utils.scale import SCALES, DPConfig
from lorapriv_utils.store import key_of

SCALE = ddp_driver.SCALE


def test_canaries_are_the_first_held_out_texts_and_half_included():
    held_out = [f"text {k}" for k in range(60)]
    assert canary.canary_texts(held_out, 50) == held_out[:50]
    with pytest.raises(ValueError, match="--canaries: this scale holds out 60 texts"):
        canary.canary_texts(held_out, 61)
    with pytest.raises(ValueError, match="distinct"):
        canary.canary_texts(["a", "a", "b"], 2)
    included = canary.inclusion(4000, seed=0)
    assert abs(included.mean() - 0.5) < 0.03 and not np.array_equal(included[:100], canary.inclusion(100, seed=1))
    assert canary.with_canaries(["m"], ["c1", "c2"], np.array([False, True])) == ["m", "c2"]


def test_the_audit_of_scores_that_separate_perfectly():
    included = canary.inclusion(400, seed=3)
    result = canary.canary_audit(included.astype(float), included, canary.CanaryConfig(400, 40))
    assert result["right"] == result["guesses"] == 80 and result["auc"] == 1.0
    assert result["epsilon_lower_bound"] > 2.0
    useless = canary.canary_audit(np.zeros(400), included, canary.CanaryConfig(400, 40))
    assert useless["epsilon_lower_bound"] < 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"canaries": 1}, "--canaries"), ({"guesses_each_side": 500}, "--guesses"), ({"delta": 0.7}, "delta")],
)
def test_bad_audit_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        canary.CanaryConfig(**kwargs)


@pytest.mark.slow
def test_run_audit_writes_reuses_and_recomputes(tmp_path, monkeypatch, capsys, tiny_tree):
    """The session's tiny tree's audit (DP-SGD r = 2, z = 0.5, 40 canaries), reused and rerun on a copy."""
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(tiny_tree.cache))
    tiny_tree.copy(tmp_path, "audit")
    work = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu")
    cell, config = tiny_published.AUDIT_CELL, tiny_published.AUDIT_CONFIG
    path = tmp_path / "cpu-small" / "audit" / "synthetic-email" / "dpsgd-r2-z0.5-s0.json"
    record = store.read_record(path, "canary-audit")  # its envelope and checksum verify
    prepared = work.dataset(cell.dataset, cell.seed)
    held_out = set(prepared.texts["nonmembers"])
    assert len(held_out) >= 40 and not held_out & set(prepared.texts["members"])
    assert record["manifest"]["canary_source"].startswith("the split's non-members")
    assert record["validation_perplexity"] > 1 and record["manifest"]["git_dirty"] in (True, False)
    assert record["audit"]["guesses"] == 10 and 0 <= record["audit"]["right"] <= 10
    assert record["training"]["noise_multiplier"] == 0.5 and record["training"]["epsilon"] > 0
    assert len(record["scores"]) == 40 and sum(record["included"]) == record["audit"]["included"]
    with monkeypatch.context() as patch:
        patch.setattr(audit.finetune, "fine_tune", lambda *a, **k: pytest.fail("a current audit was recomputed"))
        assert audit.run_audit(work, cell, config, DPConfig(noise_multiplier=0.5)) == record  # reused
    again = audit.run_audit(work, cell, canary.CanaryConfig(canaries=40, guesses_each_side=4), DPConfig(0.5))
    assert again["audit"]["guesses"] == 8 and "stale" in capsys.readouterr().err
    fixed = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu", overrides=workspace.Overrides(lr=0.01))
    monkeypatch.setattr(audit, "sweep", lambda *a, **k: pytest.fail("a rate fixed by --lr was swept"))
    at_rate = audit.run_audit(fixed, cell, config, DPConfig(noise_multiplier=0.5))
    assert at_rate["manifest"]["train_config"]["lr"] == 0.01
    assert store.read_record(path.with_name("dpsgd-r2-z0.5-lr0.01-s0.json"), "canary-audit") == at_rate
    grid_key = work.key(cell)
    monkeypatch.setitem(store.NUMERICS, "canary-audit", store.NUMERICS["canary-audit"] + 1)
    assert work.key(cell) == grid_key  # the audit's numerics are its own: a bump leaves the grid current
    bumped = key_of(audit.audit_spec(work, cell, config, DPConfig(0.5)))
    assert bumped["numerics"] != record["manifest"]["key"]["numerics"]
    assert {k: v for k, v in bumped.items() if k != "numerics"} == {
        k: v for k, v in record["manifest"]["key"].items() if k != "numerics"
    }


def test_cli_audit_errors_name_the_option(capsys):
    for argv, match in ((["audit", "--guesses", "0"], "--guesses"), (["audit", "--noise-multiplier", "0"], "--noise")):
        with pytest.raises(SystemExit):
            cli.main(argv)
        assert match in capsys.readouterr().err
