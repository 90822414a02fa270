"""The repository's own invariants: notebook pairs, stored outputs, ledger data, toc."""

from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

from lorapriv_utils import ledger

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _toc_files() -> set[str]:
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    files = {toc["root"]}

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.add(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return files


def _code(nb) -> list[str]:
    return [c.source.strip() for c in nb.cells if c.cell_type == "code"]


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_in_sync_with_its_text_twin(path):
    twin = path.with_suffix(".py")
    assert twin.is_file(), f"{path.name} has no jupytext twin {twin.name}; run make notebooks"
    ipynb, py = jupytext.read(path), jupytext.read(twin)
    assert _code(ipynb) == _code(py), f"{path.name} and {twin.name} differ; run make notebooks"
    assert [c.source.strip() for c in ipynb.cells] == [c.source.strip() for c in py.cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_reads_its_scale_first_and_stores_outputs(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "current_scale()" in code[0].source, "the first code cell must read the scale via current_scale()"
    missing = [i for i, c in enumerate(code) if not c.outputs and c.source.strip()]
    # A cell may legitimately print nothing; but a notebook without outputs was never executed.
    assert len(missing) < len(code), f"{path.name} has no stored outputs; run make notebooks"
    assert all(c.execution_count is not None for c in code), f"{path.name} was not fully executed"
    for cell in code:
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name} stores an error output"
            assert not (out.output_type == "stream" and out.name == "stderr"), f"{path.name} stores stderr output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_is_in_the_toc(path):
    assert path.relative_to(REPO).with_suffix("").as_posix() in _toc_files()


def test_toc_files_exist():
    for entry in _toc_files():
        assert any((REPO / (entry + ext)).is_file() for ext in (".md", ".ipynb")), entry


def test_committed_ledger_is_consistent():
    rows = ledger.load_ledger(REPO / "ledger")  # re-derives every verdict, checks every id against the register
    assert rows
    toc = _toc_files()
    for row in rows:
        pages = [f for f in toc if f.rsplit("/", 1)[-1] == row.entry.chapter]
        assert pages, f"{row.entry.claim_id}: chapter {row.entry.chapter} has no page in _toc.yml"
        assert row.status in ledger.STATUSES
    tested = {row.entry.claim_id for row in rows if row.result is not None}
    assert len(tested) >= 16  # the claims of sections 2-4 and the appendices


def test_the_register_lists_both_papers_and_the_later_versions():
    entries = ledger.load_register(REPO / "ledger")
    places = " ".join(e.where for e in entries)
    for where in ("Theorem 5.1", "eq. 22", "eq. 23", "§5.1", "Table 1", "§7", "Theorem 1", "v8-v9", "M1", "M2"):
        assert where in places, f"no registered claim from {where}"
    assert {e.paper for e in entries} == {"A", "B"}


def test_no_shared_data_is_committed():
    assert not list(REPO.glob("**/enron1_ham*")) and not list(REPO.glob("**/pubmedqa_pqal*"))


def test_the_artefacts_check_fails_on_an_edited_or_new_ledger_or_figure_file(tmp_path):
    """`make artefacts-check` (CI, after the notebooks ran): what they wrote must be what is committed."""
    import shutil
    import subprocess

    def run(*args):
        return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=60)

    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    (tmp_path / "ledger").mkdir()
    (tmp_path / "book" / "figures").mkdir(parents=True)
    (tmp_path / "ledger" / "a9.json").write_text('{"verdict": "holds"}\n')
    (tmp_path / "book" / "figures" / "a9.svg").write_text("<svg/>\n")
    for command in (
        ("git", "init", "-q"),
        ("git", "add", "."),
        ("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"),
    ):
        assert run(*command).returncode == 0
    assert run("make", "-s", "artefacts-check").returncode == 0
    (tmp_path / "ledger" / "a9.json").write_text('{"verdict": "fails"}\n')  # a notebook wrote another verdict
    edited = run("make", "-s", "artefacts-check")
    assert edited.returncode != 0 and "differ from the committed ones" in edited.stderr
    run("git", "checkout", "--", "ledger")
    (tmp_path / "book" / "figures" / "new.svg").write_text("<svg/>\n")  # a figure nobody committed
    new = run("make", "-s", "artefacts-check")
    assert new.returncode != 0 and "not committed: book/figures/new.svg" in new.stderr


def test_the_repository_address_is_one_setting():
    """_config.yml's repository.url is the address; the places that cannot read it (a BibTeX block, CITATION.cff)
    repeat it exactly, and no page types another."""
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    assert "path_to_book" not in config["repository"]  # launch links without /./
    assert f"url = {{{url}}}" in (REPO / "book" / "how_to_cite.md").read_text(encoding="utf-8")
    assert f'repository-code: "{url}"' in (REPO / "CITATION.cff").read_text(encoding="utf-8")
    pages = [p for p in (REPO / "book").rglob("*.md") if url in p.read_text(encoding="utf-8")]
    assert [p.name for p in pages] == ["how_to_cite.md"]  # its BibTeX block only; prose uses {{ repository }}
    assert (REPO / "book" / "how_to_cite.md").read_text(encoding="utf-8").count(url) == 1


def test_an_unfinished_runs_journal_is_committed_only_under_results_pending():
    # a long run spans working sessions: its journals under results/pending are kept by git, elsewhere not
    import subprocess

    def ignored(path: str) -> bool:
        found = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=REPO, timeout=60)
        return found.returncode == 0

    for name in (".full-s1.sweep", ".lora-r8-lr0.01-s0.target", ".lora-r8-lr0.01-s0.target.scores.npz"):
        assert not ignored(f"results/pending/cpu-pretrained/enron/{name}")
        assert ignored(f"results/cpu-pretrained/enron/{name}") and ignored(f"scratch/{name}")
    assert ignored("results/pending/cpu-pretrained/enron/.full-s1.json.lock")  # a lock never


def test_one_version_names_the_release_everywhere_and_its_commit_is_real():
    """pyproject.toml's version is CITATION.cff's, the software BibTeX's and the CHANGELOG's latest entry's; the
    commit CITATION.cff names, once a release names one, exists and carries that version."""
    import re
    import subprocess
    import tomllib

    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert str(citation["version"]) == version
    assert f"version = {{{version}}}" in (REPO / "book" / "how_to_cite.md").read_text(encoding="utf-8")
    entries = re.findall(r"^## (\d+\.\d+\.\d+) ", (REPO / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert entries and entries[0] == version, "the CHANGELOG's latest entry is not this version"
    assert all("Verdicts that moved" in block for block in (REPO / "CHANGELOG.md").read_text().split("\n## ")[1:2])
    if "commit" in citation:
        done = subprocess.run(
            ["git", "show", f"{citation['commit']}:pyproject.toml"], cwd=REPO, capture_output=True, text=True
        )
        shallow = subprocess.run(
            ["git", "rev-parse", "--is-shallow-repository"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        if done.returncode != 0 and shallow == "true":
            pytest.skip("a shallow clone holds no earlier commit to check")
        assert done.returncode == 0, f"CITATION.cff names commit {citation['commit']}, which this clone lacks"
        assert f'version = "{version}"' in done.stdout
