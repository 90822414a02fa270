"""DP-SGD on four weight sets at one noise multiplier (paper B, B-3): the weight sets, one full-model DP
step against per-text gradients computed by plain autograd (GPT-2's tied embedding included), the cells,
their records, resume and the summary."""

import copy
import dataclasses
import json

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import tiny_published
import torch

from lorapriv_utils.mia.engine import dp, models
from lorapriv_utils.mia.engine.data import TextWindows
from lorapriv_utils.mia.engine.training import TrainConfig, row_nll
from lorapriv_utils.mia.experiments import dp_compare
from lorapriv_utils.mia.experiments.workspace import Workspace
from lorapriv_utils.scale import DPConfig


def test_cells_are_checked_and_named():
    assert dp_compare.DPCell("lorafa", 0.5, rank=8).name == "ptb/lorafa-r8-z0.5-s0"
    assert dp_compare.DPCell("full", 0.0).name == "ptb/full-z0-s0"
    cells = dp_compare.plan(noise=(0.0, 1.0), rank=4, seeds=(0, 1))
    assert len(cells) == 18 and {c.rank for c in cells if c.weights in dp_compare.LOW_RANK} == {4}
    assert not [c for c in cells if c.weights == "compressed" and c.noise == 0]  # nothing to match without noise
    for kwargs, match in [
        ({"weights": "all", "noise": 1.0}, "unknown weight set"),
        ({"weights": "lorafa", "noise": 1.0}, "needs rank"),
        ({"weights": "full", "noise": 1.0, "rank": 8}, "takes no rank"),
        ({"weights": "full", "noise": -1.0}, ">= 0"),
        ({"weights": "full", "noise": float("nan")}, "finite"),
        ({"weights": "compressed", "noise": 0.0, "rank": 8}, "noise multiplier > 0"),
    ]:
        with pytest.raises(ValueError, match=match):
            dp_compare.DPCell(**kwargs)


def test_weight_sets():
    base = ddp_driver.tiny_base()
    n_all = sum(p.numel() for p in base.parameters())
    sizes = {}
    for weights, rank in [("full", None), ("adapter", None), ("lorafa", 2), ("lora", 2)]:
        model, params = dp_compare.dp_parameters(copy.deepcopy(base), weights, rank, 0)
        sizes[weights] = sum(p.numel() for p in params)
        assert all(p.requires_grad for p in params)
        if weights == "full":
            assert model.transformer.wte.weight in params and model.lm_head.weight is model.transformer.wte.weight
            assert not model.transformer.wpe.weight.requires_grad
            assert sizes["full"] == n_all - model.transformer.wpe.weight.numel()
    assert sizes["full"] > sizes["adapter"] > sizes["lora"] > sizes["lorafa"]


@pytest.mark.parametrize("make_base", [ddp_driver.tiny_base, ddp_driver.tiny_llama], ids=["gpt2", "llama"])
def test_a_full_model_dp_step_is_the_clipped_mean_of_per_text_gradients(make_base):
    """Opacus's per-text gradients of every weight (Llama's RMSNorm through its functorch fallback) are exact."""
    ids = np.random.default_rng(4).integers(0, 300, size=(5, 12))
    ids[1, 8:] = -1
    windows = TextWindows(ids, np.array([0, 0, 1, 2, 2]), 3)
    model, params = dp_compare.dp_parameters(make_base(), "full", None, 0)
    model.train()
    reference = copy.deepcopy(model)
    ref_params = [p for p in reference.parameters() if p.requires_grad]
    grads = []
    for t in range(windows.n_texts):  # each text's gradient by plain autograd, the tied embedding summed by torch
        total, count = row_nll(reference, torch.as_tensor(ids[windows.owner == t]))
        grads.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(total.sum() / count.sum(), ref_params)]))
    grads = torch.stack(grads)
    norms = grads.norm(dim=1, keepdim=True)
    clip = float(norms.median())  # one text below the norm, one above: clipped and unclipped texts both
    assert bool((norms < clip).any()) and bool((norms > clip).any())
    expected = (grads * (clip / (norms + 1e-6)).clamp(max=1.0)).sum(dim=0) / windows.n_texts
    before = torch.cat([p.detach().reshape(-1) for p in params]).clone()
    cfg = TrainConfig(epochs=1, lr=1.0, batch_size=windows.n_texts, optimizer="sgd", seed=0)
    dp.dp_train(model, params, windows, cfg, DPConfig(0.0, clip, 1e-5))
    step = before - torch.cat([p.detach().reshape(-1) for p in params])
    assert float((step - expected).norm() / expected.norm()) < 1e-5


