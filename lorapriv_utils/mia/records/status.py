"""Whether each committed result is current: ``python -m lorapriv_utils status``.

For every record of the catalogue (``lorapriv_utils.catalogue``) the spec is rebuilt from today's code
and scale records and the record's own coordinates (its cell, variant, rate, options), and its key is
compared with the record's.  Each record is first judged against what the chapters declare they read
(``results/published/declared.json``, :mod:`lorapriv_utils.declared`), never against its own options.  A record is

* ``current``: intact, declared, made with its declared options, and its key is today's;
* ``stale``: as current, but a part of its key changed (the parts and fields are named);
* ``damaged``: its checksum, schema or scores file does not verify;
* ``foreign``: made with other options than the declared ones ("made with --epochs 1, the chapter expects 2");
* ``altered``: its content is not the declared one (a hand edit whose checksum was recomputed);
* ``extra``: not declared (no chapter reads it);

and a declared record that is absent is ``missing``.  A corpus that cannot be read here (Enron
and PubMed without ``--data-dir``) leaves the data part unchecked, and the line says so.  Torch-free:
it costs a corpus read and a hash per dataset, seconds in all.
"""

from __future__ import annotations

import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ... import declared
from ...catalogue import (  # wall_seconds, format_duration, measured_seconds: the status report's, kept here too
    ALLOWED_STALE,
    CATALOGUE,
    PUBLISHED,
    Entry,
    allowed_stale,
    format_duration,
    measured_seconds,
    wall_seconds,
)
from ...files import Lock
from ...scale import DPConfig, get_scale
from ...store import changed_parts, key_of, kinds_of, read_record, spec_differences
from ..engine import data as data_mod
from ..experiments.grid import Cell, DPCell, Variant
from . import specs

STATES = ("current", "stale", "damaged", "foreign", "altered", "extra", "missing")


@dataclass
class Status:
    path: str  # relative to the published folder
    entry: str
    state: str
    detail: str = ""
    wall_seconds: float | None = None  # the record's own measured wall time
    changed: tuple[str, ...] = ()  # a stale record's changed key parts


def _options(manifest: dict) -> dict:
    config = manifest.get("config", {})
    return {"overrides": config.get("overrides") or {}, "reference": config.get("reference", "same")}


class DataDirError(ValueError):
    """A corpus that the given ``--data-dir`` should hold cannot be read from it."""


class _Corpora:
    """Corpus digests, each read once; None where the corpus cannot be read here (no ``--data-dir`` given).  A
    ``--data-dir`` that was given and does not hold a readable corpus is an error, with the reader's whole reason."""

    def __init__(self, data_dir):
        self.data_dir, self.missing = data_dir, {}

    def __call__(self, engine, name: str, seed: int) -> dict | None:
        try:
            return specs.dataset_corpus(engine, name, seed, self.data_dir)
        except (FileNotFoundError, ValueError) as err:
            if self.data_dir is not None:
                raise DataDirError(f"--data-dir {self.data_dir}: {name} cannot be read there: {err}") from None
            self.missing[name] = str(err)
            return None


def record_spec(entry: Entry, record: dict, corpora) -> tuple[dict, str]:
    """Today's spec for a committed record, and why its data part could not be checked ("" when it was: a
    corpus that is not here keeps the record's own data part)."""
    scale = get_scale(entry.scale)
    engine = scale.engine
    if entry.kind in specs.MEASUREMENTS:
        return specs.measurement_spec(entry.kind, scale), ""
    manifest = record["manifest"]
    if entry.kind == "cell":
        cell = Cell(**manifest["cell"])
        dataset, seed = cell.dataset, cell.seed
    elif entry.kind == "frontier":
        dataset, seed = record["dataset"], record["seed"]
    elif entry.kind == "lira":
        cell = Cell(**record["cell"])
        dataset, seed = cell.dataset, cell.seed
    elif entry.kind == "audit":
        cell = Cell(**manifest["cell"])
        dataset, seed = cell.dataset, cell.seed
    elif entry.kind == "dp-compare":
        cell = DPCell(**record["cell"])
        dataset, seed = cell.dataset, cell.seed
    else:
        raise KeyError(f"catalogue entry {entry.name}: unknown kind {entry.kind!r}")
    corpus = corpora(engine, dataset, seed)
    unchecked = "" if corpus is not None else f"data unchecked ({corpora.missing[dataset]})"
    if corpus is None:
        corpus = manifest.get("spec", {}).get("data", {}).get("corpus", {})
    if entry.kind == "cell":
        spec = specs.cell_spec(engine, cell, corpus, **_options(manifest))
    elif record["kind"] == "frontier-base":
        spec = specs.frontier_base_spec(engine, dataset, seed, corpus)
    elif entry.kind == "frontier":
        variant = Variant(**record["variant"])
        spec = specs.frontier_point_spec(
            engine,
            dataset,
            variant,
            record["lr"],
            seed,
            tuple(record["checkpoints"][k]["epoch"] for k in range(len(record["checkpoints"]))),
            corpus,
            _options(manifest)["overrides"],
        )
    elif entry.kind == "lira":
        spec = specs.lira_spec(engine, cell, corpus, record["lr"], record["references"], **_options(manifest))
    elif entry.kind == "audit":
        dp = DPConfig(**manifest["dp"]) if manifest.get("dp") else engine.dp
        spec = specs.audit_spec(engine, cell, corpus, manifest["canary_config"], dp, **_options(manifest))
    else:
        spec = specs.dp_compare_spec(engine, cell, corpus)
    return spec, unchecked


