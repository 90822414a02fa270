"""Execute notebooks in place without per-cell timestamps, which `jupytext --execute` and
`jupyter execute` always record (every re-execution would then be a diff).

Each notebook runs in its own folder with the python3 kernel of this environment, so its
stored outputs are those of the current LORAPRIV_SCALE.

Usage: python tools/execute_notebooks.py notebooks/*.ipynb
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path: Path, timeout: int = 1800) -> None:
    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    # record_timing=False keeps wall-clock timestamps out of the committed notebooks (clean diffs).
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False, resources=resources).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    for name in paths:
        print(f"executing {name}", flush=True)
        execute(Path(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
