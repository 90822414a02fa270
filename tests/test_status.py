"""The results store's status: every committed record that a chapter reads is current, and the check can fail."""

import json
import shutil
import subprocess
import sys

import pytest

from lorapriv_utils import catalogue, store
from lorapriv_utils.catalogue import CATALOGUE, PUBLISHED
from lorapriv_utils.mia.records import status


@pytest.fixture(scope="module")
def published():
    return status.check()


def test_every_committed_record_is_current_or_allowed(published):
    allowed = catalogue.allowed_stale()
    excused = {s.path for s in published if s.state == "stale" and s.path in allowed}  # never a damaged or missing one
    bad = [f"{s.path}: {s.state} ({s.detail})" for s in published if s.state != "current" and s.path not in excused]
    assert not bad, (
        "records the chapters read are not current (regenerate them, or list them with a reason in "
        f"{catalogue.ALLOWED_STALE.name}):\n" + "\n".join(bad)
    )
    assert not set(allowed) - {s.path for s in published}, "the allow-list names records that do not exist"


def test_the_catalogue_covers_every_committed_record(published):
    listed = {s.path for s in published}
    on_disk = {p.relative_to(PUBLISHED).as_posix() for p in PUBLISHED.rglob("*.json") if p.name != "declared.json"}
    assert on_disk == listed
    assert {e.chapter for e in CATALOGUE} <= {p.stem for p in (PUBLISHED.parents[1] / "notebooks").glob("*.ipynb")}


def test_regeneration_lines_come_from_the_catalogue_and_name_real_make_targets():
    import re

    from lorapriv_utils.chapters import a5_row_scaling, b3_noisy_variants

    make = (PUBLISHED.parents[1] / "Makefile").read_text()
    for entry in CATALOGUE:
        assert re.search(rf"^{re.escape(entry.make)}:", make, re.M), f"{entry.name}: no target make {entry.make}"
    note = " (the records' measured wall times: make status)"
    assert catalogue.regenerate("dp-compare") == "make results-b3" + note == b3_noisy_variants.REGENERATE_DP
    both = catalogue.regenerate("grid-ptb", "grid-email", "grid-large")
    assert both == "make results-a6 and make results-a6-large DATA_DIR=../shared/data" + note
    assert a5_row_scaling.REGENERATE == "make results-a5" + note  # the audits and the cost: one target
    with pytest.raises(KeyError, match="no catalogue entry 'nothing'"):
        catalogue.regenerate("nothing")
    assert set(catalogue.TARGETS) == {e.make for e in CATALOGUE}  # make help names every target, once
    lines = catalogue.help_lines()
    assert len(lines) == len(catalogue.TARGETS) + 1 and "(grid-large; needs DATA_DIR=../shared/data)" in lines[2]


def test_a_scales_records_of_a_kind_name_their_own_make_target():
    note = " (the records' measured wall times: make status)"
    assert catalogue.regenerate_kind("cpu-small", "cell") == "make results-a6" + note  # not the projection's folder
    pretrained = catalogue.regenerate_kind("cpu-pretrained", "frontier")
    assert pretrained == "make results-a6-pretrained DATA_DIR=../shared/data" + note
    assert "no Make target" in catalogue.regenerate_kind("cpu-large", "frontier")


def test_a_numerics_bump_makes_exactly_the_records_that_use_it_stale(monkeypatch):
    entries = [catalogue.entry(name) for name in ("lira", "grid-ptb", "audit")]
    monkeypatch.setitem(store.NUMERICS, "lira", store.NUMERICS["lira"] + 1)
    states = {}
    for s in status.check(entries):
        states.setdefault(s.entry, set()).add(s.state)
        if s.entry == "lira":
            assert s.detail.startswith("numerics changed (numerics.lira)")
    assert states == {"lira": {"stale"}, "grid-ptb": {"current"}, "audit": {"current"}}


