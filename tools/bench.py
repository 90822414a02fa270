"""Benchmarks (not tests): ratios measured side by side in one run.

Usage: python tools/bench.py    (or: make bench)

* Section 3's streaming noise sampler N = (G A^T) A - G against the naive G (A^T A - I),
  at n = 1, m = 4096, r = 16 (target: at least 10x faster), and their peak memory as m
  grows (the streaming sampler's must not grow like m^2).
* Draws per second of the noise at GPT-2 (117M) shapes, and of the exact one-element sampler.
* Training tokens per second of our loop against a Hugging Face ``Trainer`` doing the same work
  (same model, data, batch, optimiser and schedule, no gradient clipping in either; setup
  excluded), each repeated, with median and spread (target: ours at least as fast), and the
  wall time of the default cpu-small membership-inference grid from scratch, pre-training of
  the base model included (target: under 10 minutes on 2 cores; skip with --no-grid).
* LoRA with row scaling against LoRA-FA and plain LoRA: time per epoch and peak memory, each in its own
  process (``lorapriv_utils.mia.experiments.cost``, whose committed record the book reads).
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np

from lorapriv_utils.theory import noise


def _best_of(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def sampler_vs_naive(n: int = 1, m: int = 4096, r: int = 16, draws: int = 20) -> dict:
    rng = np.random.default_rng(0)
    G = rng.standard_normal((n, m))
    projections = [noise.sample_projection(rng, r, m) for _ in range(draws)]
    streaming = _best_of(lambda: [noise.injected_noise(G, A) for A in projections]) / draws
    naive = _best_of(lambda: [noise.naive_injected_noise(G, A) for A in projections[:4]], repeats=3) / 4
    return {"n": n, "m": m, "r": r, "streaming_s": streaming, "naive_s": naive, "speedup": naive / streaming}


def memory_growth(ms=(1024, 2048, 4096), n: int = 1, r: int = 16) -> list[dict]:
    rows = []
    for m in ms:
        rng = np.random.default_rng(1)
        G = rng.standard_normal((n, m))
        A = noise.sample_projection(rng, r, m)
        rows.append(
            {
                "m": m,
                "streaming_bytes": _peak_bytes(lambda G=G, A=A: noise.injected_noise(G, A)),
                "naive_bytes": _peak_bytes(lambda G=G, A=A: noise.naive_injected_noise(G, A)),
            }
        )
    return rows


GPT2_SHAPES = {
    "attn.c_attn (2304 x 768)": (2304, 768),
    "attn.c_proj (768 x 768)": (768, 768),
    "mlp.c_fc (3072 x 768)": (3072, 768),
    "mlp.c_proj (768 x 3072)": (768, 3072),
}


def gpt2_throughput(r: int = 8, draws: int = 32, batch: int = 8) -> list[dict]:
    rows = []
    for name, (n, m) in GPT2_SHAPES.items():
        rng = np.random.default_rng(2)
        G = rng.standard_normal((n, m)).astype(np.float64)
        seconds = _best_of(
            lambda G=G, rng=rng: sum(1 for _ in noise.stream_noise(G, r, draws, rng, batch=batch)), repeats=2
        )
        rows.append(
            {"shape": name, "r": r, "matrix_draws_per_s": draws / seconds, "elements_per_s": draws * n * m / seconds}
        )
    return rows


def element_throughput(r: int = 16, m: int = 768, draws: int = 10_000_000) -> float:
    rng = np.random.default_rng(3)
    q = rng.standard_normal(m)
    return draws / _best_of(lambda: noise.sample_element(q, 0, r, draws, rng), repeats=2)


def training_throughput(steps: int = 60, batch_size: int = 16, repeats: int = 3) -> dict:
    """Training tokens per second, ours and a Hugging Face Trainer's, ``repeats`` times each, alternating."""
    import tempfile

    import torch
    from transformers import Trainer, TrainingArguments
    from transformers import logging as hf_logging

    from lorapriv_utils.mia.engine import models, training
    from lorapriv_utils.scale import SCALES

    hf_logging.set_verbosity_error()
    spec = SCALES["cpu-small"].engine.model
    blocks = np.random.default_rng(0).integers(0, spec.vocab_size, size=(steps * batch_size, spec.block_size))

    def fresh():
        torch.manual_seed(0)
        return models.new_model(spec, spec.vocab_size, 0)

    class Blocks(torch.utils.data.Dataset):
        def __len__(self):
            return len(blocks)

        def __getitem__(self, k):
            ids = torch.as_tensor(blocks[k])
            return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}

    ours, theirs = [], []
    for _ in range(repeats):
        run = training.train_language_model(
            fresh(), blocks, training.TrainConfig(epochs=1, lr=1e-3, batch_size=batch_size)
        )
        ours.append(run["tokens"] / run["seconds"])
        with tempfile.TemporaryDirectory() as out:
            args = TrainingArguments(
                output_dir=out,
                per_device_train_batch_size=batch_size,
                num_train_epochs=1,
                learning_rate=1e-3,
                lr_scheduler_type="linear",
                warmup_steps=0,
                weight_decay=0.0,
                optim="adamw_torch",
                max_grad_norm=0.0,  # no clipping, like our loop
                report_to=[],
                save_strategy="no",
                logging_strategy="no",
                use_cpu=True,
                disable_tqdm=True,
                dataloader_num_workers=0,
                seed=0,
            )
            trainer = Trainer(model=fresh(), args=args, train_dataset=Blocks())
            start = time.perf_counter()
            trainer.train()
            theirs.append(blocks.size / (time.perf_counter() - start))
    return {"ours": ours, "trainer": theirs}


