"""``make verify``: recompute a declared subset of the book's results from nothing and compare every number with the
committed one, in about a quarter of an hour on a 2-core laptop.

The subset (:data:`NOTEBOOKS`, :data:`CELLS`) is one theory chapter's Monte Carlo checks, re-executed from its
notebook in a scratch copy of the book and compared with its committed ledger file, and two grid cells trained
again from their base models (``python -m lorapriv_utils verify``): one of the toy GPT-2 at cpu-small and one of
the pretrained SmolLM2-135M-Instruct at cpu-pretrained, both on Penn Treebank (no data folder needed).  The items
run two at a time, one thread each.  The report (Markdown and JSON) says what was recomputed, committed against
recomputed, the tolerance and pass or fail; the command exits 1 when anything fails.

Usage: python tools/verify.py [--out DIR] [--publish PAGE.md]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "results" / "published"
PENDING = ROOT / "results" / "pending"  # the analysis plan's committed runs that are not yet published
STORES = (PUBLISHED, PENDING)  # searched in this order for a record to recompute
NOTEBOOKS = ("a3_noise",)  # theory chapters re-executed: their ledger's every measured number compared
# grid cells trained again, one per scale: of each pattern's committed records (in order of store, then of seed), the
# first made with this machine's vector kernels (torch's CPU capability), where one is, since only there can the
# numbers agree to rounding; the published store first, then the pending one
CELLS = ("cpu-small/ptb/lora-r8-s*.json", "cpu-pretrained/ptb/lora-r8-s*.json")
LEDGER_TOLERANCE = {"rel": 1e-4}  # the ledger stores 6 significant digits; Monte Carlo draws are seeded
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _close(a, b) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= LEDGER_TOLERANCE["rel"] * max(abs(a), abs(b)) or a == b
    return a == b


def verify_notebook(key: str) -> dict:
    """Execute ``notebooks/KEY.ipynb`` in a scratch copy of the book and compare its ledger file's checks (every
    measured value, reference and outcome) and verdicts with the committed ones."""
    import nbformat
    from nbclient import NotebookClient

    start = time.perf_counter()
    committed = json.loads((ROOT / "ledger" / f"{key}.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="lorapriv-verify-book-") as scratch:
        book = Path(scratch)
        shutil.copy(ROOT / "_toc.yml", book / "_toc.yml")
        shutil.copytree(ROOT / "ledger", book / "ledger")
        (book / "ledger" / f"{key}.json").unlink()  # written again by the notebook, or the check fails
        (book / "notebooks").mkdir()
        path = book / "notebooks" / f"{key}.ipynb"
        shutil.copy(ROOT / "notebooks" / f"{key}.ipynb", path)
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
        fresh = json.loads((book / "ledger" / f"{key}.json").read_text(encoding="utf-8"))
    pairs, outside = 0, []
    by_id = {claim["claim_id"]: claim for claim in fresh}
    extra = sorted(set(by_id) - {claim["claim_id"] for claim in committed})
    outside += [f"{name}: a claim only the recomputation has" for name in extra]
    for claim in committed:
        again = by_id.get(claim["claim_id"], {})
        if claim.get("verdict") != again.get("verdict"):
            outside.append(f"{claim['claim_id']}: verdict {claim.get('verdict')} became {again.get('verdict')}")
        checks = {c["name"]: c for c in again.get("checks", [])}
        names = [c["name"] for c in claim["checks"]]
        outside += [f"{claim['claim_id']} / {n}: a check only the recomputation has" for n in checks if n not in names]
        for check in claim["checks"]:
            other = checks.get(check["name"], {})
            for field in ("measured", "reference", "passed", "interval", "p_values"):
                pairs += 1
                a, b = check.get(field), other.get(field)
                if isinstance(a, list) and isinstance(b, list):
                    same = len(a) == len(b) and all(map(_close, a, b))
                else:
                    same = _close(a, b)
                if not same:
                    outside.append(f"{claim['claim_id']} / {check['name']}: {field} {a} became {b}")
    return {
        "item": f"ledger/{key}.json",
        "what": f"notebook {key} executed again (its Monte Carlo draws from their seeds)",
        "numbers": pairs,
        "outside": outside,
        "passes": not outside,
        "seconds": time.perf_counter() - start,
        "tolerance": f"relative {LEDGER_TOLERANCE['rel']:g} (the ledger keeps 6 significant digits)",
    }


def verify_cell(name: str) -> dict:
    """``python -m lorapriv_utils verify`` on one committed cell, in its own one-thread process."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lorapriv-verify-") as scratch:
        report_path = Path(scratch) / "report.json"
        code = (
            "import json, sys; from lorapriv_utils.mia.experiments import verify; "
            f"r = verify.recompute_cell({str(ROOT / name)!r}); "
            f"open({str(report_path)!r}, 'w').write(json.dumps(r))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **ONE_THREAD}, capture_output=True, text=True
        )
        if done.returncode != 0:
            return {
                "item": name,
                "what": "grid cell trained again",
                "numbers": 0,
                "outside": [done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "it stopped"],
                "passes": False,
                "seconds": time.perf_counter() - start,
                "tolerance": "",
            }
        report = json.loads(report_path.read_text())
    from lorapriv_utils.mia.experiments.verify import TOLERANCE

    largest = report["largest"]
    return {
        "item": name,
        "what": f"{report['cell']} at {report['scale']} trained again at its chosen rate {report['lr']:g} (made on "
        f"{report['made_on'] or 'a CPU not recorded'}, recomputed on {report['recomputed_on']})",
        "numbers": report["numbers"],
        "identical": report["identical"],
        "largest": f"{abs(largest['committed'] - largest['recomputed']):.2g} ({largest['name']})",
        "outside": [f"{d['name']}: {d['committed']} became {d['recomputed']}" for d in report["outside"]],
        "passes": report["passes"],
        "seconds": time.perf_counter() - start,
        "committed_seconds": report.get("committed_seconds"),
        "tolerance": f"absolute {TOLERANCE['abs']:g} or relative {TOLERANCE['rel']:g}",
    }


