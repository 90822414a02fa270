"""The names a reader sees for the short identifiers the code uses: corpora, methods and their variants
(``lora-r8``, ``dpsgd-r8-z1``), the update rules and problems of the exact sections, and yes/no for booleans.

:func:`readable` is what :func:`lorapriv_utils.numbers.display_table` applies to every cell of a text or boolean
column; a value it does not know is shown unchanged.
"""

from __future__ import annotations

import re

import numpy as np

CORPORA = {"ptb": "Penn Treebank", "synthetic-email": "synthetic e-mails", "enron": "Enron", "pubmed": "PubMed"}
# the update rules and problems of theory.dynamics (eqs. 8-10) and theory.noise
TERMS = {
    "lora_frozen_a": "LoRA, A frozen",
    "least_squares": "least squares",
    "logistic": "logistic regression",
    "mlp": "MLP layer",
}
# theory.dynamics' update rules (eqs. 8-10), as the column headers of a table of them
RULES = {"full": "full gradient", "lora": "LoRA", "lora_frozen_a": "frozen A (eq. 9)", "flora": "FLoRA"}
NUMBER = r"\d+(?:\.\d+)?(?:e-?\d+)?"
VARIANT = re.compile(rf"(?P<method>[a-z]+)(?:-r(?P<rank>\d+))?(?:-z(?P<sigma>{NUMBER}))?(?:-lr(?P<lr>{NUMBER}))?")


def variant(name: str) -> str:
    """A method's variant as a reader sees it: ``lora-r8`` -> ``LoRA r=8``, ``dpsgd-r8-z0.0340207`` -> ``DP-SGD
    (LoRA) r=8, σ=0.034`` (the noise multiplier in three significant digits), ``full-lr3e-05`` -> ``full
    fine-tuning, rate 3e-05 fixed`` (a rate fixed by ``--lr``, not swept).  A name whose method is not in the
    engine's registry (:mod:`lorapriv_utils.mia.engine.methods`) is returned unchanged."""
    from .mia.engine.methods import REGISTRY

    match = VARIANT.fullmatch(name)
    if not match or match["method"] not in REGISTRY:
        return name
    text = REGISTRY[match["method"]].label
    if match["rank"]:
        text += f" r={match['rank']}"  # "LoRA r=8", "LoRA (row-scaled) r=8"
    if match["sigma"]:
        text += f", σ={float(match['sigma']):.3g}"
    if match["lr"]:
        text += f", rate {float(match['lr']):g} fixed"
    return text


def readable(value):
    """``value`` as a table cell shows it: a boolean as yes/no, a corpus, variant or term by its name (above); any
    other value unchanged."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return value
    if value in CORPORA:
        return CORPORA[value]
    if value in TERMS:
        return TERMS[value]
    return variant(value)
