"""A user's own model, LoRA recipe and corpus through the same grid (``run --model --peft-config --data``): a tiny
local Llama saved as safetensors runs end to end; bad input is one line, before torch where it can be."""

import json
import subprocess
import sys
from pathlib import Path

import ddp_driver
import pytest

from lorapriv_utils import store
from lorapriv_utils.mia import cli
from lorapriv_utils.mia.engine import families, models, recipe, tokenization
from lorapriv_utils.scale import SCALES

SCALE = ddp_driver.SCALE


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """A tiny Llama with its own tokenizer in a folder (as save_pretrained writes it), a LoRA recipe and a corpus."""
    from faker import Faker

    root = tmp_path_factory.mktemp("own")
    fake = Faker()
    fake.seed_instance(3)
    texts = [fake.paragraph(nb_sentences=3) for _ in range(240)]
    tokenizer = tokenization.train_small_bpe(texts, vocab_size=300)
    model = models.new_model(ddp_driver.LLAMA_SPEC, len(tokenizer), tokenizer.eos_token_id, seed=0)
    folder = root / "my-model"
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    config = root / "lora.json"
    config.write_text(
        json.dumps({"peft_type": "LORA", "r": 2, "lora_alpha": 4, "target_modules": ["q_proj", "o_proj"]})
    )
    corpus = root / "notes.jsonl"
    corpus.write_text("\n".join(json.dumps({"text": t}) for t in texts))
    return folder, config, corpus


def test_the_engine_s_families_are_the_ones_the_checks_know():
    assert set(recipe.FAMILIES) == set(families.FAMILIES)


@pytest.mark.slow
def test_a_tiny_local_model_runs_through_the_grid_with_its_own_recipe(own, tmp_path, monkeypatch, capsys):
    folder, config, corpus_file = own
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)
    argv = ["run", "--model", str(folder), "--peft-config", str(config), "--data", str(corpus_file)]
    argv += ["--out", str(tmp_path)]
    assert cli.main([*argv, "--no-progress", "--threads", "1"]) == 0
    # the scale's folder names the model and the recipe, the corpus's its file, each with a digest of its content
    model_part = f"my-model-{recipe.folder_digest(folder)[:8]}"
    recipe_part = f"lora-{recipe.recipe_digest(recipe.read_peft_config(config))}"
    corpus = f"notes-{recipe.file_digest(corpus_file)}"
    path = tmp_path / f"cpu-small+{model_part}+{recipe_part}" / corpus / "lora-r2-s0.json"
    record = store.read_record(path, "cell")
    spec = record["manifest"]["spec"]
    assert spec["base"] == {"folder_sha256": recipe.folder_digest(folder), "family": "llama", "context": 12}
    assert spec["method"]["peft_config"]["target_modules"] == ["o_proj", "q_proj"]
    assert spec["method"]["peft_config"]["lora_alpha"] == 4
    assert record["manifest"]["data_provenance"]["source"] == "local file notes.jsonl"
    # the recipe was trained: rank 2 on the one block's q_proj and o_proj (16 x 16 each), where the engine's own
    # LoRA adapts q_proj and v_proj (8 x 16): 2 (16 + 16) twice, not 2 (16 + 16) + 2 (16 + 8)
    assert record["metrics"]["training"]["trainable_parameters"] == 2 * 2 * (16 + 16)
    assert 0 <= record["metrics"]["reference_attack"]["auc"]["value"] <= 1
    capsys.readouterr()
    assert cli.main([*argv, "--no-progress"]) == 0  # current: reused, nothing trained again
    assert store.read_record(path, "cell") == record


