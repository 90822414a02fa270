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
# # §3 checked: the noise that LoRA injects
#
# The derivation is in {doc}`../book/paper_a/a3_noise`. The noise of eq. 11 is sampled with
# the streaming sampler of `lorapriv_utils.theory.noise` (cost $O(nmr)$ per draw, the $m\times m$
# matrix is never formed) and, for one element, with the exact $O(1)$ sampler that follows
# from conditioning on one column of $A$.

# %%
import numpy as np
from IPython.display import Markdown, display

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import a3_noise
from lorapriv_utils.scale import current_scale
from lorapriv_utils.theory import noise, normal_distance
from lorapriv_utils.theory.montecarlo import rng_for

scale = current_scale()
print(f"scale {scale.name}: {scale.noise_draws:,} full-matrix draws, {scale.element_draws:,} element draws")

# %% [markdown]
# ## Eq. 11: the split of the update
#
# `plus_noise_exact` is true when $G + N$ equals $GA^\top A$ to a relative error below
# $10^{-12}$; the last column is the error of $G - N$, the sign printed in eq. 11.

# %%
eq11 = a3_noise.eq11_table([(1, 768, 8), (4, 64, 2), (16, 256, 16)], scale)
eq11

# %% [markdown]
# ## Lemma 3.1: moments of one element, GPT-2 attention shape
#
# $m = 768$ (the input dimension of GPT-2's fused attention projection `c_attn`), a Gaussian
# gradient row $q$, element $i = 0$. Monte Carlo values are standardised by the exact
# standard deviation, so `var_ratio_mc` should be 1; skewness and excess kurtosis carry
# batch-means error bars.

# %%
moments = a3_noise.moment_table(768, [1, 4, 16, 64], "gaussian", scale)
moments

# %% [markdown]
# ## The law of one element, as m grows
#
# The exact excess kurtosis over $m$ and $r$ (uniform $q$). A Gaussian has 0.

# %%
kurt = a3_noise.kurtosis_sweep(list(scale.m_grid), list(scale.r_grid))
fig = plots.kurtosis_plot(kurt)

# %%
kurt[kurt["m"] == kurt["m"].max()]

# %% [markdown]
# Histograms (log scale) and QQ plots of $u_0$ for $m = 768$ at three ranks, from the
# exact element sampler, with the Gaussian of Lemma 3.1 and the exact density.

# %%
q = noise.gradient_row("gaussian", 768, rng_for(scale.seed, 2, 768))
samples, exact_pdf = {}, {}
for r in (1, 4, 64):
    law = normal_distance.law_of_element(q, 0, r)
    label = f"m = 768, r = {r}"
    samples[label] = noise.sample_element(q, 0, r, scale.element_draws, rng_for(scale.seed, 5, r))
    sd = np.sqrt(law.variance)
    exact_pdf[label] = lambda z, law=law, sd=sd: sd * law.pdf_fast(z * sd)
fig = plots.noise_histograms(samples, exact_pdf)

# %% [markdown]
# ## Joint structure: what DP-SGD's noise has and this noise lacks
#
# Four gradient rows (rows 0 and 1 correlated), $m = 64$, $r = 2$. Correlations of the noise
# between entries, exact (Isserlis' theorem) and by Monte Carlo, against i.i.d. Gaussian noise.

# %%
joint, ranks = a3_noise.joint_structure_table(4, 64, 2, scale)
joint

# %%
ranks

# %% [markdown]
# ## Verdicts

# %%
claims = a3_noise.claims(eq11, moments, kurt, joint, ranks, scale)
ledger.save_claims(a3_noise.KEY, claims)
display(Markdown(ledger.claims_markdown(claims)))