def check_record(entry: Entry, path: Path, corpora, root: Path = PUBLISHED, declaration: dict | None = None) -> Status:
    """The status of one record of ``entry``, against ``declaration`` (the store's; None: an undeclared store,
    whose records are judged against their own options)."""
    name = path.relative_to(root).as_posix()
    try:
        record, _ = read_record(path, kinds_of(entry.kind), with_arrays=True, declared=False)
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as err:
        return Status(name, entry.name, "damaged", f"{type(err).__name__}: {err}")
    wall = wall_seconds(record)
    if declaration is not None:
        state, line = declared.verdict(name, record, declaration.get(name))
        if state != "ok":
            return Status(name, entry.name, state, line.removeprefix(f"{name} is {state}: "), wall)
    try:
        spec, unchecked = record_spec(entry, record, corpora)
    except DataDirError:
        raise
    except (ValueError, KeyError, TypeError, OSError) as err:
        return Status(name, entry.name, "damaged", f"{type(err).__name__}: {err}", wall)
    stored = record.get("manifest", {}).get("key")
    if not isinstance(stored, dict):
        return Status(name, entry.name, "stale", "it has no key: regenerate it", wall)
    changed = changed_parts(stored, key_of(spec))
    if unchecked:
        changed = [part for part in changed if part != "data"]
    if changed:
        old = record["manifest"].get("spec")
        fields = [f for f in spec_differences(old, spec) if f.split(".")[0] in changed] if old else []
        detail = ", ".join(changed) + " changed" + (f" ({', '.join(fields[:6])})" if fields else "")
        return Status(name, entry.name, "stale", "; ".join(filter(None, (detail, unchecked))), wall, tuple(changed))
    return Status(name, entry.name, "current", unchecked, wall)


def check(entries=CATALOGUE, root: Path = PUBLISHED, data_dir=None) -> list[Status]:
    """The status of every record of ``entries`` against the store's declaration (``declared.json`` at ``root``):
    a ``missing`` line for each declared record that is absent (without a declaration: for each entry that
    matches nothing)."""
    root = Path(root)
    declaration = declared.load(root) if (root / declared.DECLARED).is_file() else None
    corpora = _Corpora(data_dir)
    out = []
    for entry in entries:
        paths = entry.paths(root)
        if declaration is None and not paths:
            out.append(Status(entry.pattern, entry.name, "missing", f"regenerate with make {entry.make}"))
        out += [check_record(entry, path, corpora, root, declaration) for path in paths]
        if declaration is not None:
            present = {p.relative_to(root).as_posix() for p in paths}
            out += [
                Status(name, entry.name, "missing", f"declared, but absent: regenerate it with make {entry.make}")
                for name, item in sorted(declaration.items())
                if item.get("entry") == entry.name and name not in present
            ]
    if declaration is not None and entries is CATALOGUE:
        known = {e.name for e in CATALOGUE}
        out += [
            Status(name, str(item.get("entry")), "missing", "declared under a catalogue entry that does not exist")
            for name, item in sorted(declaration.items())
            if item.get("entry") not in known
        ]
    return out


def _refresh_cell(entry: Entry, path: Path, record: dict, spec: dict, data_dir) -> None:
    from ..experiments.runner import refresh_metrics
    from ..experiments.workspace import Overrides, Workspace

    options = _options(record["manifest"])
    overrides = {k: tuple(v) if k == "lr_grid" and v is not None else v for k, v in options["overrides"].items()}
    work = Workspace(
        get_scale(entry.scale), path.parent, Overrides(**overrides), data_dir, reference=options["reference"]
    )
    refresh_metrics(work, Cell(**record["manifest"]["cell"]), path, record, spec)


def _refresh_dp_compare(entry: Entry, path: Path, record: dict, spec: dict, data_dir) -> None:
    from ..experiments import dp_compare
    from ..experiments.workspace import Workspace

    dp_compare.refresh(Workspace(get_scale(entry.scale), path.parent), DPCell(**record["cell"]), path, spec, record)


