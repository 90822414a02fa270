"""The names tables show for the code's identifiers."""

import numpy as np
import pytest

from lorapriv_utils import labels


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("lora-r8", "LoRA r=8"),
        ("dpsgd-r8-z0.0340207", "DP-SGD (LoRA) r=8, σ=0.034"),  # the multiplier in three significant digits
        ("dpsgd-r8-z1", "DP-SGD (LoRA) r=8, σ=1"),
        ("rowscale-r8", "LoRA (row-scaled) r=8"),
        ("full", "full fine-tuning"),
        ("lorafixed-r8", "LoRA-FA (fixed A) r=8"),
        ("full-lr3e-05", "full fine-tuning, rate 3e-05 fixed"),  # an audit at a rate fixed by --lr
    ],
)
def test_variants_are_named_from_the_engine_s_registry(name, shown):
    assert labels.variant(name) == shown


def test_no_method_s_label_holds_a_comma():
    """The ledger and the chapters list methods comma-separated: "LoRA, row-scaled" would read as two methods."""
    from lorapriv_utils.mia.engine.methods import REGISTRY

    assert [m.label for m in REGISTRY.values() if "," in m.label] == []


def test_unknown_names_and_other_values_pass_through():
    for value in ("cpu-small", "A-6.lora", "sgd", "lora-8", "lora-r8-s1", 3, 0.5, None):
        assert labels.readable(value) == value
    assert labels.readable(None) is None


def test_booleans_corpora_and_terms():
    assert [labels.readable(v) for v in (True, np.bool_(False))] == ["yes", "no"]
    assert labels.readable("synthetic-email") == "synthetic e-mails" and labels.readable("pubmed") == "PubMed"
    assert labels.readable("lora_frozen_a") == "LoRA, A frozen"


def test_the_update_rules_have_a_name_each():
    from lorapriv_utils.theory import dynamics

    assert set(labels.RULES) == set(dynamics.RULES)
