"""Execute notebooks in place and store their outputs: the one program that writes a notebook's outputs (``make
notebooks``, ``make notebook NB=...``, ``make book-fresh``). nbval executes them too, in ``make test``, but only
compares.

Per-cell timestamps, which `jupytext --execute` and `jupyter execute` always store, are measured and then
dropped, so that a re-execution is no diff; each notebook's time goes to the book's execution-statistics page
(``_ext/execution_times.py``). Each notebook runs in its own folder with the python3 kernel of this environment,
so its stored outputs are those of the current LORAPRIV_SCALE. A cell that raises stops with the error.

Usage: python tools/execute_notebooks.py notebooks/*.ipynb
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
import execution_times  # noqa: E402


def _seconds(cell) -> float:
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def execute(path: Path, timeout: int = 1800) -> dict:
    """Execute the notebook at ``path`` in place; returns its time (the sum of its code cells' wall times)."""
    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=True, resources=resources).execute()
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    seconds = sum(_seconds(cell) for cell in code)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return {"seconds": seconds, "cells": len(code), "result": "stored"}


LAST = ("a7_conclusions",)  # notebooks that read the ledger the others write: executed after them


def in_order(paths: list[str]) -> list[str]:
    """``paths`` as given, the ones of :data:`LAST` moved to the end (``notebooks/*.ipynb`` sorts a7 before b1)."""
    return sorted(paths, key=lambda name: Path(name).stem in LAST)


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    for name in in_order(paths):
        print(f"executing {name}", flush=True)
        execution_times.record(ROOT, {Path(name).stem: execute(Path(name))}, "tools/execute_notebooks.py")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
