# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # §6 checked: Table 1 at the CPU scale, and LoRA at matched utility
#
# This page loads the membership-inference results that the engine's command line wrote
# (committed under `results/published/cpu-small/`, each record checked against its checksum),
# lays Table 1 of paper A beside ours, and then asks the question Table 1 cannot answer: at
# *equal validation perplexity*, is LoRA harder to attack than full fine-tuning? The protocol
# and its choices are in {doc}`../book/paper_a/a6_membership`.
#
# ```{admonition} Run it yourself
# :class: tip
# `make notebook NB=a6_membership` re-executes this page in place (about a minute: it reads
# results, it does not train). The results themselves take about 20 minutes (the grid, three
# seeds) and 55 minutes (the frontier, one seed) on 2 cores:
# `python -m lorapriv_utils run --methods full,adapter,lora --ranks 8,16 --seeds 0,1,2 --out results/published`,
# the same with `--methods flora,dpsgd,rowscale --ranks 8`, and
# `python -m lorapriv_utils frontier --out results/published`. Each command resumes where it
# stopped and skips what is current.
# ```

# %% tags=["hide-input"]
from myst_nb import glue

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import a6_membership as a6
from lorapriv_utils.numbers import display_table
from lorapriv_utils.scale import current_scale

scale = current_scale()
records = a6.load_grid(scale)
grid = a6.grid_frame(records)
summary = a6.grid_summary(grid)
curves = a6.load_frontier(scale)
points = a6.points_frame(curves)
print(
    f"scale {scale.name}: {len(grid)} grid cells ({grid['seed'].nunique()} seeds), "
    f"{len(points)} frontier checkpoints over {sum(len(c) for c in curves.values())} curves"
)

# %% [markdown]
# ## Table 1 beside ours
#
# Paper A's numbers (GPT-2 117M, 20 epochs, hub data) and ours (a 2-layer GPT-2 of width 64
# pre-trained offline, 4 epochs, each method at the learning rate its sweep chose, means over
# three seeds). Our stand-in for Enron is the synthetic e-mail corpus; PubMed and Enron
# themselves run at the larger CPU scale only. AUC and TPR are in percent. A TPR at FPR 0.01%
# needs at least 10,000 non-members; with our 800 (Penn Treebank) and 300 (e-mails) it is not
# resolvable and is shown as n/a, never as a number.

# %%
display_table(a6.table1_comparison(summary, scale))

# %% [markdown]
# ## Every method at its swept rate, with the seeds' spread
#
# `auc_spread` and `ppl_spread` are half the range over the three seeds. `lr_at_edge` marks a
# rate at the edge of the sweep's grid. DP-SGD's `epsilon` is the PRV accountant's at
# $\delta = 10^{-5}$.

# %%
display_table(
    summary[["dataset", "variant", "seeds", "ppl", "ppl_spread", "auc", "auc_spread", "tpr1", "epsilon", "lr_at_edge"]]
)

# %% [markdown]
# ## Four attacks, so that no verdict hangs on one
#
# Eq. 24's calibrated attack (the paper's), the plain loss attack, the zlib ratio and
# Min-K%++ (as in the MIMIR benchmark); AUC, means over seeds.

# %%
display_table(a6.attack_table(summary))

# %% [markdown]
# Offline LiRA {cite:p}`carlini2022membership` replaces eq. 24's single reference by four,
# each of the cell's own method and learning rate trained on a random half of the auxiliary
# part, and scores a text by how far its target loss falls below the spread of its reference
# losses (seed 0; `eq24_auc` is eq. 24 on the same cell).

# %%
display_table(a6.lira_table(records, scale))

# %% mystnb={"figure": {"caption": "ROC curves of the four attacks on log-log axes (Penn Treebank, seed 0), one line per method. The dotted diagonal is chance; the dashed line marks the smallest false-positive rate our 800 non-members resolve.", "name": "fig-a6-roc"}, "image": {"alt": "Four log-log panels of true-positive against false-positive rate; in each, full fine-tuning's curve lies highest and the DP-SGD and LoRA curves lie near the diagonal."}}
roc, signals = a6.roc_curves(records, "ptb", 0, scale)
labels = {name: a6.label(name) for name in signals}
roc_fig = plots.roc_plot(roc, labels)

