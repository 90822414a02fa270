"""The claims ledger: every claim of both papers, with a verdict computed from measurements.

Two sources, one view:

* The **register** (``ledger/claims.yml``, edited by hand) lists every claim of both papers
  in paper order: its id, paper, place in the paper, statement in our words (MyST) and the
  chapter that tests it.  :func:`load_register` reads it.
* The **results** (``ledger/<chapter>.json``, written by the chapter notebooks through
  :func:`save_claims`) hold only what was measured: for each tested claim, its checks, a
  one-line summary of the numbers and a note.  Verdicts are never typed:
  :func:`verdict_from` derives them from the checks.

:func:`load_ledger` joins the two: one :class:`LedgerRow` per registered claim, with
status *pending* while no notebook has tested it.

Checks have roles, so that a reader can tell evidence from the testing of our tools:

* ``core`` and ``caveat`` are **evidence** about the paper's claim and decide the verdict:
  ``holds`` (every evidence check passed), ``fails`` (a core check failed), ``unresolved`` (no
  core check failed, but one is unresolved: the data do not decide), ``qualified`` (every core
  check passed, but a caveat check did not).
* A check of an estimate carries the 95% interval of its measured value (``interval``).  Its
  outcome is then ``unresolved`` when the interval contains the reference (the threshold): the
  data do not decide on which side the value lies.  An unresolved core check makes its claim
  ``unresolved``, never ``fails``, so that no claim fails on noise, and never ``holds`` either.
* ``instrument`` checks test our own tools (quadrature against Monte Carlo, a sampler
  against brute force).  Their failure is a bug: it raises :class:`InstrumentError`, which
  stops the notebook and the book build, instead of flipping a verdict.
* ``identity`` checks confirm an algebraic identity to a stated tolerance.  They are shown,
  never counted as evidence, and their failure is a bug too.
* ``power`` checks say whether the runs can test the claim at all (the analysis plan's power condition: the models
  compared learned their task).  They are not evidence about the claim; a power check that does not pass makes the
  claim ``not testable here``, whatever its other checks say, and is shown as the reason.

A claim of the analysis plan (``ledger/analysis_plan.yml``) names the plan version its verdict was decided under
(``plan_version``), and carries its **sensitivity readings** (:class:`Reading`): the same claim judged under another
reasonable reading (the pre-run design, another threshold, the other optimiser), each with its own checks and a
verdict derived from them by the same rule.  A reading that moves the verdict is shown beside it ("fails under the
pre-run design"), so that a reader can tell a verdict that depends on the reading from one that does not.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .files import atomic_write_text
from .numbers import round_sig
from .theory.montecarlo import Estimate

VERDICTS = ("holds", "fails", "unresolved", "qualified", "not testable here")
OUTCOMES = ("passes", "fails", "unresolved")
STATUSES = ("holds", "fails", "unresolved", "qualified", "pending", "not testable here")
EVIDENCE_ROLES = ("core", "caveat")
ROLES = (*EVIDENCE_ROLES, "instrument", "identity", "power")
PAPERS = ("A", "B")
LEDGER_ENV_VAR = "LORAPRIV_LEDGER_DIR"
REGISTER_FILE = "claims.yml"
SIGNIFICANT_DIGITS = 6
# the words that name the checks of what an attacker gets from LoRA (a6's caveats), which the analysis plan's
# absolute reading of A-7.informal-privacy carries as core: one spelling for the chapter that writes and the one
# that reads them
ATTACKER = "what an attacker gets"
_KEY = re.compile(r"^[ab][0-9a-z]_[a-z0-9_]+$")


class InstrumentError(AssertionError):
    """A check of our own instruments (or an algebraic identity) failed: a bug, not a finding."""


def _round(value: float) -> float:
    return round_sig(value, SIGNIFICANT_DIGITS)


def _shown(value: float) -> str:
    # below 1e-12 only rounding noise differs between machines: print a bound, not the digits
    return "< 1e-12" if value < 1e-12 else f"{value:.2g}"


def undecided(interval: tuple[float, float], reference: float) -> bool:
    """Whether a measured quantity's 95% interval contains the reference it is checked against: the data do not
    decide on which side the value lies (the outcome ``unresolved``)."""
    return bool(interval[0] <= reference <= interval[1])


@dataclass(frozen=True)
class Check:
    """One comparison between a measured number and the paper's value or bound (or a reference of ours)."""

    name: str
    measured: float
    reference: float
    passed: bool
    detail: str
    role: str = "core"
    interval: tuple[float, float] | None = None  # the measured value's 95% interval, where it is an estimate
    # one-sided bootstrap p-values (that it passes, that it fails: resampling.tail_shares), where a claim's core
    # checks are decided together under Holm's procedure (the analysis plan's family-wise method, ``holm``)
    p_values: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if self.interval is not None:
            low, high = (float(v) for v in self.interval)
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                raise ValueError(
                    f"check {self.name!r}: interval must be two finite numbers, low <= high, got {low}, {high}"
                )
            object.__setattr__(self, "interval", (low, high))  # a stored record reads back a list
        if self.p_values is not None:  # NaN: no p-value (draws that were not all finite), never resolved
            passing, failing = (float(v) for v in self.p_values)
            if not all(math.isnan(p) or 0 < p <= 1 for p in (passing, failing)):
                raise ValueError(
                    f"check {self.name!r}: p-values must lie in (0, 1] or be NaN, got {passing}, {failing}"
                )
            object.__setattr__(self, "p_values", (passing, failing))

    @property
    def is_evidence(self) -> bool:
        return self.role in EVIDENCE_ROLES

    @property
    def outcome(self) -> str:
        """``passes`` or ``fails`` by the measured value, or ``unresolved`` where its interval contains the
        reference."""
        if self.interval is not None and undecided(self.interval, self.reference):
            return "unresolved"
        return "passes" if self.passed else "fails"

    def as_record(self) -> dict:
        record = asdict(self)
        for name in ("interval", "p_values"):  # the checks that carry neither are stored as before
            if record[name] is None:
                del record[name]
        return record


