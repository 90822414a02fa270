"""What the chapters declare they read (results/published/declared.json): the status check judges each record
against the declaration, the one reader refuses what it does not name, the one writer and the command line refuse to
write it; and the engine's last silent faults (issue 57) are loud."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lorapriv_utils import catalogue, declared, store
from lorapriv_utils.catalogue import PUBLISHED
from lorapriv_utils.files import Lock
from lorapriv_utils.mia import cli
from lorapriv_utils.mia.experiments import producers
from lorapriv_utils.mia.records import report, status

CELL = "cpu-small/ptb/lora-r8-s0"
GRID = catalogue.entry("grid-ptb")


def _copy(root: Path, stem: str = CELL) -> Path:
    (root / stem).parent.mkdir(parents=True, exist_ok=True)
    for suffix in (".json", ".scores.npz"):
        shutil.copy(PUBLISHED / f"{stem}{suffix}", root / f"{stem}{suffix}")
    return root / f"{stem}.json"


@pytest.fixture
def store_root(tmp_path):
    """A declared store holding two of the published grid's records, declared as they are."""
    for stem in (CELL, "cpu-small/ptb/full-s0"):
        _copy(tmp_path, stem)
    status.declare(tmp_path, ["cpu-small/ptb/*.json"])
    return tmp_path


def _states(root: Path) -> dict[str, status.Status]:
    return {s.path: s for s in status.check([GRID], root=root)}


def _reseal(path: Path, edit) -> dict:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(store.seal(record)))
    return record


def test_the_published_store_is_declared_record_by_record():
    names = set(declared.load(PUBLISHED))
    on_disk = {p.relative_to(PUBLISHED).as_posix() for e in catalogue.CATALOGUE for p in e.paths()}
    assert names == on_disk
    assert {item["entry"] for item in declared.load(PUBLISHED).values()} <= {e.name for e in catalogue.CATALOGUE}


def test_a_declared_store_s_records_are_current(store_root):
    assert {s.state for s in _states(store_root).values()} == {"current"}


def test_a_record_overwritten_with_other_options_is_foreign_and_no_chapter_reads_it(store_root):
    path = store_root / f"{CELL}.json"
    _reseal(path, lambda r: r["manifest"]["config"]["overrides"].update(epochs=1, lr=0.01))
    found = _states(store_root)[f"{CELL}.json"]
    assert found.state == "foreign"
    assert "made with --epochs 1, the chapter expects the scale's epochs" in found.detail
    assert "made with --lr 0.01, the chapter expects the rate its sweep chooses" in found.detail
    with pytest.raises(declared.UndeclaredError, match="is foreign: made with --epochs 1"):
        store.read_record(path)
    with pytest.raises(declared.UndeclaredError, match="foreign"):  # the chapters' loader refuses, never skips
        report.load_records(store_root / "cpu-small")


def test_a_deleted_record_is_missing_by_name(store_root):
    (store_root / f"{CELL}.json").unlink()
    (store_root / f"{CELL}.scores.npz").unlink()
    found = _states(store_root)[f"{CELL}.json"]
    assert found.state == "missing" and "make results-a6" in found.detail


def test_a_hand_edited_number_with_a_recomputed_checksum_is_altered(store_root):
    path = store_root / f"{CELL}.json"
    _reseal(path, lambda r: r["metrics"]["reference_attack"]["auc"].update(value=0.5))
    assert _states(store_root)[f"{CELL}.json"].state == "altered"
    with pytest.raises(declared.UndeclaredError, match="altered"):
        store.read_record(path)


def test_an_undeclared_record_is_extra(store_root):
    _copy(store_root, "cpu-small/ptb/adapter-s0")
    found = _states(store_root)["cpu-small/ptb/adapter-s0.json"]
    assert found.state == "extra" and "--declare" in found.detail


def test_the_one_writer_keeps_the_declaration(store_root):
    path = store_root / f"{CELL}.json"
    record, scores = store.read_record(path, with_arrays=True)
    record["manifest"]["wall_seconds"] = 1.0  # a rerun under the declared options: its checksum is recorded
    store.write_record(path, store.seal(record), scores)
    assert declared.load(store_root)[f"{CELL}.json"]["checksum"] == record["checksum"]
    assert _states(store_root)[f"{CELL}.json"].state == "current"
    record["manifest"]["config"]["overrides"]["epochs"] = 1
    with pytest.raises(declared.UndeclaredError, match="this run gives --epochs 1"):
        store.write_record(path, store.seal(record), scores)
    with pytest.raises(declared.UndeclaredError, match="not declared"):
        store.write_record(store_root / "cpu-small/ptb/lora-r8-s9.json", store.seal(record), scores)
    assert not list(store_root.rglob("*.lock"))  # the declaration's lock is gone after a clean exit


