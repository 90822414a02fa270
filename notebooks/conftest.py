"""nbval's run of the notebooks (``make nbval``) records each notebook's execution time: the sum of its cells'
wall times, with whether every cell matched its stored output, in ``_build/nbval_times.json``.  The book's
execution-statistics page (``_ext/execution_times.py``) shows it when the book is rendered from these
validated outputs (``make book-validated``, as in CI)."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

TIMES = Path(__file__).resolve().parent.parent / "_build" / "nbval_times.json"
_runs: dict[str, dict] = {}


def pytest_runtest_logreport(report) -> None:
    path = Path(str(report.fspath))
    if path.suffix != ".ipynb" or report.when != "call":
        return
    run = _runs.setdefault(path.stem, {"seconds": 0.0, "cells": 0, "passed": True})
    run["seconds"] += report.duration
    run["cells"] += 1
    run["passed"] = run["passed"] and report.passed


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _runs:
        return
    TIMES.parent.mkdir(exist_ok=True)
    record = {
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "scale": os.environ.get("LORAPRIV_SCALE", "cpu-small"),
        "notebooks": {name: {**run, "seconds": round(run["seconds"], 1)} for name, run in sorted(_runs.items())},
    }
    TIMES.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