def _refresh_whitebox(entry: Entry, path: Path, record: dict, spec: dict, data_dir) -> None:
    from ...store import write_record
    from ..experiments import whitebox

    write_record(path, whitebox.refreshed(record, spec))


# kind: how a record whose ``derived`` key part alone is stale is brought up to date from what it stores
REFRESHERS = {"cell": _refresh_cell, "dp-compare": _refresh_dp_compare, "whitebox": _refresh_whitebox}


def refresh(statuses: list[Status], root: Path = PUBLISHED, data_dir=None) -> tuple[list[str], list[str]]:
    """Recompute the derived numbers (attack metrics and their intervals) of every record whose ``derived`` key part
    alone is stale, from its stored scores or raw results: no training.  Returns the paths refreshed and, each with
    its reason, those left stale (a corpus not readable here: give ``--data-dir``; a kind with no refresher)."""
    entries = {entry.name: entry for entry in CATALOGUE}
    corpora = _Corpora(data_dir)
    done, left = [], []
    for s in statuses:
        if s.state != "stale" or s.changed != ("derived",):
            continue
        entry = entries[s.entry]
        if entry.kind not in REFRESHERS:
            left.append(f"{s.path}: no refresher for records of kind {entry.kind!r} (status.REFRESHERS)")
            continue
        path = root / s.path
        with Lock(path):  # not while a run writes the same record; read again under the lock (it may have moved on)
            record = read_record(path, kinds_of(entry.kind), declared=False)
            spec, unchecked = record_spec(entry, record, corpora)
            if unchecked:
                left.append(f"{s.path}: {unchecked}; give --data-dir")
                continue
            REFRESHERS[entry.kind](entry, path, record, spec, data_dir)
        done.append(s.path)
    return done, left


def wall_times(statuses: list[Status]) -> dict[str, float]:
    """Each catalogue entry's records' measured wall times, summed (sharded runs: the sum over shards)."""
    out: dict[str, float] = {}
    for s in statuses:
        if s.wall_seconds is not None:
            out[s.entry] = out.get(s.entry, 0.0) + s.wall_seconds
    return out


TABLE_START, TABLE_END = "<!-- results-table:start -->", "<!-- results-table:end -->"


def results_table(root: Path = PUBLISHED) -> str:
    """The README's table of committed results, one row per Make target: its catalogue entries, records, the
    chapters that read them and their measured wall time (summed over records, from the records themselves)."""
    lines = [
        "| Make target | results (catalogue entries) | records | read by | measured wall time, summed over records |",
        "|---|---|---|---|---|",
    ]
    for target in dict.fromkeys(e.make for e in CATALOGUE):
        entries = [e for e in CATALOGUE if e.make == target]
        count = sum(len(e.paths(root)) for e in entries)
        chapters = ", ".join(dict.fromkeys(e.chapter for e in entries))
        seconds = measured_seconds(target, root=root)
        took = format_duration(seconds) if seconds else "not recorded"
        names = ", ".join(e.name for e in entries)
        lines.append(f"| `make {target}` | {names} | {count} | {chapters} | {took} |")
    return "\n".join(lines)


def readme_with_table(text: str, root: Path = PUBLISHED) -> str:
    """``text`` (the README) with the block between its table markers replaced by :func:`results_table`."""
    if TABLE_START not in text or TABLE_END not in text:
        raise ValueError(f"the README has no {TABLE_START} ... {TABLE_END} block")
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    return f"{head}{TABLE_START}\n{results_table(root)}\n{TABLE_END}{tail}"


def report(statuses: list[Status], verbose: bool = False, allowed: dict[str, str] | None = None) -> str:
    """A summary line per catalogue entry, and a line per record that is not current (every record with
    ``verbose``); ``allowed``, records allowed to be stale for a while, with the reason each line then gives."""
    allowed = allowed or {}
    width = max(len(entry.name) for entry in CATALOGUE)  # the names in one column
    lines = []
    for entry in CATALOGUE:
        mine = [s for s in statuses if s.entry == entry.name]
        if not mine:
            continue
        counts = {state: sum(s.state == state for s in mine) for state in STATES}
        summary = ", ".join(f"{n} {state}" for state, n in counts.items() if n)
        unchecked = sum("data unchecked" in s.detail for s in mine)
        note = f"; {unchecked} with data unchecked (pass --data-dir)" if unchecked else ""
        walls = [s.wall_seconds for s in mine if s.wall_seconds is not None]
        took = f"; {format_duration(sum(walls))} of wall time in all" if walls else ""
        lines.append(f"{entry.name:<{width}} {summary}{note}{took}  [make {entry.make}; read by {entry.chapter}]")
        for s in mine:
            if verbose or s.state != "current" or s.detail:
                excuse = f" (allowed for now: {allowed[s.path]})" if s.state == "stale" and s.path in allowed else ""
                lines.append(f"  {s.state:<8} {s.path}" + (f": {s.detail}" if s.detail else "") + excuse)
    known = {entry.name for entry in CATALOGUE}
    lines += [f"  {s.state:<8} {s.path}: {s.detail}" for s in statuses if s.entry not in known]
    return "\n".join(lines)


