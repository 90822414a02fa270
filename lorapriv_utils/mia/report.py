"""Summary tables of finished cells: dataset x method x rank, with perplexity, AUC and TPR.

``python -m lorapriv_utils table RESULTS_DIR`` prints the table (``--csv`` for CSV); the
``run`` command prints it at the end.  Only intact records count: a file whose checksum does
not verify is named and skipped.  The package is torch-free here, so the table comes quickly.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from pathlib import Path

import numpy as np

SCHEMA = 2  # the layout of a cell's record; records of another schema are skipped (rerun them)
ATTACK = "reference_attack"
RATES = ("0.01", "0.001", "0.0001")


def record_checksum(payload: dict) -> str:
    """The checksum a result record carries: SHA-256 of its canonical JSON (keys sorted)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def seal(record: dict, spec: dict | None = None) -> dict:
    """``record`` with its spec and key in its manifest (when ``spec`` is given) and its checksum: what every
    committed record is written as."""
    from ..store import key_of

    record.pop("checksum", None)
    if spec is not None:
        record.setdefault("manifest", {}).update(spec=spec, key=key_of(spec))
    record["checksum"] = record_checksum(record)
    return record


def read_record(path: Path) -> dict:
    """A result record (cell or audit) whose checksum verifies; a ValueError says what is wrong otherwise."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err}") from None
    if isinstance(record, dict) and "schema" in record and record["schema"] != SCHEMA:
        raise ValueError(f"schema {record['schema']}, a record layout other than {SCHEMA}: rerun it")
    if not isinstance(record, dict) or record.get("checksum") != record_checksum(
        {k: v for k, v in record.items() if k != "checksum"}
    ):
        raise ValueError("checksum mismatch")
    return record


def scores_path(result: Path) -> Path:
    return result.with_name(result.name.removesuffix(".json") + ".scores.npz")


def scores_digest(scores: dict[str, np.ndarray]) -> str:
    """A digest of the per-text scores' values (not of the zip file, whose bytes carry timestamps)."""
    digest = hashlib.sha256()
    for name in sorted(scores):
        values = np.ascontiguousarray(scores[name], dtype=np.float64)
        digest.update(name.encode() + b"\0" + values.tobytes())
    return digest.hexdigest()


def read_scores(path: Path) -> dict[str, np.ndarray]:
    """Per-text scores of a cell (plain arrays only: the file is read with pickling disabled)."""
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def read_scores_digest(path: Path) -> str:
    """:func:`scores_digest` of a scores file."""
    return scores_digest(read_scores(path))


def _verified(path: Path) -> dict | None:
    try:
        record = read_record(path)
        if record.get("schema") != SCHEMA:
            raise ValueError(f"schema {record.get('schema')}, not {SCHEMA}: rerun the cell")
        if "audit" in record or "kind" in record:
            return None  # an audit's, the frontier's or LiRA's record, read by their own readers
        record["manifest"]["cell"]  # noqa: B018 (a record of a cell, not some other JSON)
    except (ValueError, KeyError, TypeError, OSError) as err:
        print(f"lorapriv: skipping {path} ({err})", file=sys.stderr)
        return None
    return record


def load_records(folder: Path) -> list[dict]:
    """Every intact cell record under ``folder`` (a results folder or one scale's subfolder)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no results folder {folder}; run `python -m lorapriv_utils run --out {folder}` first")
    records = [r for p in sorted(folder.rglob("*.json")) if (r := _verified(p)) is not None]
    if not records:
        raise FileNotFoundError(f"no result files under {folder}")
    return records


def _interval(entry: dict, digits: int = 3) -> str:
    return f"{entry['value']:.{digits}f} [{entry['low']:.{digits}f}, {entry['high']:.{digits}f}]"


def summary_rows(records: list[dict]) -> list[dict]:
    """One row per cell: its coordinates, validation perplexity, AUC with its 95% interval, TPRs."""
    rows = []
    for record in records:
        cell, metrics = record["manifest"]["cell"], record["metrics"]
        attack = metrics[ATTACK]
        row = {
            "scale": record["manifest"]["config"]["scale"],
            "dataset": cell["dataset"],
            "method": cell["method"],
            "rank": "" if cell["rank"] is None else cell["rank"],
            "seed": cell["seed"],
            "lr": f"{metrics['lr_selection']['chosen']:g}" + ("*" if metrics["lr_selection"]["at_grid_edge"] else ""),
            "ppl": f"{metrics['validation_perplexity']:.2f}",
            "auc": _interval(attack["auc"]),
            "loss_auc": _interval(metrics["loss_attack"]["auc"]),
        }
        for other in ("zlib", "minkpp"):  # the attacks without a reference model (absent from older records)
            if f"{other}_attack" in metrics:
                row[f"{other}_auc"] = _interval(metrics[f"{other}_attack"]["auc"])
        for rate in RATES:
            entry = attack[f"tpr_at_{rate}"]
            row[f"tpr@{float(rate):.2%}"] = _interval(entry) if entry["resolvable"] else entry["note"]
        if "epsilon_rdp" in metrics["training"]:
            prv, rdp = metrics["training"]["epsilon"], metrics["training"]["epsilon_rdp"]
            row["epsilon"] = f"{'-' if prv is None else f'{prv:.2f}'} (rdp {'-' if rdp is None else f'{rdp:.3g}'})"
        rows.append(row)
    order = {m: k for k, m in enumerate(("full", "adapter", "lora", "lorafa", "flora", "dpsgd", "rowscale"))}
    rows.sort(key=lambda r: (r["scale"], r["dataset"], order.get(r["method"], 9), str(r["rank"]).zfill(4), r["seed"]))
    return rows


def _columns(rows: list[dict]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    return columns


def as_text(rows: list[dict]) -> str:
    """An aligned plain-text table (a footnote explains a starred learning rate)."""
    columns = _columns(rows)
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[k]) for row in cells)) for k, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    if any(str(r.get("lr", "")).endswith("*") for r in rows):
        lines.append("* the sweep chose a learning rate at the edge of its grid: a wider grid may find a better one")
    return "\n".join(lines)


def as_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
