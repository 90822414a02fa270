"""Fine-tuning methods on a tiny GPT-2: parameter selection, LoRA layout (Conv1D), FLoRA's update rule,
and Opacus's per-sample gradients on the PEFT model against torch.func."""

import copy
import dataclasses

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch
from torch.func import functional_call, grad, vmap

from lorapriv_utils.mia.engine import finetune, methods
from lorapriv_utils.mia.engine.training import TrainConfig, block_losses
from lorapriv_utils.mia.experiments import workspace
from lorapriv_utils.scale import SCALES


@pytest.fixture
def base():
    return ddp_driver.tiny_base()  # the model and blocks that the two-process tests train too


@pytest.fixture
def blocks():
    return ddp_driver.tiny_blocks()


def test_parameter_selection(base):
    full, params, hook = finetune.prepare(copy.deepcopy(base), "full")
    assert hook is None and sum(p.numel() for p in params) == sum(p.numel() for p in base.parameters())
    adapter, params, _ = finetune.prepare(copy.deepcopy(base), "adapter")
    assert [tuple(p.shape) for p in params] == [(16, 48)]  # c_attn weight, Conv1D layout (in, out)
    lora, params, _ = finetune.prepare(copy.deepcopy(base), "lora", rank=4)
    assert sorted(tuple(p.shape) for p in params) == [(4, 16), (48, 4)]


def test_lora_starts_at_the_base_model_with_a_of_variance_one_over_r(base, blocks):
    lora, _, _ = finetune.prepare(copy.deepcopy(base), "lora", rank=8, seed=1)
    layer = finetune.lora_layers(lora)[0]
    assert layer.fan_in_fan_out
    assert torch.count_nonzero(layer.lora_B["default"].weight) == 0
    assert layer.lora_A["default"].weight.var().item() == pytest.approx(1 / 8, rel=0.3)
    assert np.allclose(block_losses(lora, blocks), block_losses(base, blocks), atol=1e-6)


def test_the_fixed_a_is_an_orthonormal_basis_scaled_as_a_random_a_and_the_same_for_every_seed(base, blocks):
    a = finetune.fixed_a(4, 16).double()
    assert torch.allclose(a @ a.T, torch.eye(4, dtype=torch.float64) * 16 / 4, atol=1e-12)  # A A^T = (m / r) I
    draws = [finetune.prepare(copy.deepcopy(base), "lorafa", rank=4, seed=s)[0] for s in range(100)]
    mean = sum((lambda w: w @ w.T)(finetune.lora_layers(d)[0].lora_A["default"].weight.double()) for d in draws)
    assert torch.allclose(mean / 100, torch.eye(4, dtype=torch.float64) * 4, atol=0.6)  # a random A on average
    fixed = [finetune.prepare(copy.deepcopy(base), "lorafixed", rank=4, seed=s) for s in (0, 7)]
    weights = [finetune.lora_layers(model)[0].lora_A["default"].weight for model, _, _ in fixed]
    assert torch.equal(weights[0], weights[1]) and torch.allclose(weights[0].double(), a, atol=1e-6)
    assert not weights[0].requires_grad and [tuple(p.shape) for p in fixed[0][1]] == [(48, 4)]  # only B trains
    assert np.allclose(block_losses(fixed[0][0], blocks), block_losses(base, blocks), atol=1e-6)  # B = 0 at start
    with pytest.raises(ValueError, match="1 <= r <= m"):
        finetune.fixed_a(17, 16)


def test_flora_step_is_a_random_projection_of_the_gradient(base, blocks):
    """One SGD step of FLoRA moves the Conv1D weight by -eta A^T A G (G in the (in, out) layout)."""
    eta, batch = 0.1, torch.as_tensor(blocks[:4])
    reference = copy.deepcopy(base)
    loss = reference(input_ids=batch, labels=batch).loss
    (g_conv,) = torch.autograd.grad(loss, [reference.transformer.h[0].attn.c_attn.weight])
    flora, params, hook = finetune.prepare(copy.deepcopy(base), "flora", rank=4, seed=3)
    layer = finetune.lora_layers(flora)[0]
    a = layer.lora_A["default"].weight.detach().clone()
    w_before = layer.base_layer.weight.detach().clone()
    optimizer = torch.optim.SGD(params, lr=eta)
    flora(input_ids=batch, labels=batch).loss.backward()
    optimizer.step()
    hook()
    expected = w_before - eta * (a.T @ a) @ g_conv
    assert torch.allclose(layer.base_layer.weight, expected, atol=1e-6)
    assert torch.count_nonzero(layer.lora_B["default"].weight) == 0
    assert not torch.equal(layer.lora_A["default"].weight, a)  # resampled


