"""The analysis plan (``ledger/analysis_plan.yml``): the comparisons, thresholds, seeds, family-wise method and
verdict rules of the empirical claims, each version dated and fixed before the runs it governs."""

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


def in_force(plan: dict) -> dict:
    """The version in force: the one whose status says so."""
    current = [v for v in plan["versions"] if v.get("status") == "in force"]
    if len(current) != 1:
        raise ValueError(f"the analysis plan has {len(current)} versions in force; exactly one must be")
    return current[0]