def _fails(argv, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in err
    return err


def test_bad_models_recipes_and_corpora_are_one_line_before_torch(own, tmp_path, capsys, monkeypatch):
    folder, config, corpus = own
    # the default scale's windows (64 tokens) are longer than the tiny model's context (12)
    err = _fails(["run", "--model", str(folder)], capsys)
    assert "its context is 12 tokens, shorter than the scale's windows of 64" in err
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"]}))
    (bert / "model.safetensors").write_bytes(b"")
    assert "BertModel is not a causal language model" in _fails(["run", "--model", str(bert)], capsys)
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text((folder / "config.json").read_text())
    (pickled / "pytorch_model.bin").write_bytes(b"")
    assert "no .safetensors weights" in _fails(["run", "--model", str(pickled)], capsys)
    dora = tmp_path / "dora.json"
    dora.write_text(json.dumps({"r": 2, "target_modules": ["q_proj"], "use_dora": True}))
    assert "use_dora not supported" in _fails(["run", "--peft-config", str(dora)], capsys)
    ia3 = tmp_path / "ia3.json"
    ia3.write_text(json.dumps({"peft_type": "IA3", "target_modules": ["q_proj"]}))
    assert "the engine trains LoRA only" in _fails(["run", "--peft-config", str(ia3)], capsys)
    assert "drop --ranks" in _fails(["run", "--peft-config", str(config), "--ranks", "4"], capsys)
    named = tmp_path / "ptb.jsonl"
    named.write_text(corpus.read_text())
    assert "rename the file" in _fails(["run", "--data", str(named)], capsys)
    assert "needs --revision" in _fails(["run", "--model", "someone/their-model"], capsys)
    assert "a local folder, which has no revision" in _fails(["run", "--model", str(folder), "--revision", "a"], capsys)
    text = tmp_path / "notes.txt"
    text.write_text("one text")
    assert "give a .jsonl or .csv file" in _fails(["run", "--data", str(text)], capsys)
    # a recipe trains method lora: another LoRA-type method would train the engine's own LoRA under its name
    err = _fails(["run", "--peft-config", str(config), "--methods", "lora,flora"], capsys)
    assert "a LoRA recipe trains method lora, and flora would not follow it" in err
    assert "and no lora would not follow it" in _fails(
        ["run", "--peft-config", str(config), "--methods", "full"], capsys
    )
    code = (
        "import sys; from lorapriv_utils.mia import cli\n"
        f"try:\n    cli.main(['run', '--model', {str(bert)!r}])\nexcept SystemExit:\n    pass\n"
        "assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.slow
def test_target_modules_the_model_lacks_are_one_line(own, tmp_path, monkeypatch, capsys):
    folder, _, corpus = own
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"r": 2, "target_modules": ["c_attn"]}))
    argv = ["run", "--model", str(folder), "--peft-config", str(wrong), "--data", str(corpus), "--out", str(tmp_path)]
    err = _fails([*argv, "--no-progress"], capsys)
    assert "target_modules c_attn match no module of the model; its linear layers are named" in err
    assert "q_proj" in err


def test_peft_s_own_adapter_config_is_read_and_two_recipes_lie_apart(tmp_path):
    """The file PEFT writes (every setting it knows, most at an empty default) is read; a setting that changes what
    is trained is refused; two recipes of one file name get folders of their own."""
    from peft import LoraConfig

    LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]).save_pretrained(tmp_path / "a")
    read = recipe.read_peft_config(tmp_path / "a" / "adapter_config.json")
    assert read["r"] == 4 and read["target_modules"] == ["q_proj", "v_proj"]
    LoraConfig(r=4, lora_alpha=16, target_modules=["q_proj", "v_proj"]).save_pretrained(tmp_path / "b")
    other = recipe.read_peft_config(tmp_path / "b" / "adapter_config.json")
    assert recipe.recipe_digest(read) != recipe.recipe_digest(other)
    LoraConfig(r=4, target_modules=["q_proj"], use_dora=True).save_pretrained(tmp_path / "c")
    with pytest.raises(ValueError, match="use_dora not supported"):
        recipe.read_peft_config(tmp_path / "c" / "adapter_config.json")


def test_a_file_given_as_data_folder_never_replaces_a_built_in_corpus(own):
    from lorapriv_utils.mia.engine import data

    _, _, corpus_file = own
    assert (
        data.load_corpus("ptb", data_dir=corpus_file).provenance
        != data.load_corpus("x", data_dir=corpus_file).provenance
    )
    assert data.load_corpus("x", data_dir=corpus_file).provenance["source"] == "local file notes.jsonl"


def test_a_recipe_is_read_as_plain_sorted_data(tmp_path):
    path = tmp_path / "adapter_config.json"
    path.write_text(
        json.dumps(
            {
                "peft_type": "LORA",
                "task_type": "CAUSAL_LM",
                "r": 4,
                "lora_alpha": 16,
                "lora_dropout": 0.05,
                "target_modules": ["v_proj", "q_proj"],
                "init_lora_weights": True,
                "use_dora": False,
            }
        )
    )
    assert recipe.read_peft_config(path) == {
        "r": 4,
        "lora_alpha": 16,
        "lora_dropout": 0.05,
        "target_modules": ["q_proj", "v_proj"],
        "bias": "none",
        "use_rslora": False,
    }
    assert json.loads(recipe.recipe_text(recipe.read_peft_config(path)))["r"] == 4


def test_a_changed_model_folder_is_refused(own, tmp_path):
    import shutil

    folder, _, _ = own
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    spec = recipe.model_folder_spec(copy, 12)
    assert spec.family == "llama" and spec.n_kv_head == 1 and spec.max_rank() == 8
    (copy / "config.json").write_text((copy / "config.json").read_text() + "\n")
    with pytest.raises(ValueError, match="its files changed"):
        recipe.check_folder_unchanged(spec)
    assert Path(spec.folder) == copy.resolve()
