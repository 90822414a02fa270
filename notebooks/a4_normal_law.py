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
# # §4 checked: the distance to the normal law
#
# ```{admonition} What this page found
# :class: takeaway
# The total-variation distance to Lemma 4.2's Gaussian barely shrinks with $m$: at $m$ =
# {glue:text}`a4_normal_law_m_max:g` and rank {glue:text}`a4_normal_law_r_min:g` it is {glue:text}`a4_normal_law_tv_r_min:g`, against a bound of
# {glue:text}`a4_normal_law_bound_r_min:g` {verdict}`A-4.2`. It shrinks with the rank, nearly like $1/r$ {verdict}`A-4.2-rank`.
# ```
#
# This page computes exact total-variation and Kolmogorov distances between one noise element
# and the Gaussian of Lemma 4.2, and tests Lemmas 4.2 and 4.3 against them. The law of one
# noise element is a one-dimensional mixture, so its CDF is a one-dimensional integral, and
# both distances are decided at the points where the two densities cross; Monte Carlo only
# cross-checks the CDF values. The derivation is in {doc}`../book/paper_a/a4_normal_law`.
#
# ```{admonition} Run it yourself
# :class: tip
# `make notebook NB=a4_normal_law` re-executes this page in place at the default scale
# (`cpu-small`; its measured time is on the {doc}`execution-statistics page <../book/execution>`); `LORAPRIV_SCALE=cpu-large` extends the
# grid to $m = 65536$ and $r = 128$.
# ```

# %% tags=["hide-input"]
from myst_nb import glue

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import a4_normal_law
from lorapriv_utils.numbers import display_table
from lorapriv_utils.scale import current_scale

scale = current_scale()
print(f"scale {scale.name}: m in {scale.m_grid}, r in {scale.r_grid}, {scale.element_draws:,} draws per check")

# %% [markdown]
# ## Exact distances over m and r
#
# Uniform gradient row $q$ (all $|q_i|$ equal, the most favourable case for eq. 47), element
# $i = 0$. `tv` is the distance to $N(0, \|q\|^2/r)$, `tv_matched` to the Gaussian with the
# exact variance; `bound_eq46` uses the largest constant that paper A allows,
# $C_D = \pi\sqrt r/8$; `implied_c_d` is the constant that eq. 46 would need. The full
# table is behind the toggle; the figure below shows it.

# %% tags=["hide-output"]
table = a4_normal_law.distance_table(list(scale.m_grid), list(scale.r_grid))
display_table(table, caption="Total-variation distance of one noise element to the Gaussian, against eq. 46's bound.")

# %% [markdown]
# The limit $m\to\infty$ at fixed $r$ is the scale mixture $Z\sqrt{X/r}$, $X\sim\chi^2_r$:

# %%
limits = a4_normal_law.limit_table(list(scale.r_grid))
display_table(limits, caption="The distance in the limit of large m, at fixed rank.")

# %% mystnb={"figure": {"caption": "Top: exact total-variation distance between a noise element and $\\mathcal{N}(0, \\|q\\|^2/r)$ against $m$, one line per rank. The dotted line is the bound of eq. 46 with the largest constant paper A allows, $C_D = \\pi\\sqrt{r}/8$; with that constant the bound is the same for every rank. The distances level off as $m$ grows while the bound keeps falling, so each rank's distance ends up above it; within the range shown, every rank but the largest already does. Bottom: the limit $m \\to \\infty$ against $r$, which falls faster than the claimed $r^{-1/2}$.", "name": "fig-a4-distance"}, "image": {"alt": "Two log-log panels. Top: nearly flat lines of TV distance, one per rank, and a single falling dotted bound line that crosses below them. Bottom: the limiting distance falling with rank, steeper than a dashed reference line."}}
distance_fig = plots.distance_plot(table, limits)

# %% [markdown]
# ## Fitted decay rates
#
# Exponents of TV in $m$ (per rank, $m \ge 256$) and in $r$ (at the largest $m$), against the
# claimed $-1/2$. The distances are exact, not sampled, so a regression interval would have no
# meaning; `max_log_residual` shows instead how far the points stray from a straight line, and
# the verdicts require each slope to be at most the claimed one plus a margin of 0.05 (a one-sided
# test: decaying faster than claimed is fine).

