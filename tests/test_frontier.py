"""The privacy-utility frontier's runs on a tiny model: checkpoints, files, resume, and its command line."""

import copy
import json

import ddp_driver
import numpy as np
import pytest

from lorapriv_utils import store
from lorapriv_utils.mia import cli
from lorapriv_utils.mia.engine import models
from lorapriv_utils.mia.experiments import frontier, grid, reuse, workspace
from lorapriv_utils.scale import SCALES

SCALE = ddp_driver.SCALE


@pytest.fixture(autouse=True)
def tiny_model(monkeypatch, tmp_path, engine_cache):
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(engine_cache))


def test_variants_and_their_parsing():
    names = [v.name for v in grid.frontier_variants((1, 4), (0.5, 2.0), 4)]
    assert names == ["full", "adapter", "lora-r1", "lora-r4", "flora-r4", "dpsgd-r4-z0.5", "dpsgd-r4-z2"]
    chosen = grid.plan_variants(["lora", "rowscale"], [2], [1.0], 8)
    assert [v.name for v in chosen] == ["lora-r2", "rowscale-r8"]
    assert grid.parse_floats("--noise", "0.5, 1") == [0.5, 1.0]
    for bad, match in (("x", "not a number"), ("-1", "positive"), ("inf", "positive"), ("", "empty")):
        with pytest.raises(ValueError, match=match):
            grid.parse_floats("--noise", bad)
    with pytest.raises(ValueError, match="needs rank"):
        grid.Variant("lora")
    with pytest.raises(ValueError, match="noise multiplier"):
        grid.Variant("dpsgd", 4)
    with pytest.raises(ValueError, match="unknown method"):
        grid.Variant("qlora", 4)


@pytest.mark.slow
def test_a_frontier_point_scores_each_checkpoint_and_resumes(tmp_path, monkeypatch):
    work = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu")
    variant = grid.Variant("dpsgd", 2, 1.0)
    record = frontier.run_point(work, "synthetic-email", variant, 1e-2, 0, (1, 2))
    path = frontier.frontier_path(tmp_path, SCALE.name, "synthetic-email", "dpsgd-r2-z1-lr0.01", 0)
    assert json.loads(path.read_text())["checksum"] == record["checksum"]
    assert [c["epoch"] for c in record["checkpoints"]] == [1, 2]
    first, second = record["checkpoints"]
    assert second["steps"] > first["steps"] > 0 and second["epsilon"] > first["epsilon"] > 0  # privacy spent grows
    reference = record["manifest"]["reference_training"]  # its own training, apart from the target's
    assert reference["final_loss"] > 0 and reference["final_loss"] != record["training"]["final_loss"]
    scores = store.read_scores(store.scores_path(path))
    texts = SCALE.engine.max_texts_per_part
    for epoch in (1, 2):
        for part in ("members", "nonmembers"):
            for kind in ("target", "reference", "minkpp"):
                assert scores[f"e{epoch}_{part}_{kind}"].shape == (texts,)
    assert not np.array_equal(scores["e1_members_target"], scores["e2_members_target"])
    base = frontier.run_base(work, "synthetic-email", 0)
    assert base["checkpoints"][0]["epoch"] == 0 and base["checkpoints"][0]["validation_perplexity"] > 1
    from lorapriv_utils.mia.attacks import matching

    curves = matching.load_curves(path.parent)
    assert list(curves) == ["dpsgd-r2-z1"]
    points = curves["dpsgd-r2-z1"].points
    assert [p.epoch for p in points] == [0, 1, 2] and points[2].epsilon == second["epsilon"]
    from lorapriv_utils.mia.attacks import metrics

    assert metrics.roc_auc(*points[0].signals["reference"]) == 0.5  # the base model is its own reference

    def boom(*args, **kwargs):
        raise AssertionError("a finished point was recomputed")

    monkeypatch.setattr(frontier.finetune, "fine_tune", boom)
    again = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu")
    assert frontier.run_point(again, "synthetic-email", variant, 1e-2, 0, (1, 2))["checksum"] == record["checksum"]
    with pytest.raises(AssertionError, match="recomputed"):  # another checkpoint list is another point
        frontier.run_point(again, "synthetic-email", variant, 1e-2, 0, (1, 3))
    with pytest.raises(ValueError, match="--checkpoints"):
        frontier.run_point(again, "synthetic-email", variant, 1e-2, 0, (2, 1))


