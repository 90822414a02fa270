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
# # §5 checked: Johnson-Lindenstrauss, row scaling and the noise multiplier
#
# ```{admonition} What this page found
# :class: takeaway
# §5.1's multiplier holds only when per-sample gradients add up {verdict}`A-5.1-z`, and at face value,
# {glue:text}`a5_row_scaling_z_formula:g` at rank {glue:text}`a5_row_scaling_r:g`, it certifies nothing over paper A's runs ($\varepsilon = 8$ needs
# {glue:text}`a5_row_scaling_z_needed_eps8:g`). On the default scale's GPT-2, a canary audit of fixed design catches full
# fine-tuning ($\varepsilon \ge$ {glue:text}`a5_row_scaling_audit_eps_full:.2f` on every seed) but nothing that trains
# only the LoRA factors (canary AUC {glue:text}`a5_row_scaling_audit_auc_rowscale:.2f` row-scaled), nor full fine-tuning
# at a lower rate of better utility than LoRA (canary AUC {glue:text}`a5_row_scaling_audit_auc_full_fixed:.2f`): it cannot judge
# the resemblance {verdict}`A-5.1-equivalence`.
# ```
#
# This page tests the steps by which paper A goes from LoRA's random projection to a DP-SGD
# noise multiplier: Theorem 5.1 at the rank $r = \Delta^{-2}\log(2/p)$, its use for one
# gradient row (eq. 22) and for a whole batch (eq. 23), the multiplier of §5.1 on batches of
# per-sample gradients with controlled geometry and on real ones, and what DP-SGD's
# accountants would certify at that multiplier. The derivation is in {doc}`../book/paper_a/a5_row_scaling`.
#
# ```{admonition} Run it yourself
# :class: tip
# `make notebook NB=a5_row_scaling` re-executes this page in place at the default scale
# (`cpu-small`; its measured time is on the {doc}`execution-statistics page <../book/execution>`).
# ```

# %% tags=["hide-input"]
from myst_nb import glue

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import a5_row_scaling
from lorapriv_utils.numbers import display_table
from lorapriv_utils.scale import current_scale

scale = current_scale()
print(
    f"scale {scale.name}: {scale.noise_draws:,} matrices per Monte Carlo check of Theorem 5.1 "
    "(eq. 23 and section 5.1 use fewer draws, given in their tables)"
)

# %% [markdown]
# ## Theorem 5.1 (eqs. 19-21)
#
# $\|x A^\top\|^2/\|x\|^2$ is exactly $\chi^2_r/r$ for any $x$ and any input dimension, so the
# two one-sided probabilities are chi-square tails; Monte Carlo with real Gaussian matrices
# checks them ($m = 32$: the law does not depend on $m$; at $p \le 10^{-6}$ Monte Carlo sees no
# event and only bounds them). The grid reaches the very small $p$ that a union bound over a
# training run needs.

# %%
jl = a5_row_scaling.jl_table([0.1, 0.25, 0.5], [1e-15, 1e-12, 1e-9, 1e-6, 0.01, 0.1, 0.5, 0.9], 32, scale)
display_table(jl, caption="Theorem 5.1 at the rank r = Delta^-2 log(2/p): exact one-sided probabilities against p/2.")

# %% [markdown]
# ## Eq. 23 at GPT-2 sizes
#
# $n = 768$ rows, batches of 8 to 32, ranks 8 and 16, $\Delta = 1/2$ ($p$ follows from
# $r = \Delta^{-2}\log(2/p)$). The guarantee $1 - nbp$ against the probability, measured over
# random $A$, that every row keeps its norm within $1 \pm \Delta$, and that every per-sample
# Frobenius norm lands in eq. 23's interval; `independent` rows or `rank1` per-sample
# gradients (every row a multiple of one input vector).

# %%
eq23 = a5_row_scaling.eq23_table(768, [8, 16, 32], [8, 16], 0.5, scale)
display_table(eq23, caption="Eq. 23's batch-wide guarantee 1 - nbp at GPT-2 sizes.")

