"""Compressed DP-SGD (paper B's M2 as a training rule): the projection, one step's shape, determinism, the
certificate it reports and its bad inputs."""

import copy

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch
from opacus.utils.uniform_sampler import UniformWithReplacementSampler

from lorapriv_utils.mia.engine import compressed, dp, families
from lorapriv_utils.mia.engine.data import TextWindows
from lorapriv_utils.mia.engine.training import TrainConfig
from lorapriv_utils.mia.experiments import dp_compare
from lorapriv_utils.scale import DPConfig


def _windows(n_texts: int = 6) -> TextWindows:
    ids = np.random.default_rng(5).integers(0, 300, size=(n_texts, 12))
    return TextWindows(ids, np.arange(n_texts), n_texts)


def _adapter():
    return dp_compare.dp_parameters(ddp_driver.tiny_base(), "adapter", None, 0)


def test_the_projection_is_unbiased_and_of_rank_r():
    G = torch.randn(16, 5, generator=torch.Generator().manual_seed(0))
    p = torch.nn.Parameter(torch.zeros(16, 5))
    gen = torch.Generator().manual_seed(1)
    total = torch.zeros_like(G)
    for _ in range(4000):
        p.grad = G.clone()
        compressed.project([p], 3, gen, families.GPT2)
        assert torch.linalg.matrix_rank(p.grad) <= 3
        total += p.grad
    assert float((total / 4000 - G).norm() / G.norm()) < 0.1  # E[A^T A] = I


def test_one_step_moves_each_matrix_in_a_rank_r_subspace_and_plain_dp_sgd_does_not():
    windows = _windows()
    cfg = TrainConfig(epochs=1, lr=1.0, batch_size=windows.n_texts, optimizer="sgd", seed=0)
    settings = DPConfig(noise_multiplier=1.0, max_grad_norm=1.0, delta=1e-5)
    steps = {}
    for name in ("compressed", "plain"):
        model, params = _adapter()
        before = [p.detach().clone() for p in params]
        if name == "compressed":
            cfg1 = TrainConfig(epochs=1, lr=1.0, batch_size=windows.n_texts, optimizer="sgd", seed=0)
            model, stats = compressed.compressed_train(model, params, windows, cfg1, settings, rank=2)
        else:
            model, stats = dp.dp_train(model, params, windows, cfg, settings)
        steps[name] = [int(torch.linalg.matrix_rank(p.detach() - b)) for p, b in zip(params, before, strict=True)]
    # the sampler may take several steps per epoch: each adds a rank-2 term
    n_steps = len(UniformWithReplacementSampler(num_samples=windows.n_texts, sample_rate=1.0))
    assert all(0 < k <= 2 * n_steps for k in steps["compressed"])
    assert all(k > 2 * n_steps for k in steps["plain"])


@pytest.mark.slow
def test_runs_repeat_and_report_a_smaller_certificate_than_plain_dp_sgd():
    windows = _windows(12)
    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=4, seed=3)
    settings = DPConfig(noise_multiplier=0.8, max_grad_norm=1.0, delta=1e-5)
    runs = []
    for _ in range(2):
        model, params = _adapter()
        model, stats = compressed.compressed_train(model, params, windows, cfg, settings, rank=4)
        runs.append((torch.cat([p.detach().reshape(-1) for p in params]), stats))
    assert torch.equal(runs[0][0], runs[1][0])
    stats = runs[0][1]
    q, steps = compressed.steps_for(windows.n_texts, cfg.batch_size, cfg.epochs)
    assert (stats["sample_rate"], stats["steps"]) == (q, steps)
    assert 0 < stats["epsilon_rank_one"] < stats["epsilon"] < stats["epsilon_plain_dpsgd"]
    assert stats["projection_rank"] == 4 and stats["input_width"] == ddp_driver.tiny_base().config.n_embd


def test_matched_noise_is_below_the_plain_noise_and_certifies_no_more():
    matched = compressed.matched_noise(1.0, 0.25, 8, 1e-5, 32, 4)
    assert matched["noise_multiplier"] < 1.0
    assert matched["epsilon"] <= matched["matched_epsilon"]
    assert matched["matched_epsilon"] == dp.epsilons(1.0, 0.25, 8, 1e-5)["prv"]


def test_bad_inputs_say_what_to_change():
    windows = _windows()
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=3, seed=0)
    model, params = _adapter()
    d = params[0].shape[0]
    with pytest.raises(ValueError, match="below the input width"):
        compressed.compressed_train(copy.deepcopy(model), params, windows, cfg, DPConfig(1.0), rank=d)
    with pytest.raises(ValueError, match="needs noise"):
        compressed.compressed_train(model, params, windows, cfg, DPConfig(0.0), rank=2)
    with pytest.raises(ValueError, match="one input width"):
        compressed.input_width(
            [torch.nn.Parameter(torch.zeros(3, 4)), torch.nn.Parameter(torch.zeros(5, 4))], families.GPT2
        )
    with pytest.raises(ValueError, match="rank"):
        compressed.check_projection_rank(0, 8)
    with pytest.raises(ValueError, match="certifies nothing"):
        compressed.matched_noise(0.0, 0.25, 8, 1e-5, 32, 4)
