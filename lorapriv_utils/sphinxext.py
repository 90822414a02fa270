"""Sphinx extension for the lorapriv book.

* ``{claims-ledger}`` directive: the claims ledger table, rendered from the JSON
  files in ``ledger/`` after every notebook of the build has been executed, each
  row linking to the chapter that computed it.  A row whose chapter is not in
  the book is a build error, as is a stored verdict that does not follow from
  its checks.
* Serves MathJax from the book itself (``_static/mathjax``), copied from the
  ``django-static-mathjax`` wheel, so that the rendered book needs no network.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from .ledger import load_ledger

logger = logging.getLogger(__name__)


class claims_ledger_node(nodes.General, nodes.Element):
    """Placeholder, replaced by the table once all documents have been read."""


class claim_verdict_node(nodes.Inline, nodes.Element):
    """Placeholder for one claim's verdict badge, filled from the ledger like the table."""


def _uses_ledger(env) -> None:
    ledger_docs = getattr(env, "lorapriv_ledger_docs", set())
    ledger_docs.add(env.docname)
    env.lorapriv_ledger_docs = ledger_docs


class ClaimsLedgerDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        _uses_ledger(self.env)
        tables = getattr(self.env, "lorapriv_ledger_table_docs", set())
        tables.add(self.env.docname)
        self.env.lorapriv_ledger_table_docs = tables
        return [claims_ledger_node()]


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{verdict}`CLAIM-ID``` renders the computed verdict of a ledger claim, linked to its ledger row."""
    _uses_ledger(inliner.document.settings.env)
    return [claim_verdict_node(claim_id=text.strip())], []


def _ledger_folder(app: Sphinx) -> Path:
    return Path(app.srcdir) / "ledger"


def _always_outdated(app: Sphinx, env, added, changed, removed) -> list[str]:
    # The ledger page must be re-rendered whenever any notebook rewrote its JSON.
    return sorted(getattr(env, "lorapriv_ledger_docs", set()) - set(removed))


def _purge(app: Sphinx, env, docname: str) -> None:
    getattr(env, "lorapriv_ledger_docs", set()).discard(docname)


def _merge(app: Sphinx, env, docnames, other) -> None:
    env.lorapriv_ledger_docs = getattr(env, "lorapriv_ledger_docs", set()) | getattr(
        other, "lorapriv_ledger_docs", set()
    )


def _cell(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    entry += nodes.paragraph("", "", *children)
    return entry


def _build_table(app: Sphinx, fromdocname: str) -> nodes.Node:
    try:
        claims = load_ledger(_ledger_folder(app))
    except ValueError as err:
        logger.warning("claims ledger: %s", err, location=fromdocname)
        return nodes.paragraph(text="(claims ledger unavailable: see the build log)")
    headers = ["Paper", "Where", "Claim (our words)", "Verdict", "Numbers", "Scale", "Chapter"]
    table = nodes.table(classes=["lorapriv-ledger"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in (3, 9, 24, 7, 40, 5, 12):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for title in headers:
        row += _cell(nodes.Text(title))
    head += row
    body = nodes.tbody()
    group += body
    for claim in claims:
        if claim.chapter not in app.env.all_docs:
            logger.warning(
                "claims ledger: claim %s points to chapter %r, which is not in the book",
                claim.claim_id,
                claim.chapter,
                location=fromdocname,
            )
            continue
        uri = app.builder.get_relative_uri(fromdocname, claim.chapter)
        title = app.env.titles[claim.chapter].astext() if claim.chapter in app.env.titles else claim.chapter
        link = nodes.reference("", title, internal=True, refuri=uri)
        verdict = nodes.inline(
            text=claim.verdict, classes=["lorapriv-verdict", "verdict-" + claim.verdict.replace(" ", "-")]
        )
        numbers = claim.summary or f"{sum(c.passed for c in claim.checks)}/{len(claim.checks)} checks passed"
        if claim.note:
            numbers += ". " + claim.note
        row = nodes.row(ids=[nodes.make_id("claim-" + claim.claim_id)])
        for child in (
            nodes.Text(claim.paper),
            nodes.Text(claim.where),
            nodes.Text(claim.statement),
            verdict,
            nodes.Text(numbers),
            nodes.Text(claim.scale),
            link,
        ):
            row += _cell(child)
        body += row
    return table


def _verdict_badge(app: Sphinx, claims: dict, node: claim_verdict_node, fromdocname: str) -> nodes.Node:
    claim = claims.get(node["claim_id"])
    if claim is None:
        logger.warning("unknown claim id %r in a {verdict} role (not in ledger/)", node["claim_id"], location=node)
        return nodes.Text(node["claim_id"])
    badge = nodes.inline(text=claim.verdict, classes=["lorapriv-verdict", "verdict-" + claim.verdict.replace(" ", "-")])
    ledger_pages = sorted(getattr(app.env, "lorapriv_ledger_table_docs", set()))
    if not ledger_pages:
        return badge
    uri = app.builder.get_relative_uri(fromdocname, ledger_pages[0]) + "#" + nodes.make_id("claim-" + claim.claim_id)
    link = nodes.reference("", "", internal=True, refuri=uri)
    link += badge
    return link


def _resolve(app: Sphinx, doctree: nodes.document, fromdocname: str) -> None:
    for node in doctree.findall(claims_ledger_node):
        node.replace_self(_build_table(app, fromdocname))
    badges = list(doctree.findall(claim_verdict_node))
    if badges:
        try:
            claims = {c.claim_id: c for c in load_ledger(_ledger_folder(app))}
        except ValueError as err:
            logger.warning("claims ledger: %s", err, location=fromdocname)
            claims = {}
        for node in badges:
            node.replace_self(_verdict_badge(app, claims, node, fromdocname))


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import mathjax  # the django-static-mathjax wheel: MathJax 3 as static files

    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    target = Path(app.outdir) / "_static" / "mathjax" / "es5"
    if not (target / "tex-chtml.js").is_file():
        shutil.copytree(source, target, dirs_exist_ok=True)


def _dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    # sphinx-thebe registers its inline configuration script twice under Jupyter Book 1,
    # which redeclares a `const` and raises a JavaScript error on every page (once with
    # filename None, once with filename '').
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (getattr(script, "filename", script) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    if "script_files" in context:
        context["script_files"][:] = unique


def setup(app: Sphinx) -> dict:
    app.add_node(claims_ledger_node)
    app.add_directive("claims-ledger", ClaimsLedgerDirective)
    app.add_node(claim_verdict_node)
    app.add_role("verdict", verdict_role)
    app.connect("env-get-outdated", _always_outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _resolve)
    app.connect("build-finished", _copy_mathjax)
    app.connect("html-page-context", _dedupe_scripts, priority=999)  # after the theme adds its scripts
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
