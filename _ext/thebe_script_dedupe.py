"""Workaround for sphinx-thebe 0.3.1 under Jupyter Book 1: its inline configuration script is
registered twice (once with filename None, once with ''), which redeclares a ``const`` and raises
a JavaScript error on every page.  Remove when sphinx-thebe registers it once (Sphinx extension).
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", script) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    if "script_files" in context:
        context["script_files"][:] = unique


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", _dedupe_scripts, priority=999)  # after the theme adds its scripts
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
