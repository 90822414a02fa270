"""A user's own model, LoRA recipe and corpus, checked before torch loads (``python -m lorapriv_utils run --model
FOLDER --peft-config lora.json --data texts.jsonl``).

* the model: a local folder of a causal language model, its weights in safetensors files (never a pickle), its
  ``config.json`` and its tokenizer; its architecture must be one the engine knows (:data:`FAMILIES`: it finds
  the blocks and projections through ``families``), and its files' digest enters every record's key;
* the recipe: a PEFT LoRA configuration file (``adapter_config.json`` as PEFT writes it, or the same keys by
  hand): rank, alpha, dropout, target modules, bias and rsLoRA; a setting the engine would not honour is refused;
* the corpus: a JSONL or CSV file of texts (``text`` field), de-duplicated and split as the book's corpora are.

Every problem is one line that says what to do.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

from ...scale import ModelSpec

FAMILIES = ("gpt2", "llama")  # the architectures of ``families.FAMILIES`` (a test keeps the two equal)
CAUSAL_HEADS = ("ForCausalLM", "LMHeadModel")  # how transformers names a causal LM's class
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
)
LORA_KEYS = ("r", "lora_alpha", "lora_dropout", "target_modules", "bias", "use_rslora")
# keys PEFT writes that do not change what is trained here (the base model is the one --model names)
IGNORED_KEYS = (
    "peft_type",
    "task_type",
    "base_model_name_or_path",
    "revision",
    "inference_mode",
    "auto_mapping",
    "peft_version",
)
# PEFT's defaults that are not empty; any other setting PEFT writes (use_dora, rank_pattern, layers_to_transform,
# exclude_modules, ...) is honoured here only at an empty value (None, False, {}, [], ""), which is PEFT's default
DEFAULTS = {
    "init_lora_weights": True,
    "fan_in_fan_out": False,
    "megatron_core": "megatron.core",
    "qalora_group_size": 16,
}
DATASET_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def folder_digest(folder: Path) -> str:
    """SHA-256 over the name and content of every file the model is loaded from: its config, its safetensors
    weights and its tokenizer's files, in order of name."""
    digest = hashlib.sha256()
    for path in sorted(_model_files(folder)):
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _model_files(folder: Path) -> list[Path]:
    names = {"config.json", "generation_config.json", "added_tokens.json", *TOKENIZER_FILES}
    return [p for p in folder.iterdir() if p.is_file() and (p.name in names or p.suffix == ".safetensors")]


def recipe_digest(recipe: dict) -> str:
    """A short digest of a recipe, which names its records' folder apart from another recipe's."""
    return hashlib.sha256(recipe_text(recipe).encode()).hexdigest()[:8]


def file_digest(path: str | Path) -> str:
    """A short digest of a file's content (a corpus), which names its records' folder apart from another's."""
    return hashlib.sha256(Path(path).expanduser().read_bytes()).hexdigest()[:8]


def model_folder_spec(folder: str | Path, context: int) -> ModelSpec:
    """The :class:`ModelSpec` of the causal LM in ``folder`` (architecture read from its config, files digested),
    with windows of ``context`` tokens; a ValueError or FileNotFoundError in one line otherwise."""
    folder = Path(folder).expanduser().resolve()
    where = f"--model {folder}"
    if not folder.is_dir():
        raise FileNotFoundError(f"{where}: no such folder; give a folder with config.json, safetensors and a tokenizer")
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{where}: no config.json; save the model with save_pretrained") from None
    except ValueError as err:
        raise ValueError(f"{where}: config.json is not JSON ({err})") from None
    spec = config_spec(config, context, where)  # not a causal LM, or not an architecture the engine adapts
    if not any(p.suffix == ".safetensors" for p in folder.iterdir()):
        raise FileNotFoundError(
            f"{where}: no .safetensors weights (lorapriv never unpickles a .bin file); save the model with "
            "save_pretrained(folder, safe_serialization=True)"
        )
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise FileNotFoundError(f"{where}: no tokenizer files; save the tokenizer into the folder too")
    return replace(spec, folder=str(folder), folder_sha256=folder_digest(folder))


def config_spec(config: dict, context: int, where: str) -> ModelSpec:
    """The :class:`ModelSpec` of a transformers ``config.json`` (as a dict), or one line on why the engine cannot
    run it (not a causal LM; an architecture it does not adapt)."""
    architectures = config.get("architectures") or []
    model_type = config.get("model_type")
    if not any(name.endswith(CAUSAL_HEADS) for name in architectures):
        raise ValueError(
            f"{where}: {', '.join(architectures) or model_type or 'its model'} is not a causal language model; "
            "membership inference here scores texts by a causal LM's loss: give a model saved from "
            "AutoModelForCausalLM"
        )
    if model_type not in FAMILIES:
        raise ValueError(
            f"{where}: architecture {model_type!r} is not one the engine adapts ({', '.join(FAMILIES)}); "
            "add a Family for it in lorapriv_utils/mia/engine/families.py"
        )
    window = config.get("n_positions") or config.get("max_position_embeddings")
    if window is not None and window < context:
        raise ValueError(
            f"{where}: its context is {window} tokens, shorter than the scale's windows of {context}; "
            "give another --scale or a model with a longer context"
        )
    try:
        if model_type == "gpt2":
            shape = {"n_layer": config["n_layer"], "n_embd": config["n_embd"], "n_head": config["n_head"]}
            shape["n_inner"] = config.get("n_inner")
        else:
            shape = {
                "n_layer": config["num_hidden_layers"],
                "n_embd": config["hidden_size"],
                "n_head": config["num_attention_heads"],
                "n_kv_head": config.get("num_key_value_heads"),
                "n_inner": config.get("intermediate_size"),
            }
        return ModelSpec(**shape, block_size=context, vocab_size=config["vocab_size"], family=model_type)
    except KeyError as err:
        raise ValueError(f"{where}: its config.json lacks {err.args[0]!r}, which a {model_type} config has") from None


