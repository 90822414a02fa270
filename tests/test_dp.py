"""DP-SGD with a text as the privacy unit: one step against the formula computed independently
(Opacus issue 820: LoRA weights under DP-SGD with PEFT on GPT-2's c_attn), noise, empty batches,
the noise generator's device and the accountants."""

import copy

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch

from lorapriv_utils.mia.engine import dp, finetune, per_text
from lorapriv_utils.mia.engine.data import TextWindows
from lorapriv_utils.mia.engine.training import TrainConfig, row_nll
from lorapriv_utils.scale import DPConfig

OWNER = np.array([0, 0, 1, 2, 2, 3])  # texts 0 and 2 span two windows each


@pytest.fixture
def windows():
    ids = np.random.default_rng(4).integers(0, 300, size=(6, 12))
    ids[1, 9:] = -1  # a padded last window
    return TextWindows(ids, OWNER, 4)


def _text_gradients(model, params, windows):
    """Each text's gradient, one text at a time with plain autograd (no Opacus)."""
    out = []
    for t in range(windows.n_texts):
        rows = torch.as_tensor(windows.ids[windows.owner == t])
        total, count = row_nll(model, rows)
        grads = torch.autograd.grad(total.sum() / count.sum(), params)
        out.append(torch.cat([g.reshape(-1) for g in grads]))
    return torch.stack(out)


def _one_step(windows, noise_multiplier, clip):
    model, params, _ = finetune.prepare(ddp_driver.tiny_base(), "dpsgd", rank=4, seed=0)
    for layer in finetune.lora_layers(model):
        torch.nn.init.normal_(layer.lora_B["default"].weight, std=0.1)  # B = 0 would make A's gradient vanish
    model.train()
    before = torch.cat([p.detach().reshape(-1) for p in params]).clone()
    reference = copy.deepcopy(model)
    ref_params = [p for p in reference.parameters() if p.requires_grad]
    grads = _text_gradients(reference, ref_params, windows)
    # sample rate 1: every text is in the one batch; SGD with lr 1 makes the step the privatised gradient itself
    cfg = TrainConfig(epochs=1, lr=1.0, batch_size=windows.n_texts, optimizer="sgd", seed=0)
    trained, stats = dp.dp_train(model, params, windows, cfg, DPConfig(noise_multiplier, clip, 1e-5))
    after = torch.cat([p.detach().reshape(-1) for p in params])
    norms = grads.norm(dim=1, keepdim=True)
    clipped = (grads * (clip / (norms + 1e-6)).clamp(max=1.0)).sum(dim=0)
    return before, after, clipped, norms, stats, trained, params


def test_a_dp_step_is_the_clipped_mean_of_per_text_gradients(windows):
    clip = 0.05
    before, after, clipped, norms, stats, trained, params = _one_step(windows, 0.0, clip)
    assert bool((norms > clip).all())  # clipping binds for every text
    step = before - after
    assert step.abs().max() > 0  # the LoRA weights moved (Opacus issue 820)
    assert torch.allclose(step, clipped / windows.n_texts, atol=1e-6)
    lora_b = [p for n, p in trained.named_parameters() if "lora_B" in n]
    assert lora_b and all(p.requires_grad for p in lora_b)
    assert stats["privacy_unit"] == "text" and stats["steps"] == 1
    assert not hasattr(params[0], "grad_sample") or params[0].grad_sample is None  # Opacus's hooks are gone


def test_the_noise_has_the_calibrated_scale(windows):
    clip, sigma = 0.05, 2.0
    before, after, clipped, _, _, _, _ = _one_step(windows, sigma, clip)
    noise = (before - after) * windows.n_texts - clipped
    assert noise.numel() > 200
    assert noise.std().item() == pytest.approx(sigma * clip, rel=0.15)
    assert abs(noise.mean().item()) < 4 * sigma * clip / noise.numel() ** 0.5


def test_empty_batches_take_noise_only_steps_and_the_run_is_deterministic():
    ids = np.random.default_rng(5).integers(0, 300, size=(40, 8))
    windows = TextWindows(ids, np.arange(40), 40)
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=1, seed=3)
    runs = []
    for _ in range(2):
        model, params, _ = finetune.prepare(ddp_driver.tiny_base(), "dpsgd", rank=2, seed=0)
        trained, stats = dp.dp_train(model, params, windows, cfg, DPConfig(1.0, 1.0, 1e-5))
        runs.append((torch.cat([p.detach().reshape(-1) for p in params]), stats))
    assert runs[0][1]["steps"] == 40 and runs[0][1]["empty_batches"] > 0
    assert torch.equal(runs[0][0], runs[1][0])
    assert runs[0][1]["epsilon"] == runs[1][1]["epsilon"]


def test_the_noise_generator_lives_on_the_training_device(monkeypatch, windows):
    assert dp.noise_generator(torch.device("cpu"), 1).device == torch.device("cpu")
    seen = []

    def recording(device, seed):
        seen.append(device)
        return torch.Generator().manual_seed(seed)  # the CPU stands in for the mocked device

    monkeypatch.setattr(per_text, "noise_generator", recording)  # the one per-text loop draws DP-SGD's noise
    model, params, _ = finetune.prepare(ddp_driver.tiny_base(), "dpsgd", rank=2, seed=0)
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=2, seed=0)
    dp.dp_train(model, params, windows, cfg, DPConfig(), device=torch.device("cpu"))
    assert seen == [torch.device("cpu")]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_dp_sgd_on_a_gpu(windows):
    device = torch.device("cuda")
    assert dp.noise_generator(device, 0).device.type == "cuda"
    model, params, _ = finetune.prepare(ddp_driver.tiny_base(), "dpsgd", rank=2, seed=0)
    model.to(device)
    _, stats = dp.dp_train(model, params, windows, TrainConfig(epochs=1, lr=1e-2, batch_size=2), DPConfig(), device)
    assert stats["steps"] > 0


def test_prv_and_rdp_agree_with_an_independent_pld_accountant():
    import dp_accounting

    sigma, q, steps, delta = 1.0, 0.01, 2000, 1e-5
    eps = dp.epsilons(sigma, q, steps, delta)
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-3).compose(event).get_epsilon(delta)
    assert eps["prv"] == pytest.approx(pld, rel=0.03)
    assert pld <= eps["rdp"] < 1.5 * pld  # RDP's conversion is an upper bound, looser than PLD and PRV
    with pytest.raises(ValueError, match="steps"):
        dp.epsilons(sigma, q, 0, delta)


def test_texts_not_rows_are_the_sampling_unit(windows):
    model, params, _ = finetune.prepare(ddp_driver.tiny_base(), "dpsgd", rank=2, seed=0)
    _, stats = dp.dp_train(model, params, windows, TrainConfig(epochs=1, lr=1e-2, batch_size=2), DPConfig())
    assert stats["sample_rate"] == 2 / 4  # four texts, not six windows
    with pytest.raises(ValueError, match="exceeds the 4 texts"):
        dp.dp_train(model, params, windows, TrainConfig(epochs=1, lr=1e-2, batch_size=5), DPConfig())


def test_a_vacuous_guarantee_skips_the_prv_accountant():
    eps = dp.epsilons(0.034, 0.02, 200, 1e-5)  # the multiplier section 5.1 assigns at the default scale
    assert eps["prv"] is None and eps["rdp"] > dp.PRV_LIMIT