def check_close(
    name: str, measured: float, reference: float, *, rtol: float = 1e-9, atol: float = 0.0, role: str = "core"
) -> Check:
    """``measured`` against ``reference``: passes when |measured - reference| <= atol + rtol |reference|.

    The detail states the error and the tolerance really applied (absolute and relative).
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"tolerances must be >= 0, got rtol={rtol}, atol={atol}")
    err = abs(measured - reference)
    allowed = atol + rtol * abs(reference)
    passed = bool(err <= allowed)
    if reference != 0:
        error = f"rel. error {_shown(err / abs(reference))}"
    else:
        error = f"abs. error {_shown(err)}"
    rule = f"allowed |error| <= {allowed:.2g} (atol {atol:.2g} + rtol {rtol:.2g} x |reference|)"
    return Check(name, _round(measured), _round(reference), passed, f"{error}; {rule}", role)


def check_estimate(name: str, estimate: Estimate, reference: float, *, z_max: float = 4.0, role: str = "core") -> Check:
    """A Monte Carlo estimate against a value: passes when |z| <= z_max."""
    z = estimate.z_score(reference)
    return Check(
        name,
        _round(estimate.mean),
        _round(reference),
        bool(abs(z) <= z_max),
        f"Monte Carlo ± {estimate.stderr:.2g} (n = {estimate.n:.0e}), z = {z:+.2f}; passes if |z| <= {z_max:g}",
        role,
    )


def check_bound(
    name: str,
    value: float,
    bound: float,
    *,
    direction: str = "<=",
    role: str = "core",
    interval: tuple[float, float] | None = None,
) -> Check:
    """A measured value against a claimed bound: ``value <= bound`` or ``value >= bound``.  ``interval``, the
    value's 95% interval where it is an estimate, makes the check unresolved when it contains the bound."""
    if direction not in ("<=", ">="):
        raise ValueError(f"direction must be '<=' or '>=', got {direction!r}")
    passed = value <= bound if direction == "<=" else value >= bound
    # a ratio to a bound of 0 says nothing: the sign of the value is the answer
    detail = f"measured {direction} claimed? " + (
        f"ratio {value / bound:.4g}" if bound != 0 else "a sign test against 0"
    )
    if interval is not None:
        interval = (_round(interval[0]), _round(interval[1]))
        detail += f"; 95% interval [{interval[0]:.4g}, {interval[1]:.4g}], unresolved when it contains {bound:.4g}"
    return Check(name, _round(value), _round(bound), bool(passed), detail, role, interval)


