"""Paper A, section 7: its two concluding claims, judged by the checks of the claims they summarise.

Section 7 measures nothing new: it restates sections 3 to 6 in broader words.  So its verdicts are
not computed from new numbers but from the evidence already in the ledger.  Each concluding claim is
read as a conjunction of earlier ones (:data:`READINGS`): every check whose name matches a pattern of
a source claim is carried over, with the role the reading gives it, its name prefixed by the source
claim, and its measured value, reference and outcome unchanged.  The verdict then follows the ledger's
usual rule (:func:`lorapriv_utils.ledger.verdict_from`), and it moves when a source chapter's
numbers move.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from ..ledger import ATTACKER, EVIDENCE_ROLES, Check, Claim, Reading, outcome_counts

KEY = "a7_conclusions"
EVIDENCE = tuple(EVIDENCE_ROLES)  # a qualifying part carries its source's caveats too


@dataclass(frozen=True)
class Part:
    """Checks of one source claim that stand for one part of a concluding claim.

    ``source``: the claim whose checks are carried over; ``contains``: the checks kept are those whose name
    contains one of these strings (empty: every evidence check); ``source_roles``: the roles they had
    there; ``role``: the role they take here; ``meaning``: what the part says, in the concluding claim's
    words.
    """

    source: str
    role: str
    meaning: str
    contains: tuple[str, ...] = ()
    source_roles: tuple[str, ...] = ("core",)


# Section 7: "by quantifying the variance of this noise and bounding its deviation from pure Gaussian noise ...
# the dynamics of low-rank adaptation approximates that of DPSGD with a fixed noise scale".  Its core parts:
# the variance (A-3.1-moments), the Gaussian law and its distance bound (A-3.1-normal, A-4.2) and the fixed
# multiplier that section 5.1 assigns (A-5.1-z).  Qualifications: Lemma 3.1's approximation (the caveats of
# A-3.1-moments), the noise's structure (A-3.structure: our inference of what "like DP-SGD" needs; the section
# does not state it), the frozen-A dynamics it starts from (A-2.eq9) and the canary audit
# (A-5.1-equivalence).
# "Informal privacy w.r.t. the fine-tuning data ... while slightly affecting the utility": LoRA less exposed
# than full fine-tuning at equal utility (A-6.attribution), qualified by the utility cost under Table 1's
# protocol (A-6.lora's utility checks) and by the audit of section 5.1's "informal robustness"
# (A-5.1-equivalence).
READINGS: dict[str, tuple[Part, ...]] = {
    "A-7.approximates": (
        Part("A-3.1-moments", "core", "the injected noise has Lemma 3.1's mean and variance"),
        Part("A-3.1-normal", "core", "the injected noise is close to Gaussian"),
        Part("A-4.2", "core", "its distance to the Gaussian falls as Lemma 4.2 says"),
        Part("A-5.1-z", "core", "its scale is a DP-SGD noise multiplier that section 5.1's formula fixes"),
        Part(
            "A-3.1-moments",
            "caveat",
            "the variance is about ||q||^2 / r, as Lemma 3.1 approximates it",
            source_roles=("caveat",),
        ),
        Part(
            "A-3.structure",
            "caveat",
            "its structure is DP-SGD's: independent entries, full rank, data only through each row's norm",
            source_roles=EVIDENCE,
        ),
        Part("A-2.eq9", "caveat", "the frozen-A dynamics the argument starts from", source_roles=EVIDENCE),
        Part(
            "A-5.1-equivalence",
            "caveat",
            "a canary audit of row-scaled LoRA against DP-SGD at that multiplier",
            source_roles=EVIDENCE,
        ),
    ),
    "A-7.informal-privacy": (
        Part(
            "A-6.attribution",
            "core",
            "LoRA is less exposed to membership inference than full fine-tuning at equal perplexity",
            contains=("AUC LoRA - full below 0",),
            source_roles=EVIDENCE,  # core where the pretrained scale decides A-6.attribution, caveats elsewhere
        ),
        Part(
            "A-6.lora",
            "caveat",
            "the utility cost is slight",
            # LoRA's own perplexity checks; not the frozen-embedding control's, which asks whether the comparison
            # is fair, not whether LoRA's cost is slight
            contains=("(a slight drop)", "recovers at least half"),
            source_roles=("caveat",),
        ),
        Part(
            "A-5.1-equivalence",
            "caveat",
            "a canary audit of row-scaled LoRA against DP-SGD at section 5.1's multiplier",
            source_roles=EVIDENCE,
        ),
    ),
}


# The analysis plan's absolute reading of "informal privacy" (version 1, beside the relative one): what an attacker
# gets from LoRA r = 8, eq. 24's TPR at 5% FPR against chance, carried from A-6.lora's caveats as core checks.
ABSOLUTE: dict[str, tuple[str, int, Part]] = {
    "A-7.informal-privacy": (
        "the absolute reading (an attacker's TPR at 5% FPR)",
        1,
        Part(
            "A-6.lora",
            "core",
            "an attacker's TPR at 5% FPR against LoRA r = 8 is at most twice that FPR",
            contains=(ATTACKER,),
            source_roles=("caveat",),
        ),
    ),
}


def plan_version(parts: tuple[Part, ...], measured: dict[str, Claim]) -> int | None:
    """The analysis plan version a concluding claim is decided under: that of its core parts' sources, the latest
    where they differ; None where none of them is a claim of the plan."""
    versions = [measured[p.source].plan_version for p in parts if p.role == "core"]
    return max((v for v in versions if v is not None), default=None)


def absolute_reading(claim_id: str, checks: list[Check], measured: dict[str, Claim]) -> list[Reading]:
    """The absolute reading of ``claim_id`` (:data:`ABSOLUTE`): its checks with what an attacker gets carried as
    core; none where the claim has no such reading or its source measured none (no pretrained intervals)."""
    if claim_id not in ABSOLUTE:
        return []
    name, version, part = ABSOLUTE[claim_id]
    source = measured[part.source]
    if not any(ATTACKER in c.name for c in source.checks if c.role in part.source_roles):
        return []
    note = "the claim holds under the plan's version 1 only if this reading and the relative one both hold"
    return [Reading(name, checks + carried_checks(part, source), version, note)]


# What each reading leaves out, said in the claim's note.
UNTESTED = {
    "A-7.approximates": "The reading takes 'approximate' at the strength of the sections it summarises; a looser "
    "reading (the update is perturbed at random) is true of LoRA but says nothing about privacy.",
    "A-7.informal-privacy": "'Informal privacy' is read as lower membership-inference exposure, measured, never "
    "certified; 'at a lower space cost than DP-SGD' is not tested (DP-SGD can train the LoRA factors, at "
    "LoRA's memory plus per-sample gradients of B and A).",
}


def _sources(results: dict[str, list[Claim]]) -> dict[str, Claim]:
    """The other chapters' claims by id (this chapter's own ledger file is never a source)."""
    return {c.claim_id: c for key, chapter in results.items() if key != KEY for c in chapter}


def carried_checks(part: Part, source: Claim) -> list[Check]:
    """The checks of ``source`` that ``part`` keeps, renamed and given the part's role; none where the source has
    no evidence at all (not testable here), so that a part without evidence neither passes nor fails."""
    if not source.evidence:
        return []
    eligible = [c for c in source.checks if c.role in part.source_roles]
    for pattern in part.contains or ("",):
        if not any(pattern in c.name for c in eligible):
            raise ValueError(
                f"{part.source} has no {'/'.join(part.source_roles)} check matching {pattern!r}: its chapter "
                "renamed or dropped them; update READINGS in lorapriv_utils/chapters/a7_conclusions.py"
            )
    kept = [c for c in eligible if not part.contains or any(s in c.name for s in part.contains)]
    return [replace(c, name=f"{part.source}: {c.name}", role=_role(part, source, c)) for c in kept]


def carried_counts(checks: list[Check]) -> str:
    """How many carried checks pass, by role ('1 of 2 core checks pass, 4 of 4 caveats pass'): a part decided at
    another scale carries that scale's checks as core and the others as caveats, and one count of both would hide
    a failing core check among passing caveats."""
    nouns = {"core": "core checks", "caveat": "caveats"}
    groups = [(role, [c for c in checks if c.role == role]) for role in EVIDENCE_ROLES]
    return ", ".join(outcome_counts(group, nouns[role]) for role, group in groups if group)


def _role(part: Part, source: Claim, check: Check) -> str:
    """The part's role, except that a core part of a claim decided at another scale (``decided_at``) carries the
    checks of the other scales as caveats, as its source does."""
    decided = part.role == "core" and source.decided_at and not check.name.startswith(f"{source.decided_at},")
    return "caveat" if decided else part.role


def decided_at(parts: tuple[Part, ...], measured: dict[str, Claim]) -> str | None:
    """The scale that decides a concluding claim: that of its core parts' sources, where they share one that is not
    their chapters' own; None otherwise."""
    scales = {measured[p.source].decided_at for p in parts if p.role == "core"}
    return scales.pop() if len(scales) == 1 else None


