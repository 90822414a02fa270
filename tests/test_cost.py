"""Row scaling's cost (A-5.cost): each method measured in its own process, the record written by the command."""

import json
import os
import subprocess
import sys

import pytest

from lorapriv_utils import store
from lorapriv_utils.mia.experiments import cost


@pytest.mark.slow
def test_rowscale_cost_runs_each_method_in_its_own_process():
    runs = cost.rowscale_cost(repeats=1, texts=16)
    assert set(runs) == {"none", "lora", "lorafa", "rowscale", "texts", "scale"} and runs["none"][0][0] == 0.0
    assert runs["rowscale"][0][0] > 0 and runs["rowscale"][0][1] > 0
    summary = cost.rowscale_cost_summary(runs)
    assert summary["time_ratio"] == summary["rowscale_seconds"] / summary["lorafa_seconds"]
    assert "16 texts" in summary["model"] and summary["scale"] == "cpu-small" and "of 64 tokens" in summary["model"]
    large = cost.rowscale_cost_summary(cost.rowscale_cost(repeats=1, texts=16, scale="cpu-large"))
    assert large["scale"] == "cpu-large" and "width 128" in large["model"] and "of 128 tokens" in large["model"]
    assert {"git_commit", "cpu_count"} <= set(summary["measured_on"])


def test_the_cost_command_writes_a_rowscale_cost_record(tmp_path, monkeypatch):
    monkeypatch.setattr(cost, "rowscale_cost", lambda repeats, texts, scale: json.loads(FAKE))
    path = tmp_path / "cost.json"
    cost.main([str(path)])
    record = store.read_record(path, "rowscale-cost")
    assert record["time_ratio"] == 2.0 and record["memory_ratio"] == 3.0 and record["wall_seconds"] >= 0
    done = subprocess.run(
        [sys.executable, "-m", "lorapriv_utils", "cost", "--help"], capture_output=True, text=True, env=os.environ
    )
    assert done.returncode == 0 and "usage: python -m lorapriv_utils cost [-h] path" in done.stdout  # help, no record
    assert not (tmp_path / "--help").exists()


FAKE = json.dumps(
    {
        "none": [[0.0, 1_000_000]],
        "lora": [[1.0, 3_000_000]],
        "lorafa": [[1.0, 2_000_000]],
        "rowscale": [[2.0, 4_000_000]],
        "texts": 16,
        "scale": "cpu-small",
    }
)