# %%
fits = a4_normal_law.rate_fits(table)
display_table(fits, caption="The decay rates of the distance in m and r, against the claimed -1/2.")

# %% [markdown]
# ## Monte Carlo cross-check of the exact CDF
#
# At each density crossing $x$ (where the distances are decided), $P(u_0 \le x)$ exactly and
# by Monte Carlo, with the exact element sampler and, for $m \le 1024$, with the full-matrix
# sampler of section 3. These check our own instrument (the quadrature), not the paper.

# %% tags=["hide-output"]
mc = a4_normal_law.monte_carlo_crosscheck([(64, 1), (1024, 4), (16384, 16)], scale)
display_table(mc, caption="The exact CDF against Monte Carlo at the density crossings (an instrument check).")

# %% mystnb={"figure": {"caption": "Every Monte Carlo CDF value against the exact one, as a z-score; the grey band is the pass region $|z| \\le 4$. All points fall inside it, so the exact CDFs behind the distances can be trusted.", "name": "fig-a4-crosscheck"}, "image": {"alt": "A strip of points along a horizontal z axis, all inside a grey band from minus four to four."}}
crosscheck_fig = plots.zscore_plot({"exact CDF": mc})

# %% [markdown]
# ## The independence behind eq. 43
#
# Two summands $q_l a_{tl} a_{ti}/r$ and $q_{l'} a_{tl'} a_{ti}/r$ of eq. 43 share $a_{ti}$.
# Their correlation is 0, but the correlation of their squares is exactly 1/4; for
# independent products it is 0.

# %%
dependence = a4_normal_law.summand_dependence(scale)
display_table(dependence, caption="Two summands of eq. 43: correlated squares, where independence needs none.")

# %% [markdown]
# ## Rows that are not uniform
#
# The same distances for a `heavy` gradient row (Student-$t$ coordinates) and a `spike` row
# (one coordinate carrying half of $\|q\|^2$), against eq. 46's bound for that row.

# %%
general = a4_normal_law.general_rows_table([64, 1024, 16384], [1, 4, 16])
display_table(general, caption="The distances for heavy-tailed and spiked gradient rows, against eq. 46.")

# %% [markdown]
# ## Eq. 47: rows with bounded entries
#
# For rows whose entries satisfy $c \le |q_l| \le C$, eq. 47 bounds eq. 45 (and so eq. 46) by
# $(C/c)^3$ times its value for a uniform row. The worst ratio over random rows and over the
# extremal rows ($k$ entries at $C$, the rest at $c$):

# %%
eq47 = a4_normal_law.eq47_table(scale)
display_table(eq47, caption="Eq. 47's bound for rows with bounded entries: the worst ratio found.")

# %% [markdown]
# ## The count of summands (eqs. 42-43)
#
# Appendix B writes $u_i$ as a sum of $1 + (m - 1)r$ summands. Built one by one, with $A$'s
# entries drawn $\mathcal{N}(0, 1/r)$ as LoRA draws them (so no factor $1/r$ appears; the section
# above writes the same summands with standard normal entries and the factor $1/r$): the diagonal
# part $q_i(\sum_t a_{ti}^2 - 1)$ is one summand, and $q_l a_{tl} a_{ti}$ for every $l \ne i$ and
# every row $t$ of $A$ are the others; `sum_equals_u_i` checks that they add up to the noise element.

# %%
count = a4_normal_law.summand_count_table([(8, 1), (16, 4), (64, 8)], scale)
display_table(count, caption="The summands of one noise element, counted, and their sum checked.")

# %% [markdown]
# ## Verdicts
#
# Computed from the tables above and written to the claims ledger; only evidence checks are
# counted (see {doc}`../book/claims_ledger`).

# %% tags=["hide-input"]
claims = a4_normal_law.claims(table, limits, fits, mc, dependence, general, scale, count=count, eq47=eq47)
ledger.save_claims(a4_normal_law.KEY, claims)
plots.save_figure(distance_fig, "a4_distance")
for name, value in a4_normal_law.key_numbers(table, limits, fits).items():
    glue(name, value, display=False)
ledger.claims_table(claims)