def test_a_scale_setting_makes_only_its_method_stale(monkeypatch):
    from dataclasses import replace

    from lorapriv_utils.scale import SCALES

    small = SCALES["cpu-small"]
    rowscale = replace(small.engine.rowscale, c=2.0)
    monkeypatch.setitem(SCALES, "cpu-small", replace(small, engine=replace(small.engine, rowscale=rowscale)))
    results = status.check([catalogue.entry("grid-ptb")])
    stale = {s.path for s in results if s.state == "stale"}
    assert stale and all("rowscale" in path for path in stale)
    assert all(s.detail.startswith("method changed (method.rowscale.c)") for s in results if s.state == "stale")


@pytest.mark.slow  # three records refreshed, each bootstrap with its Monte Carlo band
def test_a_refresh_recomputes_only_derived_numbers_and_reproduces_the_committed_ones(tmp_path, monkeypatch):
    """A bump of the attack metrics' numerics leaves a grid cell, a DP comparison and the white-box game stale in
    their derived part alone; ``refresh`` recomputes those numbers from what each record stores (no training) and
    they come out as committed, bit for bit (so the committed ones are today's code's); a record stale in another
    part is left stale."""
    names = ["cpu-small/ptb/lora-r8-s0", "dp_compare/cpu-small/ptb/adapter-z0-s0", "whitebox/cpu-small"]
    enron = "cpu-large/enron/adapter-s0"  # its texts are not readable without --data-dir
    for name in [*names, "cpu-small/ptb/full-s0", enron]:
        for suffix in (".json", ".scores.npz"):
            if (PUBLISHED / (name + suffix)).exists():
                (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(PUBLISHED / (name + suffix), tmp_path / (name + suffix))
    other = tmp_path / "cpu-small/ptb/full-s0.json"  # stale in its method part as well
    record = json.loads(other.read_text())
    record["manifest"]["key"]["method"] = "0" * 16
    other.write_text(json.dumps(store.seal(record)))
    entries = [catalogue.entry(name) for name in ("grid-ptb", "dp-compare", "whitebox", "grid-large")]
    monkeypatch.setitem(store.NUMERICS, "attack-metrics", store.NUMERICS["attack-metrics"] + 1)
    before = {s.path: s for s in status.check(entries, root=tmp_path) if s.state != "missing"}
    assert {s.changed for s in before.values()} == {("derived",), ("derived", "method")}
    with monkeypatch.context() as patch:  # a kind without a refresher is named, not skipped in silence
        patch.delitem(status.REFRESHERS, "whitebox")
        done, left = status.refresh([before["whitebox/cpu-small.json"]], root=tmp_path)
        assert done == [] and "no refresher for records of kind 'whitebox'" in left[0]
    done, left = status.refresh(list(before.values()), root=tmp_path)  # the Enron record is left, the rest done
    assert sorted(done) == sorted(n + ".json" for n in names)
    assert len(left) == 1 and left[0].startswith(enron + ".json: data unchecked") and "give --data-dir" in left[0]
    after = {s.path: s.state for s in status.check(entries, root=tmp_path) if s.state != "missing"}
    stale = {"cpu-small/ptb/full-s0.json": "stale", enron + ".json": "stale"}
    assert after == {**{n + ".json": "current" for n in names}, **stale}
    for name in names:
        old, new = (json.loads(p.read_text()) for p in (PUBLISHED / (name + ".json"), tmp_path / (name + ".json")))
        assert new["manifest"]["metrics_refreshed"]["from_key"] == old["manifest"]["key"]
        assert {k: v for k, v in new.items() if k not in ("manifest", "checksum")} == {
            k: v for k, v in old.items() if k not in ("manifest", "checksum")
        }


def test_damaged_and_missing_records_are_named(tmp_path):
    entry = catalogue.entry("grid-ptb")
    (tmp_path / "cpu-small" / "ptb").mkdir(parents=True)
    for name in ("full-s0.json", "full-s0.scores.npz", "lora-r8-s0.json", "lora-r8-s0.scores.npz"):
        shutil.copy(PUBLISHED / "cpu-small" / "ptb" / name, tmp_path / "cpu-small" / "ptb" / name)
    scores = tmp_path / "cpu-small" / "ptb" / "full-s0.scores.npz"
    scores.write_bytes(scores.read_bytes()[:1000])  # a truncated scores file
    record = tmp_path / "cpu-small" / "ptb" / "lora-r8-s0.json"
    edited = json.loads(record.read_text())
    edited["metrics"]["validation_perplexity"] = 1.0
    record.write_text(json.dumps(edited))
    results = {s.path: s for s in status.check([entry, catalogue.entry("whitebox")], root=tmp_path)}
    assert results["cpu-small/ptb/full-s0.json"].state == "damaged"
    assert results["cpu-small/ptb/lora-r8-s0.json"].state == "damaged"
    assert "checksum" in results["cpu-small/ptb/lora-r8-s0.json"].detail
    assert results["whitebox/cpu-small.json"].state == "missing"
    assert "make results-b2" in status.report(list(results.values()))


@pytest.mark.slow  # two status runs over every committed record, in subprocesses
def test_the_status_command_imports_no_torch_and_exits_1_on_a_stale_record(tmp_path):
    script = (
        "import sys; from lorapriv_utils.mia import cli; code = cli.main(['status']); "
        "assert 'torch' not in sys.modules, 'status imported torch'; sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "records current" in done.stdout
    allowed = catalogue.allowed_stale()
    assert all(f"(allowed for now: {reason})" in done.stdout for reason in allowed.values())
    folder = tmp_path / "multiplier"
    folder.mkdir()
    record = json.loads((PUBLISHED / "multiplier" / "cpu-small-pretrained.json").read_text())
    record["manifest"]["key"]["numerics"] = "0" * 16
    (folder / "cpu-small-pretrained.json").write_text(json.dumps(store.seal(record)))
    done = subprocess.run(
        [sys.executable, "-m", "lorapriv_utils", "status", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "stale    multiplier/cpu-small-pretrained.json: numerics changed" in done.stdout
    # the folder's allow-list excuses the stale records it names with a reason, and only those (the folder's other
    # records are missing, which no list excuses, so the command still exits 1: one record fewer is counted)
    unlisted = done.stderr
    for listed, counted in (("multiplier/other.json: another record", unlisted), (None, None)):
        text = listed or "multiplier/cpu-small-pretrained.json: rerun next session"
        (tmp_path / "allowed-stale.txt").write_text(text + "\n")
        done = subprocess.run(
            [sys.executable, "-m", "lorapriv_utils", "status", str(tmp_path)], capture_output=True, text=True
        )
        assert done.returncode == 1
        if counted is not None:
            assert done.stderr == counted
    first, total = (int(x) for x in unlisted.split(": ")[1].split(" records")[0].split(" of "))
    assert done.stderr.startswith(f"lorapriv status: {first - 1} of {total} records are not current (")
    assert "has no declared.json" in done.stderr  # a folder that declares nothing is never all current
    assert "(allowed for now: rerun next session)" in done.stdout


def test_the_allow_list_needs_a_reason(tmp_path):
    path = tmp_path / "allowed.txt"
    path.write_text("# comment\ncpu-small/ptb/full-s0.json: regenerated in the next session\n")
    assert catalogue.allowed_stale(path) == {"cpu-small/ptb/full-s0.json": "regenerated in the next session"}
    path.write_text("cpu-small/ptb/full-s0.json\n")
    with pytest.raises(ValueError, match="line 1"):
        catalogue.allowed_stale(path)


def test_spec_keys_ignore_neutral_defaults_and_refuse_non_data():
    assert store.digest({"a": 1, "caps": (), "hub": None}) == store.digest({"a": 1})
    assert store.digest({"a": 1.0}) != store.digest({"a": 2.0})
    assert store.spec_differences({"m": {"lr": 1, "x": 2}}, {"m": {"lr": 3, "x": 2}}) == ["m.lr"]
    with pytest.raises(ValueError, match="non-finite"):
        store.digest({"lr": float("inf")})
    with pytest.raises(TypeError, match="JSON data"):
        store.digest({"f": object()})
    with pytest.raises(KeyError, match="declare it"):
        store.numerics("no-such-component")


def test_run_times_come_from_the_records_own_wall_times(published):
    walls = status.wall_times(published)
    by_hand = sum(
        json.loads((PUBLISHED / s.path).read_text())["manifest"]["wall_seconds"] for s in published if s.entry == "lira"
    )
    assert walls["lira"] == by_hand > 0
    assert [status.format_duration(x) for x in (30, 600, 7200)] == ["30 s", "10 min", "2.0 h"]
    report = status.report(published)
    summaries = [line for line in report.splitlines() if not line.startswith(" ")]
    width = max(len(entry.name) for entry in CATALOGUE)
    assert summaries and all(line[width] == " " and line[width + 1].isdigit() for line in summaries)  # one column
    assert "of wall time in all" in report


def test_a_record_that_took_over_earlier_rates_counts_their_wall_time():
    assert status.wall_seconds({"manifest": {"wall_seconds": 10.0, "reused": {"wall_seconds": 5.0}}}) == 15.0
    assert status.wall_seconds({"manifest": {"wall_seconds": 10}}) == 10.0
    assert status.wall_seconds({"wall_seconds": 3}) == 3.0 and status.wall_seconds({}) is None


def test_the_readme_s_table_of_results_is_the_records_own():
    readme = (PUBLISHED.parents[1] / "README.md").read_text(encoding="utf-8")
    assert status.readme_with_table(readme) == readme, (
        "README.md's table of committed results does not match the records: python -m lorapriv_utils status "
        "--update-readme"
    )
    assert "| `make results-a6` |" in readme
    with pytest.raises(ValueError, match="no <!-- results-table:start -->"):
        status.readme_with_table("# no table here\n")


def test_measured_seconds_sum_the_records_wall_times(tmp_path):
    folder = tmp_path / "whitebox"
    folder.mkdir()
    record = {"manifest": {}, "rows": [], "game": {}, "wall_seconds": 90.0}
    (folder / "cpu-small.json").write_text(json.dumps(store.seal(record, kind="whitebox")))
    assert status.measured_seconds("whitebox", root=tmp_path) == 90.0
    assert status.measured_seconds("results-b2", root=tmp_path) == 90.0  # by Make target too
    assert status.measured_seconds("results-b1", root=tmp_path) == 0.0  # nothing there
    with pytest.raises(KeyError, match="no catalogue entry or Make target nothing"):
        status.measured_seconds("nothing")


def test_the_one_writer_refuses_unsealed_records_and_scores_that_are_not_its_own(tmp_path):
    import numpy as np

    scores = {"members": np.array([0.5, 1.5], dtype=np.float32)}
    record = {"kind": "cell", "metrics": {}, "manifest": {}, "scores_sha256": store.scores_digest(scores)}
    with pytest.raises(ValueError, match="not sealed"):
        store.write_record(tmp_path / "a.json", record, scores)
    store.seal(record)
    record["metrics"]["late"] = 1  # a field set after sealing
    with pytest.raises(ValueError, match="not sealed"):
        store.write_record(tmp_path / "a.json", record, scores)
    store.seal(record)
    with pytest.raises(ValueError, match="not the digest"):
        store.write_record(tmp_path / "a.json", record, {"members": scores["members"] + 1})
    with pytest.raises(ValueError, match="a cell record is written with its arrays"):
        store.write_record(tmp_path / "a.json", record)
    assert not list(tmp_path.iterdir())  # nothing is written by a refused call
    store.write_record(tmp_path / "a.json", record, scores)
    assert store.read_record(tmp_path / "a.json") == record
    read, arrays = store.read_record(tmp_path / "a.json", "cell", with_arrays=True)
    assert read == record and arrays.keys() == scores.keys() and np.array_equal(arrays["members"], scores["members"])
    np.savez_compressed(store.scores_path(tmp_path / "a.json"), members=scores["members"] * 2)
    with pytest.raises(ValueError, match="its arrays file does not match the record"):
        store.read_record(tmp_path / "a.json", with_arrays=True)


def test_every_committed_record_is_in_the_one_envelope():
    """Each record under results/published has the envelope's schema, a known kind of its catalogue entry's
    group, every payload field of its kind, and a checksum over all of it."""
    for entry in CATALOGUE:
        kinds = store.kinds_of(entry.kind)
        assert kinds, f"catalogue entry {entry.name}: no record kind of group {entry.kind}"
        for path in entry.paths():
            record = store.read_record(path, kinds)
            assert record["schema"] == store.SCHEMA and set(store.ENVELOPE) - {"scores_sha256"} <= set(record)


@pytest.mark.parametrize(
    ("record", "kinds", "message"),
    [
        ([], None, "a list, not a record"),
        ({"schema": 2, "metrics": {}, "manifest": {}}, None, "schema 2, an older record layout than 3: migrate it"),
        ({"schema": 3, "kind": "nothing", "manifest": {}}, None, "unknown record kind 'nothing'; known: cell, "),
        ({"schema": 3, "kind": "alignment", "manifest": {}, "curve": []}, None, "kind alignment without wall_seconds"),
        ({"schema": 3, "kind": "alignment", "manifest": {}, "curve": [], "wall_seconds": 1}, "cell", "kind alig"),
        ({"schema": 3, "kind": "cell", "manifest": {}, "metrics": {}}, None, "kind cell without a digest of arrays"),
    ],
)
def test_the_one_reader_names_what_is_wrong_with_an_envelope(tmp_path, record, kinds, message):
    path = tmp_path / "r.json"
    body = record if isinstance(record, list) else {**record, "checksum": store.record_checksum(record)}
    path.write_text(json.dumps(body))
    with pytest.raises(ValueError, match=message):
        store.read_record(path, kinds)
    path.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        store.read_record(path)


def test_the_envelope_migration_keeps_every_number_and_key(tmp_path):
    """tools/migrate_envelope.py on a record in the old layout: the same payload, spec and key, the new envelope,
    and a note; a record whose old checksum does not verify is refused."""
    sys.path.insert(0, str(PUBLISHED.parents[1] / "tools"))
    import migrate_envelope

    new = json.loads((PUBLISHED / "cpu-small" / "ptb" / "lora-r8-s0.json").read_text())
    old = {k: v for k, v in new.items() if k not in ("kind", "checksum")}
    old["manifest"] = {k: v for k, v in old["manifest"].items() if k != "envelope_migration"}
    old["schema"] = 2
    old["checksum"] = store.record_checksum(old)
    path = tmp_path / "lora-r8-s0.json"
    path.write_text(json.dumps(old))
    assert migrate_envelope.migrate(path) and not migrate_envelope.migrate(path)  # once
    migrated = store.read_record(path, "cell")
    assert migrated["manifest"]["envelope_migration"]["from_checksum"] == old["checksum"]
    assert {k: v for k, v in migrated.items() if k not in ("schema", "kind", "checksum", "manifest")} == {
        k: v for k, v in old.items() if k not in ("schema", "checksum", "manifest")
    }
    assert (
        migrated["manifest"]["key"] == old["manifest"]["key"]
        and migrated["manifest"]["spec"] == old["manifest"]["spec"]
    )
    path.write_text(json.dumps({**old, "metrics": {}}))
    with pytest.raises(SystemExit, match="its checksum does not verify"):
        migrate_envelope.migrate(path)
