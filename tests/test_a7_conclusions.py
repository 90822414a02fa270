"""Chapter a7_conclusions (paper A, section 7): concluding claims judged by the checks of the claims they
summarise; the verdict must follow the sources, and a reading that no longer matches them must say so."""

import pytest
from conftest import registered

from lorapriv_utils import ledger
from lorapriv_utils.chapters import a7_conclusions as a7
from lorapriv_utils.ledger import Check, Claim


def _source_results(failing: set[tuple[str, str]] = frozenset(), scale: str = "cpu-small") -> dict[str, list[Claim]]:
    """Every source claim of the readings with one check per pattern and role it is read with; ``failing``
    holds the (source, role) pairs whose checks fail."""
    wanted: dict[str, dict[tuple[str, str], None]] = {}
    for parts in a7.READINGS.values():
        for part in parts:
            for role in part.source_roles:
                for pattern in part.contains or ("a check",):
                    wanted.setdefault(part.source, {})[(pattern, role)] = None
    claims = []
    for source, keys in wanted.items():
        checks = [
            Check(f"{pattern} ({role})", 1.0, 2.0, (source, role) not in failing, "measured <= claimed?", role)
            for pattern, role in keys
        ]
        checks.append(Check("an instrument", 0.0, 0.0, True, "", "instrument"))  # never carried
        claims.append(Claim(source, scale, checks))
    return {"sources": claims}


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


def test_roles_are_the_readings_not_the_sources():
    # A-6.attribution's comparisons with full fine-tuning (its core and its caveats) are the core of informal
    # privacy: their failure fails the conclusion
    assert _verdicts(_source_results({("A-6.attribution", "caveat")}))["A-7.informal-privacy"] == "fails"
    # A-2.eq9's core checks only qualify the approximation: their failure does not fail it
    assert _verdicts(_source_results({("A-2.eq9", "core")}))["A-7.approximates"] == "qualified"
    # a source read twice (core and caveat parts) contributes each check once per part
    claim = next(c for c in a7.claims(_source_results(), "cpu-small") if c.claim_id == "A-7.approximates")
    assert len({c.name for c in claim.checks}) == len(claim.checks)


def test_carried_checks_keep_their_numbers_and_name_their_source():
    results = _source_results()
    claim = next(c for c in a7.claims(results, "cpu-small") if c.claim_id == "A-7.informal-privacy")
    assert all(c.role in ledger.EVIDENCE_ROLES for c in claim.checks)  # instruments stay at home
    first = claim.checks[0]
    assert first.name.startswith("A-6.attribution: ") and (first.measured, first.reference) == (1.0, 2.0)
    assert "carried here, 2 of 2 core checks pass" in claim.summary  # its core and its caveats, by name
    frame = a7.parts_frame(results)
    assert len(frame) == sum(len(p) for p in a7.READINGS.values())
    parts = [p for ps in a7.READINGS.values() for p in ps]
    nouns = {"core": "core checks", "caveat": "caveats"}
    carried = [len(p.source_roles) * len(p.contains or (1,)) for p in parts]
    expected = [f"{n} of {n} {nouns[p.role]} pass" for n, p in zip(carried, parts, strict=True)]
    assert frame["checks carried here, passed"].tolist() == expected
    failing = _source_results({("A-3.1-normal", "core")})
    approx = next(c for c in a7.claims(failing, "cpu-small") if c.claim_id == "A-7.approximates")
    table = a7.failed_checks(approx)
    assert table["check"].tolist() == ["A-3.1-normal: a check (core)"]


def test_the_utility_part_carries_lora_s_own_checks_not_the_frozen_embedding_control():
    """A-6.lora's caveats named as its chapter names them: LoRA's perplexity ratio is carried as 'the utility cost
    is slight'; the control (full fine-tuning with the embeddings frozen), whose name also says 'PPL at most', is not,
    so its failure neither qualifies the conclusion nor counts."""
    lora = "cpu-small, ptb, r=8: PPL at most 1.25 times full's (a slight drop)"
    control = (
        "cpu-small, ptb: full fine-tuning with the embeddings frozen reaches PPL at most 1.25 times full's (the "
        "base's embeddings are not what limits LoRA's utility here)"
    )
    results = _source_results()
    for claim in results["sources"]:
        if claim.claim_id == "A-6.lora":
            claim.checks += [
                Check(lora, 1.1, 1.25, True, "measured <= claimed?", "caveat"),
                Check(control, 6.2, 1.25, False, "measured <= claimed?", "caveat"),
            ]
    informal = next(c for c in a7.claims(results, "cpu-small") if c.claim_id == "A-7.informal-privacy")
    names = [c.name for c in informal.checks]
    assert f"A-6.lora: {lora}" in names and not any("embeddings frozen" in n for n in names)
    assert informal.verdict == "holds"


def test_missing_or_renamed_sources_are_clear_errors():
    results = _source_results()
    dropped = {"sources": [c for c in results["sources"] if c.claim_id != "A-5.1-z"]}
    with pytest.raises(ValueError, match="A-5.1-z.*execute their chapters"):
        a7.claims(dropped, "cpu-small")
    one_pattern_gone = {
        "sources": [
            Claim(c.claim_id, c.scale, [k for k in c.checks if "recovers" not in k.name])
            if c.claim_id == "A-6.lora"
            else c
            for c in results["sources"]
        ]
    }
    with pytest.raises(ValueError, match="recovers at least half"):
        a7.claims(one_pattern_gone, "cpu-small")
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


def test_a_ledger_at_another_scale_is_refused():
    with pytest.raises(ValueError, match="cpu-large.*one scale"):
        a7.claims(_source_results(scale="cpu-large"), "cpu-small")


