"""The package's layout holds: what may import what, and one name per chapter.

* ``theory`` imports neither torch nor the engine nor the chapters;
* ``mia`` does not import the chapters; its engine (data, models, methods, training) imports none of its
  attacks, experiments or records, and its records (the committed results' reader, writer, specs and status)
  load no torch;
* a chapter module imports no other chapter module;
* a chapter key names its book page, notebook pair, ledger file and test file.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from lorapriv_utils import ledger

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "lorapriv_utils"
RUN = {"capture_output": True, "text": True, "check": True, "cwd": REPO}  # the checkout's package, not another
CHAPTERS = sorted(p.stem for p in (PACKAGE / "chapters").glob("*.py") if p.stem != "__init__")


def _imports(path: Path) -> set[str]:
    """Absolute names of every module that ``path`` imports (relative imports resolved)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    package = parts[:-1] if parts[-1] != "__init__" else parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


MIA_PARTS = ("engine", "attacks", "experiments", "records")


@pytest.mark.parametrize("path", _modules("theory"), ids=lambda p: p.name)
def test_theory_imports_no_torch_no_engine_no_chapter(path):
    bad = {
        name
        for name in _imports(path)
        if name.split(".")[0] in {"torch", "transformers", "peft", "opacus", "accelerate"}
        or name.startswith(("lorapriv_utils.mia", "lorapriv_utils.chapters"))
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_importing_theory_loads_no_torch():
    names = ", ".join(f"lorapriv_utils.theory.{p.stem}" for p in _modules("theory") if p.stem != "__init__")
    code = f"import sys, {names}; import lorapriv_utils.scale, lorapriv_utils.ledger; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], **RUN)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("path", _modules("mia"), ids=lambda p: p.name)
def test_engine_imports_no_chapter(path):
    assert not {n for n in _imports(path) if n.startswith("lorapriv_utils.chapters")}


def test_mia_is_split_by_role():
    assert {p.parent.name for p in _modules("mia") if p.stem != "__init__"} == {"mia", *MIA_PARTS}
    assert {p.stem for p in (PACKAGE / "mia").glob("*.py")} == {"__init__", "cli"}


@pytest.mark.parametrize("path", _modules("mia/engine"), ids=lambda p: p.name)
def test_the_engine_imports_no_attack_experiment_or_record(path):
    above = tuple(f"lorapriv_utils.mia.{part}" for part in MIA_PARTS if part != "engine")
    assert not {n for n in _imports(path) if n.startswith(above)}, f"{path.name} imports {sorted(_imports(path))}"


def test_the_records_load_no_torch():
    names = ", ".join(f"lorapriv_utils.mia.records.{p.stem}" for p in _modules("mia/records") if p.stem != "__init__")
    out = subprocess.run([sys.executable, "-c", f"import sys, {names}; print('torch' in sys.modules)"], **RUN)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("key", CHAPTERS)
def test_a_chapter_imports_no_other_chapter(key):
    others = {f"lorapriv_utils.chapters.{k}" for k in CHAPTERS if k != key}
    assert not (_imports(PACKAGE / "chapters" / f"{key}.py") & others)


def test_the_import_checker_sees_relative_imports(tmp_path):
    # a check that cannot fail is not evidence: the checker must catch a chapter importing another
    fake = PACKAGE / "chapters" / "zz_probe.py"
    fake.write_text("from . import a3_noise\nfrom ..theory import noise\n")
    try:
        names = _imports(fake)
    finally:
        fake.unlink()
    assert "lorapriv_utils.chapters.a3_noise" in names and "lorapriv_utils.theory.noise" in names


@pytest.mark.parametrize("key", CHAPTERS)
def test_one_name_per_chapter(key):
    module = __import__(f"lorapriv_utils.chapters.{key}", fromlist=["KEY"])
    assert module.KEY == key
    assert list(REPO.glob(f"book/paper_*/{key}.md")), f"no book page book/paper_*/{key}.md"
    assert (REPO / "notebooks" / f"{key}.ipynb").is_file() and (REPO / "notebooks" / f"{key}.py").is_file()
    assert (REPO / "ledger" / f"{key}.json").is_file()
    assert (REPO / "tests" / f"test_{key}.py").is_file()


def test_ledger_files_and_notebooks_belong_to_chapters():
    assert {p.stem for p in (REPO / "ledger").glob("*.json")} <= set(CHAPTERS)
    assert {p.stem for p in (REPO / "notebooks").glob("*.ipynb")} <= set(CHAPTERS)


def test_every_registered_chapter_has_a_book_page():
    pages = {p.stem for p in REPO.glob("book/paper_*/*.md")}
    missing = {e.chapter for e in ledger.load_register(REPO / "ledger")} - pages
    assert not missing, f"register chapters without a page: {sorted(missing)}"


def _module_graph(extra: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Each package module's imports of other package modules (function-level imports included: a cycle through a
    lazy import is still a cycle a reader has to follow)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        for imported in _imports(path):
            bits = imported.split(".")
            owner = next((".".join(bits[:k]) for k in range(len(bits), 0, -1) if ".".join(bits[:k]) in modules), None)
            if owner is not None and owner != name:
                deps.add(owner)
        graph[name] = deps
    for name, deps in (extra or {}).items():
        graph.setdefault(name, set()).update(deps)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles_anywhere_in_the_package():
    assert _circles(_module_graph()) == []


def test_the_circle_finder_finds_a_circle():
    # a check that cannot fail is not evidence: one added edge back from the store to the status check closes one
    graph = _module_graph({"lorapriv_utils.store": {"lorapriv_utils.mia.records.status"}})
    assert any("lorapriv_utils.store" in circle for circle in _circles(graph))


@pytest.mark.parametrize("name", ["numbers", "provenance", "catalogue", "store", "declared"])
def test_the_shared_modules_import_nothing_from_the_engine(name):
    assert not {n for n in _imports(PACKAGE / f"{name}.py") if n.startswith("lorapriv_utils.mia")}