def holm(p_values: list[float], level: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which of the hypotheses with ``p_values`` are rejected at family-wise error
    ``level`` (the smallest p against level/k, the next against level/(k-1), ..., stopping at the first that is
    not below its bound).  A NaN p-value is never rejected."""
    if not 0 < level < 1:
        raise ValueError(f"the level must lie in (0, 1), got {level!r}")
    order = sorted(range(len(p_values)), key=lambda i: (math.isnan(p_values[i]), p_values[i]))
    rejected = [False] * len(p_values)
    for rank, i in enumerate(order):
        p = p_values[i]
        if math.isnan(p) or p >= level / (len(p_values) - rank):
            break
        rejected[i] = True
    return rejected


def family_outcomes(checks: list[Check], level: float = 0.05) -> dict[str, str]:
    """The outcome of each core check that carries p-values when a claim's such checks are decided together:
    ``passes`` where Holm rejects "it fails" among them, ``fails`` where Holm rejects "it passes", else
    ``unresolved``."""
    family = [c for c in checks if c.role == "core" and c.p_values is not None]
    if len({c.name for c in family}) != len(family):
        raise ValueError("a claim's core checks decided together need distinct names")
    passes = holm([c.p_values[0] for c in family], level)
    fails = holm([c.p_values[1] for c in family], level)
    return {
        c.name: "passes" if ok else "fails" if bad else "unresolved"
        for c, ok, bad in zip(family, passes, fails, strict=True)
    }


def verdict_from(checks: list[Check]) -> str:
    """The verdict that the evidence checks support (see the module docstring); core checks that carry p-values
    are decided together, under Holm's procedure (:func:`family_outcomes`)."""
    evidence = [c for c in checks if c.is_evidence]
    if not evidence or any(c.role == "power" and c.outcome != "passes" for c in checks):
        return "not testable here"
    family = family_outcomes(evidence)
    core = [family.get(c.name, c.outcome) for c in evidence if c.role == "core"]
    if "fails" in core:
        return "fails"
    if "unresolved" in core:
        return "unresolved"
    if any(c.outcome != "passes" for c in evidence if c.role == "caveat"):
        return "qualified"
    return "holds"


def outcome_counts(checks: list[Check], noun: str = "") -> str:
    """'3 of 4' checks pass, with ', 1 unresolved' where some are; with a plural ``noun``, a phrase that reads on
    its own: '3 of 4 caveats pass (1 unresolved)'."""
    unresolved = sum(c.outcome == "unresolved" for c in checks)
    text = f"{sum(c.outcome == 'passes' for c in checks)} of {len(checks)}"
    if noun:
        return f"{text} {noun} pass" + (f" ({unresolved} unresolved)" if unresolved else "")
    return text + (f", {unresolved} unresolved" if unresolved else "")


CHECK_COLUMNS = ("check", "role", "number", "interval", "threshold", "outcome")


def _figure(value: float) -> str:
    """A check's number as the ledger shows it: four significant digits."""
    return f"{value:.4g}"


def evidence_counts(checks: list[Check]) -> str:
    """A claim's evidence in one line, by role, with the outcomes its verdict reads (:func:`check_rows`):
    'core: 13 of 18 pass, 5 fail; caveats: 2 of 3 pass, 1 unresolved'."""
    rows = [row for row in check_rows(checks) if row["role"] in EVIDENCE_ROLES]
    parts = []
    for role, label in (("core", "core"), ("caveat", "caveats")):
        outcomes = [row["outcome"] for row in rows if row["role"] == role]
        if outcomes:
            others = {"fail": outcomes.count("fails"), "unresolved": outcomes.count("unresolved")}
            extra = "".join(f", {n} {word}" for word, n in others.items() if n)
            parts.append(f"{label}: {outcomes.count('passes')} of {len(outcomes)} pass{extra}")
    return "; ".join(parts) or "no evidence checks"


def check_rows(checks: list[Check]) -> list[dict[str, str]]:
    """A claim's checks as the rows of a table (:data:`CHECK_COLUMNS`): the check, its role, the number measured,
    its 95% interval where it is an estimate, the paper's value or the threshold it is compared with, and its
    outcome as the verdict reads it (decided under Holm where the claim's core checks carry p-values); core checks
    first, then caveats, then the rest."""
    family = family_outcomes([c for c in checks if c.is_evidence])
    ordered = sorted(checks, key=lambda c: ROLES.index(c.role))  # core, caveat, then the instruments
    return [
        {
            "check": c.name,
            "role": c.role,
            "number": _figure(c.measured),
            "interval": "" if c.interval is None else f"[{_figure(c.interval[0])}, {_figure(c.interval[1])}]",
            "threshold": _figure(c.reference),
            "outcome": family.get(c.name, c.outcome),
        }
        for c in ordered
    ]


@dataclass
class Reading:
    """A claim judged under another reasonable reading than its primary one (a sensitivity reading): ``name`` says
    which, in a few words that follow "under" ("the pre-run design"); ``checks`` are the claim's checks under it;
    ``plan_version``, the analysis plan version that names the reading.  Its verdict follows from its checks by the
    rule of :func:`verdict_from`, never typed."""

    name: str
    checks: list[Check] = field(default_factory=list)
    plan_version: int | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not self.name or len(self.name.split()) > 12:
            raise ValueError(f"a reading's name is a few words that follow 'under', got {self.name!r}")

    @property
    def verdict(self) -> str:
        return verdict_from(self.checks)

    def as_record(self) -> dict:
        record = asdict(self)
        record["checks"] = [c.as_record() for c in self.checks]
        record["verdict"] = self.verdict
        return record


def reading_from_record(record: dict, claim_id: str = "") -> Reading:
    """Rebuild a :class:`Reading`, refusing one whose stored verdict does not follow from its checks."""
    fields = {k: v for k, v in record.items() if k != "verdict"}
    fields["checks"] = [Check(**c) for c in fields.get("checks", [])]
    reading = Reading(**fields)
    _follows(record.get("verdict"), reading.verdict, f"claim {claim_id}, reading {reading.name!r}")
    return reading


def _follows(stored: str | None, derived: str, whose: str) -> None:
    """Refuse a stored verdict that is not the one its checks give (``whose``: the claim or reading it is)."""
    if stored != derived:
        raise ValueError(
            f"{whose}: stored verdict {stored!r} does not follow from its checks ({derived!r}); re-run the chapter's "
            "notebook instead of editing the ledger"
        )


@dataclass
class Claim:
    """What a chapter measured about one registered claim: its checks, a summary of the numbers, a note.  ``scale``
    is the scale the chapter was executed at; ``decided_at``, where set, the scale whose runs its core checks read
    (another scale's committed records)."""

    claim_id: str
    scale: str
    checks: list[Check] = field(default_factory=list)
    summary: str = ""
    note: str = ""
    decided_at: str | None = None
    plan_version: int | None = None  # the analysis plan version the verdict was decided under, for the plan's claims
    readings: list[Reading] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.claim_id:
            raise ValueError("claim_id must be non-empty")
        names = [r.name for r in self.readings]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.claim_id}: two sensitivity readings share a name")
        broken = [c.name for c in self.checks if c.role in ("instrument", "identity") and not c.passed]
        if broken:
            raise InstrumentError(
                f"claim {self.claim_id}: {len(broken)} check(s) of our own instruments or identities failed "
                f"(a bug to fix, not a finding), first: {broken[0]!r}"
            )

    @property
    def verdict(self) -> str:
        return verdict_from(self.checks)

    @property
    def evidence(self) -> list[Check]:
        return [c for c in self.checks if c.is_evidence]

    @property
    def moved_by(self) -> list[Reading]:
        """The sensitivity readings under which the verdict differs from the primary one."""
        return [r for r in self.readings if r.verdict != self.verdict]

    @property
    def evidence_scale(self) -> str:
        """The scale whose runs decide the claim."""
        return self.decided_at or self.scale

    def as_record(self) -> dict:
        record = asdict(self)
        for name in ("decided_at", "plan_version"):  # the records of claims without them stay as they were
            if record[name] is None:
                del record[name]
        if self.readings:
            record["readings"] = [r.as_record() for r in self.readings]
        else:
            del record["readings"]
        record["checks"] = [c.as_record() for c in self.checks]
        record["verdict"] = self.verdict
        return record