def test_the_committed_ledger_gives_the_committed_claims():
    results = ledger.load_results()
    stored = {c.claim_id: c for c in results[a7.KEY]}
    fresh = {c.claim_id: c for c in a7.claims(results, "cpu-small")}
    assert set(fresh) == set(stored)
    for claim_id, claim in fresh.items():  # the page was executed on the ledger as it stands, check by check
        assert [c.name for c in claim.checks] == [c.name for c in stored[claim_id].checks]
        assert claim.verdict == stored[claim_id].verdict
    # every pattern of every reading matches a real check of the committed ledger (carried_checks raises if not)
    sources = {c.claim_id: c for key, chapter in results.items() if key != a7.KEY for c in chapter}
    for parts in a7.READINGS.values():
        for part in parts:  # a source with no evidence (not testable here) carries nothing, by design
            assert a7.carried_checks(part, sources[part.source]) or not sources[part.source].evidence


def test_a_source_without_evidence_carries_nothing_and_says_so():
    """A source claim that is not testable here (only instrument checks) neither passes nor fails its part."""
    results = _source_results()
    sources = results["sources"]
    k = next(i for i, c in enumerate(sources) if c.claim_id == "A-5.1-equivalence")
    sources[k] = Claim("A-5.1-equivalence", "cpu-small", [Check("an instrument", 0.0, 0.0, True, "", "instrument")])
    assert sources[k].verdict == "not testable here"
    claims = {c.claim_id: c for c in a7.claims(results, "cpu-small")}
    assert {c.verdict for c in claims.values()} == {"holds"}
    assert not any(c.name.startswith("A-5.1-equivalence") for c in claims["A-7.approximates"].checks)
    assert "(A-5.1-equivalence, not testable here): no evidence to carry" in claims["A-7.approximates"].summary


def test_a_source_decided_at_another_scale_carries_that_scales_checks_as_core_and_the_rest_as_caveats():
    results = _source_results()
    sources = results["sources"]
    attribution = next(i for i, c in enumerate(sources) if c.claim_id == "A-6.attribution")
    pattern = "AUC LoRA - full below 0"
    sources[attribution] = Claim(
        "A-6.attribution",
        "cpu-small",
        [
            Check(f"cpu-pretrained, enron: {pattern}", -0.1, 0.0, True, "measured <= 0?", "core"),
            Check(f"cpu-small, ptb: {pattern}", 0.1, 0.0, False, "measured <= 0?", "caveat"),
        ],
        decided_at="cpu-pretrained",
    )
    claim = next(c for c in a7.claims(results, "cpu-small") if c.claim_id == "A-7.informal-privacy")
    carried = {c.name: c.role for c in claim.checks if c.name.startswith("A-6.attribution: ")}
    assert carried == {
        f"A-6.attribution: cpu-pretrained, enron: {pattern}": "core",
        f"A-6.attribution: cpu-small, ptb: {pattern}": "caveat",
    }
    assert claim.decided_at == "cpu-pretrained" and claim.verdict == "qualified"  # the toy scale's failure qualifies
    approximates = next(c for c in a7.claims(results, "cpu-small") if c.claim_id == "A-7.approximates")
    assert approximates.decided_at is None


def test_carried_counts_keep_a_failing_core_check_apart_from_passing_caveats():
    core = [ledger.check_bound("core fails", 1.0, 0.0), ledger.check_bound("core passes", -1.0, 0.0)]
    caveats = [ledger.check_bound(f"caveat {i}", -1.0, 0.0, role="caveat") for i in range(4)]
    assert a7.carried_counts(core + caveats) == "1 of 2 core checks pass, 4 of 4 caveats pass"
    assert a7.carried_counts(caveats) == "4 of 4 caveats pass"
    unsure = ledger.check_bound("unsure", 0.1, 0.0, interval=(-0.1, 0.3))
    assert a7.carried_counts([unsure]) == "0 of 1 core checks pass (1 unresolved)"


def test_informal_privacy_carries_the_absolute_reading_and_its_sources_plan_version():
    """The analysis plan's absolute reading (version 1) of informal privacy: what an attacker gets from LoRA r = 8,
    carried from A-6.lora's caveats as core checks of a sensitivity reading beside the relative verdict; the claim
    names the plan version of its core sources."""
    results = _source_results()
    sources = {c.claim_id: c for c in results["sources"]}
    lora = sources["A-6.lora"]
    attacker = Check(
        f"cpu-pretrained, enron, r=8: TPR at 5% nominal FPR at most twice that FPR ({ledger.ATTACKER})",
        0.4,
        0.1,
        False,
        "measured <= claimed?",
        "caveat",
        (0.3, 0.5),
    )
    sources["A-6.lora"] = Claim("A-6.lora", "cpu-small", [*lora.checks, attacker], plan_version=0)
    sources["A-6.attribution"] = Claim(
        "A-6.attribution", "cpu-small", sources["A-6.attribution"].checks, plan_version=0
    )
    claims = {c.claim_id: c for c in a7.claims({"sources": list(sources.values())}, "cpu-small")}
    claim = claims["A-7.informal-privacy"]
    assert claim.plan_version == 0 and claims["A-7.approximates"].plan_version is None
    (reading,) = claim.readings
    assert reading.plan_version == 1 and reading.verdict == "fails" and claim.verdict == "holds"
    carried = [c for c in reading.checks if ledger.ATTACKER in c.name]
    assert [c.role for c in carried] == ["core"] and claim.moved_by == [reading]
    assert not any(ledger.ATTACKER in c.name for c in claim.checks if c.role == "core")
    # without the attacker's checks (no pretrained intervals), no absolute reading: never a reading of nothing
    assert a7.claims(_source_results(), "cpu-small")[1].readings == []
