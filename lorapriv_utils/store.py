"""The results store's keys: what a committed result's numbers depend on, and whether it is current.

Every result record carries in its manifest a *spec*, an explicit account of exactly what its numbers
depend on, in named parts (``method``, ``data``, ``base``, ``numerics``, ``versions``, and the parts a
kind adds: ``frontier``, ``lira``, ``audit``, ``derived``...), and a *key*: one 16-hex digest per part.
A record is current when the key recomputed from today's code and scale records equals its own; a
stale record names the parts, and the fields, that changed.

What enters a spec, and what does not:

* settings the numbers depend on, and only where the method uses them (DP-SGD's settings for
  ``dpsgd``, row scaling's for ``rowscale``; one method family's training budget, not the other's);
* data digests computed from the texts themselves (no tokenizer, no pre-training needed to check);
* the base model's identity (its architecture and pre-training budget, or its hub id and revision);
* the versions of the packages that compute (torch, transformers, ...);
* *numerics versions* (:data:`NUMERICS`): each component that computes numbers declares an integer,
  and a record's spec holds the versions of the components it used.  A change that moves a
  component's numbers bumps its version, which re-keys only the records that use it; a refactor, a
  docstring or a log line re-keys nothing.  The golden tripwire tests (``tests/test_numerics.py``)
  fail when a component's numbers move without a bump, and name the version to bump.
* No source digest: a manifest may record the commit for provenance, never in the key.

A field left at ``None`` or empty does not enter the digest (:func:`canonical`), so that a new
setting whose default reproduces the old behaviour re-keys nothing.

This module imports no torch, and numpy only to read or write arrays: the status check reads it in a fraction
of a second.  It also holds the records' envelope, their one writer and their one reader (below).
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

# Numerics versions: bump one when the numbers of its component change on purpose (see CONTRIBUTING.md).
NUMERICS = {
    # the engine's shared components
    "corpus-split": 1,  # data.split_corpus: de-duplication, validation cut, shuffle, the three parts, caps
    "tokenizer": 1,  # tokenization: the BPE vocabulary trained offline, text windows
    "base-pretraining": 1,  # models.pretrained_base: the CPU scales' base model
    "gguf-dequantisation": 1,  # pretrained.load: a GGUF dequantised to float32 (tripwire: test_pretrained's pin)
    "training-loop": 1,  # training.run_training: data order, AdamW or SGD, linear schedule
    "text-scores": 1,  # training.text_scores / text_losses / row_sums: per-text losses, Min-K%++, perplexity
    "lr-sweep": 1,  # the learning-rate rule: each rate on the auxiliary part, lowest validation perplexity
    # the methods (finetune.prepare and the gradient transforms)
    "full": 1,
    "frozenemb": 1,  # full fine-tuning with the embeddings (token, position, tied head) frozen
    "adapter": 1,
    "lora": 1,  # PEFT LoRA on the adapted projections, B = 0, A ~ N(0, 1/r)
    "lorafa": 1,  # LoRA with A frozen
    "lorafixed": 1,  # LoRA-FA with a fixed, non-random A (a DCT basis): the projection-arm control
    "flora": 1,  # A resampled after every step, B merged and reset
    "dpsgd": 1,  # Opacus's per-text clipping and noise, PRV and RDP epsilons
    "rowscale": 1,  # paper A's row scaling of per-text B-gradients (section 5)
    "compressed": 1,  # compressed DP-SGD: a fresh projection per layer and step, its RDP certificate
    # the attacks and experiments
    # AUC, TPR at FPR, their bootstrap intervals, the attack signals; 2: every interval's ends widened by their
    # Monte Carlo error (resampling.percentile)
    "attack-metrics": 2,
    "frontier": 1,  # checkpoints scored after each listed epoch
    "lira": 1,  # offline LiRA's reference models on random halves of the auxiliary part
    "canary-audit": 1,  # canaries, their inclusion draw, the epsilon lower bound
    "dp-compare": 1,  # DP-SGD on four weight sets, the widened rate grid, matched noise
    "multiplier": 1,  # section 5.1's multiplier on per-text gradients
    "alignment": 1,  # paper B's gradient alignment at the start of fine-tuning
    "whitebox": 2,  # the DP game against LoRA-FA's release; 2: the fit starts at (m/r) I, three relaxations kept
    "rowscale-cost": 1,  # row scaling's time and memory against LoRA-FA (a measurement, not a number to pin)
}

# The components every trained cell uses (each method adds its own: ``mia.methods.Method.components``).
ENGINE_COMPONENTS = ("corpus-split", "tokenizer", "base-pretraining", "training-loop", "text-scores")

KEY_DIGITS = 16


def canonical(value):
    """``value`` as the digest sees it: tuples as lists, ``None`` and empty containers dropped from mappings
    (a field left at a neutral default does not enter the key), floats by their shortest repr."""
    if isinstance(value, dict):
        out = {}
        for name, item in value.items():
            item = canonical(item)
            if item is None or item == [] or item == {}:
                continue
            out[str(name)] = item
        return out
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a spec holds a non-finite number ({value}); settings must be finite")
        return float(repr(value))
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"a spec holds a {type(value).__name__}; specs are JSON data (dicts, lists, numbers, strings)")


def digest(value) -> str:
    """The 16-hex digest of ``value``'s canonical JSON."""
    text = json.dumps(canonical(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_DIGITS]


def key_of(spec: dict) -> dict[str, str]:
    """A record's key: one digest per part of its spec."""
    return {part: digest(value) for part, value in spec.items()}


def trained_key(key: dict) -> dict[str, str]:
    """``key`` without its ``derived`` part (the metrics a record computes from its stored scores): what the
    training or game behind a record depends on, and so what its journals and kept parts are keyed by."""
    return {part: d for part, d in key.items() if part != "derived"}


def numerics(*components: str) -> dict[str, int]:
    """The numerics versions of ``components`` (unknown names are refused: declare them in NUMERICS)."""
    unknown = [c for c in components if c not in NUMERICS]
    if unknown:
        raise KeyError(f"no numerics version for {', '.join(unknown)}: declare it in lorapriv_utils.store.NUMERICS")
    return {c: NUMERICS[c] for c in sorted(set(components))}


def changed_parts(stored: dict, current: dict) -> list[str]:
    """The parts whose digests differ (a part present in only one of the two counts as changed)."""
    return sorted(part for part in set(stored) | set(current) if stored.get(part) != current.get(part))


def spec_differences(old, new, prefix: str = "") -> list[str]:
    """Dotted names of the fields that differ between two specs (after :func:`canonical`)."""
    old, new = canonical(old) if prefix == "" else old, canonical(new) if prefix == "" else new
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for name in sorted(set(old) | set(new)):
            out += spec_differences(old.get(name), new.get(name), f"{prefix}{name}.")
        return out
    return [] if old == new else [prefix.rstrip(".") or "(whole spec)"]


# The envelope: one layout for every committed record, one writer (:func:`write_record`), one reader
# (:func:`read_record`).  A record is a JSON object whose reserved top-level fields are
#
#   schema         the envelope's layout (:data:`SCHEMA`);
#   kind           one of :data:`KINDS`, which says what its payload holds;
#   manifest       how it was made, its ``spec`` and its ``key`` (one digest per part of the spec);
#   scores_sha256  for a kind with arrays: the digest of the values in ``NAME.scores.npz`` beside it;
#   checksum       SHA-256 of every other field's canonical JSON;
#
# and every other field is the payload of its kind.  Arrays (per-text scores, canary inclusions) live in the
# ``.scores.npz`` file; they are read with pickling disabled.

SCHEMA = 3  # the envelope's layout; a record of another schema is refused by the reader (migrate or rerun it)
ENVELOPE = ("schema", "kind", "manifest", "scores_sha256", "checksum")


@dataclass(frozen=True)
class Kind:
    """A kind of committed record."""

    name: str
    group: str  # the catalogue's kind: which spec (``mia.records.specs``) says what its numbers depend on
    payload: tuple[str, ...]  # the payload fields every record of the kind carries
    arrays: bool  # its arrays lie in a .scores.npz beside it


KINDS = {
    kind.name: kind
    for kind in (
        Kind("cell", "cell", ("metrics",), True),
        Kind("frontier-base", "frontier", ("dataset", "seed", "checkpoints"), True),
        Kind("frontier-point", "frontier", ("dataset", "seed", "lr", "variant", "checkpoints", "training"), True),
        Kind("lira-references", "lira", ("cell", "lr", "references"), True),
        # a few hundred canaries: their scores and inclusions stay in the JSON, as payload
        Kind("canary-audit", "audit", ("audit", "scores", "included", "training", "validation_perplexity"), False),
        Kind("dp-compare", "dp-compare", ("cell", "metrics"), False),
        Kind("multiplier", "multiplier", ("table", "wall_seconds"), False),
        Kind("alignment", "alignment", ("curve", "wall_seconds"), False),
        Kind("whitebox", "whitebox", ("rows", "game", "wall_seconds"), False),
        Kind("rowscale-cost", "rowscale-cost", ("time_ratio", "memory_ratio"), False),
        # an unfinished cell's learning-rate sweep, hidden beside where its record will lie (reuse.SweepJournal)
        Kind("sweep-journal", "journal", ("rates",), False),
        # a frontier point whose target is trained and scored, its reference not yet (frontier.TargetJournal)
        Kind("frontier-journal", "journal", ("checkpoints", "training"), True),
    )
}


def kinds_of(group: str) -> tuple[str, ...]:
    """The record kinds of a catalogue group (``frontier``: its base and its points)."""
    return tuple(name for name, kind in KINDS.items() if kind.group == group)


def record_checksum(record: dict) -> str:
    """The checksum a record carries: SHA-256 of its canonical JSON (keys sorted), without the checksum."""
    return hashlib.sha256(
        json.dumps({k: v for k, v in record.items() if k != "checksum"}, sort_keys=True).encode()
    ).hexdigest()


def check_envelope(record, kinds: tuple[str, ...] | None = None) -> Kind:
    """The kind of ``record`` after checking its envelope (a ValueError, one line, says what is wrong);
    ``kinds``: the kinds the caller reads."""
    if not isinstance(record, dict):
        raise ValueError(f"a {type(record).__name__}, not a record")
    if record.get("schema") != SCHEMA:
        raise ValueError(
            f"schema {record.get('schema')}, an older record layout than {SCHEMA}: "
            "migrate it with `python tools/migrate_envelope.py FOLDER` (its numbers are kept) or rerun it"
        )
    kind = KINDS.get(record.get("kind"))
    if kind is None:
        raise ValueError(f"unknown record kind {record.get('kind')!r}; known: {', '.join(KINDS)}")
    if kinds is not None and kind.name not in kinds:
        raise ValueError(f"a record of kind {kind.name}, not {' or '.join(kinds)}")
    missing = [name for name in ("manifest", *kind.payload) if name not in record]
    if missing:
        raise ValueError(f"a record of kind {kind.name} without {', '.join(missing)}")
    if kind.arrays != ("scores_sha256" in record):
        raise ValueError(f"a record of kind {kind.name} {'without' if kind.arrays else 'with'} a digest of arrays")
    return kind


def seal(record: dict, spec: dict | None = None, kind: str | None = None) -> dict:
    """``record`` in its envelope: the schema, its kind (when ``kind`` is given), its spec and key in its manifest
    (when ``spec`` is given) and its checksum, set last.  What every committed record is written as."""
    record.pop("checksum", None)
    record["schema"] = SCHEMA
    if kind is not None:
        record["kind"] = kind
    if spec is not None:
        record.setdefault("manifest", {}).update(spec=spec, key=key_of(spec))
    check_envelope(record)
    record["checksum"] = record_checksum(record)
    return record


def scores_path(result) -> Path:
    """Where the arrays of the record at ``result`` lie."""
    result = Path(result)
    return result.with_name(result.name.removesuffix(".json") + ".scores.npz")


def scores_digest(scores: dict) -> str:
    """A digest of the arrays' values (not of the zip file, whose bytes carry timestamps)."""
    import numpy as np

    digest = hashlib.sha256()
    for name in sorted(scores):
        values = np.ascontiguousarray(scores[name], dtype=np.float64)
        digest.update(name.encode() + b"\0" + values.tobytes())
    return digest.hexdigest()


def read_scores(path) -> dict:
    """The arrays of an arrays file (plain arrays only: it is read with pickling disabled)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise FileNotFoundError(f"its scores file {Path(path).name} is missing: rerun the record") from None
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, AttributeError):
        # numpy's own words would suggest allow_pickle, which this project never sets on a file it did not write
        raise ValueError(
            f"its scores file {Path(path).name} is damaged (not an archive of plain arrays): rerun the record"
        ) from None


def read_arrays(path, record: dict) -> dict:
    """The arrays beside the record at ``path``, checked against the digest ``record`` holds (a ValueError
    otherwise)."""
    arrays = read_scores(scores_path(path))
    if scores_digest(arrays) != record["scores_sha256"]:
        raise ValueError("its arrays file does not match the record")
    return arrays


def write_record(path, record: dict, scores: dict | None = None) -> dict:
    """The one writer of a committed record: a sealed record (:func:`seal`) and, for a kind with arrays, its
    arrays beside it (:func:`scores_path`), written first; the JSON is written last, the commit mark.  In a
    declared store (``lorapriv_utils.declared``) only a declared record made with its declared options is written,
    and its new checksum is recorded in the declaration."""
    import io

    import numpy as np

    from . import declared
    from .files import atomic_write_bytes, atomic_write_text

    path = Path(path)
    if record.get("checksum") != record_checksum(record):
        raise ValueError(f"{path}: the record is not sealed (seal it last, after every field is set)")
    kind = check_envelope(record)
    if kind.arrays != (scores is not None):
        raise ValueError(f"{path}: a {kind.name} record is written {'with its' if kind.arrays else 'without'} arrays")
    store = declared.check_write(path, record)
    if store is not None:
        declared.writing(store, path, record)
    if scores is not None:
        if record.get("scores_sha256") != scores_digest(scores):
            raise ValueError(f"{path}: the record's scores_sha256 is not the digest of the scores written with it")
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **scores)
        atomic_write_bytes(scores_path(path), buffer.getvalue())
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    if store is not None:
        declared.written(store, path, record)
    return record


def read_record(path, kinds: str | tuple[str, ...] | None = None, with_arrays: bool = False, declared: bool = True):
    """The record at ``path`` whose envelope and checksum verify (a ValueError, one line, says what is wrong
    otherwise); ``kinds``: the kind or kinds the caller reads.  ``with_arrays``: (record, arrays), the arrays
    checked against the record's digest (None for a kind without arrays).  In a declared store a record the
    declaration does not name as it is (undeclared, foreign, altered) is refused (``declared=False``: read it
    anyway, as the status check does to report it)."""
    from . import declared as declaration

    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err}") from None
    kinds = (kinds,) if isinstance(kinds, str) else kinds
    if isinstance(record, dict) and record.get("checksum") != record_checksum(record):
        raise ValueError("checksum mismatch")
    kind = check_envelope(record, kinds)
    if declared:
        declaration.check_read(path, record)
    if not with_arrays:
        return record
    return record, (read_arrays(path, record) if kind.arrays else None)
