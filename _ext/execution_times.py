"""The execution-statistics page: each notebook's run time in the build that rendered it (Sphinx extension).

``{execution-times}`` renders one row per notebook page of the book: myst-nb's own execution data where this
build executed the notebook or took it from its cache (``make book``), else the time nbval measured when it
validated the outputs this build renders (``_build/nbval_times.json``, written by ``notebooks/conftest.py``;
``make book-validated``, as in CI), else "not executed in this build".
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


class execution_times_node(nodes.General, nodes.Element):
    """Placeholder filled once every page has been read (their execution data is known then)."""


class ExecutionTimesDirective(SphinxDirective):
    def run(self):
        docs = getattr(self.env, "lorapriv_exec_docs", set())
        docs.add(self.env.docname)
        self.env.lorapriv_exec_docs = docs
        return [execution_times_node()]


def _always_outdated(app: Sphinx, env, added, changed, removed) -> list[str]:
    # the page re-renders whenever the book is built: the times are this build's
    return sorted(getattr(env, "lorapriv_exec_docs", set()) - set(removed))


def _purge(app: Sphinx, env, docname: str) -> None:
    getattr(env, "lorapriv_exec_docs", set()).discard(docname)


def _merge(app: Sphinx, env, docnames, other) -> None:
    env.lorapriv_exec_docs = getattr(env, "lorapriv_exec_docs", set()) | getattr(other, "lorapriv_exec_docs", set())


def _nbval_times(app: Sphinx) -> dict:
    path = Path(app.srcdir) / "_build" / "nbval_times.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _rows(app: Sphinx) -> list[tuple[str, str, str, str]]:
    from myst_nb.sphinx_ import NbMetadataCollector

    env = app.env
    nbval = _nbval_times(app)
    measured = nbval.get("notebooks", {})
    rows = []
    for docname in sorted(env.found_docs):
        if not docname.startswith("notebooks/"):
            continue
        name = docname.split("/", 1)[1]
        data = NbMetadataCollector.get_exec_data(env, docname)
        if data:
            method = "from the execution cache" if data.get("method") == "cache" else "executed by this build"
            ok = "yes" if data.get("succeeded") else "no"
            rows.append((docname, f"{data.get('runtime', 0.0):.1f}", method, ok))
        elif name in measured:
            run = measured[name]
            how = f"nbval, {nbval.get('measured', '')} ({nbval.get('machine', '')}, scale {nbval.get('scale', '')})"
            rows.append((docname, f"{run['seconds']:.1f}", how, "yes" if run["passed"] else "no"))
        else:
            rows.append((docname, "", "not executed in this build", ""))
    return rows


def _resolve(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    for node in list(doctree.findall(execution_times_node)):
        rows = _rows(app)
        table = nodes.table(classes=["execution-times"])
        group = nodes.tgroup(cols=4)
        table += group
        for _ in range(4):
            group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        group += head
        header = nodes.row()
        for title in ("notebook", "seconds", "measured by", "outputs as committed"):
            header += nodes.entry("", nodes.paragraph(text=title))
        head += header
        body = nodes.tbody()
        group += body
        for docname, seconds, how, ok in rows:
            row = nodes.row()
            link = nodes.reference("", env_title(app, docname), internal=True)
            link["refuri"] = app.builder.get_relative_uri(fromdocname, docname)
            row += nodes.entry("", nodes.paragraph("", "", link))
            for text in (seconds, how, ok):
                row += nodes.entry("", nodes.paragraph(text=text))
            body += row
        node.replace_self(table)


def env_title(app: Sphinx, docname: str) -> str:
    title = app.env.titles.get(docname)
    return title.astext() if title is not None else docname


def setup(app: Sphinx) -> dict:
    app.add_node(execution_times_node)
    app.add_directive("execution-times", ExecutionTimesDirective)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _resolve)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