def test_declaring_names_what_changes(store_root):
    path = store_root / f"{CELL}.json"
    _reseal(path, lambda r: r["manifest"]["config"]["overrides"].update(epochs=1))
    lines = status.declare(store_root, [f"{CELL}.json"])
    assert lines == [f"re-declared {CELL}.json: now made with --epochs 1, it was the scale's epochs"]
    found = _states(store_root)[f"{CELL}.json"]  # declared now, and judged by its key: made with 2 epochs, not 1
    assert found.state == "stale" and "method changed" in found.detail
    with pytest.raises(ValueError, match="no record there"):
        status.declare(store_root, ["cpu-small/ptb/nothing-s0.json"])


def _cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lorapriv_utils", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PUBLISHED.parents[1])},
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "--epochs", "1", "--lr", "1e-2", "--methods", "lora", "--ranks", "8", "--datasets", "ptb"],
            "this run gives --epochs 1, the chapter expects the scale's epochs",
        ),
        (["run", "--methods", "lora", "--ranks", "8", "--datasets", "ptb", "--seeds", "7"], "is not declared"),
        (["run", "--methods", "lora", "--ranks", "8", "--datasets", "ptb", "--reference", "full"], "--reference full"),
        (["run", "--datasets", ""], "--datasets: the list is empty"),
        (["run", "--datasets", ","], "--datasets: the list is empty"),
        (["run", "--methods", ""], "--methods: the list is empty"),
        (["run", "--epoch", "1"], "unrecognized arguments: --epoch"),
        (["frontier", "--methods", "full", "--noise", "5"], "--noise: only DP-SGD's curves"),
        (["frontier", "--methods", "full,lora", "--dp-rank", "4"], "--dp-rank: only FLoRA's and DP-SGD's"),
        (["audit", "--methods", "full", "--noise-multiplier", "1"], "--noise-multiplier: only dpsgd and rowscale"),
        (["dp-compare", "--bogus"], "unrecognized arguments: --bogus"),
        (["whitebox", "x.json", "--ranks", "2"], "--ranks must be among"),
        (["whitebox", "x.json", "--thread", "1"], "unrecognized arguments: --thread"),
        (["multiplier", "--bogus"], "unrecognized arguments: --bogus"),
        (["alignment"], "required: path"),
        (["cost", "out.txt"], "give the path of a .json file"),
    ],
)
def test_bad_input_is_one_line_before_torch(store_root, argv, message):
    if argv[0] in ("run", "frontier", "audit"):
        argv = [*argv, "--out", str(store_root)]
    start = time.perf_counter()
    done = _cli(*argv)
    took = time.perf_counter() - start
    assert done.returncode == 2 and message in done.stderr, done.stderr[-800:]
    assert "Traceback" not in done.stderr
    assert took < 5.0  # well under a second on a laptop: no torch import (the import alone takes several)


