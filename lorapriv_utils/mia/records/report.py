"""Summary tables of finished cells: dataset x method x rank, with perplexity, AUC and TPR.

``python -m lorapriv_utils table RESULTS_DIR`` prints the table (``--csv`` for CSV); the
``run`` command prints it at the end.  Only intact records count: a file whose checksum does
not verify is named and skipped.  The package is torch-free here, so the table comes quickly.
"""

from __future__ import annotations

import csv
import io
import re
import sys
import zipfile
from pathlib import Path

import numpy as np

from ...declared import UndeclaredError
from ...store import read_arrays, read_record
from ..engine.methods import position

ATTACK = "reference_attack"
RATES = ("0.01", "0.001", "0.0001")


PUBLISHED_FOLDER = "published"  # results/published: the book's committed records


def _verified(path: Path, problems: list[str] | None = None, check_scores: bool = False) -> dict | None:
    try:
        record = read_record(path)
        if record["kind"] != "cell":
            return None  # an audit's, the frontier's or LiRA's record, read by their own readers
        if check_scores:
            read_arrays(path, record)
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as err:
        if problems is None and isinstance(err, UndeclaredError):  # a chapter refuses such a record, never skips it
            raise
        message = f"lorapriv: skipping {path} ({err})"
        if problems is None:
            print(message, file=sys.stderr)
        else:
            problems.append(message)
        return None
    return record


def record_paths(folder: Path, published: bool | None = None) -> list[Path]:
    """The cell records' files under ``folder`` (``...-sSEED.json``); those under a ``published`` folder only
    when ``folder`` lies in one or ``published`` is True (a user's table does not mix the book's records with
    their own)."""
    folder = Path(folder)
    if published is None:
        published = PUBLISHED_FOLDER in folder.resolve().parts
    paths = sorted(p for p in folder.rglob("*-s*.json") if re.search(r"-s\d+\.json$", p.name))  # cells' names
    return [p for p in paths if published or PUBLISHED_FOLDER not in p.relative_to(folder).parts]


def load_records(folder: Path, published: bool | None = None, problems: list[str] | None = None) -> list[dict]:
    """Every intact cell record under ``folder`` (a results folder or one scale's subfolder; see
    :func:`record_paths` for the published ones)."""
    return [record for _, record in load_sourced(folder, published, problems)]


