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
# # Paper B, matrix queries checked: attacks on the noise-free release
#
# ```{admonition} What this page found
# :class: takeaway
# The noise-free LoRA release is not private: the attacks told the worlds apart in every one of
# {glue:text}`b2_matrix_queries_trials:g` trials of every setting {verdict}`B-2.not-dp`, and on a small GPT-2 trained with LoRA-FA an
# adversary holding $A$ told all {glue:text}`b2_matrix_queries_game_targets:g` targets apart {verdict}`A-v8.dp-by-design`.
# ```
#
# This page attacks one noise-free LoRA-type release of a linear layer's batch gradient $V$
# ($d \times n$, a sum of $b$ per-sample outer products), with or without one target sample,
# as the adversary of the DP definition would: knowing every other sample. Two threat models:
# $A$ secret (only $MV$ is seen) and $A$ released with the adapter (as LoRA checkpoints ship
# it). The derivation is in {doc}`../book/paper_b/b2_matrix_queries`.
#
# ```{admonition} Run it yourself
# :class: tip
# `make notebook NB=b2_matrix_queries` re-executes this page in place at the default scale
# (`cpu-small`, `scale.attack_trials` trials per setting;
# its measured time is on the {doc}`execution-statistics page <../book/execution>`); `LORAPRIV_SCALE=cpu-large` runs ten times more trials.
# ```

# %% tags=["hide-input"]
from myst_nb import glue

from lorapriv_utils import ledger, plots
from lorapriv_utils.chapters import b2_matrix_queries
from lorapriv_utils.numbers import display_table
from lorapriv_utils.scale import current_scale
from lorapriv_utils.theory import wishart
from lorapriv_utils.theory.montecarlo import rng_for

scale = current_scale()
print(f"scale {scale.name}: {scale.attack_trials:,} trials per setting")

# %% [markdown]
# ## Why the secret-$A$ attack works
#
# $M = A^\top A$ is symmetric, so for the true query $V^\top (M V) = V^\top M V$ is a symmetric
# matrix, whatever $A$ is. For the other world's query it is not. The relative asymmetry
# $\|V^\top Y - Y^\top V\|_F / \|V^\top Y\|_F$ of the release $Y$, under each hypothesis:

# %%
residuals = b2_matrix_queries.residual_table((768, 64, 16, 32, "outer"), 500, scale)
display_table(residuals, caption="The release's relative asymmetry under each hypothesis.")

# %% [markdown]
# ## Both attacks across ranks, batch sizes and gradient shapes
#
# $d = 768$ (GPT-2's attention input), $n = 64$ output rows; `outer` gradients are sums of $b$
# per-sample outer products, `gaussian` ones have i.i.d. entries. `tv_low` is a 95% lower
# bound on the total-variation distance between the two worlds, `eps_low` the audit's 95%
# lower bound on $\varepsilon$ (both limited only by the number of trials).

# %%
cases = [
    (64, 16, 4, 8, "outer"),
    (768, 64, 4, 32, "outer"),
    (768, 64, 16, 8, "outer"),
    (768, 64, 16, 32, "outer"),
    (768, 64, 64, 32, "outer"),
    (768, 64, 16, 32, "gaussian"),
]
attacks = b2_matrix_queries.attack_table(cases, scale)
display_table(attacks, caption="The attacks on the noise-free release: distance and audit bounds by setting.")

# %% mystnb={"figure": {"caption": "Scores of the two attacks over trials with the target in and out ($d = 768$, $r = 16$, $b = 32$). The two histograms do not overlap for either attack: the release tells the worlds apart every time, with $A$ secret as well as with $A$ released.", "name": "fig-b2-scores"}, "image": {"alt": "Two panels of histograms of attack scores; in each, the target-out and target-in histograms sit apart with a clear gap between them."}}
example = wishart.matrix_attack_trials(768, 64, 16, 32, scale.attack_trials, rng_for(scale.seed, 9), "outer")
scores_fig = plots.attack_scores_plot(
    {"$A$ secret": example["secret_A"], "$A$ released": example["released_A"]}, example["member"]
)

