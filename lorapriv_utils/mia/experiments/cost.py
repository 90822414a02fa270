"""The cost of row scaling (paper A, §5: "almost no cost"), measured: ``python -m lorapriv_utils cost PATH.json``.

Seconds per epoch and peak memory of LoRA with row scaling against LoRA-FA (the same frozen A and trainable B,
without per-sample gradients) and plain LoRA (A and B trained), at the model of ``LORAPRIV_SCALE``, r = 8.  Each
run is its own process, so that peak memory (max RSS, over a process that builds the same model and data without
training) belongs to one method.  The record is a committed measurement (kind ``rowscale-cost``).
"""

from __future__ import annotations

import time

import numpy as np

from ...scale import SCALES, Scale

_COST_SCRIPT = """
import resource, sys, time
import numpy as np, torch
from lorapriv_utils.mia.engine import finetune, models
from lorapriv_utils.mia.engine.data import TextWindows
from lorapriv_utils.mia.engine.training import TrainConfig
from lorapriv_utils.scale import SCALES
torch.set_num_threads(int(sys.argv[2]))
spec = SCALES[sys.argv[4]].engine.model
torch.manual_seed(0)
base = models.new_model(spec, spec.vocab_size, 0)
texts = int(sys.argv[3])
ids = np.random.default_rng(0).integers(0, spec.vocab_size, size=(texts, spec.block_size))
windows = TextWindows(ids, np.arange(texts), texts)
seconds = 0.0
if sys.argv[1] != "none":
    _, stats = finetune.fine_tune(base, sys.argv[1], windows, TrainConfig(epochs=1, lr=1e-3, batch_size=16), rank=8)
    seconds = stats["seconds"]
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def rowscale_cost(repeats: int = 3, texts: int = 1024, scale: str = "cpu-small") -> dict:
    """Seconds per epoch and peak memory (each run's) of no training, plain LoRA, LoRA-FA and row-scaled LoRA at
    the model of ``scale``, each run in its own process."""
    import os
    import subprocess
    import sys

    threads = str(os.cpu_count() or 1)
    out: dict = {}
    for method in ("none", "lora", "lorafa", "rowscale"):
        runs = []
        for _ in range(repeats if method != "none" else 1):
            done = subprocess.run(
                [sys.executable, "-c", _COST_SCRIPT, method, threads, str(texts), scale],
                capture_output=True,
                text=True,
                check=True,
            )
            seconds, rss_kib = done.stdout.split()
            runs.append((float(seconds), int(rss_kib) * 1024))
        out[method] = runs
    out["texts"], out["scale"] = texts, scale
    return out


def rowscale_cost_summary(cost: dict) -> dict:
    """Medians and ratios of :func:`rowscale_cost`, with where and how they were measured.

    The ratios compare row scaling with LoRA-FA (A frozen, B trained: the same trainable parameters,
    so the difference is row scaling itself); plain LoRA, which also trains A, is given beside it.
    """
    from ...provenance import measured_on

    base_rss = cost["none"][0][1]
    texts, scale = cost.get("texts", "?"), cost.get("scale", "cpu-small")
    spec = SCALES[scale].engine.model
    summary = {
        "runs": len(cost["lora"]),
        "scale": scale,
        "model": f"{scale} GPT-2 ({spec.n_layer} layers, width {spec.n_embd}), r = 8, {texts} texts of "
        f"{spec.block_size} tokens, batch 16",
    }
    for method in ("lora", "lorafa", "rowscale"):
        summary[f"{method}_seconds"] = float(np.median([s for s, _ in cost[method]]))
        summary[f"{method}_peak_mb"] = (max(m for _, m in cost[method]) - base_rss) / 1e6
    summary["time_ratio"] = summary["rowscale_seconds"] / summary["lorafa_seconds"]
    summary["memory_ratio"] = summary["rowscale_peak_mb"] / max(summary["lorafa_peak_mb"], 1e-9)
    summary["measured_on"] = measured_on(("torch", "opacus", "peft"))
    return summary


def record(scale: Scale, repeats: int = 3, texts: int = 1024) -> dict:
    """The measurement at ``scale``'s model, with its wall time."""
    start = time.perf_counter()
    summary = rowscale_cost_summary(rowscale_cost(repeats, texts, scale.name))
    return {**summary, "wall_seconds": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> None:
    """``python -m lorapriv_utils cost PATH.json``: measure at the scale of ``LORAPRIV_SCALE``, write the record."""
    from ...scale import current_scale
    from .producers import measurement_main

    measurement_main(argv, "lorapriv_utils cost", lambda: record(current_scale()), "rowscale-cost")


if __name__ == "__main__":
    main()
