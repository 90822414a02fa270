"""The browser check finds what a reader would see broken (needs Debian's chromium)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import check_html  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)"),
]

GOOD = """<!doctype html><html><head><title>ok</title><link rel="icon" href="data:,"></head><body>
<h1 id="top">Fine</h1><p>AUC 0.75</p><a href="other.html#here">other</a><a href="#top">top</a>
<a href="https://example.org/">external links are not followed</a></body></html>"""
OTHER = (
    '<!doctype html><html><head><link rel="icon" href="data:,"></head>'
    '<body><p id="here">here, 0.5</p><a href="index.html">back</a></body></html>'
)


def _site(tmp_path: Path, index: str) -> Path:
    (tmp_path / "index.html").write_text(index)
    (tmp_path / "other.html").write_text(OTHER)
    return tmp_path


PROBLEMS = {
    "script": ("<script>undefinedFunction()</script>", "JavaScript error"),
    "image": ('<img src="missing.png">', "image did not load"),
    "link": ('<a href="nowhere.html">x</a>', "broken link"),
    "anchor": ('<a href="other.html#nothere">x</a>', "no anchor #nothere"),
    "math": ('<div class="math">\\[x^2\\]</div>', "math not rendered"),
    "markdown": ("<article><p>| claim | where | |---|---|</p></article>", "Markdown table syntax"),
    "dict": ("<article><div class='cell_output'><pre>{'rank': 2}</pre></div></article>", "raw Python dict"),
    "launch": ("<article><div class='cell_output'><pre>1</pre></div></article>", "no Binder launch link"),
    "wide": ("<article><div style='width: 1200px'>too wide</div></article>", "wider than a phone screen"),
    "index": (
        "<article><div class='cell_output'><table><thead><tr><th></th><th>auc</th></tr></thead><tbody>"
        "<tr><th>0</th><td>0.5</td></tr><tr><th>1</th><td>0.6</td></tr></tbody></table></div></article>",
        "1 notebook tables show a 0..N row index",
    ),
    "badge": (
        "<article><p>It <span class='lorapriv-verdict verdict-holds'>holds</span>, and "
        "<a href='#top' title='claim A-1: holds'><span class='lorapriv-verdict verdict-holds'>holds</span></a>.</p>"
        "<p class='lorapriv-tally'><span class='lorapriv-verdict verdict-fails'>fails</span></p></article>",
        "1 verdict badges name no claim: holds",
    ),
    "answer": (
        "<article><div class='admonition takeaway'><p class='admonition-title'>In short</p><p>"
        + "word " * 91
        + "</p></div></article>",
        "the answer box has 91 words, over 90",
    ),
    # a seven-column ledger in a scrolling box: its verdict column starts beyond a phone's screen
    "ledger": (
        "<article><table class='lorapriv-ledger' style='display: block; overflow-x: auto'><tbody><tr id='claim-x'>"
        "<td style='min-width: 300px'>paper</td><td style='min-width: 300px'>claim</td>"
        "<td class='col-claim'>X-1</td><td class='col-verdict'>holds</td></tr></tbody></table></article>",
        "1 claims-ledger rows whose claim or verdict cannot be read at 390 px: claim-x",
    ),
    # two tables captioned alike: one anchor for two
    "twice": ("<article><p id='t-1'>0.5</p><p id='t-1'>0.6</p></article>", "two elements share the id 't-1'"),
    # words only on a phone's first screen, the page's first number far below it
    "unnumbered": (
        "<article><p>Words, and words.</p><p style='margin-top: 2000px'>0.25</p></article>",
        "no number on the first phone screen",
    ),
    # a table as wide as three screens in its scrolling box: its caption, inside it, is cut at either width
    "caption": (
        "<article><p>0.5</p><div style='overflow-x: auto; max-width: 100%'><table><caption>"
        + "a caption as wide as the table " * 12
        + "</caption><tbody><tr><td style='min-width: 3000px'>0.5</td></tr></tbody></table></div></article>",
        "a table's caption is cut: a caption as wide as the table",
    ),
    # a first column of words wider than a screen: the first number lies beyond it
    "number": (
        "<article><p>0.5</p><div style='overflow-x: auto; max-width: 100%'><table><tbody><tr>"
        "<td style='min-width: 1500px'>a method</td><td>0.5</td></tr></tbody></table></div></article>",
        "a table's first number is off the screen: a method",
    ),
    # a ledger whose evidence column lies beyond its own box on a desktop (the reader would scroll sideways to it);
    # a nested table of checks is not a ledger row
    "ledger-columns": (
        "<article><table class='lorapriv-ledger' style='display: block; overflow-x: auto; width: 600px'><thead><tr>"
        "<th style='min-width: 500px'>Claim</th><th style='min-width: 500px'>Evidence</th></tr></thead><tbody>"
        "<tr id='claim-y'><td class='col-claim'>Y-1</td><td class='col-verdict'>holds"
        "<table class='lorapriv-checks'><tbody><tr><td>a check</td></tr></tbody></table></td></tr></tbody></table>"
        "</article>",
        "claims-ledger columns off the table's box at 1366 px: Evidence",
    ),
}
# a matplotlib figure 8 in wide whose smallest text is 7 pt, shown across a phone's column: 7 / 72 * 358 / 8 px;
# the same figure recording no size; and one 5.4 in wide with 10 pt text, which passes
FIGURE = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="{w}pt" height="100pt" viewBox="0 0 {w} 100"><metadata>'
    "Matplotlib v3.11.2{record}</metadata><rect width='{w}' height='100' fill='#ccc'/></svg>"
)
FIGURES = {
    "small.svg": FIGURE.format(w=576, record="; lorapriv figure: smallest text 7 pt"),
    "unrecorded.svg": FIGURE.format(w=576, record=""),
    "readable.svg": FIGURE.format(w=388.8, record="; lorapriv figure: smallest text 10 pt"),
}
PROBLEMS |= {
    "figure-small": (
        "<article><p>0.5</p><details><summary>a figure in a toggle</summary>"
        "<img src='small.svg' style='max-width: 100%'></details></article>",
        "below 9 px: small.svg (390 px)",  # 7 / 72 * 374 / 8 px in this page's 374 px column
    ),
    "figure-unrecorded": (
        "<article><p>0.5</p><img src='unrecorded.svg' style='max-width: 100%'></article>",
        "figure unrecorded.svg does not record its text size",
    ),
}
REDIRECT = '<!DOCTYPE html><html><head><meta http-equiv="Refresh" content="0; url={}" /></head></html>'
SCROLLING_TABLE = (
    "<article><div style='overflow-x: auto; max-width: 100%'><table style='width: 1200px'><tr><td>0.5</td></tr>"
    "</table></div></article>"
)


def test_each_problem_is_found_on_its_page_and_clean_pages_pass(tmp_path):
    """One browser over a site with one page per kind of problem: each page reports its own problem, and the clean
    pages (a wide table in its own scrolling box among them) report none."""
    site = _site(tmp_path, GOOD)
    for name, (body, _) in PROBLEMS.items():
        (site / f"{name}.html").write_text(GOOD.replace("</body>", body + "</body>"))
    (site / "scrolling.html").write_text(GOOD.replace("</body>", SCROLLING_TABLE + "</body>"))
    for name, svg in FIGURES.items():
        (site / name).write_text(svg)
    figure = "<article><p>0.5</p><img src='readable.svg' style='max-width: 100%'></article>"
    (site / "figure.html").write_text(GOOD.replace("</body>", figure + "</body>"))
    # pages that only forward (like the root index.html) navigate away while probed: they are judged by their target
    (site / "forward.html").write_text(REDIRECT.format("other.html"))
    (site / "redirect.html").write_text(REDIRECT.format("gone.html"))
    (site / "loop.html").write_text(REDIRECT.format("loop.html"))
    problems = check_html.check_site(site, CHROMIUM)
    by_page: dict[str, list[str]] = {}
    for problem in problems:
        page, message = problem.split(": ", 1)
        by_page.setdefault(page.removesuffix(".html"), []).append(message)
    for name, (_, expected) in PROBLEMS.items():
        assert any(expected in m for m in by_page.get(name, [])), (name, by_page.get(name))
    (redirect,) = by_page.pop("redirect")
    assert redirect.startswith("redirect: broken link to ") and "(no file gone.html)" in redirect, redirect
    assert by_page.pop("loop") == ["redirect: forwards to itself"]
    assert set(by_page) <= set(PROBLEMS), by_page  # index, other, scrolling, figure and forward pass


@pytest.mark.parametrize(
    ("content", "target"),
    [
        ("0; url=book/intro.html", "book/intro.html"),  # what Sphinx's external TOC writes
        ("0;URL='a.html'", "a.html"),
        ("0, a.html", "a.html"),  # the target without "url="
        ("30; url=a.html", None),  # a page shown for 30 s first is a page, probed as one
        ("5", None),  # a reload, no target
        ("soon", None),
    ],
)
def test_a_page_forwards_only_at_once_and_to_a_target(tmp_path, content, target):
    page = tmp_path / "p.html"
    page.write_text(f'<html><head><meta http-equiv="refresh" content="{content}"></head><body>x</body></html>')
    assert check_html._redirect(page) == target
    page.write_text(REDIRECT.format("first.html").replace("</head>", '<meta http-equiv="Refresh" content="0; url=b">'))
    assert check_html._redirect(page) == "first.html"  # the browser obeys the first
    page.write_text(GOOD)
    assert check_html._redirect(page) is None


def test_answer_boxes_stay_short_and_the_landing_page_answers_on_a_phone_s_first_screen():
    fine = {"box": 500.0, "tally": 600.0, "words": 80}
    assert check_html.answer_problems(fine, 844, landing=True) == []
    assert check_html.answer_problems({**fine, "tally": 1312.0}, 844, landing=True) == [
        "the tally of verdicts does not end on the first phone screen (at 1312.0 px of 844)"
    ]
    long = check_html.answer_problems({**fine, "box": 1145.0, "words": 270}, 844, landing=True)
    assert long == [
        "the answer box does not end on the first phone screen (at 1145.0 px of 844)",
        "the answer box has 270 words, over 90",
    ]
    assert "tally of verdicts" in check_html.answer_problems({**fine, "tally": None}, 844, landing=True)[0]
    chapter = {"box": 2369.0, "tally": None, "words": 91}  # a chapter: only its length counts
    assert check_html.answer_problems(chapter, 844, landing=False) == ["the answer box has 91 words, over 90"]


def test_command_line_exit_status(tmp_path):
    site = _site(tmp_path, GOOD.replace("</body>", '<a href="gone.html">x</a></body>'))
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_html.py"), str(site)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1 and "gone.html" in result.stdout


def test_launch_links_must_open_a_notebook():
    good = ["https://mybinder.org/v2/gh/lorapriv/lorapriv/main?urlpath=tree/notebooks/a3_noise.ipynb"]
    assert check_html.launch_problems(good) == []
    assert check_html.launch_problems([]) == ["no Binder launch link"]
    colab = "https://colab.research.google.com/github/lorapriv/lorapriv/blob/main/notebooks/a3_noise.ipynb"
    assert check_html.launch_problems([*good, colab])[0].startswith("a Colab launch link, which cannot run")
    dotted = "https://mybinder.org/v2/gh/lorapriv/lorapriv/main?urlpath=tree/./notebooks/a3_noise.ipynb"
    assert check_html.launch_problems([dotted]) == [f"a /./ in the Binder link {dotted}"]
    assert check_html.launch_problems(["https://mybinder.org/v2/gh/lorapriv/lorapriv/main"])[0].startswith("malformed")


def test_the_figure_rule_is_the_one_plots_draws_and_records():
    """The browser check does not import the package: its twin of the 9 px rule and of the text-size record must
    be plots' own (a record plots writes is one the check reads)."""
    from lorapriv_utils import plots

    assert check_html.MIN_TEXT_PX == plots.MIN_TEXT_PX
    record = plots.TEXT_RECORD.format(pt=11.5).encode()
    assert float(check_html._TEXT_RECORD.search(record).group(1)) == plots.text_record(record) == 11.5
