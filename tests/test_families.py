"""The model-family layer: GPT-2 and Llama behind one interface, and every method on a tiny Llama, end to end."""

import copy
from dataclasses import replace

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch

from lorapriv_utils import store
from lorapriv_utils.mia.attacks import canary
from lorapriv_utils.mia.engine import families, finetune, lora_step, models
from lorapriv_utils.mia.engine.training import TrainConfig, block_losses
from lorapriv_utils.mia.experiments import (
    alignment,
    audit,
    dp_compare,
    frontier,
    grid,
    multiplier,
    runner,
    whitebox,
    workspace,
)
from lorapriv_utils.scale import DPConfig, ModelSpec

BASES = {"gpt2": ddp_driver.tiny_base, "llama": ddp_driver.tiny_llama}
SPECS = {"gpt2": ddp_driver.TINY, "llama": ddp_driver.LLAMA_SPEC}


@pytest.mark.parametrize("name", BASES)
def test_each_family_names_its_adapted_projections(name):
    base = BASES[name]()
    family = families.family_of(base)
    assert family.name == name and families.get(name) is family
    expected = {"gpt2": [(48, 16)], "llama": [(16, 16), (8, 16)]}[name]  # (n, m): c_attn 3d x d; q d x d, v 8 x d
    assert family.adapted_shapes(base) == expected
    assert finetune.max_rank(base) == SPECS[name].max_rank() == min(min(s) for s in expected)
    assert family.context(base) == SPECS[name].block_size and family.layer_count(base) == 1
    assert SPECS[name].parameters() == sum(p.numel() for p in base.parameters())  # the count the book states
    peft_model, _, _ = finetune.prepare(copy.deepcopy(base), "lora", 2)
    assert families.family_of(peft_model) is family  # through PEFT's wrapper
    assert len(finetune.lora_layers(peft_model)) == len(expected)
    assert (family.position_embedding(base) is None) == (name == "llama")  # rotary positions have no weight
    embeddings = family.embedding_weights(base)
    assert len(embeddings) == {"gpt2": 2, "llama": 1}[name]  # the head is tied to the token embedding in both
    assert embeddings[0] is base.get_output_embeddings().weight


def test_an_unsupported_model_is_one_clear_error():
    with pytest.raises(ValueError, match="does not support Linear"):
        families.family_of(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="unknown model family 'bert'"):
        families.get("bert")
    with pytest.raises(ValueError, match="layer must lie in"):
        families.GPT2.block_weights(ddp_driver.tiny_base(), 1)


@pytest.mark.parametrize("name", BASES)
def test_the_paper_layout_is_the_side_that_lora_a_projects(name):
    """PEFT's gradient with respect to B (B = 0) is G A^T with G the adapted weight's gradient in paper A's layout
    (n x m, output by input): each family's orientation is right."""
    base = BASES[name]()
    family = families.family_of(base)
    rows = torch.as_tensor(ddp_driver.tiny_blocks()[:2])
    plain = copy.deepcopy(base)
    weights = family.adapted_weights(plain)
    plain(rows, labels=rows).loss.backward()
    peft_model, _, _ = finetune.prepare(copy.deepcopy(base), "lorafa", 2, seed=0)
    peft_model(rows, labels=rows).loss.backward()
    for weight, layer in zip(weights, finetune.lora_layers(peft_model), strict=True):
        g = family.paper(weight.grad.detach()).double()
        a = layer.lora_A["default"].weight.detach().double()  # (r, m)
        b_grad = layer.lora_B["default"].weight.grad.double()  # (n, r)
        assert torch.allclose(b_grad, g @ a.T * layer.scaling["default"], rtol=1e-4, atol=1e-8)
        assert family.input_width(weight) == g.shape[1] == a.shape[1]
        m_g = family.paper(family.project_inputs(weight.grad.detach().double(), a))
        assert torch.allclose(m_g, g @ a.T @ a, rtol=1e-6, atol=1e-12)  # G M in paper A's layout, either storage
        flat = weight.grad.detach().double().reshape(1, -1).numpy()  # as alignment records a gradient
        assert np.array_equal(multiplier.paper_layout(flat, weight.shape, family.fan_in_fan_out)[0], g.numpy())


def test_per_text_gradients_of_a_llama_block():
    grads = alignment.per_text_gradients(["the cat sat", "on the mat today"], spec=ddp_driver.LLAMA_SPEC)
    assert grads.shape == (2, 16 * 16) and np.all(np.isfinite(grads))  # block 0's q_proj


