import re

from lorapriv_utils import provenance


def test_package_versions():
    assert provenance.package_version("numpy") != "unknown"
    assert provenance.package_version("no-such-package-lorapriv") == "unknown"
    assert set(provenance.package_versions()) == set(provenance.MANIFEST_PACKAGES)


def test_git_commit_is_a_hash_or_unknown():
    commit = provenance.git_commit()
    assert commit == "unknown" or re.fullmatch(r"[0-9a-f]{40}", commit)


def test_measured_on_names_the_machine_the_versions_and_the_commit():
    record = provenance.measured_on(("numpy",))
    assert set(record["versions"]) == {"numpy"} and record["git_commit"] == provenance.git_commit()
    assert {"python", "git_dirty", "cpu"} <= set(record) and record["cpu"]


def test_cpu_model_names_the_first_processor_by_vendor_family_and_model():
    info = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n\n"
    info += "processor\t: 1\nvendor_id\t: Other\n"
    assert provenance.cpu_model(info) == "AuthenticAMD 25 17 AMD EPYC"
    assert provenance.cpu_model("") == provenance.processor() and provenance.processor()


def test_measurement_main_writes_the_record_atomically(tmp_path):

    import pytest

    from lorapriv_utils.mia.experiments import producers
    from lorapriv_utils.mia.records.specs import measurement_spec
    from lorapriv_utils.scale import current_scale
    from lorapriv_utils.store import key_of, read_record

    path = tmp_path / "deep" / "m.json"
    producers.measurement_main([str(path)], "some.module", lambda: {"curve": [1], "wall_seconds": 0.5}, "alignment")
    record = read_record(path, "alignment")  # its envelope and checksum verify
    assert record["curve"] == [1] and record["wall_seconds"] == 0.5
    assert record["manifest"]["key"] == key_of(measurement_spec("alignment", current_scale()))
    with pytest.raises(SystemExit, match="usage: python -m some.module PATH.json"):
        producers.measurement_main([], "some.module", dict, "alignment")


def test_git_dirty_ignores_the_results_folder(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True, capture_output=True
        )

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text("1")
    (tmp_path / "code.py").write_text("x = 1")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "start")
    assert provenance.git_dirty(tmp_path) is False
    (tmp_path / "results" / "r.json").write_text("2")  # a run rewriting its own results
    assert provenance.git_dirty(tmp_path) is False
    (tmp_path / "code.py").write_text("x = 2")
    assert provenance.git_dirty(tmp_path) is True
    assert provenance.git_dirty(tmp_path / "results") is True  # the whole checkout counts, wherever it is asked


def test_a_run_names_the_code_it_started_with_beside_the_checkout_at_writing(monkeypatch):
    """A record written after the checkout moved on (a commit made while a long run went on) names both: the
    commit its process started from and the one the checkout was at when the record was written."""
    from lorapriv_utils import provenance

    provenance.code_at_start.cache_clear()
    monkeypatch.setattr(provenance, "git_commit", lambda: "started")
    monkeypatch.setattr(provenance, "git_dirty", lambda root=None: False)
    assert provenance.code_at_start() == {"commit": "started", "dirty": False}
    monkeypatch.setattr(provenance, "git_commit", lambda: "moved on")
    assert provenance.code_at_start() == {"commit": "started", "dirty": False}  # the first call's, kept
    provenance.code_at_start.cache_clear()
