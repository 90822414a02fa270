"""The execution-statistics page: each notebook's run time, as last measured where the book was built (Sphinx
extension), and the one file that holds those times.

The book renders the notebooks' stored outputs and executes nothing (``execute_notebooks: "off"``). Two programs
execute notebooks, and each records here, per notebook, what it measured: nbval, which executes every notebook and
compares its outputs with the stored ones (``make nbval``, inside ``make test``, as in CI; ``notebooks/conftest.py``),
and ``tools/execute_notebooks.py``, which executes them and stores the new outputs (``make notebooks``, ``make
book-fresh``). ``{execution-times}`` renders one row per notebook page: its latest measured time, by whom, when,
and what became of its outputs (compared with the stored ones, or stored); a notebook neither has run here says
so rather than show a time.  A last row sums the measured times: executing every notebook one after another.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from lorapriv_utils.files import atomic_write_text

TIMES = Path("_build") / "notebook_times.json"  # under the book's root


def record(root: Path, runs: dict[str, dict], measured_by: str) -> None:
    """Merge ``runs`` (notebook name -> ``seconds``, ``cells``, ``result``: what became of its outputs) into
    ``root/_build/notebook_times.json``: each notebook's entry is replaced, the others are kept."""
    path = Path(root) / TIMES
    try:
        times = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        times = {}
    notebooks = times.get("notebooks", {})
    stamp = {
        "measured_by": measured_by,
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "scale": os.environ.get("LORAPRIV_SCALE", "cpu-small"),
    }
    for name, run in runs.items():
        notebooks[name] = {**stamp, **run, "seconds": round(run["seconds"], 1)}
    atomic_write_text(path, json.dumps({"notebooks": dict(sorted(notebooks.items()))}, indent=1) + "\n")


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


def _measured(app: Sphinx) -> dict:
    try:
        return json.loads((Path(app.srcdir) / TIMES).read_text(encoding="utf-8")).get("notebooks", {})
    except (OSError, ValueError):
        return {}


def _rows(app: Sphinx) -> list[tuple[str, str, str, str]]:
    measured = _measured(app)
    rows = []
    for docname in sorted(app.env.found_docs):
        if not docname.startswith("notebooks/"):
            continue
        run = measured.get(docname.split("/", 1)[1])
        if run is None:
            rows.append((docname, "", "not executed here since the last clean build", ""))
            continue
        how = f"{run['measured_by']}, {run['measured']} ({run['machine']}, scale {run['scale']})"
        rows.append((docname, f"{run['seconds']:.1f}", how, run["result"]))
    return rows


def _total(rows: list[tuple[str, str, str, str]]) -> tuple[str, str, str, str]:
    """The last row: the measured times summed, what executing every notebook one after another takes here."""
    timed = [float(seconds) for _, seconds, _, _ in rows if seconds]
    missing = len(rows) - len(timed)
    note = f"sum of the {len(timed)} measured rows" + (f"; {missing} not executed here" if missing else "")
    return ("", f"{sum(timed):.1f}", note, "")


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
        for title in ("notebook", "seconds", "measured by", "outputs"):
            header += nodes.entry("", nodes.paragraph(text=title))
        head += header
        body = nodes.tbody()
        group += body
        for docname, seconds, how, ok in [*rows, _total(rows)]:
            row = nodes.row()
            if docname:
                link = nodes.reference("", env_title(app, docname), internal=True)
                link["refuri"] = app.builder.get_relative_uri(fromdocname, docname)
                row += nodes.entry("", nodes.paragraph("", "", link))
            else:
                row += nodes.entry("", nodes.paragraph(text="all notebooks"))
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