# %% [markdown]
# ## B alone, with $A$ kept secret
#
# A LoRA-FA checkpoint could ship $B$ without $A$, the random sketch that paper A's later
# versions call private by design. After one step from $B = 0$, $B^\top = -\eta A V$: its
# columns are $V^\top a_k$, so they lie in the span of the batch's output gradients. An
# adversary who knows the other samples (as in the DP game) knows that span without the
# target; the target's own output gradient leaves it whenever the others' gradient $V_0$ has
# rank below the layer's output width $n$, which is always the case for GPT-2's `c_attn`
# ($768 \to 2304$) and for the toy GPT-2's ($64 \to 192$), however many tokens the batch holds.
# `support` scores the share of the release outside that span. Once $V_0$'s rank reaches $n$,
# the span says nothing, but the release is still $r$ Gaussian draws with covariance
# $V^\top V / r$, which the target changes: `likelihood` is the log-likelihood ratio of the
# two worlds (the most powerful test), with the target at the others' scale and at ten times
# it (nothing clips a noise-free step). `b` counts rank-one terms: tokens, in a transformer.

# %%
b_alone_cases = [
    (768, 64, 16, 32, "outer", 1.0),
    (64, 192, 8, 256, "outer", 1.0),
    (64, 16, 8, 64, "outer", 1.0),
    (64, 16, 64, 64, "outer", 1.0),
    (64, 16, 8, 64, "outer", 10.0),
]
b_alone = b2_matrix_queries.b_alone_table(b_alone_cases, scale)
display_table(b_alone, caption="The likelihood-ratio test on B alone, with the target at two scales.")

# %% [markdown]
# ## The audit's lower bound grows with the trials
#
# With no error at all, the Clopper-Pearson bound on the false-positive rate is what limits the
# audit's $\varepsilon$: more trials, a larger proven $\varepsilon$, without limit.

# %%
growth = b2_matrix_queries.audit_growth((768, 64, 16, 32, "outer"), [100, 500, scale.attack_trials], scale)
display_table(growth, caption="The audit's proven epsilon against the number of trials.")

# %% [markdown]
# ## LoRA's step is $MV$: checked on the toy GPT-2
#
# Three steps of LoRA with $A$ frozen on the toy GPT-2, built with PEFT (every block's `c_attn`,
# random initialisation, random tokens). After each step, the change of the merged weights is
# compared with the best multiple $c\,MG$ of the projected full gradient $G$ taken at the
# weights before the step: the worst relative residual with plain SGD (a rounding-level number,
# shown as the power of ten above it, or as $< 10^{-6}$ below float32's rounding level, where even
# its power of ten differs between machines), the best one with AdamW, and the fitted $c$ against
# $-\eta s^2$ (as relative error, shown the same way).

# %%
instance = b2_matrix_queries.instance_table([4, 16])
for name, value in b2_matrix_queries.instance_numbers(instance).items():
    glue(name, value, display=False)
display_table(
    instance[["r", "steps", "sgd_residual_shown", "adamw_best_residual", "multiple_rel_error_shown"]],
    caption="LoRA-FA's merged change against c M G, with SGD and AdamW.",
)

# %% [markdown]
# The entries of $A$, times $\sqrt r$, as this book's code draws them and as PEFT initialises them by
# default: a Wishart projection $W_m(I/r, r)$ needs them standard normal.

# %%
inits = b2_matrix_queries.init_table(8)
display_table(inits, caption="A's entries times sqrt(r), as this book's code and PEFT draw them.")

