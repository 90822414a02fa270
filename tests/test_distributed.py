"""Data-parallel training through accelerate in two real processes (CPU, gloo), against one process.

The GPU path is the same code with NCCL; these tests hold the parts that do not depend on the
hardware: batches split across processes, gradients averaged, the FLoRA hook in step on every
process, one process pre-training the base model while the others wait, one writer per result.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest

from lorapriv_utils.mia.engine import models
from lorapriv_utils.mia.experiments import grid, runner, workspace
from lorapriv_utils.scale import SCALES

pytestmark = [pytest.mark.slow, pytest.mark.distributed]
DRIVER = Path(ddp_driver.__file__)


def _launch(args: list[str], cache: Path) -> None:
    env = {**os.environ, models.CACHE_ENV_VAR: str(cache)}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    done = subprocess.run([*command, str(DRIVER), *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_two_processes_train_like_one(tmp_path, engine_cache):
    _launch(["finetune", str(tmp_path / "ddp.json")], engine_cache)
    ddp = json.loads((tmp_path / "ddp.json").read_text())
    assert ddp["num_processes"] == 2
    single = ddp_driver.fine_tune_all()
    for method in ddp_driver.METHODS:
        assert ddp[method]["stats"]["steps"] == single[method]["stats"]["steps"] == 6
        assert ddp[method]["stats"]["tokens"] == single[method]["stats"]["tokens"]  # totals over processes
        assert ddp[method]["stats"]["final_loss"] == pytest.approx(single[method]["stats"]["final_loss"], abs=1e-5)
        assert np.allclose(ddp[method]["losses"], single[method]["losses"], atol=1e-5), method


def test_the_command_line_under_two_processes(tmp_path, monkeypatch, engine_cache):
    out = tmp_path / "results"
    args = ["--datasets", "synthetic-email", "--methods", "full,lora", "--ranks", "2", "--epochs", "1", "--no-progress"]
    _launch(["cli", "run", *args, "--device", "cpu", "--accelerate", "--out", str(out)], engine_cache)
    files = sorted((out / "cpu-small" / "synthetic-email").glob("*.json"))
    assert [f.name for f in files] == ["full-s0.json", "lora-r2-s0.json"]
    records = [json.loads(f.read_text()) for f in files]
    assert all(r["manifest"]["accelerate"]["num_processes"] == 2 for r in records)

    monkeypatch.setitem(SCALES, "cpu-small", ddp_driver.SCALE)
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(engine_cache))  # the base model the processes cached
    single = workspace.Workspace(ddp_driver.SCALE, tmp_path / "single", progress=False, device="cpu")
    cells = [grid.Cell("synthetic-email", "full", None, 0), grid.Cell("synthetic-email", "lora", 2, 0)]
    for record, alone in zip(records, runner.run(single, cells), strict=True):
        assert record["manifest"]["model"]["base"]["cache_key"] == alone["manifest"]["model"]["base"]["cache_key"]
        assert record["metrics"]["training"]["steps"] == alone["metrics"]["training"]["steps"]
        # the same training up to the last partial batch, which accelerate completes (make_accelerator)
        ddp_ppl, ppl = record["metrics"]["validation_perplexity"], alone["metrics"]["validation_perplexity"]
        assert ddp_ppl == pytest.approx(ppl, rel=1e-3)
