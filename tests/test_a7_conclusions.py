"""Chapter a7_conclusions (paper A, section 7): concluding claims judged by the checks of the claims they
summarise; the verdict must follow the sources, and a reading that no longer matches them must say so."""

import pytest
from conftest import registered

from lorapriv_utils import ledger
from lorapriv_utils.chapters import a7_conclusions as a7
from lorapriv_utils.ledger import Check, Claim


def _source_results(failing: set[tuple[str, str]] = frozenset()) -> dict[str, list[Claim]]:
    """Every source claim of the readings with one matching check per part and role; ``failing`` holds
    the (source, role) pairs whose check fails."""
    claims = {}
    for parts in a7.READINGS.values():
        for part in parts:
            name = part.contains[0] if part.contains else "a check"
            checks = claims.setdefault(part.source, [])
            for role in part.source_roles:
                passed = (part.source, role) not in failing
                checks.append(Check(f"{name} ({role})", 1.0, 2.0, passed, "measured <= claimed?", role))
            checks.append(Check("an instrument", 0.0, 0.0, True, "", "instrument"))  # never carried
    return {"sources": [Claim(source, "cpu-small", checks) for source, checks in claims.items()]}


def _verdicts(results) -> dict[str, str]:
    return {c.claim_id: c.verdict for c in a7.claims(results, "cpu-small")}


def test_the_readings_cover_the_registered_claims():
    assert set(a7.READINGS) == registered(a7.KEY)
    assert all(p.role in ledger.EVIDENCE_ROLES for parts in a7.READINGS.values() for p in parts)


def test_verdicts_follow_the_sources():
    assert set(_verdicts(_source_results()).values()) == {"holds"}
    core = next(p for p in a7.READINGS["A-7.approximates"] if p.role == "core")
    caveat = next(p for p in a7.READINGS["A-7.approximates"] if p.role == "caveat")
    assert _verdicts(_source_results({(core.source, "core")}))["A-7.approximates"] == "fails"
    # a qualifying part carries its source's caveats: their failure qualifies, it does not fail
    assert _verdicts(_source_results({(caveat.source, "caveat")}))["A-7.approximates"] == "qualified"
    informal = next(p for p in a7.READINGS["A-7.informal-privacy"] if p.role == "caveat")
    failed = _verdicts(_source_results({(informal.source, informal.source_roles[0])}))
    assert failed == {"A-7.approximates": "holds", "A-7.informal-privacy": "qualified"}


def test_carried_checks_keep_their_numbers_and_name_their_source():
    results = _source_results()
    claim = next(c for c in a7.claims(results, "cpu-small") if c.claim_id == "A-7.informal-privacy")
    assert all(c.role in ledger.EVIDENCE_ROLES for c in claim.checks)  # instruments stay at home
    first = claim.checks[0]
    assert first.name.startswith("A-6.attribution: ") and (first.measured, first.reference) == (1.0, 2.0)
    assert "1 of 1 checks pass" in claim.summary
    frame = a7.parts_frame(results)
    assert len(frame) == sum(len(p) for p in a7.READINGS.values())
    both_roles = frame["source"].isin([p.source for ps in a7.READINGS.values() for p in ps if len(p.source_roles) == 2])
    assert set(frame.loc[both_roles, "checks passed"]) == {"2 of 2"} and set(
        frame.loc[~both_roles, "checks passed"]
    ) == {"1 of 1"}
    failing = _source_results({("A-3.1-normal", "core")})
    approx = next(c for c in a7.claims(failing, "cpu-small") if c.claim_id == "A-7.approximates")
    table = a7.failed_checks(approx)
    assert table["check"].tolist() == ["A-3.1-normal: a check (core)"]


def test_missing_or_renamed_sources_are_clear_errors():
    results = _source_results()
    dropped = {"sources": [c for c in results["sources"] if c.claim_id != "A-5.1-z"]}
    with pytest.raises(ValueError, match="A-5.1-z.*execute their chapters"):
        a7.claims(dropped, "cpu-small")
    renamed = {
        "sources": [
            Claim(c.claim_id, c.scale, [Check("renamed", 1, 2, True, "", "caveat")])
            if c.claim_id == "A-6.attribution"
            else c
            for c in results["sources"]
        ]
    }
    with pytest.raises(ValueError, match="READINGS"):
        a7.claims(renamed, "cpu-small")


def test_the_committed_ledger_gives_the_committed_verdicts():
    results = ledger.load_results()
    stored = {c.claim_id: c.verdict for c in results[a7.KEY]}
    assert _verdicts(results) == stored  # the page was executed on the ledger as it stands
