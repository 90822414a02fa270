"""The claims ledger: every claim of both papers, with a verdict computed from measurements.

A notebook builds :class:`Check` objects from what it measured (through
:func:`check_close`, :func:`check_estimate` or :func:`check_bound`), groups
them into a :class:`Claim`, and saves the chapter's claims with
:func:`save_claims`.  The verdict is never typed: :func:`verdict_from` derives
it from the checks.

* ``holds``: every check passed.
* ``fails``: a core check failed (the claim as stated is contradicted).
* ``qualified``: the core checks passed, a caveat check failed (the claim holds
  only in a narrower sense, which the claim's note explains).
* ``not testable here``: no check could be run at this scale (the note says why).

The ledger lives in ``ledger/<chapter>.json`` at the repository root, one file
per chapter, written atomically with stable formatting so that re-running a
notebook at the same scale leaves the file byte-for-byte unchanged.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .files import atomic_write_text
from .montecarlo import Estimate
from .numbers import round_sig

VERDICTS = ("holds", "fails", "qualified", "not testable here")
ROLES = ("core", "caveat")
PAPERS = ("A", "B")
LEDGER_ENV_VAR = "LORAPRIV_LEDGER_DIR"
SIGNIFICANT_DIGITS = 6


def _round(value: float) -> float:
    return round_sig(value, SIGNIFICANT_DIGITS)


@dataclass(frozen=True)
class Check:
    """One comparison between a measured number and the paper's value or bound."""

    name: str
    measured: float
    reference: float
    passed: bool
    detail: str
    role: str = "core"

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")


def check_close(
    name: str, measured: float, reference: float, *, rtol: float = 1e-9, atol: float = 0.0, role: str = "core"
) -> Check:
    """An exact computation against the claimed value, within rtol/atol."""
    err = abs(measured - reference)
    passed = bool(err <= atol + rtol * abs(reference))
    rel = err / abs(reference) if reference != 0 else err
    shown = "< 1e-12" if rel < 1e-12 else f"{rel:.1e}"  # below that, only rounding noise differs by machine
    return Check(name, _round(measured), _round(reference), passed, f"rel. error {shown} (tolerance {rtol:.0e})", role)


def check_estimate(name: str, estimate: Estimate, reference: float, *, z_max: float = 4.0, role: str = "core") -> Check:
    """A Monte Carlo estimate against the claimed value: passes when |z| <= z_max."""
    z = estimate.z_score(reference)
    return Check(
        name,
        _round(estimate.mean),
        _round(reference),
        bool(abs(z) <= z_max),
        f"Monte Carlo ± {estimate.stderr:.2g} (n = {estimate.n:.0e}), z = {z:+.2f}",
        role,
    )


def check_bound(name: str, value: float, bound: float, *, direction: str = "<=", role: str = "core") -> Check:
    """A measured value against a claimed bound: ``value <= bound`` or ``value >= bound``."""
    if direction not in ("<=", ">="):
        raise ValueError(f"direction must be '<=' or '>=', got {direction!r}")
    passed = value <= bound if direction == "<=" else value >= bound
    ratio = value / bound if bound != 0 else math.inf
    return Check(
        name, _round(value), _round(bound), bool(passed), f"measured {direction} claimed? ratio {ratio:.4g}", role
    )


def verdict_from(checks: list[Check]) -> str:
    """The verdict that the checks support (see the module docstring)."""
    if not checks:
        return "not testable here"
    if any(not c.passed for c in checks if c.role == "core"):
        return "fails"
    if any(not c.passed for c in checks if c.role == "caveat"):
        return "qualified"
    return "holds"


@dataclass
class Claim:
    """A claim of one of the papers, in our words, with the checks that decide it.

    ``chapter`` is the book document (path without suffix, from the repository
    root) that computes the checks; the ledger page links to it.
    """

    claim_id: str
    paper: str
    where: str
    statement: str
    scale: str
    chapter: str
    checks: list[Check] = field(default_factory=list)
    note: str = ""
    summary: str = ""

    def __post_init__(self) -> None:
        if self.paper not in PAPERS:
            raise ValueError(f"paper must be one of {PAPERS}, got {self.paper!r}")
        if not self.claim_id or not self.statement or not self.where:
            raise ValueError("claim_id, where and statement must be non-empty")

    @property
    def verdict(self) -> str:
        return verdict_from(self.checks)

    def as_record(self) -> dict:
        record = asdict(self)
        record["verdict"] = self.verdict
        return record


def claim_from_record(record: dict) -> Claim:
    """Rebuild a :class:`Claim` from a stored record, refusing a record whose verdict was edited by hand."""
    fields = {k: v for k, v in record.items() if k != "verdict"}
    fields["checks"] = [Check(**c) for c in fields.get("checks", [])]
    claim = Claim(**fields)
    if record.get("verdict") != claim.verdict:
        raise ValueError(
            f"claim {claim.claim_id}: stored verdict {record.get('verdict')!r} does not follow from its checks "
            f"({claim.verdict!r}); re-run the notebook of {claim.chapter} instead of editing the ledger"
        )
    return claim


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


def save_claims(chapter_key: str, claims: list[Claim], directory: Path | None = None) -> Path:
    """Write the claims of one chapter to ``<ledger>/<chapter_key>.json`` atomically; returns the path."""
    if not chapter_key.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"chapter_key must be letters, digits, '_' or '-', got {chapter_key!r}")
    ids = [c.claim_id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate claim ids in {chapter_key}: {sorted(i for i in ids if ids.count(i) > 1)}")
    path = Path(directory or ledger_dir()) / f"{chapter_key}.json"
    text = json.dumps([c.as_record() for c in claims], indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    atomic_write_text(path, text)
    return path


def load_ledger(directory: Path | None = None) -> list[Claim]:
    """All claims of all chapters, ordered by paper and claim id; verdicts re-derived and checked."""
    folder = Path(directory or ledger_dir())
    claims: list[Claim] = []
    for path in sorted(folder.glob("*.json")):
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON ({err}); re-run the notebook that writes it") from None
        claims.extend(claim_from_record(r) for r in records)
    return sorted(claims, key=lambda c: (c.paper, c.claim_id))


def claims_markdown(claims: list[Claim]) -> str:
    """A Markdown table of claims and their checks, for display inside a notebook."""
    lines = ["| claim | where | verdict | checks passed |", "|---|---|---|---|"]
    for c in claims:
        passed = sum(ch.passed for ch in c.checks)
        lines.append(f"| {c.claim_id} | {c.where} | **{c.verdict}** | {passed}/{len(c.checks)} |")
    return "\n".join(lines)
