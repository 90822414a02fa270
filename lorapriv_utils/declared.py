"""What the chapters declare they read: ``results/published/declared.json``, the published store's manifest.

For every published record it names the catalogue entry the record belongs to, the *options* it must have been made
with (the run's options that enter its spec: ``--epochs``, ``--lr``, ``--lr-grid``, ``--optimizer``, ``--reference``,
a frontier's ``--checkpoints``, LiRA's ``--references``, an audit's canaries and DP-SGD settings) and the checksum of
its content.  A record is judged against this declaration, never against its own options:

* the status check (``python -m lorapriv_utils status``) reports each record that is missing, extra (not declared),
  *foreign* (made with other options: "made with --epochs 1, the chapter expects 2") or *altered* (its content is
  not the declared one: a hand edit whose checksum was recomputed), with exit status 1;
* the one reader (``store.read_record``) refuses a foreign, altered or undeclared record of a declared store with the
  same line, so that no chapter reads it;
* the one writer (``store.write_record``) refuses to write one, and records the checksum of each record it writes
  under the declared options, so that a rerun or a refresh of a declared record keeps the declaration current.

A store is *declared* when ``declared.json`` lies at its root; a folder without one (``results/pending``, a folder of
one's own) is not guarded.  Records enter the declaration only through ``python -m lorapriv_utils status --declare
PATH``: a deliberate step whose diff is reviewed.  Torch-free; the declaration is read once per change of the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .files import Lock, atomic_write_text

DECLARED = "declared.json"

# the options each record kind's spec depends on (a record of another kind depends on none)
OPTIONS = {
    "cell": ("epochs", "lr", "lr_grid", "optimizer", "reference", "device", "precision"),
    "frontier-point": ("optimizer", "checkpoints", "device", "precision"),
    "lira-references": ("epochs", "lr", "lr_grid", "optimizer", "reference", "references", "device", "precision"),
    "canary-audit": ("epochs", "lr", "lr_grid", "optimizer", "canaries", "dp", "device", "precision"),
}
# each option as the command line spells it, and how its absence reads
FLAGS = {
    "epochs": "--epochs",
    "lr": "--lr",
    "lr_grid": "--lr-grid",
    "optimizer": "--optimizer",
    "reference": "--reference",
    "checkpoints": "--checkpoints",
    "references": "--references",
    "canaries": "--canaries/--guesses",
    "dp": "--noise-multiplier",
    "device": "--device",
    "precision": "autocast/--accelerate",
}
DEFAULT = "the default"
DEFAULTS = {  # what an option's absence means, in words
    "epochs": "the scale's epochs",
    "lr": "the rate its sweep chooses",
    "lr_grid": "the scale's rate grid",
    "optimizer": "the method's own optimiser",
    "reference": "same",
    "dp": "the scale's DP-SGD settings",
    "precision": "float32 in one process",
}
JOURNALS = ("sweep-journal", "frontier-journal")  # an unfinished run's hidden journals: not records a chapter reads


class UndeclaredError(ValueError):
    """A record of a declared store that the declaration does not allow (one line, which says what to do)."""


def options_of(record: dict) -> dict:
    """The options ``record`` was made with, of those its kind's spec depends on (``None`` and defaults left out)."""
    wanted = OPTIONS.get(record.get("kind"), ())
    manifest = record.get("manifest") or {}
    config = manifest.get("config") or {}
    found = dict(config.get("overrides") or {})
    found["reference"] = None if config.get("reference", "same") == "same" else config.get("reference")
    if record.get("kind") == "frontier-point":
        found["checkpoints"] = [point["epoch"] for point in record.get("checkpoints", [])]
    if record.get("kind") == "lira-references":
        found["references"] = record.get("references")
    found["canaries"] = manifest.get("canary_config")
    found["dp"] = manifest.get("dp")
    # where and how it trained: a GPU's kernels or bf16 autocast move the numbers, which the spec's key leaves out
    found["device"] = manifest.get("device")
    autocast = manifest.get("autocast")
    precision = [] if autocast in (None, "None") else [f"autocast {autocast}"]
    precision += ["accelerate"] if manifest.get("accelerate") else []
    found["precision"] = ", ".join(precision) or None
    return {name: _plain(found[name]) for name in wanted if found.get(name) is not None}


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def run_options(**given) -> dict:
    """The options a run gives (``--epochs`` ... as keyword arguments), in the form :func:`options_of` reads them
    from a record: ``None``, and a reference of ``same``, left out."""
    if given.get("reference") == "same":
        given["reference"] = None
    return {name: _plain(value) for name, value in given.items() if value is not None}


