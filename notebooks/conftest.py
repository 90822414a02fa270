"""nbval's run of the notebooks (``make nbval``) records each notebook's execution time (the sum of its cells'
wall times) and whether every cell matched its stored output, through ``_ext/execution_times.py``, whose page in
the book shows it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
import execution_times  # noqa: E402

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
    # under pytest-xdist (make nbval runs two workers) the controller receives every worker's reports: it writes
    if not _runs or hasattr(session.config, "workerinput"):
        return
    results = {True: "matched the stored ones", False: "differed from the stored ones"}
    runs = {
        name: {"seconds": r["seconds"], "cells": r["cells"], "result": results[r["passed"]]}
        for name, r in _runs.items()
    }
    execution_times.record(ROOT, runs, "nbval")
