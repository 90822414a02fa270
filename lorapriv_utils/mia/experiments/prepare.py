"""A cell's first stage: its corpus, de-duplicated and split, each part capped and tokenized into context windows
(the attack's unit is a text)."""

from __future__ import annotations

from dataclasses import dataclass

from ...scale import EngineScale
from ..engine import data as data_mod
from ..engine import models


@dataclass
class PreparedData:
    """A dataset's split, each part as text windows, with the hashes and counts that manifests record."""

    members: data_mod.TextWindows
    auxiliary: data_mod.TextWindows
    nonmembers: data_mod.TextWindows
    validation: data_mod.TextWindows
    split_hashes: dict
    dedup: dict
    provenance: dict
    texts: dict  # the texts behind each part (the canary audit adds canaries to the members)


def dataset_texts(name: str, seed: int, engine: EngineScale, data_dir=None, hub: bool = False) -> dict[str, list[str]]:
    """The texts of each part of a dataset's split, as a cell of ``seed`` uses them (no tokenizer needed)."""
    corpus = data_mod.load_corpus(name, data_dir=data_dir, hub=hub, seed=seed, synthetic_count=engine.synthetic_count)
    return _parts(name, data_mod.split_corpus(corpus, seed), engine)


def _parts(name: str, split, engine: EngineScale) -> dict[str, list[str]]:
    cap, vcap = engine.texts_per_part(name), engine.max_validation_texts
    parts = {
        "members": split.members[:cap],
        "auxiliary": split.auxiliary[:cap],
        "nonmembers": split.nonmembers[:cap],
        "validation": split.validation[:vcap],
    }
    small = {
        part: len(parts[part])
        for part in ("members", "auxiliary", "nonmembers")
        if len(parts[part]) < data_mod.MIN_TEXTS_PER_PART
    }
    if small:
        raise ValueError(
            f"dataset {name!r}: after de-duplication its parts hold "
            + ", ".join(f"{n} {part}" for part, n in small.items())
            + f" texts, below the {data_mod.MIN_TEXTS_PER_PART} each that an attack's AUC and its interval need; "
            "give a larger corpus"
        )
    return parts


def prepare_dataset(
    name: str, seed: int, engine: EngineScale, tokenizer, context: int, data_dir=None, hub: bool = False
) -> PreparedData:
    """The split of ``name`` for ``seed``, each part as ``tokenizer``'s windows of ``context`` tokens."""
    corpus = data_mod.load_corpus(name, data_dir=data_dir, hub=hub, seed=seed, synthetic_count=engine.synthetic_count)
    split = data_mod.split_corpus(corpus, seed)
    parts = _parts(name, split, engine)
    hashes = {part: data_mod.texts_digest(texts) for part, texts in parts.items()}  # of the texts actually used
    return PreparedData(
        **{
            part: models.encode_texts(tokenizer, texts, context, engine.max_windows_per_text)
            for part, texts in parts.items()
        },
        split_hashes=hashes,
        dedup=split.dedup,
        provenance=corpus.provenance,
        texts=parts,
    )
