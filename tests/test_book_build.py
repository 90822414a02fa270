"""The book build fails loudly (two real Jupyter Book builds), and the claims-ledger directive renders the ledger
data (a tiny Sphinx project through ``sphinx.testing``, in seconds)."""

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]


def _notebook(*sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A notebook")] + [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


REGISTER = """\
- id: T-1
  paper: B
  where: eq. 99
  chapter: a9_nb
  statement: two equals $2$
- id: T-3
  paper: A
  where: eq. 3
  chapter: a9_nb
  statement: not tested yet
"""


ORPHAN = """\
- id: T-2
  paper: A
  where: eq. 1
  chapter: a8_not_in_the_book
  statement: s
"""


def _mini_book(root: Path, notebook: nbformat.NotebookNode, extra_page: str = "", register: str = REGISTER) -> None:
    shutil.copy(REPO / "_config.yml", root / "_config.yml")
    for folder in ("_static", "_extra", "_ext"):
        shutil.copytree(REPO / folder, root / folder)
    (root / "ledger").mkdir()
    (root / "ledger" / "claims.yml").write_text(register)
    (root / "book").mkdir()
    shutil.copy(REPO / "book" / "references.bib", root / "book" / "references.bib")
    (root / "book" / "intro.md").write_text("# Mini book\n\nA test book {cite:p}`hu2022lora`.\n")
    (root / "book" / "bibliography.md").write_text("# Bibliography\n\n```{bibliography}\n```\n")
    chapters = ["      - file: notebooks/a9_nb", "      - file: book/bibliography"]
    if extra_page:
        (root / "book" / "ledger.md").write_text(extra_page)
        chapters.append("      - file: book/ledger")
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: Test\n    chapters:\n" + "\n".join(chapters) + "\n"
    )
    (root / "notebooks").mkdir()
    nbformat.write(notebook, root / "notebooks" / "a9_nb.ipynb")


def _build(root: Path) -> subprocess.CompletedProcess:
    """The Makefile's strict build (``make book``) of the book at ``root``."""
    make = (REPO / "Makefile").read_text()
    flags = make.split("JB_BUILD := $(BIN)/jupyter-book build . ", 1)[1].split("\n", 1)[0].split()
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run([str(jupyter_book), "build", str(root), *flags], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.book
def test_a_notebook_stored_with_an_error_fails_the_build(tmp_path):
    """The book renders stored outputs: a notebook stored after a failed execution fails the strict build."""
    nb = _notebook("x = 1", "1 / 0")
    nb.cells[2].outputs = [
        nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])
    ]
    _mini_book(tmp_path, nb)
    result = _build(tmp_path)
    log = result.stdout + result.stderr
    assert result.returncode != 0, log
    assert "a9_nb.ipynb stores an error output (cell 3: ZeroDivisionError: division by zero)" in log, log


