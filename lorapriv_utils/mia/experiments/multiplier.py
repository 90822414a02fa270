"""§5.1's noise-scale equivalence on real per-text gradients of the engine's GPT-2.

The per-text gradients of one ``c_attn`` weight of the scale's pre-trained base on Penn Treebank
lines (``alignment.pretrained_gradients``: the start of fine-tuning, as in paper A's runs) are put in
paper A's layout, W of shape n x m with rows of length m, the layer's input width, which x -> x A^T
projects.  Batches of b texts are drawn without replacement, and ``theory.projection.batch_multiplier``
measures, over many A, the noise LoRA adds to their row-scaled sum (eq. 22) as a DP-SGD multiplier,
against the formula z = (1 - Delta) / (1 + Delta) sqrt(b / (n r)); the same batches with each text's sign
flipped at random give a baseline without the texts' common direction.
``python -m lorapriv_utils.mia.experiments.multiplier PATH`` (``make results-a5``) writes the record with its
manifest.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from ...scale import RowScaleConfig, Scale
from ...theory import projection

BATCHES = (8, 16, 32)
RANKS = (8, 16)


def paper_layout(grads: np.ndarray, shape: tuple[int, int], fan_in_fan_out: bool) -> np.ndarray:
    """Flattened weight gradients (rows of the stored ``shape``'s size) as (texts, n, m), paper A's W (output by
    input), whose rows LoRA's A (r x m) projects: GPT-2's Conv1D stores (in, out) (``fan_in_fan_out``), a Linear
    (out, in)."""
    grads = np.asarray(grads, dtype=float)
    rows, cols = shape
    if grads.ndim != 2 or grads.shape[1] != rows * cols:
        raise ValueError(f"expected (texts, {rows * cols}) flattened gradients, got shape {grads.shape}")
    stored = grads.reshape(len(grads), rows, cols)
    return stored.transpose(0, 2, 1) if fan_in_fan_out else stored


def multiplier_rows(
    g: np.ndarray,
    batch_sizes: tuple[int, ...],
    ranks: tuple[int, ...],
    delta: float,
    c: float,
    batches: int,
    draws: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """For each (b, r): ``batches`` batches of b of the per-sample gradients ``g`` (texts, n, m), drawn without
    replacement, each measured over ``draws`` matrices A; the measured multiplier over the formula's (mean,
    standard error over batches, range), the plug-in's, and the same batches with each text's sign flipped at
    random (a baseline without the texts' common direction)."""
    if batches < 2:
        raise ValueError(f"batches must be >= 2 for an error bar, got {batches}")
    texts, n, m = g.shape
    rows = []
    for b in batch_sizes:
        if not 1 <= b <= texts:
            raise ValueError(f"batch size b = {b} must lie in [1, {texts}] (the texts measured)")
        for r in ranks:
            ratios, plugin, flipped = [], [], []
            for _ in range(batches):
                batch = g[rng.choice(texts, b, replace=False)]
                out = projection.batch_multiplier(batch, r, delta, c, draws, rng)
                ratios.append(out["z_equivalent"] / out["z_formula"])
                plugin.append(out["z_plugin"] / out["z_formula"])
                signs = rng.choice([-1.0, 1.0], size=(b, 1, 1))
                flip = projection.batch_multiplier(batch * signs, r, delta, c, draws, rng)
                flipped.append(flip["z_equivalent"] / flip["z_formula"])
            ratios = np.array(ratios)
            rows.append(
                {
                    "b": b,
                    "r": r,
                    "z_formula": projection.formula_multiplier(delta, b, n, r),
                    "ratio_mean": float(ratios.mean()),
                    "ratio_se": float(ratios.std(ddof=1) / math.sqrt(batches)),
                    "ratio_min": float(ratios.min()),
                    "ratio_max": float(ratios.max()),
                    "ratio_plugin_mean": float(np.mean(plugin)),
                    "ratio_signflip_mean": float(np.mean(flipped)),
                    "batches": batches,
                    "draws": draws,
                }
            )
    return pd.DataFrame(rows)


def record(
    scale: Scale,
    texts: int = 256,
    batch_sizes: tuple[int, ...] = BATCHES,
    ranks: tuple[int, ...] = RANKS,
    batches: int = 40,
    draws: int = 50,
    layer: int = 0,
) -> dict:
    """The measurement at the start of fine-tuning, with how, where and when it was made."""
    from ...provenance import measured_on
    from .alignment import pretrained_gradients, ptb_texts

    start = time.perf_counter()
    settings = RowScaleConfig()
    grads, info = pretrained_gradients(ptb_texts(texts), scale, layer=layer)
    g = paper_layout(grads, info["adapted_shape"], info["fan_in_fan_out"])
    table = multiplier_rows(
        g, batch_sizes, ranks, settings.delta, settings.c, batches, draws, np.random.default_rng([scale.seed, 51])
    )
    return {
        "table": table.to_dict(orient="list"),
        "n": int(g.shape[1]),
        "m": int(g.shape[2]),
        "layer": layer,
        "texts": texts,
        "delta": settings.delta,
        "c": settings.c,
        "scale": scale.name,
        "base": {k: info[k] for k in ("source", "cache_key", "spec", "seed")},
        "measured_on": measured_on(("torch", "transformers", "numpy")),
        "wall_seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m lorapriv_utils.mia.experiments.multiplier PATH``: measure, write JSON atomically (scale from
    LORAPRIV_SCALE)."""
    from ...scale import current_scale
    from .producers import measurement_main

    measurement_main(argv, "lorapriv_utils.mia.experiments.multiplier", lambda: record(current_scale()), "multiplier")


if __name__ == "__main__":
    main()