def test_every_command_checks_its_arguments_before_importing_torch():
    commands = [[name, "--bogus"] for name in producers.PRODUCERS] + [
        ["run", "--bogus"],
        ["frontier", "--bogus"],
        ["lira", "--bogus"],
        ["audit", "--bogus"],
        ["table", "--bogus"],
        ["status", "--bogus"],
    ]
    script = (
        "import sys\nfrom lorapriv_utils.mia import cli\n"
        f"for argv in {commands!r}:\n"
        "    try:\n        cli.main(argv)\n    except SystemExit as stop:\n        assert stop.code == 2, argv\n"
        "    assert 'torch' not in sys.modules, argv\nprint('no torch')"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "no torch", done.stderr[-1500:]
    assert done.stderr.count("unrecognized arguments: --bogus") == len(commands)


@pytest.mark.slow  # imports torch, through the two producers
def test_the_producers_parsers_match_their_modules():
    from lorapriv_utils.mia.experiments import dp_compare, whitebox

    assert producers.WHITEBOX_RANKS == whitebox.RANKS and producers.DP_COMPARE_SEEDS == dp_compare.SEEDS


def test_the_frontier_refuses_other_checkpoints_in_a_declared_store(store_root):
    folder = store_root / "cpu-small/frontier/ptb"
    folder.mkdir(parents=True)
    for name in ("base-s0", "lora-r8-lr0.001-s0"):
        for suffix in (".json", ".scores.npz"):
            shutil.copy(PUBLISHED / f"cpu-small/frontier/ptb/{name}{suffix}", folder / f"{name}{suffix}")
    status.declare(store_root, ["cpu-small/frontier/ptb/*.json"])
    argv = ["frontier", "--datasets", "ptb", "--methods", "lora", "--ranks", "8", "--lr", "1e-3"]
    done = _cli(*argv, "--checkpoints", "1,3", "--out", str(store_root))
    assert done.returncode == 2 and "this run gives --checkpoints 1,3, the chapter expects" in done.stderr


def test_status_data_dir_errors_name_the_folder_and_the_whole_reason(tmp_path):
    done = _cli("status", "--data-dir", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and f"--data-dir {tmp_path / 'nowhere'}: no such folder" in done.stderr
    (tmp_path / "enron").mkdir()
    (tmp_path / "pubmed").mkdir()
    (tmp_path / "enron" / "mail.jsonl").write_text("{not json\n")
    done = _cli("status", "--data-dir", str(tmp_path))
    assert done.returncode == 2 and "mail.jsonl, line 1: not JSON" in done.stderr, done.stderr
    (tmp_path / "enron" / "mail.jsonl").write_text("")
    done = _cli("status", "--data-dir", str(tmp_path))
    assert done.returncode == 2 and "mail.jsonl: holds no records (an empty file)" in done.stderr


def test_table_names_a_damaged_file_even_when_it_is_the_only_one(tmp_path):
    path = _copy(tmp_path)
    path.write_text("{}")
    done = _cli("table", str(tmp_path))
    assert done.returncode == 2 and "lora-r8-s0.json" in done.stderr and "no intact result files" in done.stderr


def test_a_junk_scores_file_is_reported_in_the_project_s_words(tmp_path):
    path = _copy(tmp_path)
    store.scores_path(path).write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="scores file lora-r8-s0.scores.npz is damaged") as caught:
        store.read_record(path, with_arrays=True)
    assert "allow_pickle" not in str(caught.value)
    np.savez(store.scores_path(path), x=np.array([object()], dtype=object))  # a pickled array
    with pytest.raises(ValueError, match="is damaged"):
        store.read_record(path, with_arrays=True)


def test_a_released_lock_leaves_no_file_and_a_held_one_still_excludes(tmp_path):
    target = tmp_path / "record.json"
    with Lock(target) as lock:
        assert lock.path.exists()
        assert not Lock(target).acquire(blocking=False)
    assert not lock.path.exists()
    again = Lock(target)
    assert again.acquire(blocking=False)
    again.release()
    assert not list(tmp_path.iterdir())


def test_no_option_of_the_command_line_is_matched_by_prefix():
    parser = cli.build_parser()
    assert parser.allow_abbrev is False
    assert all(sub.allow_abbrev is False for sub in parser.commands.values())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--workers", "0"], "--workers: must be >= 1"),
        (["--launcher", "submitit-local", "--workers", "2"], "--workers: only the local launcher"),
        (["--partition", "cpu"], "--partition: only --launcher slurm or submitit-local"),
        (["--launcher", "submitit-local", "--mem-gb", "0"], "--mem-gb: must be >= 1"),
        (["--workers", "2", "--accelerate"], "--accelerate: data-parallel training runs in this process"),
        (["--launcher", "slurm"], "--launcher slurm: no sbatch here"),  # this machine and CI have no Slurm
    ],
)
def test_the_launcher_s_options_are_checked_before_torch(tmp_path, argv, message):
    done = _cli("run", "--datasets", "ptb", "--methods", "full", "--out", str(tmp_path), *argv)
    assert done.returncode == 2 and message in done.stderr, done.stderr[-600:]


def test_a_lock_on_a_network_file_system_keeps_its_file(tmp_path, monkeypatch):
    from lorapriv_utils import files

    monkeypatch.setattr(files, "on_network_filesystem", lambda folder: True)
    with Lock(tmp_path / "record.json") as lock:
        pass
    assert lock.path.exists()  # kept: another host's cached lookup could still find a removed file


def test_the_local_disk_is_not_a_network_file_system(tmp_path):
    from lorapriv_utils.files import on_network_filesystem

    assert on_network_filesystem(tmp_path) is False


def test_a_record_stopped_between_its_write_and_its_declaration_is_not_reported_as_edited(store_root):
    path = store_root / f"{CELL}.json"
    record, scores = store.read_record(path, with_arrays=True)
    record["manifest"]["wall_seconds"] = 2.0
    sealed = store.seal(record)
    declared.writing(store_root, path, sealed)  # the writer noted the new checksum, then stopped before written()
    path.write_text(json.dumps(sealed))
    assert _states(store_root)[f"{CELL}.json"].state == "current"
    hand = dict(sealed, metrics={**sealed["metrics"], "validation_perplexity": 1.0})
    path.write_text(json.dumps(store.seal(hand)))
    assert _states(store_root)[f"{CELL}.json"].state == "altered"  # a hand edit still is
