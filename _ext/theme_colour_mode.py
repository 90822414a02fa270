"""Workaround for pydata-sphinx-theme 0.17 (under sphinx-book-theme): without a default colour
mode the theme logs a console error on every page.  Sets ``html_context["default_mode"]`` to
``light`` unless the configuration already sets one (Sphinx extension).
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _default_mode(app: Sphinx, config) -> None:
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "light")
    config.html_context = context


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _default_mode)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