@pytest.mark.parametrize("name", BASES)
def test_every_method_trains_only_its_weights(name):
    base = BASES[name]()
    family = families.family_of(base)
    adapted = sum(w.numel() for w in family.adapted_weights(base))
    lora = sum(2 * (n + m) for n, m in family.adapted_shapes(base))  # r (n + m) per projection at r = 2
    embeddings = sum(w.numel() for w in family.embedding_weights(base))  # token (tied head), GPT-2's positions
    total = sum(p.numel() for p in base.parameters())
    expected = {"full": total, "frozenemb": total - embeddings, "adapter": adapted, "adaptersgd": adapted, "lora": lora}
    expected |= {"dpsgd": lora, "lorafa": lora - 2 * sum(m for _, m in family.adapted_shapes(base))}
    expected |= {"flora": expected["lorafa"], "rowscale": expected["lorafa"], "lorafixed": expected["lorafa"]}
    blocks = ddp_driver.tiny_blocks()
    before = block_losses(base, blocks)
    cfg = TrainConfig(epochs=1, lr=1e-2, batch_size=8, seed=2)
    for method, count in expected.items():
        rank = 2 if method in grid.RANKED else None
        trains = replace(cfg, optimizer="sgd", lr=1.0) if method == "adaptersgd" else cfg  # SGD needs a larger rate
        model, stats = finetune.fine_tune(copy.deepcopy(base), method, blocks, trains, rank=rank)
        assert stats["trainable_parameters"] == count, method
        assert not np.allclose(block_losses(model, blocks), before), method  # it trained
        if method == "frozenemb":
            for moved, start in zip(family.embedding_weights(model), family.embedding_weights(base), strict=True):
                assert torch.equal(moved, start)  # the embeddings stayed where the base has them
    with pytest.raises(ValueError, match=f"1 <= r <= min\\(n, m\\) = {finetune.max_rank(base)}"):
        finetune.prepare(copy.deepcopy(base), "lora", finetune.max_rank(base) + 1)


def test_a_frozen_a_sgd_step_is_the_wishart_projection_on_llama_too():
    """Delta W = -lr s^2 G M holds for Llama's Linear layout as for GPT-2's Conv1D; AdamW breaks it."""
    spec = ddp_driver.LLAMA_SPEC
    assert max(lora_step.step_residuals(2, steps=2, spec=spec)) < 1e-5
    assert min(lora_step.step_residuals(2, steps=2, optimizer="adamw", lr=1e-3, spec=spec)) > 0.1
    fitted, derived = lora_step.sgd_scale(2, spec=spec)
    assert fitted == pytest.approx(derived, rel=1e-4)


def test_the_gpt2_default_keys_are_unchanged():
    """The family fields at their defaults leave a GPT-2 spec's identity as it was before they existed."""
    assert set(ModelSpec().identity()) == {
        "n_layer", "n_embd", "n_head", "block_size", "vocab_size", "pretrain_epochs", "pretrain_lr", "batch_size",
        "hub_id", "hub_revision",
    }  # fmt: skip
    assert ModelSpec(family="llama").identity()["family"] == "llama"


@pytest.fixture(scope="module")
def llama_work(tmp_path_factory, engine_cache):
    """One runner at the tiny Llama scale, its base in the session's cache."""
    folder = tmp_path_factory.mktemp("llama")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(models.CACHE_ENV_VAR, str(engine_cache))
        yield workspace.Workspace(ddp_driver.LLAMA_SCALE, folder / "out", progress=False, device="cpu")


@pytest.mark.slow
def test_a_tiny_llama_runs_the_grid_the_frontier_and_the_audit(llama_work):
    base = llama_work.base()[0]
    assert type(base).__name__ == "LlamaForCausalLM"
    cells = [grid.Cell("synthetic-email", "full", None, 0), grid.Cell("synthetic-email", "lora", 2, 0)]
    records = runner.run(llama_work, cells)
    texts = ddp_driver.LLAMA_SCALE.engine.max_texts_per_part
    for record in records:
        assert record["manifest"]["model"]["family"] == "llama"
        assert 0 <= record["metrics"]["loss_attack"]["auc"]["value"] <= 1
        assert record["metrics"]["validation_perplexity"] > 1
    point = frontier.run_point(llama_work, "synthetic-email", grid.Variant("dpsgd", 2, 1.0), 1e-2, 0, (1,))
    assert point["checkpoints"][0]["epsilon"] > 0
    path = frontier.frontier_path(llama_work.out, "cpu-small", "synthetic-email", "dpsgd-r2-z1-lr0.01", 0)
    assert store.read_scores(store.scores_path(path))["e1_members_target"].shape == (texts,)
    record = audit.run_audit(
        llama_work,
        grid.Cell("synthetic-email", "rowscale", 2, 0),
        canary.CanaryConfig(canaries=20, guesses_each_side=3),
        DPConfig(noise_multiplier=0.5),
    )
    assert record["audit"]["guesses"] == 6 and len(record["scores"]) == 20
    compressed = dp_compare.run(llama_work, [grid.DPCell("compressed", 1.0, "synthetic-email", 0, 2)])[0]
    assert compressed["metrics"]["training"]["input_width"] == 16 and compressed["metrics"]["training"]["epsilon"] > 0
    game = whitebox.play(llama_work, 2, whitebox.GameConfig(texts=8, targets=2, steps=2), rounds=1)
    assert game["known"]["separated"]  # released A: replaying training on D' tells the worlds apart
