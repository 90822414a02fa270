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
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)"),
]

GOOD = """<!doctype html><html><head><title>ok</title><link rel="icon" href="data:,"></head><body>
<h1 id="top">Fine</h1><a href="other.html#here">other</a><a href="#top">top</a>
<a href="https://example.org/">external links are not followed</a></body></html>"""
OTHER = (
    '<!doctype html><html><head><link rel="icon" href="data:,"></head>'
    '<body><p id="here">here</p><a href="index.html">back</a></body></html>'
)


def _site(tmp_path: Path, index: str) -> Path:
    (tmp_path / "index.html").write_text(index)
    (tmp_path / "other.html").write_text(OTHER)
    return tmp_path


def test_a_clean_site_passes(tmp_path):
    assert check_html.check_site(_site(tmp_path, GOOD), CHROMIUM) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<script>undefinedFunction()</script>", "JavaScript error"),
        ('<img src="missing.png">', "image did not load"),
        ('<a href="nowhere.html">x</a>', "broken link"),
        ('<a href="other.html#nothere">x</a>', "no anchor #nothere"),
        ('<div class="math">\\[x^2\\]</div>', "math not rendered"),
        ("<article><p>| claim | where | |---|---|</p></article>", "Markdown table syntax"),
        ("<article><div class='cell_output'><pre>{'rank': 2}</pre></div></article>", "raw Python dict"),
        ("<article><div class='cell_output'><pre>1</pre></div></article>", "no Binder launch link"),
        ("<article><div style='width: 1200px'>too wide</div></article>", "wider than a phone screen"),
    ],
)
def test_problems_are_found(tmp_path, body, expected):
    page = GOOD.replace("</body>", body + "</body>")
    problems = check_html.check_site(_site(tmp_path, page), CHROMIUM)
    assert any(expected in p for p in problems), problems


def test_command_line_exit_status(tmp_path):
    site = _site(tmp_path, GOOD.replace("</body>", '<a href="gone.html">x</a></body>'))
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "check_html.py"), str(site)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1 and "gone.html" in result.stdout


def test_launch_links_must_open_a_notebook():
    good = [
        "https://mybinder.org/v2/gh/lorapriv/lorapriv/main?urlpath=tree/notebooks/a3_noise.ipynb",
        "https://colab.research.google.com/github/lorapriv/lorapriv/blob/main/notebooks/a3_noise.ipynb",
    ]
    assert check_html.launch_problems(good) == []
    assert check_html.launch_problems(good[:1]) == ["no Colab launch link"]
    bad = ["https://mybinder.org/v2/gh/lorapriv/lorapriv/main", "https://colab.research.google.com/drive/x"]
    assert len(check_html.launch_problems(bad)) == 2


def test_a_wide_table_in_its_own_scrolling_box_is_fine(tmp_path):
    table = "<table style='width: 1200px'><tr><td>x</td></tr></table>"
    box = f"<article><div style='overflow-x: auto; max-width: 100%'>{table}</div></article>"
    assert check_html.check_site(_site(tmp_path, GOOD.replace("</body>", box + "</body>")), CHROMIUM) == []