# %% mystnb={"figure": {"caption": "Members' and non-members' eq. 24 signals (target loss minus reference loss), Penn Treebank, seed 0. The more the two histograms separate, the stronger the attack.", "name": "fig-a6-scores"}, "image": {"alt": "Small histograms per method of member and non-member signals; full fine-tuning's members sit visibly left of its non-members, the other methods' overlap."}}
hist_fig = plots.score_distributions_plot(signals, labels)

# %% [markdown]
# ## The privacy-utility frontier
#
# Each method at every learning rate of its grid, scored after 1, 2, 4 and 8 epochs (and the
# base model at epoch 0). A point is a checkpoint one could release; a method's *front* keeps
# its most private checkpoint at each perplexity.

# %% mystnb={"figure": {"caption": "Attack AUC (eq. 24) against validation perplexity for every checkpoint (dots) and each method's front (lines). At equal perplexity the fronts of LoRA and full fine-tuning lie on top of each other: what separates them in Table 1 is how far along the curve each method gets, not a different curve.", "name": "fig-a6-frontier"}, "image": {"alt": "Two panels, Penn Treebank and synthetic e-mails, of AUC against log perplexity; each method's front rises as perplexity falls, and the LoRA fronts overlap full fine-tuning's where both exist."}}
fronts = a6.front_frame(points)
shown = ["full", "adapter", "lora-r1", "lora-r8", "lora-r64", "flora-r8", "dpsgd-r8-z1"]
frontier_fig = plots.frontier_plot(points, fronts, shown, {v: a6.label(v) for v in shown})

# %% [markdown]
# ## Methods at matched perplexity
#
# Each method against full fine-tuning, then LoRA against adapter fine-tuning (the same weights,
# no factorisation), at three perplexities: level 0 is the best utility both reach, levels 1
# and 2 lie one and two thirds of the way (in log) to the base model's perplexity. Each method's
# value is its most private checkpoint at that perplexity, chosen on one half of the texts and
# read on the other (both ways round, averaged). `diff` is the method's AUC minus the baseline's,
# with a paired bootstrap interval over texts; it is conditional on these training runs (one
# seed). n/a: the method's checkpoints do not bracket that perplexity (a straight line to the
# base model is not a measurement).

# %%
matched = a6.matched_frame(curves, scale)
display_table(matched)

# %%
matched_adapter = a6.matched_frame(curves, scale, baseline="adapter", compared=("lora-r8", "lora-r16"))
display_table(matched_adapter)

# %% [markdown]
# ## The rank
#
# LoRA at ranks 1 to 64 at one fixed budget (the middle rate of LoRA's grid, 4 epochs), and
# r = 8 against r = 16 at matched perplexity.

# %% mystnb={"figure": {"caption": "LoRA's AUC and validation perplexity against its rank at one fixed budget (learning rate 0.01, 4 epochs).", "name": "fig-a6-rank"}, "image": {"alt": "Two panels: AUC against rank and perplexity against rank, one line per dataset."}}
ranks = a6.rank_frame(points, scale)
trends = a6.rank_trends(ranks)
rank_fig = plots.rank_plot(ranks)

# %%
display_table(trends)

# %%
rmatched = a6.rank_matched(curves, scale)
display_table(rmatched)

# %% [markdown]
# ## Verdicts
#
# Computed from the tables above and written to the claims ledger (see
# {doc}`../book/claims_ledger`).

# %% tags=["hide-input"]
matched_by_baseline = {"full": matched, "adapter": matched_adapter}
claims = a6.claims(summary, matched_by_baseline, trends, rmatched, a6.base_perplexity(curves), scale)
ledger.save_claims(a6.KEY, claims)
plots.save_figure(frontier_fig, "a6_frontier")
for name, value in a6.key_numbers(summary, matched, trends).items():
    glue(name, value, display=False)
ledger.claims_frame(claims)
