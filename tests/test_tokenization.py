import pytest

from lorapriv_utils.mia.engine import tokenization


def test_gpt2_tokenizer_gives_gpt2_ids_offline():
    tok = tokenization.gpt2_tokenizer()
    assert len(tok) == 50257
    assert tok.encode("Hello world") == [15496, 995]
    assert tok.eos_token_id == 50256
    assert tok.decode(tok.encode("Hello, world! 123")) == "Hello, world! 123"


def test_small_bpe_round_trips_and_is_deterministic():
    texts = ["the quick brown fox jumps over the lazy dog"] * 50 + ["pack my box with five dozen liquor jugs"] * 50
    a = tokenization.train_small_bpe(texts, vocab_size=300)
    b = tokenization.train_small_bpe(texts, vocab_size=300)
    assert len(a) <= 300 and a.get_vocab() == b.get_vocab()
    assert a.decode(a.encode("the lazy dog")) == "the lazy dog"


@pytest.mark.parametrize(("texts", "size", "match"), [(["x"], 10, "vocab_size"), ([], 500, "empty")])
def test_bad_arguments(texts, size, match):
    with pytest.raises(ValueError, match=match):
        tokenization.train_small_bpe(texts, vocab_size=size)
