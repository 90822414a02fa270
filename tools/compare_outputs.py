"""Show that a change moved no number: compare every notebook output and every ledger measurement
of a git revision with the working tree, following renames (git cannot: notebooks are JSON).

Usage: python tools/compare_outputs.py REV        (for instance: python tools/compare_outputs.py main)

Notebook cells are matched in order of code cells; each output is compared as text (plain,
Markdown, HTML and streams) and as image bytes.  Ledger checks are matched by claim id and
check name; a check's measured value, reference and pass/fail are compared, and changes of
role or of the printed detail are listed apart (they change what a number means, not the
number).  Exit status 1 when a number changed.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def _renames(rev: str) -> dict[str, str]:
    """New path -> old path for every file renamed between ``rev`` and the working tree."""
    out = _git("diff", "--name-status", "-M", rev, "--", "notebooks", "ledger")
    renames = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R"):
            renames[parts[2]] = parts[1]
    return renames


def _old_text(rev: str, path: str) -> str | None:
    try:
        return _git("show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return None


def _outputs(nb: dict) -> list[list[str]]:
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        shown = []
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                shown.append("stream:" + "".join(out["text"]))
                continue
            for mime, value in sorted(out.get("data", {}).items()):
                text = "".join(value) if isinstance(value, list) else value
                if mime.startswith("image/"):
                    text = hashlib.sha256(text.encode()).hexdigest()
                shown.append(f"{mime}:{text}")
        cells.append(shown)
    return cells


def compare_notebooks(rev: str, renames: dict[str, str]) -> int:
    changed = 0
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        new_path = path.relative_to(REPO).as_posix()
        old_path = renames.get(new_path, new_path)
        old = _old_text(rev, old_path)
        if old is None:
            print(f"{new_path}: new notebook, nothing to compare")
            continue
        before, after = _outputs(json.loads(old)), _outputs(json.loads(path.read_text(encoding="utf-8")))
        diffs = [i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b]
        if len(before) != len(after):
            print(f"{new_path} (was {old_path}): {len(before)} code cells before, {len(after)} now")
            changed += 1
        for i in diffs:
            print(f"{new_path} (was {old_path}): outputs of code cell {i} differ")
            for a, b in zip(before[i], after[i], strict=False):
                if a != b:
                    print("   before:", a[:300].replace("\n", " | "))
                    print("   now:   ", b[:300].replace("\n", " | "))
            changed += 1
        if not diffs and len(before) == len(after):
            print(f"{new_path} (was {old_path}): all {len(after)} code cells' outputs identical")
    return changed


def _checks(records: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["claim_id"], c["name"]): c for r in records for c in r["checks"]}


def compare_ledger(rev: str, renames: dict[str, str]) -> int:
    changed = 0
    for path in sorted((REPO / "ledger").glob("*.json")):
        new_path = path.relative_to(REPO).as_posix()
        old = _old_text(rev, renames.get(new_path, new_path))
        if old is None:
            print(f"{new_path}: new ledger file, nothing to compare")
            continue
        before, after = json.loads(old), json.loads(path.read_text(encoding="utf-8"))
        old_checks, new_checks = _checks(before), _checks(after)
        if set(old_checks) != set(new_checks):
            print(
                f"{new_path}: checks added {sorted(set(new_checks) - set(old_checks))[:5]}, removed "
                f"{sorted(set(old_checks) - set(new_checks))[:5]}"
            )
            changed += 1
        numbers = [
            k
            for k in old_checks.keys() & new_checks.keys()
            if any(old_checks[k][f] != new_checks[k][f] for f in ("measured", "reference", "passed"))
        ]
        for key in numbers:
            print(f"{new_path}: {key}: {old_checks[key]} -> {new_checks[key]}")
        changed += len(numbers)
        roles = [k for k in old_checks.keys() & new_checks.keys() if old_checks[k]["role"] != new_checks[k]["role"]]
        details = sum(old_checks[k]["detail"] != new_checks[k]["detail"] for k in old_checks.keys() & new_checks.keys())
        verdicts = {r["claim_id"]: r["verdict"] for r in before}
        flipped = {
            r["claim_id"]: (verdicts.get(r["claim_id"]), r["verdict"])
            for r in after
            if verdicts.get(r["claim_id"]) != r["verdict"]
        }
        summaries = sum(a["summary"] != b["summary"] for a, b in zip(before, after, strict=False))
        print(
            f"{new_path}: {len(new_checks)} checks, {len(numbers)} with a changed number; "
            f"{len(roles)} roles changed, {details} details reworded, {summaries} summaries changed, "
            f"verdicts changed: {flipped or 'none'}"
        )
        for key in sorted(roles):
            print(f"   role of {key[0]} / {key[1]!r}: {old_checks[key]['role']} -> {new_checks[key]['role']}")
        changed += len(flipped)
    return changed


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    renames = _renames(argv[0])
    changed = compare_notebooks(argv[0], renames) + compare_ledger(argv[0], renames)
    print(f"\n{changed} changed number(s) or output(s)" if changed else "\nno number changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
