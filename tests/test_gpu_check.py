"""The prepared GPU check (tools/gpu_check.py): its FLOP count, its chip table, its errors, and one smoke run of the
same code on a 2-block model on the CPU."""

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

spec = importlib.util.spec_from_file_location(
    "gpu_check", Path(__file__).resolve().parents[1] / "tools" / "gpu_check.py"
)
gpu_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_check)


def test_flops_follow_the_usual_count_at_gpt2_117m():
    with torch.device("meta"):
        model = GPT2LMHeadModel(GPT2Config())
    weights = sum(p.numel() for p in model.parameters()) - model.transformer.wpe.weight.numel()
    assert weights == 123_653_376  # 124,439,808 in all, less the 1,024 x 768 position embeddings
    per_token = gpu_check.flops_per_token(weights, 12, 768, 1024)
    assert per_token["full"] == pytest.approx(0.855e9, rel=1e-3)  # 6N = 0.742 GFLOP plus attention's 0.113
    assert per_token["scoring"] == pytest.approx(per_token["full"] / 3)
    assert per_token["scoring"] < per_token["lora"] < per_token["full"]


def test_the_chip_table_takes_the_most_specific_name():
    assert gpu_check.peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert gpu_check.peak_tflops("NVIDIA H100 80GB HBM3") == 989.0
    assert gpu_check.peak_tflops("NVIDIA H200") == 989.0
    assert gpu_check.peak_tflops("NVIDIA A10G") == 70.0 and gpu_check.peak_tflops("NVIDIA A10") == 125.0
    assert gpu_check.peak_tflops("Some Future GPU") is None  # no utilisation rather than a guessed one


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--steps", "0", "--device", "cpu", "--tiny"], "--steps: must be >= 1"),
        (["--device", "cpu"], "is a GPU check: add --tiny"),
    ],
)
def test_bad_arguments_are_one_line(argv, match, capsys):
    with pytest.raises(SystemExit):
        gpu_check.main(argv)
    assert match in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU message is for machines without CUDA")
def test_no_cuda_is_one_line(capsys):
    with pytest.raises(SystemExit):
        gpu_check.main([])
    assert "no CUDA device here" in capsys.readouterr().err


def test_a_smoke_run_writes_the_record(tmp_path, capsys):
    out = tmp_path / "gpu_check.json"
    assert gpu_check.main(["--device", "cpu", "--tiny", "--steps", "1", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["kind"] == "gpu-check" and record["model"]["layers"] == 2 and record["batch"] == [2, 128]
    assert set(record["results"]) == {"full", "lora", "scoring"}
    full, lora = record["results"]["full"], record["results"]["lora"]
    assert 0 < lora["trained_weights"] < full["trained_weights"]
    assert all(row["tokens_per_second"] > 0 and row["mfu"] is None for row in record["results"].values())
    assert "MFU n/a" in capsys.readouterr().out
