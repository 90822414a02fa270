"""The analysis plan (``ledger/analysis_plan.yml``): the comparisons, thresholds, seeds, family-wise method and
verdict rules of the empirical claims, each version dated and fixed before the runs it governs.  A version either
states everything, or ``amends`` an earlier one and states only what it changes (:func:`resolve`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from .ledger import ledger_dir

PLAN_FILE = "analysis_plan.yml"


def load_plan(directory: Path | None = None) -> dict:
    """The plan with its versions, oldest first; a clear error when the file is missing or not a plan."""
    path = (directory or ledger_dir()) / PLAN_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no analysis plan at {path}: it belongs in the ledger folder")
    plan = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(plan, dict) or not isinstance(plan.get("versions"), list) or not plan["versions"]:
        raise ValueError(f"{path}: not an analysis plan (a top-level 'versions' list of dated versions)")
    return plan


def _merged(earlier: dict, later: dict) -> dict:
    """``earlier`` with ``later``'s entries over it, dictionaries merged key by key (a run's, a claim's fields)."""
    out = dict(earlier)
    for key, value in later.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def resolve(plan: dict, number: int) -> dict:
    """Version ``number`` as it reads in full: an amending version over the version it amends (recursively); its
    own ``version``, ``date``, ``status``, ``reason`` and ``changes`` replace the amended one's."""
    versions = {v["version"]: v for v in plan["versions"]}
    if number not in versions:
        raise ValueError(f"the analysis plan has no version {number} (it has {sorted(versions)})")
    version = versions[number]
    base = version.get("amends")
    if base is None:
        return version
    if base >= number:
        raise ValueError(f"analysis plan version {number} amends version {base}: it can amend only an earlier one")
    earlier = {k: v for k, v in resolve(plan, base).items() if k not in ("changes", "fixed_before", "amends")}
    return _merged(earlier, version)


def in_force(plan: dict) -> dict:
    """The version in force, as it reads in full (:func:`resolve`): the one whose status says so."""
    current = [v for v in plan["versions"] if v.get("status") == "in force"]
    if len(current) != 1:
        raise ValueError(f"the analysis plan has {len(current)} versions in force; exactly one must be")
    return resolve(plan, current[0]["version"])
