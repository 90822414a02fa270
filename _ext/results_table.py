"""The committed results, one row per Make target that recomputes them: ``{results-table}`` (Sphinx extension).

Each row says what the target recomputes, what it needs beyond the repository, how many records it writes and
their measured wall time, summed over the records (a sharded run's shards added up): all of it from the catalogue
(``lorapriv_utils.catalogue``) and the records themselves, never typed.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from lorapriv_utils.catalogue import CATALOGUE, TARGETS
from lorapriv_utils.mia.records.status import format_duration, measured_seconds

HEADERS = ("Command", "What it recomputes", "Needs", "Records", "Measured wall time")


def rows() -> list[tuple[str, ...]]:
    """One row per target of ``catalogue.TARGETS``."""
    out = []
    for target, what in TARGETS.items():
        entries = [e for e in CATALOGUE if e.make == target]
        needs = ", ".join(dict.fromkeys(e.needs for e in entries if e.needs)) or "nothing more"
        seconds = measured_seconds(target)
        took = format_duration(seconds) if seconds else "not recorded"
        out.append((f"make {target}", what, needs, str(sum(len(e.paths()) for e in entries)), took))
    return out


class ResultsTableDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        table = nodes.table(classes=["lorapriv-results"])
        group = nodes.tgroup(cols=len(HEADERS))
        table += group
        for width in (22, 40, 18, 8, 12):
            group += nodes.colspec(colwidth=width)
        head, body = nodes.thead(), nodes.tbody()
        group += [head, body]
        for part, cells in ((head, HEADERS), *((body, row) for row in rows())):
            row = nodes.row()
            for k, text in enumerate(cells):
                text_node = nodes.literal(text=text) if k == 0 and part is body else nodes.Text(text)
                row += nodes.entry("", nodes.paragraph("", "", text_node))
            part += row
        return [table]


def setup(app: Sphinx) -> dict:
    app.add_directive("results-table", ResultsTableDirective)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