def chosen_cell(pattern: str, capability: str) -> str:
    """The committed record of ``pattern`` to recompute, as a path from the checkout's root: the first (by store,
    :data:`STORES`, then by seed) made with ``capability``'s kernels, else the published store's first (a record that
    names no kernels counts as a match: it predates the field, and the report says so)."""
    paths = [
        path for store in STORES for path in sorted(store.glob(pattern), key=lambda p: int(p.stem.rsplit("-s", 1)[1]))
    ]
    if not paths:
        raise SystemExit(f"verify: no committed record matches {pattern}")
    for path in paths:
        made = json.loads(path.read_text(encoding="utf-8"))["manifest"].get("cpu_capability")
        if made in (None, capability):
            return path.relative_to(ROOT).as_posix()
    return paths[0].relative_to(ROOT).as_posix()


def markdown(items: list[dict], wall: float) -> str:
    rows = [
        "| recomputed | how | numbers compared | largest difference | tolerance | time | outcome |",
        "|---|---|---|---|---|---|---|",
    ]
    for item in items:
        outcome = "passes" if item["passes"] else f"fails ({len(item['outside'])} outside)"
        largest = item.get("largest", "within the tolerance" if item["passes"] else "")
        rows.append(
            f"| `{item['item']}` | {item['what']} | {item['numbers']} | {largest} "
            f"| {item['tolerance']} | {item['seconds'] / 60:.1f} min | {outcome} |"
        )
    failed = [line for item in items for line in item["outside"]]
    verdict = "Every recomputed number agrees with the committed one." if not failed else "Some numbers differ:"
    lines = [f"{verdict} Wall time of the whole check: {wall / 60:.1f} min.", "", *rows]
    return "\n".join(lines + ([""] + [f"- {line}" for line in failed[:20]] if failed else [])) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/verify.py", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "verify", help="where the report goes")
    parser.add_argument("--publish", type=Path, default=None, help="also write the Markdown report to this page")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    cells = [chosen_cell(pattern, capability) for pattern in CELLS]
    jobs = [(verify_cell, name) for name in reversed(cells)] + [(verify_notebook, key) for key in NOTEBOOKS]
    with ThreadPoolExecutor(max_workers=2) as pool:  # two one-thread processes: a 2-core laptop's share
        items = list(pool.map(lambda job: job[0](job[1]), jobs))
    wall = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    text = markdown(items, wall)
    (args.out / "report.md").write_text(text, encoding="utf-8")
    (args.out / "report.json").write_text(json.dumps({"items": items, "seconds": wall}, indent=1) + "\n")
    if args.publish is not None:
        args.publish.write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(item["passes"] for item in items) else 1


if __name__ == "__main__":
    sys.exit(main())
