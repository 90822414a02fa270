"""The chapter's constants: its corpora, scales, paper A's Table 1 and the readings of its vague words."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...labels import variant as variant_label
from ...scale import Scale

KEY = "a6_membership"
RESULTS = "results/published"  # relative to the repository root; one subfolder per scale
DATASETS = {
    "ptb": "Penn Treebank",
    "synthetic-email": "synthetic e-mails",
    "enron": "Enron sample (enron1, ham)",
    "pubmed": "PubMed sample (PubMedQA)",
}
# Our corpora for each of the paper's, in order of preference: the real one where a scale runs it, else the stand-in.
PAPER_SOURCES = {"PTB": ("ptb",), "Enron": ("enron", "synthetic-email"), "PubMed": ("pubmed",)}
LARGER = "cpu-large"  # the larger CPU scale: Table 1's grid on the three real corpora, one seed
PRETRAINED = "cpu-pretrained"  # a real pretrained language model (SmolLM2-135M-Instruct): decides Table 1's claims
# what the caveats each scale adds stand for, in the notes of the claims they join (scale_note fills in the sizes)
SCALE_MODELS = {
    LARGER: "the larger CPU scale ({model}, fine-tuned on Penn Treebank and the real Enron and PubMed samples",
    PRETRAINED: "the pretrained scale ({model}: a Llama-architecture model of GPT-2's size class with its own "
    "tokenizer, the instruct variant, its 4-bit weights dequantised; the real Enron and PubMed samples, {texts} texts "
    "per part cut to their first {block} tokens, {epochs} epochs",
}
SCALE_LIMITS = {
    LARGER: "no frontier there, so neither the matched-perplexity comparisons nor the share of the base model's "
    "perplexity recovered",
    PRETRAINED: "its frontier has few checkpoints, learning rates and seeds per method (the chapter's frontier "
    "table), so its comparisons at matched perplexity are coarse",
}
# the groups of committed results whose measured wall times the chapter quotes (numbers.measured_times)
COSTS = {
    "results": ("results-a6",),
    "grid": ("grid-ptb", "grid-email"),
    "frontier": ("frontier",),
    "large": ("results-a6-large",),
    "pre": ("results-a6-pretrained",),
    "pre_frontier": ("frontier-pretrained",),
    "pre_projection": ("results-a6-projection-pretrained",),
}

# Paper A, Table 1 (GPT-2 117M, 20 epochs): perplexity, AUC (%), TPR (%) at FPR 1% and 0.01%.
PAPER_TABLE1 = pd.DataFrame(
    [
        ("Enron", "full", 18.78, 92.2, 14.76, 1.65),
        ("Enron", "adapter", 19.38, 85.12, 10.85, 1.02),
        ("Enron", "lora-r16", 20.32, 75.85, 3.32, 0.35),
        ("Enron", "lora-r8", 22.12, 70.1, 2.11, 0.19),
        ("PubMed", "full", 17.85, 98.21, 90.21, 73.21),
        ("PubMed", "adapter", 18.21, 93.11, 68.21, 55.12),
        ("PubMed", "lora-r16", 19.42, 86.74, 26.67, 0.41),
        ("PubMed", "lora-r8", 20.12, 79.21, 18.34, 0.31),
        ("PTB", "full", 28.21, 93.45, 67.12, 64.65),
        ("PTB", "adapter", 30.11, 87.21, 61.21, 51.11),
        ("PTB", "lora-r16", 33.10, 84.87, 36.72, 15.84),
        ("PTB", "lora-r8", 34.21, 80.20, 26.70, 9.81),
    ],
    columns=["dataset", "variant", "ppl", "auc_pct", "tpr1_pct", "tpr001_pct"],
)
# Readings of the vague words of paper A's section 6 ("Experimental results"), each the strictest round number
# that Table 1 itself passes (tests/test_a6_membership.py holds PAPER_TABLE1 against them):
CONSIDERABLE = 0.02  # LoRA's AUC "considerably" below full and adapter fine-tuning's: Table 1's smallest such gap
#                      is 0.023 (PTB, r = 16, against adapter fine-tuning; 0.086 against full)
CONSIDERABLE_FULL = 0.08  # the same word read against full fine-tuning alone (Table 1's smallest gap there is 0.086,
#                           PTB, r = 16): the analysis plan's version-1 threshold against full fine-tuning
SLIGHT_GAIN = 0.08  # adapter fine-tuning's "slight improvement in robustness": an AUC drop from full of at most
#                     this (Table 1's largest, Enron's, is 0.071)
SLIGHT = 1.25  # a perplexity ratio up to this is a "slight" drop in utility (Table 1's worst LoRA/full ratio: 1.21)
TPR_DROP = 1.8  # "considerably" on the TPR (plan version 2): full's TPR at 5% FPR at least this times LoRA's; Table
#                 1's TPR at 1% FPR drops 1.83 (PTB, r = 16) to 7.0 times from full fine-tuning to LoRA


def results_dir(scale: Scale) -> Path:
    from ...ledger import ledger_dir

    return ledger_dir().parent / RESULTS / scale.name


def variant_name(method: str, rank, noise=None) -> str:
    from ...mia.experiments.grid import cell_name

    return cell_name(method, rank, noise)


def label(variant: str) -> str:
    """'lora-r8' -> 'LoRA r=8', 'dpsgd-r8-z1' -> 'DP-SGD (LoRA) r=8, σ=1' (:func:`lorapriv_utils.labels.variant`)."""
    return variant_label(variant)