@pytest.mark.slow
def test_the_executor_stores_outputs_and_times_and_stops_at_an_error(tmp_path, monkeypatch):
    """tools/execute_notebooks.py stores each cell's outputs without timestamps and records the notebook's time
    for the execution-statistics page; a cell that raises stops it with the error."""
    import importlib.util

    from nbclient.exceptions import CellExecutionError

    spec = importlib.util.spec_from_file_location("execute_notebooks", REPO / "tools" / "execute_notebooks.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(_notebook("import time; time.sleep(0.2); print(6 * 7)"), good)
    nbformat.write(_notebook("x = 1", "1 / 0"), bad)
    assert tool.main([str(good)]) == 0
    stored = nbformat.read(good, as_version=4)
    assert stored.cells[1].outputs[0]["text"] == "42\n" and "execution" not in stored.cells[1].metadata
    run = json.loads((tmp_path / "_build" / "notebook_times.json").read_text())["notebooks"]["good"]
    assert run["measured_by"] == "tools/execute_notebooks.py" and run["cells"] == 1 and run["result"] == "stored"
    assert 0.2 <= run["seconds"] < 30
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        tool.main([str(bad)])
    names = ["n/a6_membership.ipynb", "n/a7_conclusions.ipynb", "n/aa_moments.ipynb", "n/b3_noisy_variants.ipynb"]
    assert tool.in_order(names) == [*names[:1], *names[2:], names[1]]  # the conclusion reads the others' ledger


@pytest.mark.slow
@pytest.mark.book
def test_an_orphan_chapter_and_an_unknown_claim_each_fail_the_build(tmp_path):
    """One strict build with --keep-going reports both: a registered chapter missing from the book, and a verdict
    role naming a claim the register does not have."""
    page = "# Ledger\n\n```{claims-ledger}\n```\n\nSee {verdict}`NO-SUCH-CLAIM`.\n"
    _mini_book(tmp_path, _notebook("x = 1"), page, REGISTER + ORPHAN)
    result = _build(tmp_path)
    log = result.stdout + result.stderr
    assert result.returncode != 0, log
    assert "chapter 'a8_not_in_the_book' is not in the book" in log, log
    assert "unknown claim id 'NO-SUCH-CLAIM'" in log, log


CONF = """\
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_parser", "lorapriv_ledger", "offline_mathjax"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
mathjax_path = "mathjax/es5/tex-chtml.js"
"""


def _sphinx_build(root: Path) -> tuple[str, str]:
    """An HTML build of the Sphinx project at ``root`` with the book's ledger and MathJax extensions, in-process;
    returns the pages' folder and the warnings."""
    from sphinx.testing.util import SphinxTestApp

    warnings = io.StringIO()
    app = SphinxTestApp("html", srcdir=root, status=io.StringIO(), warning=warnings)
    try:
        app.build()
    finally:
        app.cleanup()
    return Path(app.outdir), warnings.getvalue()


def test_the_ledger_directive_renders_rows_that_link_to_their_chapter(tmp_path, monkeypatch):
    from lorapriv_utils import ledger

    (tmp_path / "conf.py").write_text(CONF.format(ext=str(REPO / "_ext")))
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "claims.yml").write_text(REGISTER)
    monkeypatch.setattr(ledger, "ledger_dir", lambda: tmp_path / "ledger")
    checks = [ledger.check_close("exact", 2.0, 2.0), ledger.check_close("approx", 3.0, 2.0, role="caveat")]
    # executed at one scale, decided by another's records: the row's Scale cell names the deciding one
    claim = ledger.Claim(claim_id="T-1", scale="test", checks=checks, summary="2 vs 2", decided_at="cpu-pretrained")
    ledger.save_claims("a9_nb", [claim])
    assert claim.verdict == "qualified" and (tmp_path / "ledger" / "a9_nb.json").is_file()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "a9_nb.md").write_text("# A notebook\n\nIts page.\n")
    (tmp_path / "ledger.md").write_text(
        "# Ledger\n\n```{claims-ledger}\n```\n\nThe verdict of T-1 is {verdict}`T-1`.\n\n"
        "```{claims-table} a9_nb\n```\n\nNumbers: {claim-numbers}`T-1`.\n\n"
        "## Qualified\n\n```{claims-by-status} qualified\n```\n\n## Fails\n\n```{claims-by-status} fails\n```\n"
    )
    (tmp_path / "index.md").write_text("# Mini book\n\n```{toctree}\nnotebooks/a9_nb\nledger\n```\n")
    out, warnings = _sphinx_build(tmp_path)
    assert "WARNING" not in warnings and "ERROR" not in warnings, warnings
    html = (out / "ledger.html").read_text()
    assert "two equals" in html and "verdict-qualified" in html and "verdict-pending" in html
    assert '<span class="math notranslate nohighlight">\\(2\\)</span>' in html  # the statement's MyST math
    assert 'href="notebooks/a9_nb.html"' in html  # no book page: the row links to the notebook
    # ledger row, inline badge, chapter table, the by-status list; each badge of the tally too
    assert html.count("verdict-qualified") == 5 and 'href="#claim-t-1"' in html
    assert 'title="claim T-1: qualified"' in html  # an inline badge names its claim, in its tooltip and its text
    assert '<span class="lorapriv-claim-id">T-1</span> <span class="lorapriv-verdict verdict-qualified">' in html
    assert "Numbers: 2 vs 2." in html

    # the ledger's row: its id and verdict first, its paper and verdict as classes (the filters), numbers folded
    def ledger_row(anchor: str) -> str:
        before, after = html.split(f'id="{anchor}"')
        return before.rsplit("<tr", 1)[1] + after.split("\n</td>\n</tr>")[0]  # a row's end, not a nested table's

    row = ledger_row("claim-t-1")
    assert 'class="paper-B status-qualified row-even"' in row and row.index("col-claim") < row.index("col-verdict")
    assert "<code" in row.split("col-claim")[1].split("</td>")[0] and ">T-1<" in row
    # its evidence: the outcomes counted by role, then its checks as a table (check, role, number, interval,
    # threshold, outcome) and the chapter's numbers, each folded
    evidence = row.split("col-evidence")[1]
    assert "core: 1 of 1 pass; caveats: 0 of 1 pass, 1 fail" in evidence.split("<details>")[0]
    assert "<details><summary>the checks</summary>" in evidence
    assert "2 vs 2" in evidence.split("<details><summary>the numbers</summary>")[1]
    checks = evidence.split('class="lorapriv-checks')[1].split("</table>")[0]
    assert ">Threshold<" in checks and ">approx<" in checks and ">caveat<" in checks
    assert '<span class="check-fails">fails</span>' in checks and '<span class="check-passes">passes</span>' in checks
    where = row.split("col-where")[1]
    assert ">cpu-pretrained</abbr>" in where and "SmolLM2" in where and "lorapriv-chapter-link" in where
    pending = ledger_row("claim-t-3")
    assert "paper-A status-pending" in pending and "not tested yet" in pending and "the checks" not in pending
    assert "trains one): cpu-small, a 2-layer GPT-2 of width 64 (235,264 parameters)" in html
    qualified, fails = html.split('id="qualified"')[1].split('id="fails"')
    assert "two equals" in qualified and "None at present." in fails
    assert (out / "_static" / "mathjax" / "es5" / "tex-chtml.js").is_file()


