import pytest

from lorapriv_utils import scale


def test_default_scale_is_cpu_small(monkeypatch):
    monkeypatch.delenv(scale.ENV_VAR, raising=False)
    assert scale.current_scale().name == "cpu-small"


def test_empty_value_means_default(monkeypatch):
    monkeypatch.setenv(scale.ENV_VAR, "  ")
    assert scale.current_scale().name == "cpu-small"


@pytest.mark.parametrize("name", ["cpu-small", "cpu-large", "paper"])
def test_every_named_scale_is_selectable(monkeypatch, name):
    monkeypatch.setenv(scale.ENV_VAR, name)
    chosen = scale.current_scale()
    assert chosen.name == name
    assert chosen.as_dict()["name"] == name


def test_scales_grow():
    small, large, paper = (scale.SCALES[n] for n in ("cpu-small", "cpu-large", "paper"))
    assert small.mc_draws < large.mc_draws < paper.mc_draws
    assert all(s.mc_chunk <= s.mc_draws for s in scale.SCALES.values())


def test_unknown_scale_lists_the_valid_ones(monkeypatch):
    monkeypatch.setenv(scale.ENV_VAR, "gpu-huge")
    with pytest.raises(ValueError) as err:
        scale.current_scale()
    message = str(err.value)
    assert "gpu-huge" in message and scale.ENV_VAR in message
    for name in scale.SCALES:
        assert name in message


def test_one_record_holds_the_engine_settings():
    small, large, paper = (scale.SCALES[n] for n in ("cpu-small", "cpu-large", "paper"))
    assert small.engine.model.n_embd < large.engine.model.n_embd < paper.engine.model.n_embd
    assert paper.engine.model.hub_id == "gpt2" and small.engine.model.hub_id is None
    assert paper.engine.datasets == ("ptb", "enron", "pubmed")  # paper A's three corpora
    assert (paper.engine.dense.epochs, paper.engine.dense.batch_size) == (20, 8)
    assert 1e-5 in paper.engine.dense.lr_grid and 1e-4 in paper.engine.lora.lr_grid  # the paper's rates are swept
    with pytest.raises(ValueError, match="lr_grid"):
        scale.Hparams(epochs=1, lr_grid=(), batch_size=8)
    assert small.engine.hparams(ranked=True) == small.engine.lora
    assert small.engine.hparams(ranked=False) == small.engine.dense


def test_the_scale_module_imports_no_torch():
    import subprocess
    import sys

    code = "import sys, lorapriv_utils.scale; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_part_caps_cap_long_text_corpora_only():
    large = scale.SCALES["cpu-large"].engine
    assert large.datasets == ("ptb", "enron", "pubmed")  # paper A's three corpora, from a data folder
    assert large.texts_per_part("ptb") == large.max_texts_per_part
    assert large.texts_per_part("enron") < large.max_texts_per_part
    assert large.texts_per_part("pubmed") < large.max_texts_per_part
    assert (
        scale.SCALES["cpu-small"].engine.texts_per_part("enron") == scale.SCALES["cpu-small"].engine.max_texts_per_part
    )
    assert scale.SCALES["paper"].engine.texts_per_part("pubmed") is None  # the paper scale keeps every text
    with pytest.raises(ValueError, match="part_caps"):
        scale.EngineScale(model=scale.ModelSpec(), dense=large.dense, lora=large.lora, part_caps=(("enron", 0),))


def test_the_base_models_sizes_are_the_architectures():
    """The counts the book states: the default scale's toy GPT-2 and the pretrained SmolLM2-135M (its GGUF's
    134,515,008 weights; tests/test_families.py holds the formula against torch on tiny models of both families)."""
    assert scale.SCALES["cpu-small"].engine.model.parameters() == 235_264
    assert scale.SCALES["cpu-pretrained"].engine.model.parameters() == 134_515_008
    assert scale.SCALES["cpu-small"].engine.model.describe() == (
        "a 2-layer GPT-2 of width 64 (235,264 parameters) pre-trained offline on Penn Treebank's test split"
    )
    assert "not GPT-2" in scale.SCALES["cpu-pretrained"].engine.model.describe()
    assert scale.SCALES["paper"].engine.model.describe() == "gpt2 from the Hugging Face hub"
    shorts = [scale.SCALES[name].engine.model.short_name() for name in ("cpu-small", "cpu-large", "cpu-pretrained")]
    assert shorts == ["toy GPT-2 (0.24M)", "toy GPT-2 (1.3M)", "SmolLM2-135M-Instruct (135M)"]
