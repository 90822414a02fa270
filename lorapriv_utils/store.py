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

This module imports no torch and no numpy: the status check reads it in a fraction of a second.
"""

from __future__ import annotations

import hashlib
import json
import math

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
    "attack-metrics": 1,  # AUC, TPR at FPR, their bootstrap intervals, the attack signals
    "frontier": 1,  # checkpoints scored after each listed epoch
    "lira": 1,  # offline LiRA's reference models on random halves of the auxiliary part
    "canary-audit": 1,  # canaries, their inclusion draw, the epsilon lower bound
    "dp-compare": 1,  # DP-SGD on four weight sets, the widened rate grid, matched noise
    "multiplier": 1,  # section 5.1's multiplier on per-text gradients
    "alignment": 1,  # paper B's gradient alignment at the start of fine-tuning
    "whitebox": 1,  # the DP game against LoRA-FA's release
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
