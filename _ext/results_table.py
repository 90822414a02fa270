"""The committed results, one row per Make target that recomputes them: ``{results-table}`` (Sphinx extension).

Each row says what the target recomputes, what it needs beyond the repository, how many records it writes and
their measured wall time, summed over the records (a sharded run's shards added up): all of it from the catalogue
(``lorapriv_utils.catalogue``) and the records themselves, never typed.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from lorapriv_utils.catalogue import CATALOGUE, TARGETS, format_duration, measured_seconds
from lorapriv_utils.ledger import load_register

# the numbers next to the command, so that a phone's first screen of the table shows them
HEADERS = ("Command", "Measured wall time", "Records", "What it recomputes", "Needs")


def rows() -> list[tuple[str, ...]]:
    """One row per target of ``catalogue.TARGETS``."""
    out = []
    for target, what in TARGETS.items():
        entries = [e for e in CATALOGUE if e.make == target]
        needs = ", ".join(dict.fromkeys(e.needs for e in entries if e.needs)) or "nothing more"
        seconds = measured_seconds(target)
        took = format_duration(seconds) if seconds else "not recorded"
        out.append((f"make {target}", took, str(sum(len(e.paths()) for e in entries)), what, needs))
    return out


CLAIM_HEADERS = (
    "Chapter",
    "Measured, one core",
    "16 cores, at best",
    "Its claims",
    "Records it reads",
    "Command",
)
CORES = 16  # a box of this many cores runs as many one-thread cells at once: the total divided by it, at best


def claim_rows() -> list[tuple[str, ...]]:
    """One row per chapter that reads committed records: the claims it decides (the register's), its catalogue
    entries and their records, their summed measured wall time, that time spread over :data:`CORES` one-thread
    processes (a bound, not a measurement) and the Make targets that recompute them."""
    register = load_register()
    out = []
    for chapter in dict.fromkeys(e.chapter for e in CATALOGUE):
        entries = [e for e in CATALOGUE if e.chapter == chapter]
        claims = ", ".join(r.claim_id for r in register if r.chapter == chapter and not r.untestable)
        records = sum(len(e.paths()) for e in entries)
        seconds = measured_seconds(*(e.name for e in entries))
        took = format_duration(seconds) if seconds else "not recorded"
        spread = format_duration(seconds / CORES) if seconds else "not recorded"
        targets = " ".join(dict.fromkeys(f"make {e.make}" for e in entries))
        out.append((chapter, took, spread, claims, f"{records} ({', '.join(e.name for e in entries)})", targets))
    return out


def _table(headers: tuple[str, ...], widths: tuple[int, ...], body_rows: list[tuple[str, ...]], code: int):
    table = nodes.table(classes=["lorapriv-results"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    group += [head, body]
    for part, cells in ((head, headers), *((body, row) for row in body_rows)):
        row = nodes.row()
        for k, text in enumerate(cells):
            text_node = nodes.literal(text=text) if k == code and part is body else nodes.Text(text)
            row += nodes.entry("", nodes.paragraph("", "", text_node))
        part += row
    return table


class ClaimsRecordsDirective(SphinxDirective):
    """``{claims-records-table}``: what each chapter's claims rest on and what recomputing it costs."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [_table(CLAIM_HEADERS, (14, 10, 10, 30, 26, 20), claim_rows(), len(CLAIM_HEADERS) - 1)]


class ResultsTableDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        return [_table(HEADERS, (22, 12, 8, 40, 18), rows(), 0)]


def setup(app: Sphinx) -> dict:
    app.add_directive("results-table", ResultsTableDirective)
    app.add_directive("claims-records-table", ClaimsRecordsDirective)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