def claims(results: dict[str, list[Claim]], scale: str) -> list[Claim]:
    """The two concluding claims from the ledger's other results (``ledger.load_results()``), all measured at
    ``scale``: a ledger that mixes scales is refused."""
    measured = _sources(results)
    mixed = sorted({c.scale for c in measured.values()} - {scale})
    if mixed:
        raise ValueError(
            f"the ledger holds results at {', '.join(mixed)}, not only at {scale}: execute every chapter at one scale"
        )
    out = []
    for claim_id, parts in READINGS.items():
        missing = [p.source for p in parts if p.source not in measured]
        if missing:
            raise ValueError(f"{claim_id} needs {', '.join(missing)}: execute their chapters' notebooks first")
        carried = [carried_checks(p, measured[p.source]) for p in parts]
        checks = [check for part_checks in carried for check in part_checks]
        summary = "; ".join(
            f"{p.meaning} ({p.source}, {measured[p.source].verdict}): "
            + (
                f"carried here, {carried_counts(part_checks)}"
                if measured[p.source].evidence
                else "no evidence to carry"
            )
            for p, part_checks in zip(parts, carried, strict=True)
        )
        out.append(
            Claim(
                claim_id=claim_id,
                scale=scale,
                checks=checks,
                decided_at=decided_at(parts, measured),
                plan_version=plan_version(parts, measured),
                readings=absolute_reading(claim_id, checks, measured),
                summary=summary,
                note="A concluding claim read as a conjunction of earlier ones: core parts carry the source claims' "
                "checks as core evidence, qualifying parts as caveats; measured values and outcomes are the "
                "sources' own. The parts and their patterns are in lorapriv_utils/chapters/a7_conclusions.py. "
                + UNTESTED[claim_id],
            )
        )
    return out


