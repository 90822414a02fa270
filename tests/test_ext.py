"""The book's Sphinx extensions that hold logic of their own (the ledger directives are tested by
building a mini book in test_book_build.py)."""

import datetime
import subprocess
import sys
from pathlib import Path

from pybtex.database import parse_string

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "_ext"))
import author_year_bibliography  # noqa: E402
import build_footer  # noqa: E402


def _entries(bib: str):
    return list(parse_string(bib, "bibtex").entries.values())


def test_author_year_labels():
    bib = """
    @misc{a, author = {Malekmohammadi, Saber and Farnadi, Golnoosh}, title = {T}, year = {2024}}
    @misc{b, author = {Hu, Yaxi and D{\\"u}ngler and Sch{\\"o}lkopf and Sanyal}, title = {T}, year = {2026}}
    @misc{c, author = {Billingsley, Patrick}, title = {T}, year = {1995}}
    @misc{d, author = {Billingsley, Patrick}, title = {U}, year = {1995}}
    """
    entries = _entries(bib)
    labels = list(author_year_bibliography.AuthorYearLabels().format_labels(entries))
    assert labels == [
        "Malekmohammadi and Farnadi 2024",
        "Hu et al. 2026",
        "Billingsley 1995",
        "Billingsley 1995b",
    ]


def test_footer_names_the_commit_and_the_date():
    html = build_footer.footer_html("https://example.org/repo", "a" * 40, False, datetime.date(2026, 11, 30))
    assert 'href="https://example.org/repo/commit/' + "a" * 40 in html and ">aaaaaaaaaaaa<" in html
    assert "on 2026-11-30" in html and "local changes" not in html
    assert "+ local changes" in build_footer.footer_html("", "b" * 40, True, datetime.date(2026, 1, 1))
    assert "outside a git checkout" in build_footer.footer_html("", "unknown", False, datetime.date(2026, 1, 1))


def test_build_provenance_reads_git(tmp_path):
    assert build_footer.build_provenance(tmp_path) == ("unknown", False)
    commit, _ = build_footer.build_provenance(REPO)
    expected = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert commit == expected


def test_the_ledger_is_read_once_per_build(monkeypatch, tmp_path):
    from types import SimpleNamespace

    import lorapriv_ledger

    calls = []
    monkeypatch.setattr(lorapriv_ledger, "load_ledger", lambda folder: calls.append(folder) or [])
    app = SimpleNamespace(srcdir=str(tmp_path))
    for page in ("a", "b", "c"):
        assert lorapriv_ledger._ledger_rows(app, page) == {}
    assert len(calls) == 1


def test_the_ledger_shows_symbols_not_ascii_mathematics():
    """The chapters write summaries as plain text; the ledger page shows them with symbols, without Markdown
    markers or Python list brackets (issue 30's reading of the ledger)."""
    sys.path.insert(0, str(REPO / "_ext"))
    from lorapriv_ledger import readable

    text = "||f_A(t)||_2 <= eta L; A^T A != I; sqrt(r) >= 1; the *added* noise; ranks [4, 16, 64]; [1] stays"
    assert readable(text) == "‖f_A(t)‖_2 ≤ η L; Aᵀ A ≠ I; √(r) ≥ 1; the added noise; ranks 4, 16, 64; [1] stays"
    text = "$F_n$ at `make x`; chi^2_r/r and a chi-square law; 2^6/pi; (eta L)^2.03; eps = 1, delta = 1e-5; beta stays"
    assert readable(text) == "F_n at make x; χ²_r/r and a chi-square law; 2⁶/π; (η L)^2.03; ε = 1, δ = 1e-5; beta stays"
    assert readable(r"$\varepsilon$ and $\sigma$") == "ε and σ"
    shown = readable("eps_rho, delta_rho and kappa_n; 0.25 +- 0.01").replace("\u200b", "")
    assert shown == "ε_ρ, δ_ρ and κ_n; 0.25 ± 0.01"


def test_a_clean_build_points_binder_and_the_source_links_at_its_commit(monkeypatch):
    from types import SimpleNamespace

    def configured(commit, dirty):
        monkeypatch.setattr(build_footer, "build_provenance", lambda root: (commit, dirty))
        config = SimpleNamespace(html_theme_options={"repository_url": "u", "repository_branch": "main"})
        build_footer._set_footer(SimpleNamespace(srcdir="."), config)
        return config.html_theme_options["repository_branch"]

    assert configured("c" * 40, False) == "c" * 40  # a cited page's Binder opens the notebooks it was built from
    assert configured("c" * 40, True) == "main"  # local changes: no commit holds them
    assert configured("unknown", False) == "main"
