"""Serve MathJax 3 from the book itself, so that the rendered book needs no network (Sphinx extension).

The files come from the ``django-static-mathjax`` wheel and are copied to
``_static/mathjax/es5`` after an HTML build; ``_config.yml`` points ``mathjax_path`` there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import mathjax  # the django-static-mathjax wheel: MathJax 3 as static files

    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    target = Path(app.outdir) / "_static" / "mathjax" / "es5"
    if not (target / "tex-chtml.js").is_file():
        shutil.copytree(source, target, dirs_exist_ok=True)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _copy_mathjax)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
