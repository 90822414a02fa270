"""An empirical privacy audit of a fine-tuning method with canaries, in one training run.

m canary texts (synthetic secrets: a name, an account number and a PIN) are each added to the
members with probability 1/2.  After training, each canary is scored by how much the fine-tuned
model lowered its loss relative to the base model; the auditor guesses "in" for the k highest
scores and "out" for the k lowest, and the count of right guesses becomes an epsilon lower bound
(Steinke, Nasr and Jagielski 2023; ``theory.audit.one_run_epsilon_lower_bound``).  A lower bound
proves that a method is *not* (epsilon, delta)-DP for any smaller epsilon; it certifies nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..theory import audit


@dataclass(frozen=True)
class CanaryConfig:
    """Number of canaries, guesses on each side, and the (delta, confidence) of the bound."""

    canaries: int = 400
    guesses_each_side: int = 40
    delta: float = 1e-5
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.canaries < 2:
            raise ValueError(f"--canaries: an audit needs at least 2 canaries, got {self.canaries}")
        if not 1 <= self.guesses_each_side <= self.canaries // 2:
            raise ValueError(
                f"--guesses: must lie in [1, canaries/2] = [1, {self.canaries // 2}], got {self.guesses_each_side}"
            )
        if not 0 < self.delta <= 0.5:
            raise ValueError(f"delta must lie in (0, 1/2], got {self.delta}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {self.confidence}")


def canary_texts(count: int, seed: int) -> list[str]:
    """``count`` distinct synthetic secrets, deterministic by ``seed`` (faker; no real person's data)."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    texts: dict[str, None] = {}
    while len(texts) < count:
        texts[f"The account of {fake.name()} is {fake.bban()} and the PIN is {fake.numerify('####')}."] = None
    return list(texts)


def inclusion(count: int, seed: int) -> np.ndarray:
    """Which canaries join the members: each independently with probability 1/2."""
    return np.random.default_rng([seed, 23]).random(count) < 0.5


def audit_scores(base_model, target_model, tokenizer, canaries: list[str], context: int, device=None) -> np.ndarray:
    """Loss of each canary under the base model minus under the fine-tuned model (higher: looks trained on)."""
    from .models import encode_texts
    from .training import text_losses

    windows = encode_texts(tokenizer, canaries, context)
    return text_losses(base_model, windows, device=device) - text_losses(target_model, windows, device=device)


def canary_audit(scores: np.ndarray, included: np.ndarray, config: CanaryConfig) -> dict:
    """The one-run audit's counts and epsilon lower bound, and the scores' AUC (in against out)."""
    from .metrics import roc_auc

    r, v = audit.one_run_guesses(scores, included, config.guesses_each_side)
    return {
        "canaries": int(len(scores)),
        "included": int(np.sum(included)),
        "guesses": r,
        "right": v,
        "epsilon_lower_bound": audit.one_run_epsilon_lower_bound(len(scores), r, v, config.delta, config.confidence),
        "delta": config.delta,
        "confidence": config.confidence,
        # roc_auc's convention: lower signal means member, so negate the scores
        "auc": roc_auc(-scores[included], -scores[~included]),
    }


def with_canaries(members: list[str], canaries: list[str], included: np.ndarray) -> list[str]:
    """The training texts: the members and the included canaries (in a fixed order; training shuffles)."""
    return list(members) + [c for c, inside in zip(canaries, included, strict=True) if inside]