def _shown(value, name: str = "") -> str:
    if value is None:
        return DEFAULTS.get(name, DEFAULT)
    if isinstance(value, list):
        return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in sorted(value.items()))
    return f"{value:g}" if isinstance(value, float) else str(value)


def difference(
    found: dict, expected: dict, names=None, verb: str = "made with", expects: str = "the chapter expects"
) -> str:
    """'made with --epochs 1, the chapter expects the scale's epochs' for every option (of ``names``, default all)
    that differs ('' when none does); ``verb``: how the found options came about ("this run gives"), ``expects``:
    whose the expected ones are."""
    names = sorted(set(found) | set(expected)) if names is None else names
    parts = [
        f"{verb} {FLAGS.get(n, n)} {_shown(found.get(n), n)}, {expects} {_shown(expected.get(n), n)}"
        for n in names
        if found.get(n) != expected.get(n)
    ]
    return "; ".join(parts)


# ---------------------------------------------------------------- the declaration file

_CACHE: dict[Path, tuple[tuple[int, int, int], dict]] = {}


def store_root(path) -> Path | None:
    """The root of the declared store that holds ``path`` (the nearest folder above it with a declaration)."""
    for folder in Path(path).resolve().parents:
        if (folder / DECLARED).is_file():
            return folder
    return None