@pytest.mark.slow
def test_a_point_stopped_after_its_target_trains_only_its_reference_again(tmp_path, monkeypatch, capsys):
    """A frontier point stopped between its two trainings keeps its scored target in a journal: the rerun
    trains only the reference, and its record equals an uninterrupted run's, the stopped run's time counted;
    the journal goes when the record is written, and one of another key, or a damaged one, is not taken over."""
    from lorapriv_utils import store

    real_fine_tune = frontier.finetune.fine_tune
    trained, stop = [], []

    class Stopped(Exception):
        pass

    def spy(model, method, data, cfg, *args, **kwargs):
        desc = kwargs["desc"]
        if stop and desc.endswith("reference"):
            raise Stopped
        trained.append(desc)
        return real_fine_tune(model, method, data, cfg, *args, **kwargs)

    monkeypatch.setattr(frontier.finetune, "fine_tune", spy)
    variant, args = grid.Variant("lora", 2), ("synthetic-email", 2e-2, 0, (1, 2))
    uninterrupted = frontier.run_point(
        workspace.Workspace(SCALE, tmp_path / "whole", progress=False, device="cpu"), args[0], variant, *args[1:]
    )
    path = frontier.frontier_path(tmp_path / "cut", SCALE.name, args[0], "lora-r2-lr0.02", 0)
    journal = reuse.journal_path(path, "target")
    stop.append(True)
    work = workspace.Workspace(SCALE, tmp_path / "cut", progress=False, device="cpu")
    with pytest.raises(Stopped):
        frontier.run_point(work, args[0], variant, *args[1:])
    assert journal.is_file() and not path.exists()
    kept = store.read_record(journal, "frontier-journal")

    stop.clear()
    trained.clear()
    resumed = frontier.run_point(work, args[0], variant, *args[1:])
    assert trained == ["synthetic-email lora-r2-lr0.02 reference"]
    assert "training the reference only" in "".join(capsys.readouterr())
    assert resumed["checkpoints"] == uninterrupted["checkpoints"] and resumed["training"] == uninterrupted["training"]
    assert resumed["scores_sha256"] == uninterrupted["scores_sha256"]
    assert resumed["manifest"]["key"] == uninterrupted["manifest"]["key"]
    note = resumed["manifest"]["reused"]
    assert note["from"] == "target journal" and note["wall_seconds"] == kept["manifest"]["wall_seconds"]
    assert not journal.exists() and not store.scores_path(journal).exists()

    # a journal of another key (another checkpoint list), or a damaged one, is not taken over
    scores = store.read_scores(store.scores_path(path))
    target = {"checkpoints": kept["checkpoints"], "training": kept["training"], "scores": scores}
    other = copy.deepcopy(resumed["manifest"]["spec"])
    other["point"] = {"changed": True}
    frontier.save_target(path, other, target, 1.0)
    assert frontier.resumed_target(path, resumed["manifest"]["spec"]) is None
    assert "of another key" in "".join(capsys.readouterr())
    store.scores_path(journal).write_bytes(b"not a zip")
    assert frontier.resumed_target(path, other) is None
    assert "damaged" in "".join(capsys.readouterr())


@pytest.mark.slow
def test_the_frontier_command(tmp_path, capsys):
    argv = ["frontier", "--datasets", "synthetic-email", "--methods", "lora", "--ranks", "2"]
    argv += ["--checkpoints", "1", "--lr", "0.01", "--out", str(tmp_path), "--no-progress", "--threads", "1"]
    assert cli.main(argv) == 0
    assert "2 frontier records" in capsys.readouterr().out  # the base model and one point
    folder = tmp_path / SCALE.name / "frontier" / "synthetic-email"
    assert sorted(p.name for p in folder.glob("*.json")) == ["base-s0.json", "lora-r2-lr0.01-s0.json"]
    (folder / "base-s0.json").unlink()
    argv = ["frontier", "--datasets", "synthetic-email", "--bases-only", "--out", str(tmp_path / "bases")]
    assert cli.main([*argv, "--no-progress", "--threads", "1"]) == 0  # the base's epoch 0 alone: nothing trains
    assert "1 frontier records" in capsys.readouterr().out
    bases = tmp_path / "bases" / SCALE.name / "frontier" / "synthetic-email"
    assert [p.name for p in bases.glob("*.json")] == ["base-s0.json"]


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--epochs", "3"], "--epochs: the frontier trains"),
        (["--checkpoints", "4,2"], "--checkpoints: give increasing"),
        (["--noise", "0"], "--noise"),
        (["--dp-rank", "0"], "--dp-rank"),
        (["--ranks", "99"], "exceed"),
    ],
)
def test_frontier_arguments_are_checked_first(extra, match, capsys):
    with pytest.raises(SystemExit):
        cli.main(["frontier", *extra])
    assert match in capsys.readouterr().err


def test_shards_split_the_frontier_and_an_empty_shard_is_refused(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(frontier, "run_base", lambda work, d, s: seen.append(("base", d, s)) or {})
    monkeypatch.setattr(frontier, "run_point", lambda work, d, v, lr, s, c: seen.append((v.name, lr)) or {})
    work = workspace.Workspace(SCALE, tmp_path, progress=False)
    variants = [grid.Variant("full"), grid.Variant("lora", 2)]
    everything = frontier.run_frontier(work, ["ptb"], variants, [0], (1,))
    whole, seen[:] = list(seen), []
    parts = [frontier.run_frontier(work, ["ptb"], variants, [0], (1,), shard=(i, 2)) for i in range(2)]
    assert sorted(map(str, seen)) == sorted(map(str, whole)) and len(seen) == len(everything) == 5
    assert [len(p) for p in parts] == [3, 2]  # disjoint, and together the whole frontier
    with pytest.raises(ValueError, match="--shard: 7/8 gets no work: the frontier has 5 records"):
        frontier.run_frontier(work, ["ptb"], variants, [0], (1,), shard=(7, 8))


def test_a_point_another_run_computes_is_waited_for_then_reused(tmp_path, monkeypatch):
    import threading
    import time

    from lorapriv_utils.files import Lock

    work = workspace.Workspace(SCALE, tmp_path, progress=False)
    monkeypatch.setattr(reuse, "load_result", lambda path, spec, with_scores, refresh=None: {"reused": str(path)})
    path = frontier.frontier_path(tmp_path, SCALE.name, "ptb", "base", 0)
    held = Lock(path)
    assert held.acquire()
    threading.Timer(0.3, held.release).start()
    start = time.perf_counter()
    assert frontier.run_base(work, "ptb", 0) == {"reused": str(path)}
    assert time.perf_counter() - start >= 0.25  # it waited for the other run's lock