# %% [markdown]
# ## The noise on one row-scaled gradient
#
# Paper A says (after eq. 23) that, with row scaling, LoRA adds to each element of a per-sample
# gradient a Gaussian-like noise of variance at least $((1-\Delta)/(1+\Delta))^2 c^2$. Here is
# that noise, $\tilde g\,(A^\top A - I)$ for one row $\tilde g$ scaled by eq. 22 with the same
# $A$, from real Gaussian matrices ($m = 64$, $\Delta = 1/2$, $c = 1$), for a row whose squared
# norm is spread over its entries and one with 90% of it on one entry: the smallest element
# variance and the variance on the largest entry (Monte Carlo and exact), and the exact excess
# kurtosis on the largest entry (0 for a Gaussian; inf where the fourth moment diverges).
# `var_top_applied` reads the noise differently: the variance of the update LoRA applies,
# $\tilde g A^\top A$, about its mean, on the largest entry (at $\Delta = 1/2$, and at
# $\Delta = 1/4$ beside that $\Delta$'s bound).

# %%
noise_var = a5_row_scaling.noise_variance_table([4, 8, 16, 64], scale)
display_table(noise_var, caption="One sample's noise variance against paper A's bound, two readings.")

# %% [markdown]
# ## The multiplier of §5.1 (formula against measurement)
#
# Batches of 8 per-sample gradients ($n = 64$, $m = 256$) with four geometries, rows scaled as
# in eq. 22 with $c = 1$, $\Delta = 1/2$. `z_equivalent` is the root-mean-square standard
# deviation of LoRA's noise on the summed gradient, measured over 40 draws of $A$ for each of 10
# batches (the same $A$ scales the rows and makes the noise), over the clipping norm
# $\sqrt{nr}\,c$; `ratio_plugin` is Lemma 3.1's variance with the scaled sum held fixed.

# %%
mult = a5_row_scaling.multiplier_table(8, 64, 256, [8, 16], 0.5, scale)
display_table(mult, caption="LoRA's noise on a row-scaled batch as a DP-SGD multiplier, against §5.1's formula.")

# %% mystnb={"figure": {"caption": "LoRA's noise on a row-scaled batch, expressed as a DP-SGD multiplier and divided by \u00a75.1's formula, for four geometries of the per-sample gradients and two ranks. When the per-sample gradients add up (orthogonal, random, correlated) the measured multiplier is at least the formula's; when they cancel, the noise vanishes with the batch gradient and the formula fails.", "name": "fig-a5-multiplier"}, "image": {"alt": "Dot chart with one row per geometry; orthogonal and random a little to the right of a dashed line at 1, correlated several times further right, cancelling at the left edge, circled."}}
mult_fig = plots.multiplier_plot(mult)

# %% [markdown]
# ## The multiplier on real gradients
#
# The geometries above are constructed. For real ones, `make results-a5` takes the gradient of
# each of a few hundred Penn Treebank lines with respect to the first block's `c_attn` weight
# of this scale's pre-trained base model (the start of fine-tuning, where paper A's runs begin),
# draws batches of $b$ lines and measures, over many matrices $A$, the noise that LoRA adds to
# their row-scaled sum ($\Delta = 1/2$, $c = 1$), as above. The table gives the measured
# multiplier over the formula's (`ratio_mean`, with its standard error over batches, and the
# smallest and largest batch), the same batches with each line's sign flipped at random
# (`ratio_signflip_mean`: no common direction left), and Lemma 3.1's plug-in with the scaled sum
# held fixed (`ratio_plugin_mean`), which ignores that row scaling uses the same $A$. The
# measurement is committed and loaded here (it takes seconds, but needs the pre-trained base
# model); its sizes are in the record and on the chapter's page.

# %%
real_record = a5_row_scaling.load_real_multiplier()
real_mult = a5_row_scaling.real_multiplier_table(real_record)
display_table(real_mult, caption="§5.1's multiplier on real per-text gradients of the toy GPT-2.")