def load(root, cached: bool = True) -> dict:
    """The declaration at ``root``: ``{relative path: {"entry", "options", "checksum"}}`` (empty when none).  Read
    once per change of the file (its inode, size and time); ``cached=False``, always read: what a writer does under
    the declaration's lock."""
    path = Path(root).resolve() / DECLARED
    if not path.is_file():
        return {}
    info = path.stat()
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
    hit = _CACHE.get(path)
    if cached and hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data["records"]
        if not isinstance(records, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise ValueError(
            f"{path}: not a declaration (a JSON object with a 'records' mapping); restore it with git checkout"
        ) from None
    _CACHE[path] = (stamp, records)
    return records


def save(root, records: dict) -> Path:
    path = Path(root).resolve() / DECLARED
    text = json.dumps(
        {
            "about": "What the chapters read: each published record's catalogue entry, the options it must be made "
            "with and its content's checksum (lorapriv_utils/declared.py). Change it only with "
            "`python -m lorapriv_utils status --declare PATH`.",
            "records": {name: records[name] for name in sorted(records)},
        },
        indent=1,
        sort_keys=True,
    )
    atomic_write_text(path, text + "\n")
    _CACHE.pop(path, None)
    return path


def entry_of(record: dict, entry: str) -> dict:
    return {"entry": entry, "options": options_of(record), "checksum": record.get("checksum")}


def verdict(name: str, record: dict, declared: dict | None) -> tuple[str, str]:
    """``(state, line)`` of a record against its declaration: ``("ok", "")``, or ``extra``, ``foreign`` or
    ``altered`` with the line that says why and what to do."""
    if declared is None:
        return "extra", (
            f"{name} is not declared: the chapters do not read it. Declare it with `python -m lorapriv_utils status "
            "--declare PATH` if a chapter should, or move it to a folder of its own"
        )
    found = options_of(record)
    if found != declared.get("options", {}):
        return "foreign", (
            f"{name} is foreign: {difference(found, declared.get('options', {}))}; rerun it with the declared "
            "options, or write experiments to a folder of their own"
        )
    if declared.get("checksum") not in (None, record.get("checksum")) and declared.get("pending") != record.get(
        "checksum"
    ):
        return "altered", (
            f"{name} is altered: its content is not the declared one (edited by hand, or written outside the "
            "engine); restore it with git checkout, or rerun it"
        )
    return "ok", ""


def _located(path, record: dict) -> tuple[Path | None, str]:
    """The declared store that holds ``path`` and the record's name there; ``(None, "")`` for a journal or a record
    outside any declared store."""
    root = None if record.get("kind") in JOURNALS else store_root(path)
    return (root, "") if root is None else (root, Path(path).resolve().relative_to(root).as_posix())


def check_read(path, record: dict) -> None:
    """Raise :class:`UndeclaredError` when ``record``, read from ``path``, lies in a declared store and is not the
    record the declaration names (what every chapter's read goes through)."""
    root, name = _located(path, record)
    if root is None:
        return
    state, line = verdict(name, record, load(root).get(name))
    if state != "ok":
        raise UndeclaredError(line)


def check_write(path, record: dict) -> Path | None:
    """Before the one writer writes ``record`` to ``path``: an error when ``path`` lies in a declared store and the
    record is undeclared there or made with other options; returns the store's root (None: not a declared store)."""
    root, name = _located(path, record)
    if root is None:
        return None
    declared = load(root).get(name)
    if declared is None:
        raise UndeclaredError(
            f"{name} is not declared in {root / DECLARED}: write it to a folder of its own (--out results/pending), "
            "then move it here and declare it (python -m lorapriv_utils status --declare PATH)"
        )
    found = options_of(record)
    if found != declared.get("options", {}):
        raise UndeclaredError(
            f"{name}: {difference(found, declared.get('options', {}), verb='this run gives')}; write experiments "
            "with other options to a folder of their own"
        )
    return root


def _set(root: Path, path, **fields) -> None:
    name = Path(path).resolve().relative_to(root).as_posix()
    with Lock(root / DECLARED):
        records = dict(load(root, cached=False))  # another process may have declared a record a moment ago
        if name not in records:
            raise UndeclaredError(f"{name} is no longer declared in {root / DECLARED}; declare it again")
        entry = {**records[name], **fields}
        entry = {k: v for k, v in entry.items() if v is not None or k == "checksum"}
        if entry != records[name]:
            records[name] = entry
            save(root, records)


def writing(root: Path, path, record: dict) -> None:
    """Before a declared record is rewritten: its new checksum noted as pending, so that a process stopped between
    the record's write and :func:`written` leaves a record the declaration still accepts, not one that reads as
    edited by hand."""
    _set(root, path, pending=record.get("checksum"))


def written(root: Path, path, record: dict) -> None:
    """Record the checksum of a declared record just written (a rerun or a refresh under the declared options)."""
    _set(root, path, checksum=record.get("checksum"), pending=None)


def declare(root, entries: dict[str, tuple[dict, str]]) -> list[str]:
    """Declare records: ``{relative path: (record, catalogue entry)}``, each with its own options and checksum.
    Returns one line per record that is new or whose declared options change."""
    root = Path(root).resolve()
    lines = []
    with Lock(root / DECLARED):
        records = dict(load(root, cached=False))
        for name, (record, entry) in sorted(entries.items()):
            new = entry_of(record, entry)
            old = records.get(name)
            if old is None:
                lines.append(f"declared {name}" + (f" ({_options_line(new['options'])})" if new["options"] else ""))
            elif old.get("options") != new["options"]:
                change = difference(new["options"], old.get("options", {}), verb="now made with", expects="it was")
                lines.append(f"re-declared {name}: {change}")
            elif old.get("checksum") != new["checksum"]:
                lines.append(f"re-declared {name}: its content")
            records[name] = new
        save(root, records)
    return lines


def _options_line(options: dict) -> str:
    return ", ".join(f"{FLAGS.get(n, n)} {_shown(v, n)}" for n, v in sorted(options.items()))
