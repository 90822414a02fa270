"""The benchmark script runs and measures what it says (small sizes; timings are not asserted)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench  # noqa: E402


def test_sampler_vs_naive_reports_a_ratio():
    row = bench.sampler_vs_naive(n=1, m=128, r=4, draws=2)
    assert row["streaming_s"] > 0 and row["naive_s"] > 0 and row["speedup"] > 0


def test_naive_memory_grows_quadratically_and_streaming_linearly():
    small, big = bench.memory_growth(ms=(256, 1024))
    assert big["naive_bytes"] / small["naive_bytes"] > 10
    assert big["streaming_bytes"] / small["streaming_bytes"] < 6


def test_throughputs_are_positive(monkeypatch):
    monkeypatch.setattr(bench, "GPT2_SHAPES", {"tiny": (4, 16)})
    assert bench.gpt2_throughput(r=2, draws=4, batch=2)[0]["matrix_draws_per_s"] > 0
    assert bench.element_throughput(r=2, m=16, draws=1000) > 0


def test_training_throughput_compares_with_trainer():
    rates = bench.training_throughput(steps=2, batch_size=2, repeats=2)
    assert len(rates["ours"]) == len(rates["trainer"]) == 2 and min(rates["ours"] + rates["trainer"]) > 0
    assert "median" not in bench._spread([1.0, 2.0, 3.0]) and "3 runs" in bench._spread([1.0, 2.0, 3.0])