def claim_from_record(record: dict) -> Claim:
    """Rebuild a :class:`Claim` from a stored record, refusing a record whose verdict was edited by hand."""
    fields = {k: v for k, v in record.items() if k != "verdict"}
    fields["checks"] = [Check(**c) for c in fields.get("checks", [])]
    fields["readings"] = [reading_from_record(r, fields.get("claim_id", "")) for r in fields.get("readings", [])]
    claim = Claim(**fields)
    _follows(record.get("verdict"), claim.verdict, f"claim {claim.claim_id}")
    return claim


@dataclass(frozen=True)
class RegisterEntry:
    """One claim of a paper as the register states it (``ledger/claims.yml``)."""

    claim_id: str
    paper: str
    where: str
    statement: str
    chapter: str
    untestable: str = ""  # the reason, when no run of this project can settle the claim


@dataclass
class LedgerRow:
    """A registered claim with what its chapter measured (``result`` is None while pending)."""

    entry: RegisterEntry
    result: Claim | None = None

    @property
    def status(self) -> str:
        if self.result is not None:
            return self.result.verdict
        return "not testable here" if self.entry.untestable else "pending"


def ledger_dir(start: Path | None = None) -> Path:
    """The ledger folder: ``$LORAPRIV_LEDGER_DIR`` if set, else ``ledger/`` of the enclosing book.

    The book root is the first folder, going up from ``start`` (default: the
    working directory), that holds ``_toc.yml``.
    """
    if os.environ.get(LEDGER_ENV_VAR):
        return Path(os.environ[LEDGER_ENV_VAR])
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file():
            return folder / "ledger"
    raise FileNotFoundError(f"no _toc.yml above {here}: run from inside the lorapriv checkout or set {LEDGER_ENV_VAR}")