# %% [markdown]
# ## What DP-SGD would certify at that multiplier
#
# Paper A's runs: a member set of one third of Penn Treebank's training lines, batch 8, 20
# epochs, $\delta = 10^{-5}$. At the formula's multiplier only the RDP accountant returns a
# number (Opacus's PRV and `dp-accounting`'s PLD cannot represent so little noise), and its
# best Rényi order lies at the edge of the grid (`rdp_best_order_at_grid_edge`): no order gives
# a useful bound. The multiplier that certifies $\varepsilon = 8$ is given with its
# $\varepsilon$ from all three accountants.

# %%
acct = a5_row_scaling.accounting_table(768, [8, 16], 0.5)
display_table(acct, caption="What DP-SGD's accountants certify at §5.1's multiplier over paper A's runs.")

# %% [markdown]
# ## What row scaling costs
#
# Paper A calls per-sample row scaling "almost no cost". The engine's `rowscale` method (LoRA with
# $A$ frozen, every row of every per-text gradient with respect to $B$ rescaled to norm
# $(1 - \Delta)\sqrt{r}\,c$ before the step) needs each sample's gradient, which plain LoRA never
# forms. The fair baseline is LoRA-FA, LoRA with the same frozen $A$ and trainable $B$, so that
# the ratio is the cost of row scaling alone; plain LoRA (which also trains $A$) is shown beside
# it. `python -m lorapriv_utils cost PATH.json` (part of `make results-a5`) trains each for one
# epoch on the scale's model (each run in its own process, {glue:text}`a5_row_scaling_cost_runs:g` runs each) and stores the
# medians in
# `results/published/bench/rowscale_cost.json`, which this page loads; peak memory is counted
# above a process that builds the same model and data without training. With
# `LORAPRIV_SCALE=cpu-large` it does the same on the larger CPU scale's model
# ({glue:text}`/notebooks/a6_membership.ipynb::a6_membership_large_layers:g` layers, width
# {glue:text}`/notebooks/a6_membership.ipynb::a6_membership_large_width:g`,
# {glue:text}`/notebooks/a6_membership.ipynb::a6_membership_large_context:g`-token texts), stored in `rowscale_cost_cpu-large.json`.

# %%
cost = a5_row_scaling.load_cost()
larger_cost = a5_row_scaling.load_larger_cost()
display_table(a5_row_scaling.cost_table(cost, larger_cost), caption="Row scaling's cost in time and memory.")

# %% [markdown]
# ## What an audit says
#
# A certificate bounds $\varepsilon$ from above, and only DP-SGD has one. An audit bounds it from
# below, for any training method: if some test tells apart "this text was trained on" from "it was
# not" too well, no smaller $\varepsilon$ can hold. `make results-a5` runs the one-run audit of
# Steinke, Nasr and Jagielski (`lorapriv_utils.mia.experiments.audit`) in a design fixed before its
# runs (`a5_row_scaling.AUDIT_DESIGN`, which refuses records of any other): the split's held-out
# synthetic e-mails serve as canaries, each added to the members with probability 1/2 (one fair coin
# per canary, shared by every method of a seed); each method is trained once per seed on the
# members plus the canaries that came up "in", with its learning rate from the grid's rule; every
# canary is scored by how much training lowered its loss below the base model's; and the auditor
# guesses "in" for the highest-scoring canaries and "out" for the lowest (`guesses` on each side).
# The count of right guesses gives the lower bound at $\delta = 10^{-5}$ with 95% confidence.
# DP-SGD (on the LoRA factors, as in the grid) runs twice: at the multiplier that §5.1 assigns to
# row-scaled LoRA here, and at $\sigma = 1$, whose certificate the audit must not exceed. The
# canary AUC beside each bound measures the same separation without a threshold: the mean over
# seeds, with a 95% interval from a bootstrap over seeds and then canaries. Training runs
# {glue:text}`a5_row_scaling_audit_epochs:g` epochs (the grid's: {glue:text}`/notebooks/a6_membership.ipynb::a6_membership_small_epochs:g`), the same for every method.
#
# The seeds ({glue:text}`a5_row_scaling_audit_seed_first:g` to {glue:text}`a5_row_scaling_audit_seed_last:g`) are fresh: an exploratory run with seed 0 on Penn Treebank chose this design,
# and its coins are not reused. The corpus is the synthetic e-mails because every method learns
# them; on Penn Treebank the base model had already been trained on that text, and LoRA's
# perplexity did not move.
#
# Full fine-tuning at its swept rate reaches a far lower validation perplexity than any
# LoRA-factor training, so it alone cannot say whether the audit's silence on those methods is
# theirs or their utility's. Full fine-tuning is therefore audited a second time, on the same
# seeds and coins, at a rate chosen before its runs ({glue:text}`a5_row_scaling_audit_fixed_lr:g`,
# `a5_row_scaling.FIXED_FULL_LR`): the full fine-tuning rate of the default scale's frontier on
# these e-mails (seed 0, another split) whose final, 8-epoch checkpoint came nearest the
# LoRA-factor audits' perplexity. The audit trains about three times as many steps, and the run
# ended at a lower perplexity than theirs (the table's last row).

