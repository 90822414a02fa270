"""A notebook page whose stored outputs hold an error fails the strict build (Sphinx extension).

The book renders stored outputs and executes nothing, so a notebook committed after a failed execution would
otherwise show its traceback as a page. Each error output is a warning, which ``--warningiserror`` turns into a
failed build.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def stored_errors(path: Path) -> list[str]:
    """One line per error output stored in the notebook at ``path``: its cell's number and the exception."""
    nb = nbformat.read(path, as_version=4)
    found = []
    for number, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append(f"cell {number}: {output.get('ename', 'Error')}: {output.get('evalue', '')}")
    return found


def _check(app: Sphinx, doctree) -> None:
    path = Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    for line in stored_errors(path):
        logger.warning(
            f"{path.name} stores an error output ({line}): re-execute it (make notebook NB={path.stem})",
            location=app.env.docname,
        )


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", _check)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
