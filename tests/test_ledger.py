import dataclasses
import json
import re
from pathlib import Path

import pytest

from lorapriv_utils import ledger
from lorapriv_utils.theory.montecarlo import Estimate

REGISTER = """\
- id: X-1
  paper: A
  where: eq. 1
  chapter: a9_test
  statement: a claim with $x^2$
- id: X-2
  paper: A
  where: eq. 2
  chapter: a9_test
  statement: >-
    a claim written
    over two lines
- id: X-3
  paper: B
  where: Table 9
  chapter: b9_other
  statement: a claim that no run here can settle
  untestable: needs data we do not have
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / ledger.REGISTER_FILE).write_text(REGISTER)
    return tmp_path


def _claim(checks, claim_id="X-1", **kw):
    return ledger.Claim(claim_id=claim_id, scale="test", checks=checks, **kw)


def test_check_close_states_the_tolerance_it_applied():
    assert ledger.check_close("x", 1.0 + 1e-12, 1.0).passed
    failed = ledger.check_close("x", 1.1, 1.0, rtol=0.05)
    assert not failed.passed and "rel. error 0.1" in failed.detail
    assert "allowed |error| <= 0.05 (atol 0 + rtol 0.05" in failed.detail
    assert "rel. error < 1e-12" in ledger.check_close("y", 2.0, 2.0).detail
    zero = ledger.check_close("z", 0.003, 0.0, atol=0.01)
    assert zero.passed and "abs. error 0.003" in zero.detail and "allowed |error| <= 0.01" in zero.detail
    with pytest.raises(ValueError, match="tolerances"):
        ledger.check_close("x", 1.0, 1.0, rtol=-1)


def test_check_estimate_uses_the_z_score():
    est = Estimate(mean=10.0, stderr=1.0, n=1000)
    assert ledger.check_estimate("m", est, 13.0).passed
    bad = ledger.check_estimate("m", est, 15.0)
    assert not bad.passed and "z = -5.00" in bad.detail and "|z| <= 4" in bad.detail


def test_check_bound_both_directions():
    assert ledger.check_bound("b", 1.0, 2.0).passed
    assert not ledger.check_bound("b", 3.0, 2.0).passed
    assert ledger.check_bound("b", 3.0, 2.0, direction=">=").passed
    with pytest.raises(ValueError, match="direction"):
        ledger.check_bound("b", 1.0, 2.0, direction="<")
    assert ledger.check_bound("b", 1.0, 2.0).detail == "measured <= claimed? ratio 0.5"
    assert "inf" not in ledger.check_bound("b", -0.2, 0.0).detail  # no ratio to a bound of 0


def test_check_role_is_validated():
    with pytest.raises(ValueError, match="role"):
        ledger.check_close("x", 1.0, 1.0, role="optional")


def test_verdicts_follow_from_evidence_checks_only():
    ok = ledger.check_close("ok", 1.0, 1.0)
    bad = ledger.check_close("bad", 2.0, 1.0)
    caveat_bad = ledger.check_close("caveat", 2.0, 1.0, role="caveat")
    identity = ledger.check_close("identity", 1.0, 1.0, role="identity")
    instrument = ledger.check_close("instrument", 1.0, 1.0, role="instrument")
    assert ledger.verdict_from([]) == "not testable here"
    assert ledger.verdict_from([identity, instrument]) == "not testable here"  # no evidence at all
    assert ledger.verdict_from([ok, identity, instrument]) == "holds"
    assert ledger.verdict_from([ok, caveat_bad]) == "qualified"
    assert ledger.verdict_from([bad, caveat_bad]) == "fails"
    assert _claim([ok, identity, instrument]).evidence == [ok]


def test_a_check_whose_interval_holds_its_threshold_is_unresolved_and_never_fails_a_claim():
    """The same point estimate (an AUC gap of 0.03 where the claim needs 0.05) fails its claim when its interval
    excludes the threshold, and leaves the claim qualified when the interval contains it."""
    resolved = ledger.check_bound("gap", 0.03, 0.05, direction=">=", interval=(0.01, 0.045))
    noisy = ledger.check_bound("gap", 0.03, 0.05, direction=">=", interval=(-0.02, 0.08))
    assert not resolved.passed and resolved.outcome == "fails"
    assert not noisy.passed and noisy.outcome == "unresolved" and "unresolved when it contains 0.05" in noisy.detail
    ok = ledger.check_bound("ok", 1.0, 2.0)
    assert ledger.verdict_from([ok, resolved]) == "fails"
    assert ledger.verdict_from([ok, noisy]) == "unresolved"  # not failed on noise, nor held
    assert ledger.verdict_from([resolved, noisy]) == "fails"  # a resolved failure still decides
    # a passing point estimate whose interval reaches the threshold is unresolved too
    near = ledger.check_bound("near", 0.06, 0.05, direction=">=", interval=(0.04, 0.09))
    assert near.passed and near.outcome == "unresolved" and ledger.verdict_from([near]) == "unresolved"
    clear = ledger.check_bound("clear", 0.06, 0.05, direction=">=", interval=(0.055, 0.09))
    assert clear.outcome == "passes" and ledger.verdict_from([clear]) == "holds"
    # an unresolved caveat qualifies, as a failed one does
    assert ledger.verdict_from([clear, dataclasses.replace(noisy, role="caveat")]) == "qualified"
    assert ledger.outcome_counts([ok, noisy, resolved]) == "1 of 3, 1 unresolved"
    assert ledger.outcome_counts([ok]) == "1 of 1"
    assert ledger.outcome_counts([ok, noisy, resolved], "caveats") == "1 of 3 caveats pass (1 unresolved)"
    with pytest.raises(ValueError, match="low <= high"):
        ledger.check_bound("bad", 0.0, 1.0, interval=(0.2, 0.1))
    # the one rule, which chapters' counts of resolved comparisons use too: an interval that touches the
    # reference does not decide
    assert ledger.undecided((0.0, 0.3), 0.0) and ledger.undecided((-0.1, 0.1), 0.0)
    assert not ledger.undecided((0.001, 0.3), 0.0) and not ledger.undecided((-0.3, -0.001), 0.0)


def test_an_interval_survives_the_ledger_and_checks_without_one_are_stored_as_before(folder):
    noisy = ledger.check_bound("gap", 0.03, 0.05, direction=">=", interval=(-0.02, 0.08))
    plain = ledger.check_bound("ppl", 1.0, 2.0)
    assert "interval" not in plain.as_record() and noisy.as_record()["interval"] == (-0.02, 0.08)
    ledger.save_claims("a9_test", [_claim([noisy, plain])], folder)
    stored = json.loads((folder / "a9_test.json").read_text())
    assert [sorted(c) for c in stored[0]["checks"]][1] == sorted(
        ["name", "measured", "reference", "passed", "detail", "role"]
    )
    back = ledger.load_results(folder)["a9_test"][0]
    assert back.checks[0].interval == (-0.02, 0.08) and back.checks[0].outcome == "unresolved"
    assert back.verdict == "unresolved"


@pytest.mark.parametrize("role", ["instrument", "identity"])
def test_a_failing_instrument_or_identity_is_a_bug_not_a_verdict(role):
    broken = ledger.check_close("quadrature vs Monte Carlo", 2.0, 1.0, role=role)
    with pytest.raises(ledger.InstrumentError, match="not a finding"):
        _claim([ledger.check_close("ok", 1.0, 1.0), broken])


def test_register_is_read_in_order_with_folded_statements(folder):
    entries = ledger.load_register(folder)
    assert [e.claim_id for e in entries] == ["X-1", "X-2", "X-3"]
    assert entries[1].statement == "a claim written over two lines"
    assert entries[2].untestable == "needs data we do not have"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (REGISTER + REGISTER, "duplicate claim ids"),
        ("- id: Y\n  paper: C\n  where: w\n  chapter: a1_x\n  statement: s\n", "paper must be"),
        ("- id: Y\n  paper: A\n  where: w\n  chapter: notebooks/x\n  statement: s\n", "not a chapter key"),
        ("- id: Y\n  paper: A\n  where: w\n  chapter: a1_x\n", "missing fields \\['statement'\\]"),
        ("- id: Y\n  paper: A\n  where: w\n  chapter: a1_x\n  statement: s\n  verdict: holds\n", "unknown fields"),
    ],
)
def test_a_malformed_register_names_the_entry(tmp_path, text, message):
    (tmp_path / ledger.REGISTER_FILE).write_text(text)
    with pytest.raises(ValueError, match=message):
        ledger.load_register(tmp_path)


def test_a_missing_register_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="claims register"):
        ledger.load_register(tmp_path)


def test_save_and_load_round_trip(folder):
    claims = [
        _claim([ledger.check_close("ok", 1.0, 1.0)], "X-2"),
        _claim([ledger.check_close("bad", 3.0, 1.0)], "X-1", note="because"),
    ]
    path = ledger.save_claims("a9_test", claims, folder)
    assert path == folder / "a9_test.json"
    assert sorted(p.name for p in folder.iterdir()) == ["a9_test.json", ledger.REGISTER_FILE]  # no temporary file
    rows = ledger.load_ledger(folder)
    assert [r.entry.claim_id for r in rows] == ["X-1", "X-2", "X-3"]  # register order
    assert [r.status for r in rows] == ["fails", "holds", "not testable here"]
    assert rows[0].result.note == "because"
    assert ledger.tally(rows) == {
        "holds": 1,
        "fails": 1,
        "unresolved": 0,
        "qualified": 0,
        "pending": 0,
        "not testable here": 1,
    }
    first = path.read_bytes()
    ledger.save_claims("a9_test", claims, folder)
    assert path.read_bytes() == first


def test_an_untested_claim_is_pending(folder):
    ledger.save_claims("a9_test", [_claim([ledger.check_close("ok", 1.0, 1.0)], "X-1")], folder)
    assert [r.status for r in ledger.load_ledger(folder)] == ["holds", "pending", "not testable here"]


def test_save_requires_the_claim_in_the_register_under_its_chapter(folder):
    with pytest.raises(ValueError, match="not in the register"):
        ledger.save_claims("a9_test", [_claim([], "X-99")], folder)
    with pytest.raises(ValueError, match="registered to chapter 'b9_other'"):
        ledger.save_claims("a9_test", [_claim([], "X-3")], folder)


def test_a_result_file_for_the_wrong_chapter_is_refused(folder):
    path = ledger.save_claims("a9_test", [_claim([ledger.check_close("ok", 1.0, 1.0)])], folder)
    path.rename(folder / "b9_other.json")
    with pytest.raises(ValueError, match="registered to chapter"):
        ledger.load_ledger(folder)


def test_stored_numbers_are_rounded(folder):
    ledger.save_claims("a9_test", [_claim([ledger.check_close("x", 1 / 3, 1 / 3)])], folder)
    record = json.loads((folder / "a9_test.json").read_text())[0]
    assert record["checks"][0]["measured"] == 0.333333
    assert set(record) == {"claim_id", "scale", "checks", "summary", "note", "verdict"}  # no restated statement


def test_a_hand_edited_verdict_is_refused(folder):
    ledger.save_claims("a9_test", [_claim([ledger.check_close("bad", 3.0, 1.0)])], folder)
    path = folder / "a9_test.json"
    records = json.loads(path.read_text())
    records[0]["verdict"] = "holds"
    path.write_text(json.dumps(records))
    with pytest.raises(ValueError, match="does not follow from its checks"):
        ledger.load_ledger(folder)


def test_corrupt_ledger_file_is_reported(folder):
    (folder / "a9_test.json").write_text("[{")
    with pytest.raises(ValueError, match="not valid JSON"):
        ledger.load_ledger(folder)


def test_save_rejects_duplicates_and_bad_keys(folder):
    claim = _claim([])
    with pytest.raises(ValueError, match="duplicate"):
        ledger.save_claims("a9_test", [claim, claim], folder)
    with pytest.raises(ValueError, match="chapter_key"):
        ledger.save_claims("../evil", [claim], folder)
    with pytest.raises(ValueError, match="non-empty"):
        _claim([], "")


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


def test_claims_frame_counts_evidence_and_takes_where_from_the_register(folder):
    checks = [ledger.check_close("ok", 1.0, 1.0), ledger.check_close("id", 1.0, 1.0, role="identity")]
    frame = ledger.claims_frame([_claim(checks, "X-1")], folder)
    row = frame.loc["X-1"]
    assert row["where"] == "eq. 1" and row["verdict"] == "holds"
    assert row["evidence checks passed"] == "1 of 1" and row["other checks (instruments, identities)"] == 1
    table = ledger.claims_table([_claim(checks, "X-1")], folder)
    assert list(table.frame.columns)[:3] == ["claim", "where", "verdict"] and table.caption.startswith("This chapter's")


README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_s_verdict_words_are_the_ledger_s():
    """The README's typed summary follows the ledger: each chapter row's verdicts in parentheses are among its
    chapter's verdicts, and paper A's two concluding claims carry the verdicts a7's notebook computed."""
    text = README.read_text(encoding="utf-8")
    results = ledger.load_results(README.parent / "ledger")
    verdicts = {key: {c.verdict for c in claims} for key, claims in results.items()}
    rows = re.findall(r"^\| `(\w+)` \|(.*)$", text, flags=re.MULTILINE)
    checked = [key for key, _ in rows if key in verdicts]
    assert {"a6_membership", "b3_noisy_variants"} <= set(checked)
    for key, row in rows:
        typed = set(re.findall(r"\((holds|fails|unresolved|qualified)\b", row))
        assert typed <= verdicts.get(key, typed), f"README's row for {key} says {typed}; its ledger: {verdicts[key]}"
    by_id = {c.claim_id: c.verdict for claims in results.values() for c in claims}
    for claim_id, quoted in (
        ("A-7.approximates", '"LoRA approximates DP-SGD with a fixed noise scale"'),
        ("A-7.informal-privacy", '"informal privacy, only slightly affecting utility"'),
    ):
        said = re.search(re.escape(quoted) + r"\s+(?:is\s+)?(holds|fails|unresolved|qualified)", text)
        assert said and said.group(1) == by_id[claim_id], f"README's verdict of {claim_id} is not the ledger's"