# %% [markdown]
# ## The DP game on a trained GPT-2
#
# The book's toy GPT-2 is trained with LoRA-FA ($A$ frozen, $B$ trained, no noise) on the first
# {glue:text}`b2_matrix_queries_game_texts:g` Penn Treebank member texts, by full-batch plain SGD for {glue:text}`b2_matrix_queries_game_steps:g` steps, so that $A$ is
# training's only randomness. For each of {glue:text}`b2_matrix_queries_game_targets:g` candidate texts $x$, the release is trained either
# with $x$ ("in") or without it ("out"), and the adversary, who knows the other texts and the
# recipe, replays training without $x$. With $A$ released it replays with that $A$ and measures
# how far the release's $B$ lies from its replay's. With $A$ kept secret it sees only the merged
# updates $BA$, and two adversaries are played: a naive one replays with an $A'$ of its own
# (`secret_A_*`), a fitted one (`fitted_*`) reads $A$'s row space off $BA$ (its top right
# singular vectors $Q$), writes the unknown $A$ as $K^{1/2}Q$, and alternates replays on the
# other texts with least-squares refits of $K$ to the release (five refits), then measures the
# relative distance left: in the "out" world a $K$ that reproduces the release exists, in the
# "in" world the target's gradient is missing. The run is committed
# (`results/published/whitebox/`, `make results-b2`,
# {glue:text}`b2_matrix_queries_game_minutes:.0f` minutes of measured wall time, summed over its one-thread processes; this
# run's three shared two cores with other work) and loaded here with its checksum verified.

# %%
game, game_record = b2_matrix_queries.load_game(scale.name)
display_table(
    game.drop(columns=["held_out_choice", "tuned_elsewhere"]), caption="The DP game against LoRA-FA on the trained GPT-2, one row per rank."
)

# %% [markdown]
# The fitted attack's settings (relaxation {glue:text}`b2_matrix_queries_game_fit_relax:g` and {glue:text}`b2_matrix_queries_game_fit_rounds:g` refits) were tuned on an earlier draw of
# targets; this run draws {glue:text}`b2_matrix_queries_game_targets:g` fresh ones, and starts the fit at $K = (m/r)\,I$. The record also keeps each
# target's distance after every refit at relaxations from {glue:text}`b2_matrix_queries_game_fit_relax_low:g` to {glue:text}`b2_matrix_queries_game_fit_relax_high:g`, so the choice can be held out within this draw too: relaxation
# and number of refits chosen on one half of the targets (the highest AUC; on a tie the fewest refits, then the
# smallest relaxation), read on the other half, both ways round.

# %%
display_table(
    b2_matrix_queries.held_out_fit(game_record),
    caption="The fitted secret-A attack with its settings chosen on one half of the targets (relaxation and "
    "refits; the refits alone where the record kept one relaxation): AUC on the held-out half (95% interval over its "
    "targets) and whether it tells every held-out target apart.",
)

# %% [markdown]
# Paper B's CIFAR-10 table (as its authors published it) beside our game, rank by rank. The
# comparison is in shape only: another model, other data, another attack and another adversary.

# %%
display_table(
    b2_matrix_queries.shape_table(game, game_record), caption="Paper B's CIFAR-10 table beside our game, in shape only."
)

# %% [markdown]
# ## Verdicts
#
# Computed from the tables above and written to the claims ledger (see
# {doc}`../book/claims_ledger`).

# %% tags=["hide-input"]
claims = b2_matrix_queries.claims(attacks, growth, residuals, scale, game, b_alone)
claims.append(b2_matrix_queries.instance_claim(instance, inits, scale))
ledger.save_claims(b2_matrix_queries.KEY, claims)
plots.save_figure(scores_fig, "b2_scores")
numbers = {
    **b2_matrix_queries.key_numbers(attacks, growth, residuals),
    **b2_matrix_queries.game_numbers(game, game_record),
    **b2_matrix_queries.b_alone_numbers(b_alone),
}
for name, value in numbers.items():
    glue(name, value, display=False)
ledger.claims_table(claims)