def load_register(directory: Path | None = None) -> list[RegisterEntry]:
    """The register's entries in paper order; a malformed entry raises a ValueError that names it."""
    import yaml

    path = Path(directory or ledger_dir()) / REGISTER_FILE
    if not path.is_file():
        raise FileNotFoundError(f"the claims register {path} is missing")
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    entries: list[RegisterEntry] = []
    for number, item in enumerate(raw, start=1):
        name = item.get("id", f"entry {number}") if isinstance(item, dict) else f"entry {number}"
        if not isinstance(item, dict):
            raise ValueError(f"{path}: {name} is not a mapping")
        keys = {"id", "paper", "where", "statement", "chapter", "untestable"}
        unknown = set(item) - keys
        missing = {"id", "paper", "where", "statement", "chapter"} - set(item)
        if unknown or missing:
            raise ValueError(f"{path}: {name}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
        if item["paper"] not in PAPERS:
            raise ValueError(f"{path}: {name}: paper must be one of {PAPERS}, got {item['paper']!r}")
        if not _KEY.match(str(item["chapter"])):
            raise ValueError(f"{path}: {name}: chapter {item['chapter']!r} is not a chapter key like 'a3_noise'")
        entries.append(
            RegisterEntry(
                claim_id=str(item["id"]),
                paper=item["paper"],
                where=str(item["where"]),
                statement=" ".join(str(item["statement"]).split()),
                chapter=item["chapter"],
                untestable=" ".join(str(item.get("untestable", "")).split()),
            )
        )
    ids = [e.claim_id for e in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate claim ids {duplicates}")
    return entries


def _registered(chapter_key: str, claims: list[Claim], register: list[RegisterEntry]) -> None:
    by_id = {e.claim_id: e for e in register}
    for claim in claims:
        entry = by_id.get(claim.claim_id)
        if entry is None:
            raise ValueError(f"claim {claim.claim_id} is not in the register ({REGISTER_FILE}): enter it there first")
        if entry.chapter != chapter_key:
            raise ValueError(f"claim {claim.claim_id} is registered to chapter {entry.chapter!r}, not {chapter_key!r}")


def save_claims(chapter_key: str, claims: list[Claim], directory: Path | None = None) -> Path:
    """Write what one chapter measured to ``<ledger>/<chapter_key>.json`` atomically; returns the path.

    Every claim must be in the register under this chapter.
    """
    if not _KEY.match(chapter_key):
        raise ValueError(f"chapter_key must be a chapter key like 'a3_noise', got {chapter_key!r}")
    ids = [c.claim_id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate claim ids in {chapter_key}: {sorted(i for i in ids if ids.count(i) > 1)}")
    folder = Path(directory or ledger_dir())
    _registered(chapter_key, claims, load_register(folder))
    path = folder / f"{chapter_key}.json"
    text = json.dumps([c.as_record() for c in claims], indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    atomic_write_text(path, text)
    return path


def load_results(directory: Path | None = None) -> dict[str, list[Claim]]:
    """What each chapter measured, by chapter key (verdicts re-derived and checked)."""
    folder = Path(directory or ledger_dir())
    out: dict[str, list[Claim]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON ({err}); re-run the notebook that writes it") from None
        out[path.stem] = [claim_from_record(r) for r in records]
    return out


def load_ledger(directory: Path | None = None) -> list[LedgerRow]:
    """Every registered claim in paper order, each with its chapter's measurements when they exist."""
    folder = Path(directory or ledger_dir())
    register = load_register(folder)
    results = load_results(folder)
    for key, claims in results.items():
        _registered(key, claims, register)
    measured = {c.claim_id: c for claims in results.values() for c in claims}
    return [LedgerRow(entry, measured.get(entry.claim_id)) for entry in register]


def tally(rows: list[LedgerRow]) -> dict[str, int]:
    """How many claims have each status, in the order of :data:`STATUSES`."""
    return {status: sum(row.status == status for row in rows) for status in STATUSES}


def sensitivity_text(claim: Claim) -> str:
    """The sensitivity readings that move a claim's verdict, as a reader sees them beside it: 'fails under the
    pre-run design; unresolved under plan version 1's thresholds' (empty where none moves it)."""
    return "; ".join(f"{r.verdict} under {r.name}" for r in claim.moved_by)


def claims_frame(claims: list[Claim], directory: Path | None = None):
    """The verdicts of a chapter as a table (claim, where, verdict, evidence checks passed), for its notebook."""
    import pandas as pd

    where = {e.claim_id: e.where for e in load_register(directory)}
    planned = any(c.plan_version is not None or c.readings for c in claims)
    rows = [
        {
            "claim": c.claim_id,
            "where": where[c.claim_id],
            "verdict": c.verdict,
            # a chapter with claims of the analysis plan adds the version and the readings that move a verdict
            **(
                {
                    "plan version": "" if c.plan_version is None else str(c.plan_version),
                    "under other readings": sensitivity_text(c) or ("none moves it" if c.readings else ""),
                }
                if planned
                else {}
            ),
            "evidence checks passed": outcome_counts(c.evidence),
            "other checks (instruments, identities)": len(c.checks) - len(c.evidence),
        }
        for c in claims
    ]
    return pd.DataFrame(rows).set_index("claim")


def claims_table(claims: list[Claim], directory: Path | None = None):
    """:func:`claims_frame` as a notebook page shows it: the claim id as its first column, captioned, no text cut."""
    from .numbers import display_table

    return display_table(
        claims_frame(claims, directory),
        caption="This chapter's verdicts, as written to the claims ledger: each claim, where the paper makes it, its "
        "verdict and how many of its evidence checks passed.",
    )
