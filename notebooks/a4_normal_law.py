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
# The derivation is in {doc}`../book/paper_a/a4_normal_law`. Distances are exact: the law of
# one noise element is a one-dimensional mixture, so its CDF is a one-dimensional integral,
# and total variation and Kolmogorov distances are decided at the points where the two
# densities cross. Monte Carlo only cross-checks the CDF values.

# %%
from IPython.display import Markdown, display

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import a4_normal_law
from lorapriv_utils.scale import current_scale

scale = current_scale()
print(f"scale {scale.name}: m in {scale.m_grid}, r in {scale.r_grid}, {scale.element_draws:,} draws per check")

# %% [markdown]
# ## Exact distances over m and r
#
# Uniform gradient row $q$ (all $|q_i|$ equal, the most favourable case for eq. 47), element
# $i = 0$. `tv` is the distance to $N(0, \|q\|^2/r)$, `tv_matched` to the Gaussian with the
# exact variance; `bound_eq46` uses the largest constant that paper A allows,
# $C_D = \pi\sqrt r/8$; `implied_c_d` is the constant that eq. 46 would need.

# %%
table = a4_normal_law.distance_table(list(scale.m_grid), list(scale.r_grid))
table

# %% [markdown]
# The limit $m\to\infty$ at fixed $r$ is the scale mixture $Z\sqrt{X/r}$, $X\sim\chi^2_r$:

# %%
limits = a4_normal_law.limit_table(list(scale.r_grid))
limits

# %%
fig = plots.distance_plot(table, limits)

# %% [markdown]
# ## Fitted decay rates
#
# Exponents of TV in $m$ (per rank, $m \ge 256$) and in $r$ (at the largest $m$), with 95%
# intervals, against the claimed $-1/2$.

# %%
fits = a4_normal_law.rate_fits(table)
fits

# %% [markdown]
# ## Monte Carlo cross-check of the exact CDF
#
# At each density crossing $x$ (where the distances are decided), $P(u_0 \le x)$ exactly and
# by Monte Carlo, with the exact element sampler and, for $m \le 1024$, with the full-matrix
# sampler of section 3.

# %%
mc = a4_normal_law.monte_carlo_crosscheck([(64, 1), (1024, 4), (16384, 16)], scale)
mc

# %% [markdown]
# ## The independence behind eq. 43
#
# Two summands $q_l a_{tl} a_{ti}/r$ and $q_{l'} a_{tl'} a_{ti}/r$ of eq. 43 share $a_{ti}$.
# Their correlation is 0, but the correlation of their squares is exactly 1/4; for
# independent products it is 0.

# %%
dependence = a4_normal_law.summand_dependence(scale)
dependence

# %% [markdown]
# ## Verdicts

# %%
claims = a4_normal_law.claims(table, limits, fits, mc, dependence, scale)
ledger.save_claims(a4_normal_law.KEY, claims)
display(Markdown(ledger.claims_markdown(claims)))
