"""The checks of Table 1's claims and their readings (the analysis plan's versions)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...ledger import ATTACKER, Check, check_bound
from ...scale import Scale
from .common import (
    CONSIDERABLE,
    CONSIDERABLE_FULL,
    DATASETS,
    LARGER,
    PRETRAINED,
    SCALE_LIMITS,
    SCALE_MODELS,
    SLIGHT,
    SLIGHT_GAIN,
    TPR_DROP,
    label,
    results_dir,
)
from .frontier import design_sentence


# ---------------------------------------------------------------- verdicts
def _ci(row: pd.Series, key: str = "diff") -> str:
    return f"{row[key]:+.3f} [{row[key + '_low']:+.3f}, {row[key + '_high']:+.3f}]"


def _mean(summary: pd.DataFrame, dataset: str, variant: str, column: str) -> float:
    row = summary[(summary["dataset"] == dataset) & (summary["variant"] == variant)]
    return float(row[column].iloc[0]) if len(row) else math.nan


def gain_share(base: float, full: float, ppl: float) -> float:
    """The share of full fine-tuning's log-perplexity gain over the base (perplexity ``base`` to ``full``) that a
    method reaching ``ppl`` recovers; NaN where the base is not measured or full fine-tuning gains nothing."""
    gain = math.log(base) - math.log(full) if math.isfinite(base) else math.nan
    return (math.log(base) - math.log(ppl)) / gain if gain > 0 else math.nan


def ppl_ratio(summary: pd.DataFrame, dataset: str, variant: str) -> float:
    """``variant``'s perplexity over full fine-tuning's: paired by seed where the summary has the column
    (:func:`paired_utility`; NaN where the two share no seed, never a ratio across seeds), else the ratio of the
    means of a summary without seeds."""
    if "ppl_ratio" in summary:
        return _mean(summary, dataset, variant, "ppl_ratio")
    return _mean(summary, dataset, variant, "ppl") / _mean(summary, dataset, "full", "ppl")


def share_of_gain(summary: pd.DataFrame, dataset: str, variant: str, base: float = math.nan) -> float:
    """The share of full fine-tuning's log-perplexity gain that ``variant`` recovers (:func:`gain_share`): paired by
    seed, each seed with its own base, where the summary has it (:func:`paired_utility`), else from the means and
    the one ``base`` perplexity."""
    paired = _mean(summary, dataset, variant, "gain_share") if "gain_share" in summary else math.nan
    if math.isfinite(paired):
        return paired
    return gain_share(base, _mean(summary, dataset, "full", "ppl"), _mean(summary, dataset, variant, "ppl"))


def _bound(
    name: str,
    value: float,
    bound: float,
    direction: str = "<=",
    role: str = "core",
    interval: tuple[float, float] | None = None,
) -> Check | None:
    """A check, or None where the value is not measured (NaN: a missing cell, a perplexity not reached)."""
    if not (math.isfinite(value) and math.isfinite(bound)):
        return None
    return check_bound(name, value, bound, direction=direction, role=role, interval=interval)


def _below(name: str, row: pd.Series | None, role: str = "caveat") -> Check | None:
    """A difference at matched perplexity (a row of :func:`matched_frame`) below 0: passes when its 95% interval
    lies below 0, fails when it lies above, unresolved when it contains 0; None where it is not measured."""
    if row is None:
        return None
    interval = (float(row["diff_low"]), float(row["diff_high"]))
    return _bound(name, float(row["diff"]), 0.0, role=role, interval=interval)


def _row(matched: pd.DataFrame, variant: str, dataset: str) -> pd.Series | None:
    rows = matched[(matched["variant"] == variant) & (matched["dataset"] == dataset) & (matched["level"] == 0)]
    return rows.iloc[0] if len(rows) else None


def _matched_text(row: pd.Series | None) -> str:
    """A difference at matched perplexity with its interval, and its seeds where it has several."""
    if row is None or not math.isfinite(row["diff"]):
        return "not reached"
    seeds = int(row.get("seeds", 1))
    return _ci(row) + (f" (mean over {seeds} seeds)" if seeds > 1 else "")


def _first(table: pd.DataFrame, dataset: str) -> pd.Series | None:
    rows = table[table["dataset"] == dataset]
    return rows.iloc[0] if len(rows) else None


def _pair_row(differences: pd.DataFrame | None, d: str, a: str, b: str, metric: str) -> pd.Series | None:
    """The row of ``differences`` (:func:`grid_differences`) for a minus b on dataset ``d`` in ``metric``, or None."""
    if differences is None or not len(differences):
        return None
    rows = differences[
        (differences["dataset"] == d)
        & (differences["a"] == a)
        & (differences["b"] == b)
        & (differences["metric"] == metric)
    ]
    return rows.iloc[0] if len(rows) else None


def _paired(
    differences: pd.DataFrame | None, d: str, a: str, b: str, metric: str
) -> tuple[float, tuple[float, float]] | None:
    """a minus b on dataset ``d`` and its interval, from ``differences`` (:func:`grid_differences`); None where it
    does not hold the pair."""
    row = _pair_row(differences, d, a, b, metric)
    return None if row is None else (float(row["diff"]), (float(row["low"]), float(row["high"])))


def _draws(differences: pd.DataFrame | None, d: str, a: str, b: str, metric: str) -> np.ndarray | None:
    """The bootstrap draws of a minus b on dataset ``d`` (:func:`grid_differences`' ``draws``), or None."""
    row = _pair_row(differences, d, a, b, metric)
    found = None if row is None else row.get("draws")
    return found if isinstance(found, np.ndarray) else None


def with_p_values(check: Check | None, draws: np.ndarray | None, direction: str = "<=") -> Check | None:
    """``check`` (measured ``direction`` reference) with the one-sided bootstrap p-values of its measured quantity
    against its reference (that it passes, that it fails; :func:`resampling.tail_shares` of the draws), so that
    Holm's procedure decides it with the claim's other core checks (``ledger.family_outcomes``); as it is where
    there are no draws."""
    from ...mia.attacks.resampling import tail_shares

    if check is None or draws is None:
        return check
    above, below = tail_shares(draws, check.reference)
    # "value <= bound" passes where few draws lie at or above the bound, fails where few lie at or below it
    passing, failing = (above, below) if direction == "<=" else (below, above)
    return replace(
        check,
        p_values=(passing, failing),
        detail=check.detail + "; decided with the claim's other core "
        "checks under Holm's procedure (one-sided bootstrap p-values)",
    )


def _difference(
    summary: pd.DataFrame, differences: pd.DataFrame | None, d: str, a: str, b: str, metric: str
) -> tuple[float, tuple[float, float] | None]:
    """a minus b on dataset ``d``: from ``differences`` (:func:`grid_differences`), with its interval, where it
    holds the pair; else the difference of the summary's means, without one."""
    found = _paired(differences, d, a, b, metric)
    if found is not None:
        return found
    if metric not in summary:  # a comparison the summary's means cannot give (the log TPR ratio)
        return math.nan, None
    return _mean(summary, d, a, metric) - _mean(summary, d, b, metric), None


def _nominal(achieved: float, nominal: float = 0.01) -> str:
    """A TPR's label: its nominal FPR and, where measured, the FPR it achieves ('1% nominal FPR (0.50% achieved)')."""
    return f"{nominal:.0%} nominal FPR" + (f" ({achieved:.2%} achieved)" if math.isfinite(achieved) else "")


def attacker_checks(intervals: pd.DataFrame, scale_name: str, variant: str = "lora-r8") -> list[Check]:
    """What an attacker gets from ``variant`` (the analysis plan's absolute reading of A-7.informal-privacy): per
    corpus, eq. 24's TPR at 5% nominal FPR (its interval over seeds and texts, :func:`grid_intervals`) at most
    twice the FPR it achieves, where chance is TPR = FPR; caveats of A-6.lora, named ``scale_name, corpus``."""
    rows = intervals[intervals["variant"] == variant] if len(intervals) else intervals
    return [
        c
        for row in rows.itertuples()
        if (
            c := _bound(
                f"{scale_name}, {row.dataset}, r={variant.removeprefix('lora-r')}: TPR at "
                f"{_nominal(row.fpr5, 0.05)} at most twice that FPR ({ATTACKER})",
                row.tpr5,
                2 * row.fpr5,
                role="caveat",
                interval=(row.tpr5_low, row.tpr5_high),
            )
        )
        is not None
    ]


# Table 1's adapter baseline as the checks name it: trained with AdamW, as every method here, and with SGD, as
# paper A says its adapters were (checked only where the grid ran it)
ADAPTERS = {"adapter": "adapter", "adaptersgd": "adapter (SGD)"}
# In every column of paper A's Table 1 the adapters fit better than LoRA (perplexity 19.38, 18.21, 30.11 against
# r=16's 20.32, 19.42, 33.10).  The adapter-fit rule (c28daba, set after the SGD adapters' runs) made a comparison
# with an adapter that does not fit better than LoRA here, resolved, a caveat: one sensitivity reading now.
NOT_TABLE1_FIT = " (a caveat: the adapter does not fit better than LoRA here, resolved, as Table 1's do)"
CONFOUNDED = " (a caveat under this reading: LoRA trained with AdamW against an SGD adapter)"


@dataclass(frozen=True)
class Table1Reading:
    """How Table 1's comparisons are read for A-6.adapter and A-6.lora: "considerably" against full fine-tuning
    (``vs_full``) and against an adapter (``vs_adapter``) as AUC gaps; ``adapters``, the adapters of
    :data:`ADAPTERS` whose comparisons are core (the others are caveats that say why); ``fit_rule``, whether a
    comparison with an adapter is core only where that adapter fits better than LoRA (c28daba).  ``name`` follows
    "under" where a reading moves a verdict; ``plan_version`` is the analysis plan version that names it."""

    name: str
    plan_version: int
    vs_full: float = CONSIDERABLE
    vs_adapter: float = CONSIDERABLE
    adapters: tuple[str, ...] = tuple(ADAPTERS)
    fit_rule: bool = False
    holm: bool = False  # the core attack comparisons decided together under Holm's procedure (plan version 1)
    tpr1_at_most_full: bool = True  # version 0's core TPR check: LoRA's TPR at 1% nominal FPR at most full's
    tpr_drop: float | None = None  # version 2's: full fine-tuning's TPR at 5% nominal FPR at least this times LoRA's
    note: str = ""


# The primary reading: the design in force before the SGD adapters ran (analysis plan version 0 without the
# adapter-fit rule that was set after them; issue 58 decided it), then the sensitivity readings beside it.
PRE_RUN = Table1Reading(
    "the pre-run design",
    0,
    note="0.02 against full and adapter fine-tuning alike, both adapters core (the design before the SGD runs)",
)
# The analysis plan's readings on the seeds run so far: version 1's thresholds and Holm; version 2's adds the TPR drop
PLAN_V1 = Table1Reading(
    "plan version 1's thresholds and Holm, on seeds 0-1",
    1,
    vs_full=CONSIDERABLE_FULL,
    adapters=("adapter",),
    holm=True,
    tpr1_at_most_full=False,
    note=f"{CONSIDERABLE_FULL} against full fine-tuning and {CONSIDERABLE} against the AdamW adapter (each "
    "baseline's own smallest Table 1 gap), the core attack comparisons decided together under Holm's procedure "
    "at family-wise level 0.05; the SGD adapter is left to the optimiser-matched arm (LoRA with SGD, not yet "
    "run); no TPR check (version 1 sets a TPR threshold but gives it to no claim); on the two seeds run so far, "
    "before the five-seed runs that version 1 decides on, with the grid's 500 bootstrap resamples (the plan "
    "asks 2,000)",
)

PLAN_V2 = replace(  # version 1's reading with the TPR drop among its core checks
    PLAN_V1,
    name="plan version 2 (version 1 with the TPR drop), on seeds 0-1",
    plan_version=2,
    tpr_drop=TPR_DROP,
    note=f"version 1's reading with the TPR drop among the core checks: full fine-tuning's TPR at 5% nominal FPR "
    f"at least {TPR_DROP:g} times LoRA's (the mean over seeds of the log of the ratio, a TPR of 0 counted as half "
    "a member), in one Holm family with the AUC checks; on the two seeds run so far, with the grid's 500 "
    "bootstrap resamples (the plan asks 2,000)",
)

SENSITIVITY = (
    Table1Reading(
        "the adapter-fit rule",
        0,
        fit_rule=True,
        note="a comparison with an adapter is core only where that adapter fits better than LoRA, resolved, as "
        "Table 1's do; set (commit c28daba) after the SGD adapters were seen to fit worse",
    ),
    PLAN_V1,
    PLAN_V2,
)


def table1_checks(
    summary: pd.DataFrame,
    dataset: str,
    tag: str | None = None,
    differences: pd.DataFrame | None = None,
    base_ppl: float = math.nan,
    caveats_only: bool = False,
    reading: Table1Reading = PRE_RUN,
) -> dict[str, list[Check]]:
    """Table 1's comparisons on one dataset of a grid under ``reading`` (:class:`Table1Reading`; each method at
    its swept learning rate, means over seeds), by the claim they test.  The directions and the attack gaps are
    core checks; the adapter's gain in size, the utility cost and the share of full fine-tuning's log-perplexity
    gain over the base (``base_ppl``) are caveats; every check is a caveat where ``caveats_only`` (another
    scale's).  ``differences`` (:func:`grid_differences`) gives the attack comparisons their 95% intervals, so
    that one the data cannot decide is unresolved, not failed.  Checks are named ``tag`` first (the dataset by
    default); a comparison whose methods the grid did not run is left out."""
    tag = tag or dataset

    def role(wanted: str) -> str:
        return "caveat" if caveats_only else wanted

    def mean(v: str, column: str) -> float:
        return _mean(summary, dataset, v, column)

    def achieved(v: str, column: str = "fpr1") -> float:  # the FPR a nominal one achieves, where the summary has it
        return mean(v, column) if column in summary else math.nan

    def gap(name: str, a: str, b: str, metric: str, bound: float, wanted: str = "core", flip: bool = False):
        value, interval = _difference(summary, differences, dataset, a, b, metric)
        draws = _draws(differences, dataset, a, b, metric) if reading.holm and role(wanted) == "core" else None
        if flip:  # b minus a
            value, interval = -value, None if interval is None else (-interval[1], -interval[0])
            draws = None if draws is None else -draws
        rate = {"tpr1": "tpr1", "log_tpr5": "tpr5"}.get(metric)
        if rate and rate in summary and not math.isfinite(mean(a, rate) + mean(b, rate)):
            return None  # a rate the non-members cannot resolve
        return with_p_values(_bound(name, value, bound, role=role(wanted), interval=interval), draws)

    def ppl_order(name: str, a: str, b: str, wanted: str = "core"):
        """a's perplexity at least b's, as the log of their ratio >= 0: over the seeds both ran, with the seeds'
        interval where there are several (unresolved when the seeds disagree), else the ratio of the means."""
        found = _paired(differences, dataset, a, b, "log_ppl")
        if found is not None:
            value, interval = found
        else:
            pa, pb = mean(a, "ppl"), mean(b, "ppl")
            value, interval = (math.log(pa / pb) if pa > 0 and pb > 0 else math.nan), None
        return _bound(f"{name} (log of the ratio >= 0)", value, 0.0, ">=", role(wanted), interval=interval)

    def versus_adapter(r: int, a: str, name: str):
        """LoRA r considerably below adapter ``a``: core where the reading makes that adapter's comparisons core
        (under the fit rule, only where it fits better than LoRA, resolved: Table 1's order of fit), else a caveat
        that says why."""
        v = f"lora-r{r}"
        why = "" if a in reading.adapters else CONFOUNDED
        if reading.fit_rule and not why:
            order = ppl_order("Table 1's order of fit", v, a)
            why = "" if order is not None and order.outcome == "passes" else NOT_TABLE1_FIT
        name = f"{tag}, r={r}: AUC at least {reading.vs_adapter} below {name}'s" + why
        return gap(name, v, a, "auc", -reading.vs_adapter, "caveat" if why else "core")

    adapter = []
    for a, name in ADAPTERS.items():  # AdamW's adapters and, where they ran, paper A's own SGD ones
        core = "core" if a in reading.adapters else "caveat"
        adapter += [
            ppl_order(f"{tag}: PPL {name} >= PPL full (loses utility)", a, "full", core),
            gap(f"{tag}: AUC {name} <= AUC full (gains robustness)", a, "full", "auc", 0.0, core),
            gap(
                f"{tag}: the AUC drop from full to {name} is at most {SLIGHT_GAIN} ('a slight improvement')",
                a,
                "full",
                "auc",
                SLIGHT_GAIN,
                "caveat",
                flip=True,
            ),
        ]
    lora = []
    for r in (8, 16):
        v = f"lora-r{r}"
        lora += [
            gap(f"{tag}, r={r}: AUC at least {reading.vs_full} below full's", v, "full", "auc", -reading.vs_full),
            *(versus_adapter(r, a, name) for a, name in ADAPTERS.items()),
            gap(f"{tag}, r={r}: TPR at {_nominal(achieved(v))} at most full's", v, "full", "tpr1", 0.0)
            if reading.tpr1_at_most_full
            else None,
            gap(
                f"{tag}, r={r}: full's TPR at {_nominal(achieved(v, 'fpr5'), 0.05)} at least {reading.tpr_drop:g} "
                "times LoRA's (log of LoRA's over full's)",
                v,
                "full",
                "log_tpr5",
                -math.log(reading.tpr_drop),
            )
            if reading.tpr_drop
            else None,
            _bound(
                f"{tag}, r={r}: PPL at most {SLIGHT} times full's (a slight drop)",
                ppl_ratio(summary, dataset, v),
                SLIGHT,
                role="caveat",
            ),
            _bound(
                f"{tag}, r={r}: recovers at least half of full fine-tuning's log-perplexity gain over the base",
                share_of_gain(summary, dataset, v, base_ppl),
                0.5,
                ">=",
                "caveat",
            ),
        ]
    lora.append(  # the control of issue 28: does the base's own embedding table limit what fine-tuning reaches?
        _bound(
            f"{tag}: full fine-tuning with the embeddings frozen reaches PPL at most {SLIGHT} times full's (the base's "
            "embeddings are not what limits LoRA's utility here)",
            ppl_ratio(summary, dataset, "frozenemb"),
            SLIGHT,
            role="caveat",
        )
    )
    rank = [
        gap(f"{tag}: AUC r=8 below r=16", "lora-r8", "lora-r16", "auc", 0.0),
        ppl_order(f"{tag}: PPL r=8 above r=16", "lora-r8", "lora-r16"),
    ]
    out = {"A-6.adapter": adapter, "A-6.lora": lora, "A-6.rank": rank}
    return {claim: [c for c in checks if c is not None] for claim, checks in out.items()}


def scale_checks(
    summary: pd.DataFrame,
    scale_name: str = LARGER,
    base_ppl: dict[str, float] | None = None,
    differences: pd.DataFrame | None = None,
    core: bool = False,
    reading: Table1Reading = PRE_RUN,
) -> dict[str, list[Check]]:
    """Table 1's checks (:func:`table1_checks`, under ``reading``) on one scale's grid for A-6.adapter, A-6.lora
    and A-6.rank, named ``scale_name, dataset``: every one a caveat, unless ``core`` (the scale that decides Table
    1's claims)."""
    out: dict[str, list[Check]] = {"A-6.adapter": [], "A-6.lora": [], "A-6.rank": []}
    for d in dict.fromkeys(summary["dataset"]):
        checks = table1_checks(
            summary,
            d,
            f"{scale_name}, {d}",
            differences,
            (base_ppl or {}).get(d, math.nan),
            caveats_only=not core,
            reading=reading,
        )
        for claim, found in checks.items():
            out[claim] += found
    return out


def scale_note(scale_name: str, summary: pd.DataFrame) -> str:
    """What another scale's caveats stand for: its model and data (sizes from its scale record), its seeds and the
    methods it ran on each corpus (from its records), and what it lacks."""
    from ...scale import get_scale

    engine = get_scale(scale_name).engine
    head = SCALE_MODELS[scale_name].format(
        model=engine.model.describe(),
        texts=engine.max_texts_per_part,
        block=engine.model.block_size,
        epochs="/".join(dict.fromkeys(str(e) for e in (engine.dense.epochs, engine.lora.epochs))),
    )
    ran = "; ".join(
        f"{DATASETS.get(d, d)}: " + ", ".join(label(v) for v in summary.loc[summary["dataset"] == d, "variant"])
        for d in dict.fromkeys(summary["dataset"])
    )
    return f"{head}; {seeds_phrase(summary)}; run: {ran}; {SCALE_LIMITS[scale_name]})"


def seeds_phrase(summary: pd.DataFrame) -> str:
    """How many seeds a grid's runs have, naming the runs with more where the counts differ."""
    counts = summary["seeds"] if "seeds" in summary else pd.Series([1])
    low, high = int(counts.min()), int(counts.max())
    if high == 1:
        return "one seed, so intervals over texts only"
    if low == high:
        return f"{high} seeds"
    more = summary[summary["seeds"] == high]
    named = "; ".join(
        f"{DATASETS.get(d, d)}: " + ", ".join(label(v) for v in more.loc[more["dataset"] == d, "variant"])
        for d in dict.fromkeys(more["dataset"])
    )
    return f"{high} seeds for {named}; {low} for the other runs, whose intervals are over texts only"


def scale_summary(summary: pd.DataFrame, scale_name: str = LARGER, base_ppl: dict[str, float] | None = None) -> str:
    """One sentence of another scale's numbers, for the summaries of the claims it adds caveats to."""
    parts = []
    for d in dict.fromkeys(summary["dataset"]):
        ran = set(summary.loc[summary["dataset"] == d, "variant"])
        values = ", ".join(
            f"{label(v)} {_mean(summary, d, v, 'auc'):.3f} (PPL {_mean(summary, d, v, 'ppl'):.4g})"
            for v in ("full", "adapter", "lora-r16", "lora-r8")
            if v in ran
        )
        base = (base_ppl or {}).get(d)
        parts.append(f"{d}: AUC {values}" + ("" if base is None else f"; base PPL {base:.4g}"))
    counts = summary["seeds"] if "seeds" in summary else pd.Series([1])
    if counts.max() == 1:
        seeds = "one seed"
    elif counts.min() == counts.max():
        seeds = f"means over {int(counts.max())} seeds"
    else:
        seeds = f"means over seeds, {seeds_phrase(summary)}"
    return f"{scale_name} ({seeds}): " + "; ".join(parts)


def _base_records(scale: Scale, seed: str) -> dict[tuple[str, int], float]:
    """{(dataset, seed): validation perplexity} of the committed epoch-0 records matching ``base-s<seed>.json``."""
    from ...store import read_record

    out = {}
    for path in sorted((results_dir(scale) / "frontier").glob(f"*/base-s{seed}.json")):
        record = read_record(path, "frontier-base")
        out[(record["dataset"], int(record["seed"]))] = float(record["checkpoints"][0]["validation_perplexity"])
    return out


def load_bases(scale: Scale, seed: int = 0) -> dict[str, float]:
    """Each dataset's base-model validation perplexity at ``scale`` on ``seed``'s split, from its committed epoch-0
    records (``frontier --bases-only``).  A record that does not verify is refused."""
    return {dataset: ppl for (dataset, _), ppl in _base_records(scale, str(int(seed))).items()}


def load_seed_bases(scale: Scale) -> dict[tuple[str, int], float]:
    """:func:`load_bases` of every seed, keyed (dataset, seed): each seed's split has its own validation texts."""
    return _base_records(scale, "*")


def pretrained_attribution(matched: list[pd.DataFrame], design: dict | None = None) -> str:
    """What A-6.attribution's core checks at the pretrained scale rest on, the seeds each corpus's comparisons
    drew (the ``seeds`` column of its :func:`matched_frame` tables, at level 0) named from the tables, and its
    frontier's ``design`` (:func:`frontier_design`)."""
    rows = pd.concat([m[m["level"] == 0] for m in matched if len(m)])
    counts = rows.groupby(["dataset", "variant"], sort=False)["seeds"].min()
    seeds = "; ".join(
        f"{d}: " + ", ".join(f"{v} {n} seed{'s' if n > 1 else ''}" for v, n in by.items())
        for d, by in ((d, counts[d]) for d in dict.fromkeys(counts.index.get_level_values(0)))
    )
    return (
        f" Core checks named {PRETRAINED}: the same comparisons at matched perplexity on the pretrained "
        f"SmolLM2-135M-Instruct, whose frontier has fewer points: training seeds by comparison ({seeds}; a "
        "comparison's value is "
        f"the mean over them, its interval over seeds and texts), {design_sentence(design)} (those of the "
        "chapter's table), chosen so that every method's checkpoints reach LoRA's perplexity. Every check named "
        "cpu-small, the direct test included, is then a caveat: the toy GPT-2's base knows little language."
    )


def demote(check: Check) -> Check:
    """``check`` as a caveat: evidence from a scale that does not decide the claim."""
    return replace(check, role="caveat") if check.role == "core" else check


def attribution_checks(
    vs_full: pd.DataFrame, vs_adapter: pd.DataFrame, datasets: list[str], tag, ranks: tuple[int, ...] = (8, 16)
) -> list[Check]:
    """A-6.attribution's checks at matched perplexity (the frontier's :func:`matched_frame` against full and adapter
    fine-tuning) on each dataset and LoRA rank the frames hold, named ``tag(dataset)``, both core: LoRA's AUC below
    adapter fine-tuning's (the random factors protect beyond training the adapted matrices directly) and below full
    fine-tuning's (not merely fitting less).  Each passes when its 95% interval lies below 0, fails when it lies
    above and is unresolved when it contains 0, so that too few texts or seeds leave the claim qualified: a check
    that LoRA is merely not resolved above adapter fine-tuning would pass whenever the data are too few to tell.
    A comparison a frame lacks is left out."""
    checks = []
    for d in datasets:
        for r in ranks:
            v = f"lora-r{r}"
            checks += [
                _below(
                    f"{tag(d)}, r={r}: at matched PPL, AUC LoRA - adapter below 0 (the random factors add protection "
                    "beyond training those matrices directly)",
                    _row(vs_adapter, v, d),
                    "core",
                ),
                _below(
                    f"{tag(d)}, r={r}: at matched PPL, AUC LoRA - full below 0 (not merely fitting less)",
                    _row(vs_full, v, d),
                    "core",
                ),
            ]
    return [c for c in checks if c is not None]
