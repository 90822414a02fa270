"""The prepared GPU check: paper-scale training and scoring throughput, written as a small JSON record.

Usage: python tools/gpu_check.py [--out PATH] [--steps N] [--peak-tflops X]    (or: make gpu-check)

GPT-2 117M's architecture (transformers' ``GPT2Config()``) with random weights, since no weights can be
fetched on a machine without internet, at paper A's batch of 8 sequences of 1,024 tokens, in bf16 autocast:

* full fine-tuning (AdamW over every weight), LoRA r = 8 on ``c_attn`` (PEFT), and scoring (forward passes
  without gradients), each timed over ``--steps`` steps after warm-up steps, the device synchronised;
* tokens per second, and model FLOPs utilisation against the chip's dense bf16 peak (from a table of NVIDIA's
  datasheet figures, or ``--peak-tflops``; unknown chips get no utilisation, never a guessed one).

Model FLOPs per token (the usual count for decoder transformers, attention included): training 6N + 12 L d T,
LoRA training 4N + 8 L d T (no weight gradients for the frozen matrices), scoring 2N + 4 L d T, where N counts
the weights that multiply (the tied output layer once, position embeddings not), L the blocks, d the width and
T the context.  It installs nothing, reads no data, and finishes in a few minutes; ``--tiny --device cpu`` runs
the same code on a 2-block model, which is how the tests check it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

# dense bf16 tensor-core peaks in TFLOP/s, without sparsity (NVIDIA datasheets); the first name contained in
# torch.cuda.get_device_name() is used, so the more specific names come first
PEAK_BF16_TFLOPS = (
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H200", 989.0),
    ("H100", 989.0),
    ("GH200", 989.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L4", 121.0),
    ("A10G", 70.0),
    ("A10", 125.0),
)
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "results" / "published" / "gpu" / "gpu_check.json"  # committed where measured


def peak_tflops(device_name: str) -> float | None:
    """The dense bf16 peak of a chip named ``device_name``, or None when it is not in the table."""
    return next((peak for name, peak in PEAK_BF16_TFLOPS if name in device_name), None)


def flops_per_token(weights: int, layers: int, width: int, context: int) -> dict[str, float]:
    """Model FLOPs per token of each measured kind of step (the module docstring gives the count)."""
    attention = layers * width * context
    return {
        "full": 6.0 * weights + 12.0 * attention,
        "lora": 4.0 * weights + 8.0 * attention,
        "scoring": 2.0 * weights + 4.0 * attention,
    }


def _config(tiny: bool):
    from transformers import GPT2Config

    if tiny:
        return GPT2Config(
            n_layer=2, n_embd=64, n_head=2, n_positions=128, vocab_size=512, bos_token_id=0, eos_token_id=0
        )
    return GPT2Config()  # GPT-2 117M: 12 blocks of width 768, context 1,024, vocabulary 50,257


def _timed(step, steps: int, warmup: int, synchronise) -> float:
    for _ in range(warmup):
        step()
    synchronise()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    synchronise()
    return (time.perf_counter() - start) / steps


def measure(device: str = "cuda", steps: int = 10, warmup: int = 3, batch: int = 8, tiny: bool = False) -> dict:
    """Seconds per step, tokens per second and model FLOPs per second of the three kinds of step."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import GPT2LMHeadModel

    torch.manual_seed(0)
    config = _config(tiny)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    synchronise = torch.cuda.synchronize if cuda else (lambda: None)
    context = config.n_positions
    ids = torch.randint(0, config.vocab_size, (batch, context), device=dev)
    weights = None
    results = {}

    def model_and_step(kind: str):
        model = GPT2LMHeadModel(config).to(dev)
        if kind == "lora":
            model = get_peft_model(
                model, LoraConfig(r=8, lora_alpha=16, target_modules=["c_attn"], fan_in_fan_out=True)
            )
        trained = [p for p in model.parameters() if p.requires_grad]
        optimiser = torch.optim.AdamW(trained, lr=1e-5)

        def train():
            with torch.autocast(dev.type, dtype=torch.bfloat16):
                loss = model(ids, labels=ids).loss
            loss.backward()
            optimiser.step()
            optimiser.zero_grad(set_to_none=True)

        @torch.no_grad()
        def score():
            with torch.autocast(dev.type, dtype=torch.bfloat16):
                model(ids).logits.float().log_softmax(-1)

        return model, trained, (score if kind == "scoring" else train)

    for kind in ("full", "lora", "scoring"):
        model, trained, step = model_and_step(kind)
        if weights is None:
            weights = sum(p.numel() for p in model.parameters()) - model.transformer.wpe.weight.numel()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        seconds = _timed(step, steps, warmup, synchronise)
        results[kind] = {
            "seconds_per_step": seconds,
            "tokens_per_second": batch * context / seconds,
            "trained_weights": sum(p.numel() for p in trained) if kind != "scoring" else 0,
            "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        }
        del model, step
        if cuda:
            torch.cuda.empty_cache()
    per_token = flops_per_token(weights, config.n_layer, config.n_embd, context)
    for kind, row in results.items():
        row["model_tflops_per_second"] = row["tokens_per_second"] * per_token[kind] / 1e12
    return {
        "model": {
            "architecture": "GPT-2 117M (random weights)" if not tiny else "a 2-block GPT-2 (the tests' size)",
            "layers": config.n_layer,
            "width": config.n_embd,
            "context": context,
            "vocabulary": config.vocab_size,
            "multiplying_weights": weights,
        },
        "batch": [batch, context],
        "precision": "bf16 autocast, float32 weights and AdamW state",
        "steps": steps,
        "warmup_steps": warmup,
        "flops_per_token": per_token,
        "results": results,
    }


def record(device: str, steps: int, peak: float | None, tiny: bool) -> dict:
    """The measurement with the chip, its peak, the utilisation and the versions: what the check writes."""
    import platform

    import peft
    import torch
    import transformers

    start = time.perf_counter()
    name = torch.cuda.get_device_name() if device.startswith("cuda") else platform.processor() or "cpu"
    peak = peak if peak is not None else peak_tflops(name) if device.startswith("cuda") else None
    out = measure(device, steps=steps, warmup=1 if tiny else 3, batch=2 if tiny else 8, tiny=tiny)
    for row in out["results"].values():
        row["mfu"] = None if peak is None else row["model_tflops_per_second"] / peak
    return {
        "kind": "gpu-check",
        "device": {"name": name, "type": device, "peak_bf16_tflops": peak},
        **out,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__},
        "cuda": torch.version.cuda,
        "wall_seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/gpu_check.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where the JSON record goes (default %(default)s)"
    )
    parser.add_argument("--steps", type=int, default=10, help="timed steps of each kind (default %(default)s)")
    parser.add_argument(
        "--peak-tflops", type=float, default=None, help="the chip's dense bf16 peak, if not in the table"
    )
    parser.add_argument("--device", default="cuda", help="cuda (default), or cpu with --tiny for a smoke run")
    parser.add_argument("--tiny", action="store_true", help="a 2-block model at context 128 (the tests' check)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps: must be >= 1, got {args.steps}")
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("no CUDA device here: run this on a GPU machine (or --device cpu --tiny for a smoke run)")
    if not args.tiny and not args.device.startswith("cuda"):
        parser.error("GPT-2 117M at 8 x 1,024 tokens is a GPU check: add --tiny to run it elsewhere")
    result = record(args.device, args.steps, args.peak_tflops, args.tiny)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for kind, row in result["results"].items():
        mfu = "n/a (chip not in the table: --peak-tflops)" if row["mfu"] is None else f"{100 * row['mfu']:.1f}%"
        print(f"{kind:8s} {row['tokens_per_second']:12,.0f} tokens/s  {row['seconds_per_step']:.3f} s/step  MFU {mfu}")
    print(f"wrote {args.out} in {result['wall_seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
