"""LoRA with row scaling (paper A, eq. 22) on the PEFT GPT-2: one step against the formula computed
independently, A frozen, every scaled row at the target norm, bad settings refused."""

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch

from lorapriv_utils.mia.engine import finetune, rowscale
from lorapriv_utils.mia.engine.data import TextWindows
from lorapriv_utils.mia.engine.training import TrainConfig, row_nll
from lorapriv_utils.scale import RowScaleConfig

RANK = 4


@pytest.fixture
def windows():
    ids = np.random.default_rng(6).integers(0, 300, size=(5, 12))
    ids[2, 7:] = -1
    return TextWindows(ids, np.array([0, 0, 1, 2, 2]), 3)


def _b_gradients(model, windows):
    """Each text's gradient with respect to every B, by plain autograd, one text at a time."""
    bs = [layer.lora_B["default"].weight for layer in finetune.lora_layers(model)]
    grads = []
    for t in range(windows.n_texts):
        total, count = row_nll(model, torch.as_tensor(windows.ids[windows.owner == t]))
        grads.append(torch.autograd.grad(total.sum() / count.sum(), bs))
    return grads


def test_a_step_is_the_mean_of_row_scaled_per_text_gradients(windows):
    config = RowScaleConfig(delta=0.25, c=0.5)
    cfg = TrainConfig(epochs=1, lr=1.0, batch_size=windows.n_texts, optimizer="sgd", seed=1)
    # the model fine_tune will build (same seed: same A, B = 0), for the gradients computed independently
    expected_model, params, hook = finetune.prepare(ddp_driver.tiny_base(), "rowscale", rank=RANK, seed=cfg.seed)
    assert hook is None and all(p.shape[1] == RANK for p in params)
    a_before = finetune.lora_layers(expected_model)[0].lora_A["default"].weight.detach().clone()
    grads = _b_gradients(expected_model, windows)
    trained, stats = finetune.fine_tune(ddp_driver.tiny_base(), "rowscale", windows, cfg, rank=RANK, rowscale=config)
    target = (1 - 0.25) * RANK**0.5 * 0.5
    assert stats["row_norm"] == pytest.approx(target) and stats["steps"] == 1
    layers = finetune.lora_layers(trained)
    for k, layer in enumerate(layers):
        step = -layer.lora_B["default"].weight.detach()  # B started at 0 and SGD with lr 1 took one step
        per_text = torch.stack([g[k] for g in grads])  # texts x out x r
        scaled = per_text * (target / per_text.norm(dim=-1, keepdim=True))
        assert torch.allclose(scaled.norm(dim=-1), torch.full(scaled.shape[:2], target))
        assert torch.allclose(step, scaled.mean(dim=0), atol=1e-6)
        assert not torch.allclose(step, per_text.mean(dim=0), atol=1e-4)  # the scaling acts
    assert torch.equal(layers[0].lora_A["default"].weight, a_before)  # A stays frozen


def test_scale_rows_keeps_zero_rows_and_direction():
    grad = torch.tensor([[[3.0, 4.0], [0.0, 0.0]]])
    out = rowscale.scale_rows(grad, 10.0)
    assert out.tolist() == [[[6.0, 8.0], [0.0, 0.0]]]


@pytest.mark.parametrize(("delta", "c", "match"), [(0.0, 1.0, "delta"), (0.6, 1.0, "delta"), (0.5, 0.0, "c")])
def test_bad_settings_are_refused(delta, c, match):
    with pytest.raises(ValueError, match=match):
        RowScaleConfig(delta=delta, c=c)


def test_row_scaling_trains_and_is_deterministic(windows):
    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=2, seed=3)
    runs = []
    for _ in range(2):
        model, stats = finetune.fine_tune(ddp_driver.tiny_base(), "rowscale", windows, cfg, rank=2)
        runs.append(torch.cat([p.detach().reshape(-1) for n, p in model.named_parameters() if "lora_B" in n]))
    assert stats["steps"] == 4 and np.isfinite(stats["final_loss"])
    assert torch.equal(runs[0], runs[1]) and runs[0].abs().max() > 0