def test_holm_rejects_step_down_and_stops_at_the_first_it_cannot():
    from lorapriv_utils.ledger import holm

    assert holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]  # 0.005 < .05/4, .01 < .05/3, .03 > .05/2
    assert holm([0.01, 0.02, 0.03]) == [True, True, True]
    assert holm([0.2, float("nan"), 0.001]) == [False, False, True]
    assert holm([]) == []
    with pytest.raises(ValueError, match="level"):
        holm([0.01], level=1.5)


def test_a_claim_s_core_checks_with_p_values_are_decided_together():
    from lorapriv_utils.ledger import Check, family_outcomes, verdict_from

    def check(name, p_pass, p_fail, passed=True):
        return Check(name, 0.0, 0.0, passed, "", "core", (-1.0, 1.0) if p_pass > 0.05 else None, (p_pass, p_fail))

    # each weak one would be resolved alone at 0.05, but not together with the rest: Holm compares the smaller of
    # the two with 0.05 / 2 and stops there
    checks = [check(f"c{k}", 0.004, 0.99) for k in range(10)] + [check(f"weak{k}", 0.03, 0.97) for k in range(2)]
    outcomes = family_outcomes(checks)
    assert outcomes["weak0"] == outcomes["weak1"] == "unresolved" and outcomes["c0"] == "passes"
    assert verdict_from(checks) == "unresolved"
    failing = [check(f"c{k}", 0.004, 0.99) for k in range(3)] + [check("bad", 0.99, 0.001, passed=False)]
    assert family_outcomes(failing)["bad"] == "fails" and verdict_from(failing) == "fails"
    assert verdict_from([check(f"c{k}", 0.001, 0.99) for k in range(3)]) == "holds"