@pytest.mark.slow
def test_cells_write_records_resume_and_share_the_certificate(tmp_path, monkeypatch, tiny_tree):
    """The session's tiny tree's DP comparison (full, LoRA-FA r = 2 and compressed r = 2 at z = 1), rerun on a copy."""
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(tiny_tree.cache))
    tiny_tree.copy(tmp_path / "out", "dp_compare")
    work = Workspace(ddp_driver.SCALE, tmp_path / "out", progress=False, device="cpu")
    cells = tiny_published.DP_CELLS
    first = [json.loads(dp_compare.result_path(work.out, work.scale, cell).read_text()) for cell in cells]
    folder = tmp_path / "out" / "dp_compare" / "cpu-small" / "ptb"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [
        "compressed-r2-z1-s0.json",
        "full-z1-s0.json",
        "lorafa-r2-z1-s0.json",
    ]
    record = json.loads((folder / "full-z1-s0.json").read_text())
    assert {"key", "git_commit", "versions", "runtime", "wall_seconds", "split_hashes"} <= set(record["manifest"])
    assert len(record["metrics"]["sweep"]) == len(ddp_driver.SCALE.engine.dense.lr_grid) + 2  # widened grid
    losses = record["metrics"]["text_losses"]
    assert len(losses["target"]["members"]) == record["metrics"]["texts"]["members"]
    eps = [r["metrics"]["training"]["epsilon"] for r in first]
    assert eps[0] == eps[1] and eps[0] > 0  # one (sigma, q, steps): one certificate, whatever is trained
    training = first[2]["metrics"]["training"]
    assert training["matched_epsilon"] == eps[0] and training["epsilon"] <= eps[0]  # matched, from below
    assert training["noise_multiplier"] < 1.0 and training["epsilon_plain_dpsgd"] > eps[0]
    frame = dp_compare.summary(dp_compare.load(folder.parent))
    assert list(frame["weights"]) == ["full", "lorafa", "compressed"]
    assert frame["trainable"].iloc[0] > frame["trainable"].iloc[1]
    assert (frame["loss_low"] <= frame["loss_auc"]).all() and (frame["loss_auc"] <= frame["loss_high"]).all()
    # a rerun reuses the intact, current records
    monkeypatch.setattr(dp_compare, "run_cell", lambda *a: pytest.fail("a current record was recomputed"))
    assert [r["checksum"] for r in dp_compare.run(work, cells)] == [r["checksum"] for r in first]
    # the attacks are derived from the stored per-text losses: recomputed from them, they are the stored ones
    for cell, record in zip(cells, first, strict=True):
        derived = dp_compare.attacks(record["metrics"]["text_losses"], cell, work.engine.bootstrap_resamples)
        assert derived == {k: record["metrics"][k] for k in derived}
    # settings that only the derived metrics read (the bootstrap) are refreshed from them, without training (500, not
    # 20, resamples: with 20 or 50 the Monte Carlo band reaches the extreme draw, which the first 20 draws may share)
    scale = dataclasses.replace(work.scale, engine=dataclasses.replace(work.engine, bootstrap_resamples=500))
    again = Workspace(scale, tmp_path / "out", progress=False, device="cpu")
    refreshed = dp_compare.run(again, cells)
    for old, new in zip(first, refreshed, strict=True):
        assert new["manifest"]["key"]["derived"] != old["manifest"]["key"]["derived"]
        assert new["manifest"]["metrics_refreshed"]["from_key"] == old["manifest"]["key"]
        assert new["metrics"]["text_losses"] == old["metrics"]["text_losses"]
        assert new["metrics"]["loss_attack"]["auc"]["value"] == old["metrics"]["loss_attack"]["auc"]["value"]
        assert new["metrics"]["loss_attack"]["auc"]["low"] != old["metrics"]["loss_attack"]["auc"]["low"]
    assert [r["checksum"] for r in dp_compare.run(again, cells)] == [r["checksum"] for r in refreshed]  # current


def test_the_grid_is_the_engines_widened_by_one_step_at_each_end(tmp_path):
    work = Workspace(ddp_driver.SCALE, tmp_path, progress=False, device="cpu")
    grid = list(ddp_driver.SCALE.engine.dense.lr_grid)  # (1e-3, 3e-3)
    assert dp_compare.lr_grid(work, "full")["grid"] == pytest.approx([grid[0] / 3, *grid, grid[1] * 3], rel=1e-2)
    assert dp_compare.lr_grid(work, "compressed") == dp_compare.lr_grid(work, "adapter")


def test_load_says_how_to_make_the_records(tmp_path):
    with pytest.raises(FileNotFoundError, match="make results-b3"):
        dp_compare.load(tmp_path)
    (tmp_path / "other.json").write_text(json.dumps({"kind": "x", "checksum": "0"}))
    with pytest.raises(ValueError, match="checksum"):
        dp_compare.load(tmp_path)
