"""Recomputing a committed cell (``python -m lorapriv_utils verify``, ``make verify``): the comparison can fail, and a
record edited by hand is refused before anything is trained."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys

from lorapriv_utils import store
from lorapriv_utils.catalogue import PUBLISHED
from lorapriv_utils.mia.experiments import verify
from lorapriv_utils.mia.records import status

CELL = "cpu-small/ptb/lora-r8-s0"


def _metrics() -> dict:
    return store.read_record(PUBLISHED / f"{CELL}.json", "cell")["metrics"]


def test_every_number_of_the_metrics_is_compared_and_the_rate_s_sweep_is_not():
    names = verify.numbers(_metrics())
    assert "reference_attack.auc.value" in names and "validation_perplexity" in names
    assert not [n for n in names if n.startswith("lr_selection") or n.endswith("seconds")]
    assert all(d.passes and d.error == 0 for d in verify.compare(_metrics(), _metrics()))


def test_a_difference_beyond_the_tolerance_fails_and_one_within_it_passes():
    metrics = _metrics()
    moved = copy.deepcopy(metrics)
    moved["reference_attack"]["auc"]["value"] += 0.01
    moved["validation_perplexity"] *= 1 + verify.TOLERANCE["rel"] / 2
    outside = [d.name for d in verify.compare(metrics, moved) if not d.passes]
    assert outside == ["reference_attack.auc.value"]
    del moved["reference_attack"]["auc"]["value"]  # a number the recomputation lacks fails too
    assert "reference_attack.auc.value" in [d.name for d in verify.compare(metrics, moved) if not d.passes]
    added = copy.deepcopy(metrics)
    added["reference_attack"]["auc"]["new"] = 0.5  # and one only the recomputation has
    assert [d.name for d in verify.compare(metrics, added) if not d.passes] == ["reference_attack.auc.new"]
    nan = copy.deepcopy(metrics)
    nan["validation_perplexity"] = float("nan")
    assert not next(d for d in verify.compare(nan, nan) if d.name == "validation_perplexity").passes


def test_a_hand_edited_record_is_refused_before_any_training(tmp_path):
    for suffix in (".json", ".scores.npz"):
        (tmp_path / CELL).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PUBLISHED / f"{CELL}{suffix}", tmp_path / f"{CELL}{suffix}")
    status.declare(tmp_path, [f"{CELL}.json"])
    path = tmp_path / f"{CELL}.json"
    record = json.loads(path.read_text())
    record["metrics"]["reference_attack"]["auc"]["value"] = 0.5
    path.write_text(json.dumps(store.seal(record)))  # its own checksum recomputed: only the declaration knows
    script = (
        "import sys; from lorapriv_utils.mia import cli\n"
        f"try:\n    cli.main(['verify', {str(path)!r}])\nexcept SystemExit as stop:\n    code = stop.code\n"
        "assert 'torch' not in sys.modules; sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 2 and "is altered" in done.stderr, done.stderr[-600:]
    done = subprocess.run(
        [sys.executable, "-m", "lorapriv_utils", "verify", str(tmp_path / "no.json")], capture_output=True, text=True
    )
    assert done.returncode == 2 and "no record at" in done.stderr


def test_make_verify_recomputes_a_record_made_with_this_machine_s_kernels_where_one_is(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("verify_tool", PUBLISHED.parents[1] / "tools" / "verify.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    published, pending = tmp_path / "results" / "published", tmp_path / "results" / "pending"
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    monkeypatch.setattr(tool, "STORES", (published, pending))
    for store_, seed, kernels in ((published, 0, "AVX512"), (published, 1, "AVX2"), (published, 10, "AVX2")):
        (store_ / "s").mkdir(parents=True, exist_ok=True)
        (store_ / "s" / f"lora-r8-s{seed}.json").write_text(json.dumps({"manifest": {"cpu_capability": kernels}}))
    assert tool.chosen_cell("s/lora-r8-s*.json", "AVX2") == "results/published/s/lora-r8-s1.json"  # by seed
    assert tool.chosen_cell("s/lora-r8-s*.json", "AVX512") == "results/published/s/lora-r8-s0.json"
    assert tool.chosen_cell("s/lora-r8-s*.json", "DEFAULT") == "results/published/s/lora-r8-s0.json"  # the first
    # a pending record (the plan's committed runs, not yet published) made with this machine's kernels is taken
    # where no published one is; a published one that matches comes first
    (pending / "s").mkdir(parents=True)
    (pending / "s" / "lora-r8-s2.json").write_text(json.dumps({"manifest": {"cpu_capability": "DEFAULT"}}))
    assert tool.chosen_cell("s/lora-r8-s*.json", "DEFAULT") == "results/pending/s/lora-r8-s2.json"
    assert tool.chosen_cell("s/lora-r8-s*.json", "AVX2") == "results/published/s/lora-r8-s1.json"