def load_sourced(
    folder: Path, published: bool | None = None, problems: list[str] | None = None, check_scores: bool = False
) -> list[tuple[str, dict]]:
    """(source, record) of every intact cell record under ``folder``: source "published" for the book's
    committed records, "runs" for the others; a damaged file is named in ``problems`` (or on stderr)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no results folder {folder}; run `python -m lorapriv_utils run --out {folder}` first")
    out, skipped = [], []
    for path in record_paths(folder, published):
        record = _verified(path, skipped if problems is not None else None, check_scores)
        if record is not None:
            source = PUBLISHED_FOLDER if PUBLISHED_FOLDER in path.resolve().parts else "runs"
            out.append((source, record))
    if problems is not None:
        problems += skipped
    if not out:
        damaged = f"; {len(skipped)} skipped, first {skipped[0].removeprefix('lorapriv: skipping ')}" if skipped else ""
        raise FileNotFoundError(f"no intact result files under {folder}{damaged}")
    return out


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
    rows.sort(key=lambda r: (r["scale"], r["dataset"], position(r["method"]), str(r["rank"]).zfill(4), r["seed"]))
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


def _group_key(source: str, record: dict) -> tuple:
    cell = record["manifest"]["cell"]
    return (source, record["manifest"]["config"]["scale"], cell["dataset"], cell["method"], cell["rank"])


def method_rows(sourced: list[tuple[str, dict]]) -> list[dict]:
    """One row per method (and rank) of each source, scale and dataset, its seeds summarised: eq. 24's reference
    attack's AUC averaged over seeds, the seeds' range, and the widest of the seeds' intervals over texts."""
    groups: dict[tuple, list[dict]] = {}
    for source, record in sourced:
        groups.setdefault(_group_key(source, record), []).append(record)
    rows = []
    for (source, scale, dataset, method, rank), records in groups.items():
        aucs = [r["metrics"][ATTACK]["auc"] for r in records]
        values = [a["value"] for a in aucs]
        tprs = [r["metrics"][ATTACK]["tpr_at_0.01"] for r in records]
        edge = any(r["metrics"]["lr_selection"]["at_grid_edge"] for r in records)
        rates = sorted({r["metrics"]["lr_selection"]["chosen"] for r in records})
        rows.append(
            {
                "source": source,
                "scale": scale,
                "dataset": dataset,
                "method": method if rank is None else f"{method} r{rank}",
                "seeds": len(records),
                "ppl": f"{np.mean([r['metrics']['validation_perplexity'] for r in records]):.2f}",
                "ref AUC": f"{np.mean(values):.3f}",
                "seeds' range": f"[{min(values):.3f}, {max(values):.3f}]" if len(records) > 1 else "-",
                "text CI": f"[{min(a['low'] for a in aucs):.3f}, {max(a['high'] for a in aucs):.3f}]",
                "TPR@1%": f"{np.mean([t['value'] for t in tprs]):.3f}" if all(t["resolvable"] for t in tprs) else "n/r",
                "lr": ",".join(f"{lr:g}" for lr in rates) + ("*" if edge else ""),
            }
        )

    def place(row: dict) -> tuple:
        method, _, rank = row["method"].partition(" r")
        return row["source"], row["scale"], row["dataset"], position(method), int(rank or 0)

    return sorted(rows, key=place)


TABLE_NOTES = (
    "ref AUC: eq. 24's reference attack (the target's loss against its reference model's), mean over seeds; "
    "seeds' range: the seed-to-seed spread; text CI: the widest of the seeds' 95% bootstrap intervals, which "
    "resample texts only; TPR@1%: mean over seeds, n/r where the non-members cannot resolve it. "
    "--cells shows every cell and attack, --csv every number in a column of its own."
)


def as_method_text(rows: list[dict]) -> str:
    """The default table: one row per method, then what its columns mean."""
    import textwrap

    return as_text(rows) + "\n" + textwrap.fill(TABLE_NOTES, 110)


def csv_rows(sourced: list[tuple[str, dict]]) -> list[dict]:
    """One row per cell with each number in its own column (values, interval ends, flags)."""
    rows = []
    for source, record in sourced:
        cell, metrics = record["manifest"]["cell"], record["metrics"]
        row = {
            "source": source,
            "scale": record["manifest"]["config"]["scale"],
            "dataset": cell["dataset"],
            "method": cell["method"],
            "rank": cell["rank"],
            "seed": cell["seed"],
            "lr": metrics["lr_selection"]["chosen"],
            "lr_at_grid_edge": metrics["lr_selection"]["at_grid_edge"],
            "validation_perplexity": metrics["validation_perplexity"],
        }
        for attack in ("reference", "loss", "zlib", "minkpp"):
            entry = metrics.get(f"{attack}_attack")
            if entry is None:
                continue
            for part in ("value", "low", "high"):
                row[f"{attack}_auc{'' if part == 'value' else '_' + part}"] = entry["auc"][part]
            for rate in RATES:
                tpr = entry[f"tpr_at_{rate}"]
                for part in ("value", "low", "high"):
                    name = f"{attack}_tpr_at_{rate}{'' if part == 'value' else '_' + part}"
                    row[name] = tpr[part] if tpr["resolvable"] else None
        if "epsilon_rdp" in metrics["training"]:
            row["epsilon"], row["epsilon_rdp"] = metrics["training"]["epsilon"], metrics["training"]["epsilon_rdp"]
        rows.append(row)
    return rows
