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
# # §2 checked: LoRA dynamics on exact problems
#
# The derivation is in {doc}`../book/paper_a/a2_dynamics`. Three small problems (least
# squares, softmax regression, the first layer of a two-layer ReLU network; n = 8, m = 32,
# rank 4) are trained with plain SGD under four update rules that share their mini-batches
# and their initial A.

# %%
from IPython.display import Markdown, display

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import a2_dynamics
from lorapriv_utils.scale import current_scale

scale = current_scale()
print(f"scale {scale.name}: training lengths {scale.dyn_steps}, {scale.dyn_lrs} learning rates, seed {scale.seed}")

# %% [markdown]
# ## Eq. 10: with A frozen, LoRA is a random projection of the gradients
#
# `eq10_exact` is true when the trained weight equals $W_0 - \eta\sum_t G_t A_0^\top A_0$ to a
# relative error below $10^{-10}$.

# %%
eq10 = a2_dynamics.eq10_table(scale)
eq10

# %% [markdown]
# ## How far LoRA drifts from the frozen-A approximation (eqs. 8-9)
#
# For every learning rate and training length: $\eta L$ (with $L$ the largest partial-sum
# norm of the gradients, as in Theorem 2.1), the relative drift of LoRA from the frozen-A
# dynamics, the estimate $(\eta L)^2/(1-(\eta L)^2)$ of eq. 8's neglected term, and
# $\|f_A(T)\|_2$ against the theorem's bound.

# %%
drift = a2_dynamics.drift_table(scale)
drift

# %%
fig = plots.drift_plot(drift)

# %%
slope, low, high = a2_dynamics.drift_exponent(drift)
print(f"drift ~ (eta L)^{slope:.2f}, 95% interval [{low:.2f}, {high:.2f}] (fit over eta L <= 0.5)")

# %% [markdown]
# Where eq. 8's second-order term stops being negligible: the value of $\eta L$ at which the
# drift reaches 1% and 10% (interpolated between runs).

# %%
a2_dynamics.drift_thresholds(drift)

# %% [markdown]
# ## Theorem 2.1's bound on adversarial gradient sequences
#
# The theorem assumes only that every partial sum of the gradients has norm at most $L$.
# Partial sums that rotate on a circle of radius $L$ satisfy that assumption, yet make
# $f_A$ grow linearly with the number of steps.

# %%
adversarial = a2_dynamics.adversarial_table(scale)
adversarial

# %%
fig = plots.adversarial_plot(adversarial)

# %% [markdown]
# ## The four update rules side by side
#
# Loss on the whole training set after the longest run, learning rate 0.1.

# %%
a2_dynamics.rules_table(scale)

# %% [markdown]
# ## Verdicts

# %%
claims = a2_dynamics.claims(drift, eq10, adversarial, scale)
ledger.save_claims(a2_dynamics.KEY, claims)
display(Markdown(ledger.claims_markdown(claims)))