def test_the_execution_statistics_page_shows_each_notebook_s_latest_measured_time(tmp_path):
    """A notebook's row gives the time its latest execution here measured (nbval's or the executor's, written
    through ``execution_times.record``); a notebook nothing has executed says so rather than show a time."""
    sys.path.insert(0, str(REPO / "_ext"))
    import execution_times

    conf = CONF.replace('"offline_mathjax"]', '"execution_times"]')
    (tmp_path / "conf.py").write_text(conf.format(ext=str(REPO / "_ext")))
    (tmp_path / "notebooks").mkdir()
    for name in ("a7_third", "a8_other", "a9_nb"):
        (tmp_path / "notebooks" / f"{name}.md").write_text(f"# Notebook {name}\n")
    execution_times.record(tmp_path, {"a9_nb": {"seconds": 1.0, "cells": 3, "result": "stored"}}, "first")
    execution_times.record(tmp_path, {"a7_third": {"seconds": 2.0, "cells": 1, "result": "stored"}}, "second")
    execution_times.record(tmp_path, {"a9_nb": {"seconds": 12.34, "cells": 3, "result": "matched"}}, "nbval")
    toctree = "\n".join(f"notebooks/{name}" for name in ("a7_third", "a8_other", "a9_nb"))
    (tmp_path / "index.md").write_text(f"# Times\n\n```{{execution-times}}\n```\n\n```{{toctree}}\n{toctree}\n```\n")
    out, warnings = _sphinx_build(tmp_path)
    assert "WARNING" not in warnings, warnings
    html = (out / "index.html").read_text()
    rows = html.split("<tbody>")[1].split("</tr>")
    assert "Notebook a7_third" in rows[0] and "2.0" in rows[0] and "second, " in rows[0]  # kept by the later record
    assert "Notebook a8_other" in rows[1] and "not executed here" in rows[1]
    assert "Notebook a9_nb" in rows[2] and "12.3" in rows[2] and "nbval, " in rows[2] and "matched" in rows[2]
    assert "all notebooks" in rows[3] and "14.3" in rows[3] and "sum of the 2 measured rows; 1 not executed" in rows[3]
    assert "first" not in html  # replaced by nbval's record
    assert 'href="notebooks/a9_nb.html"' in rows[2]


