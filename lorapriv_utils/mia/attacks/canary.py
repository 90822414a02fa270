"""An empirical privacy audit of a fine-tuning method with canaries, in one training run.

The canaries are held-out texts of the corpus itself: the split's non-members, which no model of the
audit's split trains on otherwise.  Each is added to the members with probability 1/2.  After training,
each canary is scored by how much the fine-tuned model lowered its loss relative to the base model; the
auditor guesses "in" for the k highest scores and "out" for the k lowest, and the count of right guesses
becomes an epsilon lower bound (Steinke, Nasr and Jagielski 2023;
``theory.audit.one_run_epsilon_lower_bound``).  A lower bound proves that a method is *not*
(epsilon, delta)-DP for any smaller epsilon; it certifies nothing.

Why not synthetic secrets (a name, an account number and a PIN in one template)?  Every such canary
shares the template, so training on half of them lowers the loss of all of them alike, in or out, and
the default scale's small model does not memorise their random digits: such an audit did not catch
even full fine-tuning there.  Held-out texts are what membership inference attacks in section 6, and
the bound holds for any fixed canaries whose inclusion is an independent fair coin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...theory import audit


@dataclass(frozen=True)
class CanaryConfig:
    """Number of canaries, guesses on each side, and the (delta, confidence) of the bound."""

    canaries: int = 800
    guesses_each_side: int = 100
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


def canary_texts(held_out: list[str], count: int) -> list[str]:
    """The first ``count`` held-out texts (the split's non-members, in its seeded order) as canaries."""
    if count > len(held_out):
        raise ValueError(
            f"--canaries: this scale holds out {len(held_out)} texts (the non-members); ask for at most that many"
        )
    if len(set(held_out[:count])) < count:
        raise ValueError("the held-out texts repeat: canaries must be distinct (de-duplicate the corpus)")
    return list(held_out[:count])


def inclusion(count: int, seed: int) -> np.ndarray:
    """Which canaries join the members: each independently with probability 1/2."""
    return np.random.default_rng([seed, 23]).random(count) < 0.5


def audit_scores(
    base_model, target_model, tokenizer, canaries: list[str], context: int, device=None, max_windows: int | None = None
) -> np.ndarray:
    """Loss of each canary under the base model minus under the fine-tuned model (higher: looks trained on), each
    canary cut to its first ``max_windows`` context windows as the members are."""
    from ..engine.models import encode_texts
    from ..engine.training import text_losses

    windows = encode_texts(tokenizer, canaries, context, max_windows)
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