def parts_frame(results: dict[str, list[Claim]]) -> pd.DataFrame:
    """One row per part of each concluding claim: its source, role, how many of its checks pass."""
    measured = _sources(results)
    rows = []
    for claim_id, parts in READINGS.items():
        for p in parts:
            checks = carried_checks(p, measured[p.source])
            rows.append(
                {
                    "claim": claim_id,
                    "part": p.meaning,
                    "source": p.source,
                    "source verdict": measured[p.source].verdict,
                    "role here": p.role,
                    "checks carried here, passed": carried_counts(checks)
                    if measured[p.source].evidence
                    else "no evidence",
                }
            )
    return pd.DataFrame(rows)


def failed_checks(claim: Claim, limit: int = 3) -> pd.DataFrame:
    """Up to ``limit`` checks of each part of a concluding claim that do not pass (failed or unresolved): role,
    outcome, name, measured value, reference."""
    rows, seen = [], {}
    for c in claim.checks:
        source = c.name.split(":", 1)[0]
        if c.outcome != "passes" and seen.get(source, 0) < limit:
            seen[source] = seen.get(source, 0) + 1
            rows.append(
                {
                    "role": c.role,
                    "outcome": c.outcome,
                    "check": c.name,
                    "measured": c.measured,
                    "reference": c.reference,
                }
            )
    return pd.DataFrame(rows, columns=["role", "outcome", "check", "measured", "reference"])


__all__ = [
    "KEY",
    "READINGS",
    "Part",
    "carried_checks",
    "carried_counts",
    "claims",
    "decided_at",
    "failed_checks",
    "parts_frame",
]