def test_tail_shares_are_bootstrap_p_values_that_are_never_zero():
    import numpy as np

    from lorapriv_utils.mia.attacks.resampling import tail_shares

    draws = np.linspace(-1, 1, 199)
    above, below = tail_shares(draws, 2.0)
    assert above == 1 / 200 and below == 1.0
    assert tail_shares(draws, 0.0) == (101 / 200, 101 / 200)  # the draw at 0 counts on both sides
    assert all(np.isnan(tail_shares([1.0, float("nan")], 0.0)))


def test_a_power_check_that_does_not_pass_makes_the_claim_not_testable_here():
    from lorapriv_utils.ledger import Check, Claim, verdict_from

    core = Check("the claim's comparison", 0.1, 0.0, True, "", "core")
    learned = Check("the models learned their task", 0.9, 0.5, True, "", "power")
    barely = Check("the models learned their task", 0.1, 0.5, False, "", "power")
    assert verdict_from([core, learned]) == "holds"
    assert verdict_from([core, barely]) == "not testable here"  # never fails, holds or is qualified on no power
    assert Claim("X-1", "test", [core, barely]).verdict == "not testable here"  # a failed power check is no bug
    assert not barely.is_evidence


def test_a_sensitivity_reading_keeps_its_derived_verdict_and_shows_where_it_moves_the_primary(folder):
    """A claim of the analysis plan carries its plan version and its sensitivity readings through the ledger; a
    reading's verdict follows from its own checks (an edited one is refused); only readings that move the verdict
    are shown beside it; the records of claims without readings are stored as before."""
    resolved = ledger.check_bound("gap", 0.1, 0.05, interval=(0.07, 0.12))  # fails, resolved
    noisy = ledger.check_bound("gap", 0.1, 0.05, interval=(0.02, 0.12))  # unresolved
    same = ledger.Reading("another threshold", [resolved], plan_version=1)
    moved = ledger.Reading("the pre-run design", [noisy], plan_version=0)
    claim = _claim([resolved], plan_version=0, readings=[same, moved])
    assert claim.verdict == "fails" and claim.moved_by == [moved]
    assert ledger.sensitivity_text(claim) == "unresolved under the pre-run design"
    ledger.save_claims("a9_test", [claim, _claim([resolved], claim_id="X-2")], folder)
    stored = json.loads((folder / "a9_test.json").read_text())
    assert stored[0]["plan_version"] == 0 and [r["verdict"] for r in stored[0]["readings"]] == ["fails", "unresolved"]
    assert "readings" not in stored[1] and "plan_version" not in stored[1]
    back = ledger.load_results(folder)["a9_test"][0]
    assert back.readings[1].checks[0].interval == (0.02, 0.12) and ledger.sensitivity_text(
        back
    ) == ledger.sensitivity_text(claim)
    stored[0]["readings"][1]["verdict"] = "holds"
    (folder / "a9_test.json").write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="reading 'the pre-run design': stored verdict 'holds'"):
        ledger.load_results(folder)
    with pytest.raises(ValueError, match="share a name"):
        _claim([resolved], readings=[same, same])
    with pytest.raises(ValueError, match="follow 'under'"):
        ledger.Reading("", [resolved])