def test_nbval_s_run_writes_each_notebook_s_time(tmp_path, monkeypatch):
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("nb_conftest", REPO / "notebooks" / "conftest.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    monkeypatch.setattr(hooks, "ROOT", tmp_path)
    for when, duration, passed in (("setup", 5.0, True), ("call", 1.25, True), ("call", 2.0, False)):
        hooks.pytest_runtest_logreport(
            SimpleNamespace(fspath="notebooks/a9_nb.ipynb", when=when, duration=duration, passed=passed)
        )
    hooks.pytest_runtest_logreport(SimpleNamespace(fspath="tests/test_x.py", when="call", duration=9.0, passed=True))
    worker = SimpleNamespace(config=SimpleNamespace(workerinput={}))
    hooks.pytest_sessionfinish(worker, 0)  # an xdist worker leaves the writing to the controller
    assert not (tmp_path / "_build").exists()
    hooks.pytest_sessionfinish(SimpleNamespace(config=SimpleNamespace()), 0)
    run = json.loads((tmp_path / "_build" / "notebook_times.json").read_text())["notebooks"]["a9_nb"]
    assert (run["seconds"], run["cells"], run["measured_by"]) == (3.2, 2, "nbval")  # calls only, rounded
    assert run["result"] == "differed from the stored ones"


def _directive_rows(tmp_path, directive: str) -> list[str]:
    """The body rows of a page that holds only ``directive`` of ``_ext/results_table.py``, built without warnings."""
    conf = CONF.replace('"offline_mathjax"]', '"results_table"]')
    (tmp_path / "conf.py").write_text(conf.format(ext=str(REPO / "_ext")))
    (tmp_path / "index.md").write_text(f"# A page\n\n```{{{directive}}}\n```\n")
    out, warnings = _sphinx_build(tmp_path)
    assert "WARNING" not in warnings, warnings
    return (out / "index.html").read_text().split("<tbody>")[1].split("</tr>")[:-1]


def test_the_results_table_comes_from_the_catalogue_and_the_records(tmp_path):
    """``{results-table}``: one row per Make target of the catalogue, with its records' count and measured wall time
    (the README's numbers, from the same records), and what it needs."""
    from lorapriv_utils.catalogue import TARGETS
    from lorapriv_utils.mia.records.status import format_duration, measured_seconds

    rows = _directive_rows(tmp_path, "results-table")
    assert len(rows) == len(TARGETS)
    b3 = next(r for r in rows if ">results-b3<" in r)
    assert format_duration(measured_seconds("results-b3")) in b3 and "nothing more" in b3
    assert "DATA_DIR=../shared/data" in next(r for r in rows if ">results-a6-pretrained<" in r)


def test_the_claims_records_table_gives_each_chapter_s_records_and_their_measured_cost(tmp_path):
    """``{claims-records-table}``: one row per chapter that reads committed records, its measured wall time summed
    from the records and the 16-core bound derived from it (never typed)."""
    from lorapriv_utils.catalogue import CATALOGUE, format_duration, measured_seconds

    rows = _directive_rows(tmp_path, "claims-records-table")
    assert len(rows) == len({e.chapter for e in CATALOGUE})
    b2 = next(r for r in rows if "b2_matrix_queries" in r)
    seconds = measured_seconds("whitebox")
    assert format_duration(seconds) in b2 and format_duration(seconds / 16) in b2 and "B-2.not-dp" in b2
