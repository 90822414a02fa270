"""One-time migration of committed records to the one envelope (``lorapriv_utils.store``, schema 3).

Usage: ``python tools/migrate_envelope.py FOLDER [FOLDER ...]`` (default: ``results/published``).

Every JSON record under the folders whose old checksum verifies is given its kind (inferred from its old
layout: a cell, a frontier or LiRA record, a canary audit, a DP comparison or one of the measurements),
schema 3 and a new checksum, and a ``envelope_migration`` note in its manifest with the old schema and
checksum.  Nothing else is touched: payload, spec, key and arrays stay bit-identical, so every record that
was current stays current.  A record already in the envelope is left alone; one whose old checksum does not
verify is refused.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lorapriv_utils.files import atomic_write_text
from lorapriv_utils.store import SCHEMA, record_checksum, seal

OLD_KINDS = {"dp-game-lorafa": "whitebox"}  # a kind the old layout used for another meaning


def old_kind(record: dict) -> str:
    """The envelope kind of a record in an old layout."""
    if record.get("kind") in OLD_KINDS:
        return OLD_KINDS[record["kind"]]
    if "kind" in record:
        return record["kind"]
    if "audit" in record:
        return "canary-audit"
    if "metrics" in record and "cell" in record.get("manifest", {}):
        return "cell"
    for field, kind in (("table", "multiplier"), ("curve", "alignment"), ("time_ratio", "rowscale-cost")):
        if field in record:
            return kind
    raise ValueError("a layout this migration does not know")


def migrate(path: Path) -> bool:
    """Whether the record at ``path`` was migrated (False: already in the envelope)."""
    text = path.read_text(encoding="utf-8")
    record = json.loads(text)
    if record.get("schema") == SCHEMA:
        return False
    if record.get("checksum") != record_checksum(record):
        raise SystemExit(f"migrate: {path}: its checksum does not verify; regenerate it instead")
    kind = old_kind(record)
    note = {"from_schema": record.get("schema"), "from_checksum": record["checksum"], "numbers": "unchanged"}
    record.setdefault("manifest", {})["envelope_migration"] = note
    record.pop("kind", None)
    record = seal(record, kind=kind)
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + ("\n" if text.endswith("\n") else ""))
    return True


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv] or [Path("results/published")]
    changed = total = 0
    for folder in folders:
        for path in sorted(folder.rglob("*.json")):
            total += 1
            try:
                changed += migrate(path)
            except ValueError as err:
                raise SystemExit(f"migrate: {path}: {err}") from None
    print(f"migrated {changed} of {total} records to schema {SCHEMA}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