def test_a_claim_s_checks_read_as_table_rows_with_the_outcome_the_verdict_uses():
    """Evidence first, numbers to four significant digits, the interval where there is one, and the outcome under
    Holm where the core checks carry p-values: a check whose own interval is resolved can be unresolved in its
    family."""
    Check = ledger.Check
    checks = [
        Check("identity", 1.0, 1.0, True, "", role="identity"),
        Check("a", 0.123456, 0.02, True, "", interval=(0.05, 0.2), p_values=(0.06, 1.0)),
        Check("b", 0.5, 0.02, True, "", interval=(0.3, 0.7), p_values=(0.001, 1.0)),
        Check("c", 0.01, 0.02, False, "", role="caveat"),
    ]
    rows = ledger.check_rows(checks)
    assert [r["check"] for r in rows] == ["a", "b", "c", "identity"]
    assert rows[0] == {
        "check": "a",
        "role": "core",
        "number": "0.1235",
        "interval": "[0.05, 0.2]",
        "threshold": "0.02",
        "outcome": "unresolved",  # its own interval passes it; Holm does not (0.06 > 0.05 at the second step)
    }
    assert checks[1].outcome == "passes"  # "a" alone
    assert rows[1]["outcome"] == "passes" and rows[2]["outcome"] == "fails"
    assert rows[3]["interval"] == "" and tuple(rows[0]) == ledger.CHECK_COLUMNS


def test_a_claim_s_evidence_counts_its_outcomes_by_role():
    Check = ledger.Check
    checks = [
        Check("a", 0.1, 0.02, True, "", interval=(0.05, 0.2), p_values=(0.06, 1.0)),
        Check("b", 0.5, 0.02, True, "", interval=(0.3, 0.7), p_values=(0.001, 1.0)),
        Check("c", 0.01, 0.02, False, "", role="caveat"),
        Check("d", 1.0, 1.0, True, "", role="identity"),
    ]
    assert ledger.evidence_counts(checks) == "core: 1 of 2 pass, 1 unresolved; caveats: 0 of 1 pass, 1 fail"
    assert ledger.evidence_counts(checks[3:]) == "no evidence checks"