def default_grid_seconds() -> float:
    """Wall time of the default cpu-small grid from scratch: fresh results folder and fresh base-model cache."""
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "lorapriv_utils", "run", "--scale", "cpu-small", "--out", out, "--no-progress"],
            check=True,
            capture_output=True,
            env={**os.environ, "LORAPRIV_CACHE_DIR": cache},
        )
        return time.perf_counter() - start


def _spread(values: list[float]) -> str:
    return f"{np.median(values):,.0f} (range {min(values):,.0f} to {max(values):,.0f}, {len(values)} runs)"


def main() -> None:
    row = sampler_vs_naive()
    print("== noise sampler, n = 1, m = 4096, r = 16 (target: streaming at least 10x faster)")
    print(
        f"streaming {row['streaming_s'] * 1e3:9.3f} ms/draw   naive {row['naive_s'] * 1e3:9.3f} ms/draw   "
        f"ratio {row['speedup']:.0f}x  [{'ok' if row['speedup'] >= 10 else 'BELOW TARGET'}]"
    )
    print("== peak memory of one draw (tracemalloc), n = 1, r = 16")
    mem = memory_growth()
    for rec in mem:
        print(
            f"m = {rec['m']:5d}: streaming {rec['streaming_bytes'] / 1e6:8.3f} MB   "
            f"naive {rec['naive_bytes'] / 1e6:8.1f} MB"
        )
    growth_s = mem[-1]["streaming_bytes"] / mem[0]["streaming_bytes"]
    growth_n = mem[-1]["naive_bytes"] / mem[0]["naive_bytes"]
    factor = mem[-1]["m"] / mem[0]["m"]
    print(
        f"m x{factor:.0f}: streaming memory x{growth_s:.1f} (linear would be x{factor:.0f}), "
        f"naive x{growth_n:.1f} (quadratic would be x{factor**2:.0f})"
    )
    print("== noise draws per second at GPT-2 117M shapes, r = 8 (float64, this machine)")
    for rec in gpt2_throughput():
        print(f"{rec['shape']:26s} {rec['matrix_draws_per_s']:8.1f} matrices/s  {rec['elements_per_s']:.3g} elements/s")
    print(f"== exact one-element sampler (m = 768, r = 16): {element_throughput():.3g} draws/s")
    rates = training_throughput()
    ratio = float(np.median(rates["ours"]) / np.median(rates["trainer"]))
    print("== training tokens/s, cpu-small model, batch 16, no clipping (target: ours at least as fast as Trainer)")
    print(f"ours    {_spread(rates['ours'])}\nTrainer {_spread(rates['trainer'])}")
    print(f"ratio of medians {ratio:.2f}  [{'ok' if ratio >= 1 else 'BELOW TARGET'}]")
    from lorapriv_utils.mia.experiments.cost import rowscale_cost, rowscale_cost_summary

    cost = rowscale_cost_summary(rowscale_cost())
    print("== LoRA with row scaling (per-text gradients, eq. 22) against LoRA-FA (A frozen), cpu-small model, r = 8")
    print(
        f"seconds per epoch: LoRA-FA {cost['lorafa_seconds']:.2f}, row scaling {cost['rowscale_seconds']:.2f}, "
        f"plain LoRA {cost['lora_seconds']:.2f} (medians of {cost['runs']}): ratio {cost['time_ratio']:.2f}"
    )
    print(
        f"peak memory above a process that only builds the model and data: LoRA-FA {cost['lorafa_peak_mb']:.0f} MB, "
        f"row scaling {cost['rowscale_peak_mb']:.0f} MB: ratio {cost['memory_ratio']:.2f} (paper A: 'almost no cost')"
    )
    if "--no-grid" not in sys.argv:
        seconds = default_grid_seconds()
        print(
            f"== default cpu-small grid from scratch (base-model pre-training included): {seconds / 60:.1f} min "
            f"(target: under 10 min on 2 cores)  [{'ok' if seconds < 600 else 'ABOVE TARGET'}]"
        )


if __name__ == "__main__":
    main()