def test_opacus_per_sample_gradients_equal_torch_func_on_the_peft_model(base, blocks):
    from opacus.grad_sample import GradSampleModule

    lora, params, _ = finetune.prepare(copy.deepcopy(base), "lora", rank=4, seed=0)
    for layer in finetune.lora_layers(lora):
        torch.nn.init.normal_(layer.lora_B["default"].weight, std=0.1)  # B = 0 would make A's gradient vanish
    lora.train()
    x = torch.as_tensor(blocks[:5])
    names = [n for n, p in lora.named_parameters() if p.requires_grad]
    frozen = {n: p.detach() for n, p in lora.named_parameters() if not p.requires_grad}
    buffers = dict(lora.named_buffers())

    def loss_one(trainable, ids):
        ids = ids[None]
        kwargs = {"labels": ids, "attention_mask": torch.ones_like(ids)}  # no data-dependent padding checks
        out = functional_call(lora, ({**frozen, **trainable}, buffers), (ids,), kwargs)
        return out.loss

    expected = vmap(grad(loss_one), in_dims=(None, 0))(
        {n: p.detach() for n, p in lora.named_parameters() if p.requires_grad}, x
    )
    wrapped = GradSampleModule(lora, loss_reduction="mean")
    wrapped(input_ids=x, attention_mask=torch.ones_like(x), labels=x).loss.backward()
    for name, param in lora.named_parameters():
        if param.requires_grad:
            assert torch.allclose(param.grad_sample, expected[name], atol=1e-6), name
    assert names


def test_every_method_trains_and_dpsgd_reports_epsilon(base, blocks):
    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=8, seed=0)
    for method in finetune.METHODS:
        rank = 4 if method in finetune.RANKED else None
        trains = dataclasses.replace(cfg, optimizer=methods.get(method).optimizer)  # adaptersgd's SGD
        model, stats = finetune.fine_tune(copy.deepcopy(base), method, blocks, trains, rank=rank)
        assert stats["steps"] > 0 and np.isfinite(stats["final_loss"])
        assert np.all(np.isfinite(block_losses(model, blocks)))
        if method == "dpsgd":
            assert stats["epsilon"] > 0


def test_fine_tuning_is_deterministic(base, blocks):
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=8, seed=5)
    a, _ = finetune.fine_tune(copy.deepcopy(base), "lora", blocks, cfg, rank=2)
    b, _ = finetune.fine_tune(copy.deepcopy(base), "lora", blocks, cfg, rank=2)
    assert np.array_equal(block_losses(a, blocks), block_losses(b, blocks))


@pytest.mark.parametrize(
    ("method", "rank", "match"),
    [
        ("prefix", None, "unknown method"),
        ("lora", None, "needs a rank"),
        ("lora", 0, "needs a rank"),
        ("flora", 17, "min\\(n, m\\) = 16"),
    ],
)
def test_bad_method_or_rank(base, method, rank, match):
    with pytest.raises(ValueError, match=match):
        finetune.prepare(base, method, rank)


def test_default_hyperparameters_come_from_the_scale_record():
    paper = SCALES["paper"].engine
    assert finetune.default_train_config(paper, "full", 0).lr == 1e-5  # the middle of the sweep: the paper's rate
    assert finetune.default_train_config(paper, "lora", 0, lr=3e-4).lr == 3e-4
    assert finetune.default_train_config(paper, "lora", 0).epochs == 20
    small = finetune.default_train_config(SCALES["cpu-small"].engine, "dpsgd", 3)
    assert (small.lr, small.epochs, small.batch_size, small.seed) == (1e-2, 4, 16, 3)


