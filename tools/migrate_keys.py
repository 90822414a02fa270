"""One-time migration of the committed records to the results store's spec keys (``lorapriv_utils.store``).

Usage: ``python tools/migrate_keys.py --data-dir ../shared/data --reason "..."``

Every record of the catalogue gets today's spec and key in its manifest, a ``key_migration`` note with
its old key and the reason, and a new checksum; its numbers are not touched, so every payload stays
bit-identical.  Run it only when the numerics tripwires (``tests/test_numerics.py``) pass and no code
that computes the records' numbers changed since they were made: the reason says how that was checked.
A record whose corpus is not readable here is refused (pass the data folder it was made with).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lorapriv_utils.catalogue import CATALOGUE, PUBLISHED
from lorapriv_utils.files import atomic_write_text
from lorapriv_utils.mia.records.status import _Corpora, record_spec
from lorapriv_utils.provenance import git_commit
from lorapriv_utils.store import key_of, seal


def migrate(path: Path, entry, corpora, reason: str, commit: str) -> bool:
    text = path.read_text(encoding="utf-8")
    record = json.loads(text)
    spec, unchecked = record_spec(entry, record, corpora)
    if unchecked:
        raise SystemExit(f"migrate: {path}: {unchecked}; pass the data folder it was made with (--data-dir)")
    manifest = record.setdefault("manifest", {})
    key = key_of(spec)
    if manifest.get("key") == key:  # current already (a spec may differ only in fields the key leaves out)
        return False
    manifest["key_migration"] = {"from_key": manifest.get("key"), "at_commit": commit, "reason": reason}
    record = seal(record, spec)
    end = "\n" if text.endswith("\n") else ""
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + end)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="folder with enron/ and pubmed/ (for cpu-large's records)")
    parser.add_argument("--reason", required=True, help="why the records' numbers are today's (how it was checked)")
    args = parser.parse_args()
    corpora, commit, changed, total = _Corpora(args.data_dir), git_commit(), 0, 0
    for entry in CATALOGUE:
        for path in entry.paths(PUBLISHED):
            total += 1
            changed += migrate(path, entry, corpora, args.reason, commit)
    print(f"re-keyed {changed} of {total} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
