import json

import pytest

from lorapriv_utils import ledger
from lorapriv_utils.montecarlo import Estimate


def _claim(checks, claim_id="X-1", **kw):
    fields = dict(
        claim_id=claim_id,
        paper="A",
        where="eq. 1",
        statement="a claim",
        scale="test",
        chapter="notebooks/appendix_a_moments",
        checks=checks,
    )
    fields.update(kw)
    return ledger.Claim(**fields)


def test_check_close():
    assert ledger.check_close("x", 1.0 + 1e-12, 1.0).passed
    failed = ledger.check_close("x", 1.1, 1.0, rtol=0.05)
    assert not failed.passed and "rel. error 1.0e-01" in failed.detail
    assert "rel. error < 1e-12" in ledger.check_close("y", 2.0, 2.0).detail


def test_check_estimate_uses_the_z_score():
    est = Estimate(mean=10.0, stderr=1.0, n=1000)
    assert ledger.check_estimate("m", est, 13.0).passed
    bad = ledger.check_estimate("m", est, 15.0)
    assert not bad.passed and "z = -5.00" in bad.detail


def test_check_bound_both_directions():
    assert ledger.check_bound("b", 1.0, 2.0).passed
    assert not ledger.check_bound("b", 3.0, 2.0).passed
    assert ledger.check_bound("b", 3.0, 2.0, direction=">=").passed
    with pytest.raises(ValueError, match="direction"):
        ledger.check_bound("b", 1.0, 2.0, direction="<")


def test_check_role_is_validated():
    with pytest.raises(ValueError, match="role"):
        ledger.check_close("x", 1.0, 1.0, role="optional")


def test_verdicts_follow_from_checks():
    ok = ledger.check_close("ok", 1.0, 1.0)
    bad = ledger.check_close("bad", 2.0, 1.0)
    caveat_bad = ledger.check_close("caveat", 2.0, 1.0, role="caveat")
    assert ledger.verdict_from([]) == "not testable here"
    assert ledger.verdict_from([ok]) == "holds"
    assert ledger.verdict_from([ok, caveat_bad]) == "qualified"
    assert ledger.verdict_from([bad, caveat_bad]) == "fails"
    assert set(ledger.VERDICTS) == {"holds", "fails", "qualified", "not testable here"}


def test_claim_validation():
    with pytest.raises(ValueError, match="paper"):
        _claim([], paper="C")
    with pytest.raises(ValueError, match="non-empty"):
        _claim([], statement="")


def test_save_and_load_round_trip(tmp_path):
    claims = [
        _claim([ledger.check_close("ok", 1.0, 1.0)], "A-2"),
        _claim([ledger.check_close("bad", 3.0, 1.0)], "A-1", note="because"),
    ]
    path = ledger.save_claims("chapter_one", claims, tmp_path)
    assert path == tmp_path / "chapter_one.json"
    assert [p.name for p in tmp_path.iterdir()] == ["chapter_one.json"]  # no temporary file left
    loaded = ledger.load_ledger(tmp_path)
    assert [c.claim_id for c in loaded] == ["A-1", "A-2"]
    assert loaded[0].verdict == "fails" and loaded[0].note == "because"
    first = path.read_bytes()
    ledger.save_claims("chapter_one", claims, tmp_path)
    assert path.read_bytes() == first


def test_stored_numbers_are_rounded(tmp_path):
    ledger.save_claims("c", [_claim([ledger.check_close("x", 1 / 3, 1 / 3)])], tmp_path)
    record = json.loads((tmp_path / "c.json").read_text())[0]
    assert record["checks"][0]["measured"] == 0.333333


def test_a_hand_edited_verdict_is_refused(tmp_path):
    ledger.save_claims("c", [_claim([ledger.check_close("bad", 3.0, 1.0)])], tmp_path)
    path = tmp_path / "c.json"
    records = json.loads(path.read_text())
    records[0]["verdict"] = "holds"
    path.write_text(json.dumps(records))
    with pytest.raises(ValueError, match="does not follow from its checks"):
        ledger.load_ledger(tmp_path)


def test_corrupt_ledger_file_is_reported(tmp_path):
    (tmp_path / "c.json").write_text("[{")
    with pytest.raises(ValueError, match="not valid JSON"):
        ledger.load_ledger(tmp_path)


def test_save_rejects_duplicates_and_bad_keys(tmp_path):
    claim = _claim([])
    with pytest.raises(ValueError, match="duplicate"):
        ledger.save_claims("c", [claim, claim], tmp_path)
    with pytest.raises(ValueError, match="chapter_key"):
        ledger.save_claims("../evil", [claim], tmp_path)


def test_ledger_dir_from_env_and_from_the_book_root(tmp_path, monkeypatch):
    monkeypatch.setenv(ledger.LEDGER_ENV_VAR, str(tmp_path / "custom"))
    assert ledger.ledger_dir() == tmp_path / "custom"
    monkeypatch.delenv(ledger.LEDGER_ENV_VAR)
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    (tmp_path / "notebooks").mkdir()
    assert ledger.ledger_dir(tmp_path / "notebooks") == tmp_path.resolve() / "ledger"


def test_ledger_dir_outside_a_book_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv(ledger.LEDGER_ENV_VAR, raising=False)
    with pytest.raises(FileNotFoundError, match=ledger.LEDGER_ENV_VAR):
        ledger.ledger_dir(tmp_path)


def test_claims_markdown():
    text = ledger.claims_markdown([_claim([ledger.check_close("ok", 1.0, 1.0)], "A-9")])
    assert "| A-9 | eq. 1 | **holds** | 1/1 |" in text