@pytest.mark.parametrize("method", ["full", "lora", "flora"])
def test_training_through_accelerate_matches_the_plain_loop_on_one_cpu(base, blocks, method, fresh_accelerate_state):
    from accelerate import Accelerator

    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=8, seed=2)
    rank = 2 if method in finetune.RANKED else None
    plain, _ = finetune.fine_tune(copy.deepcopy(base), method, blocks, cfg, rank=rank)
    accelerated, stats = finetune.fine_tune(
        copy.deepcopy(base), method, blocks, cfg, rank=rank, accelerator=Accelerator(cpu=True)
    )
    assert stats["steps"] == 3
    assert np.allclose(block_losses(plain, blocks), block_losses(accelerated, blocks), atol=1e-5)


def test_bf16_autocast_trains_close_to_float32(base, blocks, fresh_accelerate_state):
    """The GPU precision path, run on the CPU (torch autocasts linear layers to bf16 there too)."""
    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=8, seed=2)
    fp32, _ = finetune.fine_tune(copy.deepcopy(base), "full", blocks, cfg)
    bf16, _ = finetune.fine_tune(copy.deepcopy(base), "full", blocks, cfg, autocast_dtype=torch.bfloat16)
    accelerator = workspace.make_accelerator(torch.device("cpu"), torch.bfloat16)
    assert accelerator.mixed_precision == "bf16"
    accelerated, _ = finetune.fine_tune(copy.deepcopy(base), "full", blocks, cfg, accelerator=accelerator)
    reference = block_losses(fp32, blocks)
    for model in (bf16, accelerated):
        losses = block_losses(model, blocks)
        assert not np.array_equal(losses, reference)  # bf16 arithmetic really ran
        assert np.allclose(losses, reference, rtol=1e-3)


def _flora_adamw_steps(base, blocks, reset: bool):
    """Two AdamW steps of FLoRA; returns, for the second step, B after the step and Adam's first-step rule."""
    eta, batch = 1e-2, torch.as_tensor(blocks[:4])
    flora, params, hook = finetune.prepare(copy.deepcopy(base), "flora", rank=4, seed=3)
    optimizer = torch.optim.AdamW(params, lr=eta, weight_decay=0.0)
    layer = finetune.lora_layers(flora)[0]
    for _ in range(2):
        loss = flora(input_ids=batch, labels=batch).loss
        (g_b,) = torch.autograd.grad(loss, [layer.lora_B["default"].weight], retain_graph=True)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        b_after = layer.lora_B["default"].weight.detach().clone()
        hook(optimizer if reset else None)
    return b_after, -eta * g_b / (g_b.abs() + 1e-8)  # Adam's first step from fresh moments (B starts at 0)


def test_flora_resets_adamw_at_every_resampling(base, blocks):
    """Every FLoRA step with AdamW is a first Adam step under a fresh A: moments do not carry across As."""
    b_after, fresh = _flora_adamw_steps(base, blocks, reset=True)
    assert torch.allclose(b_after, fresh, atol=1e-6)
    carried, fresh_rule = _flora_adamw_steps(base, blocks, reset=False)
    assert not torch.allclose(carried, fresh_rule, atol=1e-4)  # without the reset the rule fails: the test can fail


def test_the_training_loop_hands_the_optimizer_to_the_hook(base, blocks, monkeypatch):
    seen = []
    monkeypatch.setattr(finetune, "reset_optimizer_state", lambda optimizer, params: seen.append(optimizer))
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=8, seed=0)
    finetune.fine_tune(copy.deepcopy(base), "flora", blocks, cfg, rank=2)
    assert len(seen) == 3 and all(isinstance(o, torch.optim.AdamW) for o in seen)


@pytest.mark.parametrize("method", ["dpsgd", "rowscale"])
def test_per_text_methods_refuse_to_run_in_several_processes(base, blocks, method):
    from types import SimpleNamespace

    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=8, seed=0)
    with pytest.raises(ValueError, match=f"{method} clips per text in one process, which each of the 2 processes"):
        finetune.fine_tune(base, method, blocks, cfg, rank=2, accelerator=SimpleNamespace(num_processes=2))
