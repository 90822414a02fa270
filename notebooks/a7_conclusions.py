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
# # §7 checked: paper A's conclusions, judged by its own sections
#
# ```{admonition} What this page found
# :class: takeaway
# Paper A's two concluding claims, judged by the checks of the claims they summarise: "LoRA
# approximates DP-SGD" {verdict}`A-7.approximates`, "informal privacy, only slightly affecting utility"
# {verdict}`A-7.informal-privacy`.
# ```
#
# Paper A closes with two claims that restate its sections 3 to 6 in broader words. Nothing new
# is measured for them: this page reads each one as a conjunction of earlier claims and carries
# over their checks, unchanged, from the claims ledger. A part that the claim needs to be true
# contributes its checks as core evidence; a part that qualifies it contributes them as caveats.
# The verdicts follow the ledger's rule, so they change whenever a source chapter's numbers do.
# The reading itself is in `lorapriv_utils/chapters/a7_conclusions.py` (`READINGS`); the
# argument is on {doc}`../book/paper_a/a7_conclusions`.
#
# ```{admonition} Run it yourself
# :class: tip
# `make notebook NB=a7_conclusions` re-executes this page in place (it reads the
# ledger; its measured time is on the {doc}`execution-statistics page <../book/execution>`). Execute the other chapters first when their numbers change; `make
# notebooks` runs them all, this one last.
# ```

# %% tags=["hide-input"]
import pandas as pd
from IPython.display import display

from lorapriv_utils import ledger
from lorapriv_utils.chapters import a7_conclusions as a7
from lorapriv_utils.numbers import display_table
from lorapriv_utils.scale import current_scale

pd.set_option("display.max_colwidth", None)  # the parts' descriptions are sentences: show them whole
scale = current_scale()
results = ledger.load_results()
claims = a7.claims(results, scale.name)
print(
    f"scale {scale.name}: {sum(len(c) for k, c in results.items() if k != a7.KEY)} claims measured by the other chapters"
)

# %% [markdown]
# ## The parts of each concluding claim
#
# One row per part: the earlier claim it rests on, that claim's verdict, the role its checks
# take here, and how many of them pass.

# %%
display_table(
    a7.parts_frame(results), caption="The parts of each concluding claim, their sources and how many checks pass."
)

# %% [markdown]
# ## Where they fail
#
# Up to three failed checks of each part, with the measured value and the paper's value or
# bound they were compared with (the source chapters give the rest).

# %%
for claim in claims:
    print(f"{claim.claim_id}: {claim.verdict}")
    caption = f"{claim.claim_id}: up to three checks of each part that do not pass."
    display(display_table(a7.failed_checks(claim), caption=caption))

# %% [markdown]
# ## Verdicts
#
# Written to the claims ledger (see {doc}`../book/claims_ledger`).

# %% tags=["hide-input"]
ledger.save_claims(a7.KEY, claims)
ledger.claims_table(claims)