def check_folder_unchanged(spec: ModelSpec) -> None:
    """Refuse a model folder whose files changed since its spec was made (the record's key would name others)."""
    if spec.folder is not None and folder_digest(Path(spec.folder)) != spec.folder_sha256:
        raise ValueError(f"--model {spec.folder}: its files changed while the run started; run the command again")


def read_peft_config(path: str | Path) -> dict:
    """The LoRA recipe of a PEFT configuration file, as plain data with sorted target modules (what a record's key
    holds); a setting the engine would not honour is refused in one line."""
    path = Path(path).expanduser()
    where = f"--peft-config {path}"
    try:
        given = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{where}: no such file; give PEFT's adapter_config.json or the same keys") from None
    except ValueError as err:
        raise ValueError(f"{where}: not JSON ({err})") from None
    if not isinstance(given, dict):
        raise ValueError(f"{where}: give a JSON object of LoRA settings (r, lora_alpha, target_modules, ...)")
    if given.get("peft_type", "LORA") != "LORA":
        raise ValueError(f"{where}: peft_type {given['peft_type']!r}; the engine trains LoRA only")
    unknown = sorted(
        key
        for key, value in given.items()
        if key not in LORA_KEYS
        and key not in IGNORED_KEYS
        and value not in (None, False, {}, [], "")
        and (key not in DEFAULTS or value != DEFAULTS[key])
    )
    if unknown:
        raise ValueError(
            f"{where}: {', '.join(unknown)} not supported (the engine trains plain LoRA with A drawn N(0, 1/r) and "
            f"B = 0); remove {'it' if len(unknown) == 1 else 'them'} or set PEFT's default"
        )
    rank = given.get("r", 8)
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"{where}: r must be a positive integer, got {rank!r}")
    targets = given.get("target_modules")
    if isinstance(targets, str):
        targets = [targets]
    if not targets or not all(isinstance(t, str) and t for t in targets):
        raise ValueError(f'{where}: target_modules must name the projections to adapt, such as ["q_proj", "v_proj"]')
    dropout = given.get("lora_dropout", 0.0)
    if not isinstance(dropout, int | float) or not 0 <= dropout < 1:
        raise ValueError(f"{where}: lora_dropout must lie in [0, 1), got {dropout!r}")
    alpha = given.get("lora_alpha", 8)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not alpha > 0:
        raise ValueError(f"{where}: lora_alpha must be positive, got {alpha!r}")
    bias = given.get("bias", "none")
    if bias not in ("none", "all", "lora_only"):
        raise ValueError(f"{where}: bias must be none, all or lora_only, got {bias!r}")
    rslora = given.get("use_rslora", False)
    if not isinstance(rslora, bool):
        raise ValueError(f"{where}: use_rslora must be true or false, got {rslora!r}")
    if any("*" in t or "." in t or "\\" in t for t in targets):
        raise ValueError(
            f"{where}: target_modules {', '.join(targets)}: give the projections' own names (q_proj, c_attn), "
            "not paths or patterns"
        )
    return {
        "r": rank,
        "lora_alpha": alpha,
        "lora_dropout": float(dropout),
        "target_modules": sorted(set(targets)),
        "bias": bias,
        "use_rslora": rslora,
    }


def recipe_text(recipe: dict) -> str:
    """The canonical JSON text of a recipe (``EngineScale.peft_config``)."""
    return json.dumps(recipe, sort_keys=True)


def data_file_name(path: str | Path) -> str:
    """The dataset name of a corpus file: its stem, which must be a plain lowercase name and not a built-in's."""
    from .data import DATASETS

    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"--data {path}: no such file; give a JSONL or CSV file with a text field")
    if path.suffix not in (".jsonl", ".csv"):
        raise ValueError(
            f"--data {path}: give a .jsonl or .csv file (field 'text'), not a {path.suffix or 'bare'} file"
        )
    name = path.stem
    if not DATASET_NAME.match(name) or name in DATASETS:
        raise ValueError(
            f"--data {path}: its name {name!r} must be lowercase letters, digits, - or _, and none of "
            f"{', '.join(DATASETS)}; rename the file"
        )
    return name


def own_engine(engine, model: ModelSpec | None, recipe: dict | None):
    """``engine`` (an ``EngineScale``) with the user's model and LoRA recipe in place of its own."""
    if model is not None:
        engine = replace(engine, model=model)
    if recipe is not None:
        engine = replace(engine, peft_config=recipe_text(recipe))
    return engine
