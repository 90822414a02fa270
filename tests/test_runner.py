"""The grid runner end to end on a tiny model: files, manifests, resume, corruption, determinism, CLI errors."""

import json
from dataclasses import replace

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import pytest

from lorapriv_utils.mia import cli, models, runner
from lorapriv_utils.scale import SCALES

pytestmark = pytest.mark.slow
SCALE = ddp_driver.SCALE  # one tiny setting for the runner, here and under two processes
CELLS = [runner.Cell("synthetic-email", "full", None, 0), runner.Cell("synthetic-email", "lora", 2, 0)]


@pytest.fixture(autouse=True)
def tiny_model(monkeypatch, tmp_path):
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)  # what the command line reads
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(tmp_path / "cache"))


def _run(out, cells=CELLS, scale=SCALE, overrides=None):
    return runner.Runner(scale, out, overrides, progress=False, device="cpu").run(cells)


def test_plan_and_shard():
    cells = runner.plan(["ptb", "synthetic-email"], ["full", "lora"], [4, 8], [0])
    assert [c.name for c in cells][:3] == ["ptb/full-s0", "ptb/lora-r4-s0", "ptb/lora-r8-s0"]
    assert len(cells) == 6
    parts = [runner.shard(cells, i, 4) for i in range(4)]
    assert sorted(c.name for p in parts for c in p) == sorted(c.name for c in cells)
    with pytest.raises(ValueError, match="shard"):
        runner.shard(cells, 4, 4)
    with pytest.raises(ValueError, match="exceed"):
        runner.check_ranks([runner.Cell("ptb", "lora", 17, 0)], SCALE)


def test_results_manifest_resume_and_determinism(tmp_path, monkeypatch):
    first = _run(tmp_path / "a")
    files = sorted((tmp_path / "a" / "cpu-small" / "synthetic-email").glob("*.json"))
    assert [f.name for f in files] == ["full-s0.json", "lora-r2-s0.json"]
    record = json.loads(files[1].read_text())
    manifest = record["manifest"]
    for key in ("config", "train_config", "split_hashes", "versions", "git_commit", "device", "wall_seconds", "model"):
        assert key in manifest
    metrics = record["metrics"]
    assert 0 <= metrics["reference_attack"]["auc"]["value"] <= 1 and metrics["validation_perplexity"] > 1
    assert metrics["reference_attack"]["tpr_at_0.0001"]["at_zero_fpr"]  # 0.01% is below 1/N here

    second = _run(tmp_path / "b")  # same command, fresh folder: identical numbers
    assert [r["metrics"] for r in first] == [r["metrics"] for r in second]

    def boom(self, cell):
        raise AssertionError("a finished cell was recomputed")

    monkeypatch.setattr(runner.Runner, "run_cell", boom)
    assert [r["metrics"] for r in _run(tmp_path / "a")] == [r["metrics"] for r in first]


def test_corrupt_or_stale_results_are_recomputed(tmp_path, capsys):
    _run(tmp_path, CELLS[:1])
    path = tmp_path / "cpu-small" / "synthetic-email" / "full-s0.json"
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:-50])  # a partial write
    again = _run(tmp_path, CELLS[:1])
    assert again[0]["metrics"] == good["metrics"]
    assert "corrupted or partial" in capsys.readouterr().out
    tampered = dict(good, metrics={**good["metrics"], "validation_perplexity": 1.0})
    path.write_text(json.dumps(tampered))
    assert _run(tmp_path, CELLS[:1])[0]["metrics"] == good["metrics"]
    stale = _run(tmp_path, CELLS[:1], replace(SCALE, engine=replace(SCALE.engine, bootstrap_resamples=21)))
    assert stale[0]["manifest"]["config"]["engine"]["bootstrap_resamples"] == 21
    lr = _run(tmp_path, CELLS[:1], overrides=runner.Overrides(lr=2e-3))  # an override makes the cell stale too
    assert lr[0]["manifest"]["train_config"]["lr"] == 2e-3 and lr[0]["metrics"] != good["metrics"]


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["run", "--datasets", "wikitext"], "unknown dataset 'wikitext'"),
        (["run", "--methods", "adam"], "unknown method 'adam'"),
        (["run", "--ranks", "0"], "ranks must be integers >= 1"),
        (["run", "--ranks", "999"], "exceed min\\(n, m\\)"),
        (["run", "--datasets", "enron"], "needs a data folder"),
        (["run", "--shard", "3/2"], "shard must be i/n"),
        (["run", "--lr", "-1"], "lr > 0"),
    ],
)
def test_cli_errors_are_one_line(argv, match, capsys, monkeypatch):
    monkeypatch.delenv("LORAPRIV_DATA_DIR", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len([line for line in err.splitlines() if "error:" in line]) == 1
    import re

    assert re.search(match, err), err


def test_accelerate_path_writes_its_settings_to_the_manifest(tmp_path, fresh_accelerate_state):
    work = runner.Runner(SCALE, tmp_path, progress=False, device="cpu", accelerate=True)
    record = work.run(CELLS[1:])[0]
    assert record["manifest"]["accelerate"]["num_processes"] == 1
    assert (tmp_path / "cpu-small" / "synthetic-email" / "lora-r2-s0.json").is_file()


def test_a_batch_that_does_not_split_over_the_processes_is_refused(tmp_path, fresh_accelerate_state):
    from types import SimpleNamespace

    work = runner.Runner(SCALE, tmp_path, progress=False, device="cpu", accelerate=True)
    assert work.train_config("full", 0).batch_size == 16
    work.accelerator = SimpleNamespace(num_processes=3)  # as under `accelerate launch --num_processes 3`
    with pytest.raises(ValueError, match="batch size 16 does not split over 3 processes"):
        work.train_config("full", 0)
