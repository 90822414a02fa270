"""The claims ledger in the book: directives and a role that render ``ledger/`` (Sphinx extension).

* ``{claims-ledger}``: every claim of the register, in paper order, with a tally of statuses
  on top; each row links to the chapter that tests the claim.
* ``{claims-table} KEY``: the claims of one chapter (statement, place in the paper, status).
* ``{claims-by-status} STATUS``: the claims that currently have a status (``fails``,
  ``holds``, ...), as a list with their numbers and chapters; ``:paper: A`` keeps one paper.
* ``{ledger-tally}``: the count of claims by status, alone.
* ``{verdict}`CLAIM-ID```: one claim's status as a badge that names the claim, linked to its ledger row.
* ``{claim-numbers}`CLAIM-ID```: the measured summary of a claim, as text.

A claim of the analysis plan shows, beside its badge, the sensitivity readings that move its verdict ("fails under
the pre-run design"); the ledger and a chapter's claims table add the plan version it was decided under.

Statements come from the register (``ledger/claims.yml``) and are parsed as MyST when a
page is read, so their mathematics renders.  Statuses and numbers come from the chapters'
result files, which notebooks write while the book executes; they are filled in once every
page has been read.  An unknown claim id, a chapter missing from the book or a stored
verdict that does not follow from its checks is a build warning (an error under ``-W``).
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from lorapriv_utils.ledger import (
    CHECK_COLUMNS,
    STATUSES,
    LedgerRow,
    check_rows,
    evidence_counts,
    load_ledger,
    load_register,
    outcome_counts,
    sensitivity_text,
    tally,
)
from lorapriv_utils.scale import SCALES

logger = logging.getLogger(__name__)


class claim_status_node(nodes.Inline, nodes.Element):
    """A claim's status badge (``claim_id``; ``link``: link it to the ledger row)."""


class claim_numbers_node(nodes.Inline, nodes.Element):
    """A claim's summary of numbers and note."""


class claim_checks_node(nodes.General, nodes.Element):
    """A claim's checks as a folded table (``ledger.check_rows``: check, role, number, interval, threshold,
    outcome); nothing for a claim not tested."""


class claim_chapter_node(nodes.Inline, nodes.Element):
    """A link to the chapter (``key``) that tests a claim."""


class claim_scale_node(nodes.Inline, nodes.Element):
    """The scale at which a claim was tested."""


class ledger_tally_node(nodes.General, nodes.Element):
    """The count of claims by status."""


class claims_by_status_node(nodes.General, nodes.Element):
    """Claims with one status (``status``); children are claim_item_node, filtered once statuses are known."""


class claim_item_node(nodes.General, nodes.Element):
    """One claim in a claims_by_status_node (``claim_id``)."""


# The chapters write their summaries and notes as plain text, with ASCII mathematics; a reader sees symbols.
READABLE = (
    (re.compile(r"\|\|([^|]+)\|\|"), "\u2016\\1\u2016"),  # ||x|| -> ‖x‖
    (re.compile(r"\^T\b"), "\u1d40"),  # A^T -> Aᵀ
    (re.compile(r" \+- "), " \u00b1 "),  # 0.25 +- 0.01 -> 0.25 ± 0.01
    # eps_rho -> ε_ρ: zero-width spaces let the symbols below match either side of the underscore
    (re.compile(r"\b(eps|delta|kappa)_(rho|n)\b"), lambda m: f"{m[1]}\u200b_\u200b{m[2]}"),
    (re.compile(r"!="), "\u2260"),
    (re.compile(r"<="), "\u2264"),
    (re.compile(r">="), "\u2265"),
    (re.compile(r"\bsqrt\("), "\u221a("),
    (re.compile(r"\*(\w[^*]*\w)\*"), "\\1"),  # *added* -> added
    (re.compile(r"\[(\d+(?:, \d+)+)\]"), "\\1"),  # ranks [4, 16, 64] -> ranks 4, 16, 64
    (re.compile(r"\$([^$]+)\$"), "\\1"),  # $F_n$ -> F_n: inline TeX markers, which a table cell does not render
    (re.compile(r"`([^`]+)`"), "\\1"),  # `make results-a5` -> make results-a5
    (re.compile(r"\\(?=[A-Za-z])"), ""),  # \varepsilon -> varepsilon, then a symbol below
    *(
        (re.compile(rf"\b{word}\b{guard}"), symbol)
        for word, guard, symbol in (
            ("varepsilon", "", "\u03b5"),
            ("epsilon", "", "\u03b5"),
            ("eps", "", "\u03b5"),
            ("Delta", "", "\u0394"),
            ("delta", "", "\u03b4"),
            ("eta", "", "\u03b7"),
            ("rho", "", "\u03c1"),
            ("sigma", "", "\u03c3"),
            ("mu", "", "\u03bc"),
            ("nu", "", "\u03bd"),
            ("kappa", "", "\u03ba"),
            ("pi", "", "\u03c0"),
            ("chi", "(?!-squ)", "\u03c7"),
        )
    ),
    # x^2 -> x², but not (eta L)^2.03, whose exponent is a decimal
    (re.compile(r"\^(\d+)(?![.\d])"), lambda m: m.group(1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))),
)