def declare(root: Path, names: list[str]) -> list[str]:
    """Declare the records at ``names`` (paths or globs relative to ``root``, or paths under it): each must be an
    intact record of a catalogue entry; it is declared with its own options and content.  Returns the lines to
    print; a ValueError names a path that matches no record or no entry."""
    root = Path(root).resolve()
    found: dict[str, tuple[dict, str]] = {}
    for given in names:
        path = Path(given)
        relative = path.resolve().relative_to(root).as_posix() if path.is_absolute() or path.exists() else given
        matches = sorted(
            p for p in root.glob(relative) if p.is_file() and p.suffix == ".json" and p.name != declared.DECLARED
        )
        if not matches:
            raise ValueError(f"--declare {given}: no record there under {root}")
        for match in matches:
            name = match.relative_to(root).as_posix()
            entry = next((e for e in CATALOGUE if match in e.paths(root)), None)
            if entry is None:
                raise ValueError(
                    f"--declare {given}: {name} belongs to no catalogue entry (lorapriv_utils/catalogue.py)"
                )
            try:
                record, _ = read_record(match, kinds_of(entry.kind), with_arrays=True, declared=False)
            except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as err:
                raise ValueError(f"--declare {given}: {name} is damaged ({err}); rerun it first") from None
            found[name] = (record, entry.name)
    return declared.declare(root, found) or ["nothing changed: every record named is declared as it is"]


def main(args) -> int:
    """The ``status`` command: exit 1 when a record is not current and not allowed to be stale by the results
    folder's ``allowed-stale.txt``, or when a declared record is missing, foreign, altered, or a record is not
    declared (``--table``: print the README's table; ``--declare``: declare records)."""
    root = Path(args.results)
    if getattr(args, "table", False):
        print(results_table(root))
        return 0
    if getattr(args, "update_readme", False):
        readme = Path(root).resolve().parents[1] / "README.md"
        readme.write_text(readme_with_table(readme.read_text(encoding="utf-8"), root), encoding="utf-8")
        print(f"updated the table of committed results in {readme}")
        return 0
    if getattr(args, "declare", None):
        print("\n".join(declare(root, args.declare)))
        return 0
    if args.data_dir is not None:  # a --data-dir that does not hold its corpora: said first, with the whole reason
        for name in data_mod.LOCAL_DATASETS:
            try:  # the digest the records' checks read next, cached (specs.dataset_corpus of a local corpus)
                specs.corpus_digest(name, str(args.data_dir), False, 0, 0)
            except (FileNotFoundError, ValueError) as err:
                raise DataDirError(f"--data-dir {args.data_dir}: {name} cannot be read there: {err}") from None
    statuses = check(root=root, data_dir=args.data_dir)
    if getattr(args, "refresh", False):
        refreshed, left = refresh(statuses, root, args.data_dir)
        print(f"refreshed the derived numbers of {len(refreshed)} records from their stored scores")
        print("".join(f"  not refreshed: {line}\n" for line in left), end="")
        statuses = check(root=root, data_dir=args.data_dir)
    listed = root / ALLOWED_STALE.name
    allowed = allowed_stale(listed) if listed.exists() else {}
    print(report(statuses, verbose=args.verbose, allowed=allowed))
    stale = [s for s in statuses if s.state == "stale" and s.path in allowed]  # damaged or missing: never excused
    bad = [s for s in statuses if s.state != "current" and s not in stale]
    if bad:
        counts = ", ".join(f"{n} {state}" for state in STATES if (n := sum(s.state == state for s in bad)))
        print(f"lorapriv status: {len(bad)} of {len(statuses)} records are not current ({counts})", file=sys.stderr)
    if not (root / declared.DECLARED).is_file():
        print(
            f"lorapriv status: {root} has no {declared.DECLARED}: nothing says what the chapters read; declare the "
            "records (--declare PATH)",
            file=sys.stderr,
        )
        return 1
    if bad:
        return 1
    excused = f", but {len(stale)} stale for a reason given in {listed.name}" if stale else ""
    print(f"lorapriv status: {len(statuses) - len(stale)} of {len(statuses)} records current{excused}")
    return 0