# %%
audits = a5_row_scaling.load_audits()
audit = a5_row_scaling.audit_table(audits, scale)
display_table(audit.drop(columns="name"), caption="The canary audit, one row per method, over the design's seeds.")

# %% mystnb={"figure": {"caption": "The canary audit of fixed design on synthetic e-mails, one row per method, over the design's fresh seeds: how well the loss drop separates included from excluded canaries (canary AUC, the mean over seeds with a 95% interval over seeds and canaries; dashed: chance) and the smallest epsilon lower bound of the seeds. Full fine-tuning at its swept rate is caught on every seed; every method that trains only the LoRA factors, with or without row scaling or DP-SGD's noise, sits at chance, and so does full fine-tuning at the lower fixed rate (last row), whose validation perplexity is better than LoRA's.", "name": "fig-a5-audit"}, "image": {"alt": "Two panels, one above the other, each with one row per method. Top: canary AUC dots with interval bars; full fine-tuning at its swept rate at the far right, the methods that train only the LoRA factors and full fine-tuning at a fixed lower rate clustered on the dashed chance line. Bottom: a bar of the epsilon lower bound for full fine-tuning at its swept rate only; the other methods have none or almost none."}}
audit_fig = plots.audit_plot(audit)

# %% [markdown]
# The comparisons behind the verdict and the page, each a difference of canary AUCs (`audit`
# minus `minus`), the mean over seeds, with a paired bootstrap interval (seeds, then canaries, the
# same canaries for both audits of a seed). By the design's rule the audit judges the claim only if
# it catches full fine-tuning and tells DP-SGD at $\sigma = 1$ from DP-SGD at §5.1's multiplier
# (the row of DP-SGD at §5.1's multiplier minus DP-SGD at $\sigma = 1$, resolved above 0). The last three rows
# compare each LoRA-factor audit with full fine-tuning at the lower fixed rate, whose utility is better than theirs.

# %%
audit_diffs = a5_row_scaling.audit_differences(audits, a5_row_scaling.audit_pairs(audits), scale)
display_table(audit_diffs.drop(columns="comparison"), caption="Differences in canary AUC, with 95% intervals over seeds and canaries.")

# %% [markdown]
# ## Verdicts
#
# Computed from the tables above and written to the claims ledger (see
# {doc}`../book/claims_ledger`).

# %% tags=["hide-input"]
claims = [
    *a5_row_scaling.claims(jl, eq23, mult, acct, scale, real=real_mult),
    a5_row_scaling.cost_claim(cost, scale, larger=larger_cost),
    a5_row_scaling.noise_variance_claim(noise_var, scale),
    a5_row_scaling.audit_claim(audit, audit_diffs, audits, scale),
]
ledger.save_claims(a5_row_scaling.KEY, claims)
plots.save_figure(mult_fig, "a5_multiplier")
plots.save_figure(audit_fig, "a5_audit")
numbers = {
    **a5_row_scaling.key_numbers(eq23, mult, acct, cost, larger_cost),
    **a5_row_scaling.noise_numbers(noise_var),
    **a5_row_scaling.real_multiplier_numbers(real_mult, real_record),
    **a5_row_scaling.audit_numbers(audit, audit_diffs, audits),
}
for name, value in numbers.items():
    glue(name, value, display=False)
ledger.claims_table(claims)