def readable(text: str) -> str:
    """A chapter's summary or note as a reader sees it: ASCII mathematics as symbols, no Markdown markers, no
    Python list brackets."""
    for pattern, replacement in READABLE:
        text = pattern.sub(replacement, text)
    return text


def _ledger_folder(app: Sphinx) -> Path:
    return Path(app.srcdir) / "ledger"


def _uses_ledger(env) -> None:
    docs = getattr(env, "lorapriv_ledger_docs", set())
    docs.add(env.docname)
    env.lorapriv_ledger_docs = docs


def _cell(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    entry += nodes.paragraph("", "", *children)
    return entry


def _folded(summary: str, *children: nodes.Node) -> list[nodes.Node]:
    """``children`` folded behind ``summary`` (an HTML details element), for a long cell."""
    return [
        nodes.raw("", f"<details><summary>{summary}</summary>", format="html"),
        nodes.paragraph("", "", *children),
        nodes.raw("", "</details>", format="html"),
    ]


def _folded_block(summary: str, *children: nodes.Node) -> list[nodes.Node]:
    """Block ``children`` (a table) folded behind ``summary``, for a table cell (``_folded`` holds inline ones)."""
    return [
        nodes.raw("", f"<details><summary>{summary}</summary>", format="html"),
        *children,
        nodes.raw("", "</details>", format="html"),
    ]


def _entry(*blocks: nodes.Node | list[nodes.Node]) -> nodes.entry:
    """A table cell of several blocks: each a node (a paragraph, a table) or a list of inline nodes (one
    paragraph)."""
    entry = nodes.entry()
    for block in blocks:
        entry += nodes.paragraph("", "", *block) if isinstance(block, list) else block
    return entry


def _table(
    headers: list[str],
    widths: list[int],
    rows: list[tuple[str, list]],
    classes: list[str],
    columns: list[str] | None = None,
    row_data: list[dict] | None = None,
) -> nodes.table:
    """A table; each row is (anchor id or "", cells), each cell a node or a list of nodes (a ``_folded`` list is
    placed as it is).  ``columns``: a class per column (``col-NAME``), which the narrow-screen cards label;
    ``row_data``: attributes kept on each row node for the resolve step."""
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for title in headers:
        row += _cell(nodes.Text(title))
    head += row
    body = nodes.tbody()
    group += body
    for k, (anchor, cells) in enumerate(rows):
        row = nodes.row(ids=[anchor] if anchor else [], **(row_data[k] if row_data else {}))
        for j, cell in enumerate(cells):
            if isinstance(cell, nodes.entry):
                entry = cell
            elif isinstance(cell, list) and cell and isinstance(cell[0], nodes.raw):
                entry = nodes.entry()
                entry += cell
            else:
                entry = _cell(*cell) if isinstance(cell, list) else _cell(cell)
            if columns:
                entry["classes"].append(f"col-{columns[j]}")
            row += entry
        body += row
    return table


class _LedgerDirective(SphinxDirective):
    def statement(self, text: str) -> list[nodes.Node]:
        parsed, messages = self.parse_inline(text)
        return [*parsed, *messages]


class ClaimsLedgerDirective(_LedgerDirective):
    """Every registered claim, in paper order."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        _uses_ledger(self.env)
        pages = getattr(self.env, "lorapriv_ledger_table_docs", set())
        pages.add(self.env.docname)
        self.env.lorapriv_ledger_table_docs = pages
        rows, data = [], []
        for entry in load_register(_ledger_folder(self.env.app)):
            # where the claim is (the paper's place, the chapter, the scale and model) in one column, and its evidence
            # in another: a short summary, then its checks as a table and the chapter's note, each folded
            where = _entry(
                [nodes.Text(f"paper {entry.paper}, {entry.where}")],
                [claim_chapter_node(key=entry.chapter)],
                nodes.paragraph("", "", claim_scale_node(claim_id=entry.claim_id), classes=["lorapriv-scale"]),
            )
            evidence = _entry(
                [claim_numbers_node(claim_id=entry.claim_id, counts=True)],
                claim_checks_node(claim_id=entry.claim_id),
                claim_numbers_node(claim_id=entry.claim_id, folded=True),
            )
            rows.append(
                (
                    nodes.make_id("claim-" + entry.claim_id),
                    [
                        [nodes.literal(text=entry.claim_id)],
                        claim_status_node(claim_id=entry.claim_id, link=False, plan=True),
                        self.statement(entry.statement),
                        where,
                        evidence,
                    ],
                )
            )
            data.append({"lorapriv_claim": entry.claim_id, "classes": [f"paper-{entry.paper}"]})
        scales = nodes.paragraph(classes=["lorapriv-scales"])
        scales += nodes.Text(
            "Scales (a claim's Where cell names the scale and model its chapter trains, where it trains one): "
        )
        scales += nodes.Text("; ".join(f"{name}, {s.engine.model.describe()}" for name, s in SCALES.items()) + ".")
        headers = ["Claim", "Verdict", "Statement (our words)", "Where (paper, chapter, scale)", "Evidence"]
        columns = ["claim", "verdict", "statement", "where", "evidence"]
        table = _table(headers, [9, 12, 33, 17, 29], rows, ["lorapriv-ledger"], columns, data)
        return [ledger_tally_node(), scales, table]


class ClaimsTableDirective(_LedgerDirective):
    """The registered claims of one chapter: ``{claims-table} a3_noise``."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        _uses_ledger(self.env)
        key = self.arguments[0].strip()
        entries = [e for e in load_register(_ledger_folder(self.env.app)) if e.chapter == key]
        if not entries:
            logger.warning(
                "claims-table: no claim of the register belongs to chapter %r", key, location=self.get_location()
            )
            return []
        rows = [
            (
                "",
                [
                    self.statement(entry.statement),
                    [nodes.Text(entry.where)],
                    claim_status_node(claim_id=entry.claim_id, link=True, plan=True),
                ],
            )
            for entry in entries
        ]
        return [_table(["Claim (our words)", "Where", "Verdict"], [50, 25, 10], rows, ["lorapriv-claims"])]


class ClaimsByStatusDirective(_LedgerDirective):
    """The claims that have one status when the book is built: ``{claims-by-status} fails``."""

    required_arguments = 1
    option_spec = {"paper": lambda text: text.strip()}
    has_content = False

    def run(self) -> list[nodes.Node]:
        _uses_ledger(self.env)
        status = self.arguments[0].strip().replace("-", " ")
        if status not in STATUSES:
            raise self.error(f"claims-by-status: unknown status {status!r}; use one of {', '.join(STATUSES)}")
        container = claims_by_status_node(status=status)
        for entry in load_register(_ledger_folder(self.env.app)):
            if self.options.get("paper") and entry.paper != self.options["paper"]:
                continue
            para = nodes.paragraph()
            para += self.statement(entry.statement)
            para += nodes.Text(f" ({entry.paper}, {entry.where}; ")
            para += claim_chapter_node(key=entry.chapter)
            para += nodes.Text(") ")
            para += claim_status_node(claim_id=entry.claim_id, link=True)
            numbers = nodes.paragraph(classes=["lorapriv-claim-numbers"])
            numbers += claim_numbers_node(claim_id=entry.claim_id)
            item = claim_item_node(claim_id=entry.claim_id)
            item += [para, numbers]
            container += item
        return [container]


class LedgerTallyDirective(SphinxDirective):
    """The count of claims by status."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        _uses_ledger(self.env)
        return [ledger_tally_node()]


def claim_numbers_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{claim-numbers}`CLAIM-ID``` renders the measured summary of a claim."""
    _uses_ledger(inliner.document.settings.env)
    return [claim_numbers_node(claim_id=text.strip(), short=True)], []


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{verdict}`CLAIM-ID``` renders a claim's id and status, linked to its ledger row: named, so that a badge in
    prose does not read as the verdict of the number before it."""
    _uses_ledger(inliner.document.settings.env)
    return [claim_status_node(claim_id=text.strip(), link=True, named=True)], []


def _always_outdated(app: Sphinx, env, added, changed, removed) -> list[str]:
    # Pages that show the ledger must be re-rendered whenever a notebook rewrote its results.
    return sorted(getattr(env, "lorapriv_ledger_docs", set()) - set(removed))


def _purge(app: Sphinx, env, docname: str) -> None:
    getattr(env, "lorapriv_ledger_docs", set()).discard(docname)
    getattr(env, "lorapriv_ledger_table_docs", set()).discard(docname)


def _merge(app: Sphinx, env, docnames, other) -> None:
    for name in ("lorapriv_ledger_docs", "lorapriv_ledger_table_docs"):
        setattr(env, name, getattr(env, name, set()) | getattr(other, name, set()))


def _chapter_doc(app: Sphinx, key: str) -> str | None:
    """The book page of a chapter key (``book/paper_*/KEY``), else its notebook page."""
    docs = sorted(d for d in app.env.all_docs if d.rsplit("/", 1)[-1] == key)
    return next((d for d in docs if d.startswith("book/")), docs[0] if docs else None)


def _badge(status: str) -> nodes.inline:
    return nodes.inline(text=status, classes=["lorapriv-verdict", "verdict-" + status.replace(" ", "-")])


def _fill(app: Sphinx, node: nodes.Element, rows: dict[str, LedgerRow], fromdocname: str) -> nodes.Node:
    if isinstance(node, claim_chapter_node):
        doc = _chapter_doc(app, node["key"])
        if doc is None:
            logger.warning("claims ledger: chapter %r is not in the book", node["key"], location=fromdocname)
            return nodes.Text(node["key"])
        title = app.env.titles[doc].astext() if doc in app.env.titles else doc
        uri = app.builder.get_relative_uri(fromdocname, doc)
        return nodes.reference("", title, internal=True, refuri=uri, classes=["lorapriv-chapter-link"])
    row = rows.get(node["claim_id"])
    if row is None:
        logger.warning("unknown claim id %r (not in ledger/claims.yml)", node["claim_id"], location=node)
        return nodes.Text(node["claim_id"])
    if isinstance(node, claim_scale_node):
        if row.result is None:
            return nodes.Text("")
        name = row.result.evidence_scale
        scale = SCALES.get(name)
        if scale is None:
            return nodes.Text(name)
        # the model in a few words, visible (a phone has no tooltip); the full description as the tooltip
        cell = nodes.inline()
        cell += nodes.abbreviation(name, name, explanation=f"where a model is trained: {scale.engine.model.describe()}")
        cell += nodes.inline("", f" {scale.engine.model.short_name()}", classes=["lorapriv-model"])
        return cell
    if isinstance(node, claim_checks_node):
        if row.result is None:  # the summary says why
            return []
        headers = [column.capitalize() for column in CHECK_COLUMNS]
        table_rows = [
            (
                "",
                [
                    [nodes.Text(readable(values[column]))]
                    if column != "outcome"
                    else [nodes.inline(text=values[column], classes=[f"check-{values[column]}"])]
                    for column in CHECK_COLUMNS
                ],
            )
            for values in check_rows(row.result.checks)
        ]
        return _folded_block("the checks", _table(headers, [34, 8, 12, 18, 12, 10], table_rows, ["lorapriv-checks"]))
    if isinstance(node, claim_numbers_node):
        if row.result is None:  # the register's reason; nothing to fold
            return [] if node.get("folded") else nodes.Text(readable(row.entry.untestable or "not tested yet"))
        if node.get("counts"):  # the ledger's one line of evidence
            return nodes.Text(evidence_counts(row.result.checks))
        text = row.result.summary or outcome_counts(row.result.evidence, "evidence checks")
        if row.result.note and not node.get("short"):
            text += ". " + row.result.note
        if node.get("folded"):  # the ledger folds the chapter's summary and note
            return _folded_block("the numbers", nodes.paragraph("", readable(text)))
        return nodes.Text(readable(text))
    badge = _badge(row.status)
    moved = row.result.moved_by if row.result is not None else []
    if moved or node.get("plan") and row.result is not None and row.result.plan_version is not None:
        # the readings that move the verdict beside it ("fails under the pre-run design"), and on the tables the
        # analysis plan version it was decided under
        shown = nodes.inline(classes=["lorapriv-verdict-readings"])
        shown += badge
        if moved:
            shown += nodes.inline(text=" (" + sensitivity_text(row.result) + ")", classes=["lorapriv-sensitivity"])
        if node.get("plan") and row.result.plan_version is not None:
            shown += nodes.inline(text=f" plan v{row.result.plan_version}", classes=["lorapriv-plan-version"])
        badge = shown
    if node.get("named"):  # the claim's id before its badge; a line may break between them
        named = nodes.inline(classes=["lorapriv-named-verdict"])
        named += [nodes.inline(text=row.entry.claim_id, classes=["lorapriv-claim-id"]), nodes.Text(" "), badge]
        badge = named
    pages = sorted(getattr(app.env, "lorapriv_ledger_table_docs", set()))
    if not node["link"] or not pages:
        return badge
    uri = app.builder.get_relative_uri(fromdocname, pages[0]) + "#" + nodes.make_id("claim-" + row.entry.claim_id)
    # the claim a badge stands for, as its tooltip: prose badges sit beside sentences that may name several claims
    link = nodes.reference("", "", internal=True, refuri=uri, reftitle=f"claim {row.entry.claim_id}: {row.status}")
    link += badge
    return link


def _tally(rows: dict[str, LedgerRow]) -> nodes.Node:
    counts = tally(list(rows.values()))
    para = nodes.paragraph(classes=["lorapriv-tally"])
    para += nodes.Text(f"{len(rows)} claims: ")
    for i, status in enumerate(STATUSES):
        if i:
            para += nodes.Text(", ")
        para += nodes.strong(text=str(counts[status]))
        para += nodes.Text(" ")
        para += _badge(status)
    return para


def _filter_by_status(node: claims_by_status_node, rows: dict[str, LedgerRow]) -> nodes.Node:
    items = [
        item for item in node.children if item["claim_id"] in rows and rows[item["claim_id"]].status == node["status"]
    ]
    if not items:
        return nodes.paragraph(text="None at present.")
    listing = nodes.bullet_list(classes=["lorapriv-claims-by-status"])
    for item in items:
        entry = nodes.list_item()
        entry += item.children
        listing += entry
    return listing


def _ledger_rows(app: Sphinx, fromdocname: str) -> dict[str, LedgerRow]:
    """The ledger, read once per build: every notebook has run (and written its rows) before pages resolve."""
    rows = getattr(app, "_lorapriv_ledger_rows", None)
    if rows is None:
        try:
            rows = {row.entry.claim_id: row for row in load_ledger(_ledger_folder(app))}
        except (ValueError, FileNotFoundError) as err:
            logger.warning("claims ledger: %s", err, location=fromdocname)
            rows = {}
        app._lorapriv_ledger_rows = rows
    return rows


# the nodes that the resolve step replaces by what the ledger holds; with the two that hold them, every node added
RESOLVED = (
    claim_status_node,
    claim_numbers_node,
    claim_checks_node,
    claim_chapter_node,
    claim_scale_node,
    ledger_tally_node,
)


def _resolve(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    kinds = RESOLVED
    groups = list(doctree.findall(claims_by_status_node))
    if not groups and not any(True for kind in kinds for _ in doctree.findall(kind)):
        return
    rows = _ledger_rows(app, fromdocname)
    for group in groups:  # first, so that the claims they drop are not resolved for nothing
        group.replace_self(_filter_by_status(group, rows))
    found = [n for kind in kinds for n in doctree.findall(kind)]
    for node in found:
        node.replace_self(_tally(rows) if isinstance(node, ledger_tally_node) else _fill(app, node, rows, fromdocname))
    for row in doctree.findall(nodes.row):  # the ledger's rows carry their verdict, for its filters
        claim = row.get("lorapriv_claim")
        if claim in rows:
            row["classes"].append(f"status-{rows[claim].status.replace(' ', '-')}")


def setup(app: Sphinx) -> dict:
    for node in (*RESOLVED, claims_by_status_node, claim_item_node):
        app.add_node(node)
    app.add_directive("claims-ledger", ClaimsLedgerDirective)
    app.add_directive("claims-table", ClaimsTableDirective)
    app.add_directive("claims-by-status", ClaimsByStatusDirective)
    app.add_directive("ledger-tally", LedgerTallyDirective)
    app.add_role("verdict", verdict_role)
    app.add_role("claim-numbers", claim_numbers_role)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _resolve)
    return {"version": "0.2", "parallel_read_safe": True, "parallel_write_safe": True}
