"""The numbers the chapter's prose quotes."""

from __future__ import annotations

import math

import pandas as pd

from ...ledger import Check, Claim, family_outcomes
from ...numbers import quoted_numbers
from ...scale import Scale
from .checks import ADAPTERS, SENSITIVITY, _mean, _row, ppl_ratio, share_of_gain
from .common import CONSIDERABLE, CONSIDERABLE_FULL, KEY, LARGER, PRETRAINED, SLIGHT, SLIGHT_GAIN, TPR_DROP
from .frontier import matched_frame


def scale_numbers(
    summary: pd.DataFrame, prefix: str = "large", base_ppl: dict[str, float] | None = None
) -> dict[str, float]:
    """Another scale's numbers that the chapter's text quotes (glued by the notebook), keyed ``<prefix>_*``:
    AUC, perplexity and trained weights of each method it ran, its non-members, seeds and base perplexity."""
    numbers = {}
    for d in dict.fromkeys(summary["dataset"]):
        ran = set(summary.loc[summary["dataset"] == d, "variant"])
        for v in ("full", "frozenemb", "adapter", "adaptersgd", "lora-r8", "lora-r16", "lorafa-r8"):
            if v not in ran:
                continue
            tag = f"{prefix}_{d}_{v.replace('-', '')}"
            numbers[f"{tag}_auc"] = _mean(summary, d, v, "auc")
            numbers[f"{tag}_ppl"] = _mean(summary, d, v, "ppl")
            if "params" in summary:
                numbers[f"{tag}_params"] = _mean(summary, d, v, "params")
        if "frozenemb" in ran:  # the control of issue 28, as A-6.lora's caveat reads it
            numbers[f"{prefix}_{d}_frozenemb_ppl_ratio"] = ppl_ratio(summary, d, "frozenemb")
        numbers[f"{prefix}_{d}_nonmembers"] = _mean(summary, d, "full", "nonmembers")
        if "seeds" in summary:  # the fewest seeds any method ran on this corpus
            numbers[f"{prefix}_{d}_seeds"] = int(summary.loc[summary["dataset"] == d, "seeds"].min())
        for v in ("lora-r8", "lora-r16"):
            tag = f"{prefix}_{d}_{v.replace('-', '')}"
            numbers[f"{tag}_ppl_ratio"] = ppl_ratio(summary, d, v)  # A-6.lora's 'slight' caveat
            numbers[f"{tag}_auc_gap"] = _mean(summary, d, "full", "auc") - _mean(summary, d, v, "auc")
            numbers[f"{tag}_auc_gap_adapter"] = _mean(summary, d, "adapter", "auc") - _mean(summary, d, v, "auc")
            numbers[f"{tag}_gain_share"] = share_of_gain(summary, d, v, (base_ppl or {}).get(d, math.nan))
            if "paired_seeds" in summary:  # the seeds its ratio and share pair with full fine-tuning's
                numbers[f"{tag}_paired_seeds"] = _mean(summary, d, v, "paired_seeds")
        if base_ppl and d in base_ppl:
            numbers[f"{prefix}_{d}_base_ppl"] = base_ppl[d]
    numbers[f"{prefix}_runs"] = len(summary)
    if "seeds" in summary:  # the fewest seeds any method ran on any corpus: what "every run" may say
        numbers[f"{prefix}_seeds"] = int(summary["seeds"].min())
    if "nonmembers" in summary:  # the fewest texts per part on any corpus
        numbers[f"{prefix}_texts_min"] = int(summary["nonmembers"].min())
    if "lr_at_edge" in summary:
        numbers[f"{prefix}_edge_runs"] = int(summary["lr_at_edge"].sum())
    numbers = {k: v for k, v in numbers.items() if math.isfinite(v)}
    perplexities = {k: v for k, v in numbers.items() if k.endswith("_ppl")}
    others = {k: v for k, v in numbers.items() if k not in perplexities}
    return {**quoted_numbers(KEY, others), **quoted_numbers(KEY, perplexities, digits=4)}


def edge_numbers(grid: pd.DataFrame, prefix: str = "pre") -> dict[str, int]:
    """Where the chosen learning rates lie, counted from the runs (``grid``: one row per run, as :func:`grid_frame`),
    for the text that says so: ``..._lr_top``, ``..._lr_bottom`` and ``..._lr_inside`` (runs whose rate lies at the
    grid's top, its bottom, or inside it) and ``..._lr_runs``, keyed ``<prefix>_<dataset>_<variant>`` per corpus and
    method (with ``..._lr_rates``, the distinct rates its seeds chose), ``<prefix>_<dataset>`` per corpus and
    ``<prefix>_<variant>`` per method, each dataset by its short name (:func:`_short`), as in every key."""

    def counts(tag: str, runs: pd.DataFrame) -> dict[str, int]:
        edge = runs["lr_edge"]
        return {
            f"{tag}_top": int((edge == "top").sum()),
            f"{tag}_bottom": int((edge == "bottom").sum()),
            f"{tag}_inside": int((edge == "").sum()),
            f"{tag}_runs": len(runs),
        }

    def name(*parts: str) -> str:
        return "_".join(p.replace("-", "") for p in (prefix, *parts, "lr") if p)

    numbers: dict[str, int] = {}
    for (d, v), runs in grid.groupby(["dataset", "variant"], sort=False):
        tag = name(_short(d), v)
        numbers |= counts(tag, runs) | {f"{tag}_rates": int(runs["lr"].nunique())}
    for d, runs in grid.groupby("dataset", sort=False):
        numbers |= counts(name(_short(d)), runs)
    for v, runs in grid.groupby("variant", sort=False):
        numbers |= counts(name(v), runs)
    return quoted_numbers(KEY, numbers)


def interval_numbers(intervals: pd.DataFrame, prefix: str = "pre") -> dict[str, float]:
    """:func:`grid_intervals` as numbers other pages quote, keyed ``<prefix>_<dataset>_<variant>_auc_ci_low`` and
    ``..._auc_ci_high`` (eq. 24's AUC, the 95% interval over seeds and texts), the same for ``tpr1``, and ``..._tpr1``,
    the TPR at 1% FPR itself (the AUC itself is :func:`scale_numbers`' ``..._auc``, the same mean), and ``..._seeds``
    behind them; the same for ``tpr5`` (at 5% nominal FPR) and the FPRs achieved (``..._fpr1``, ``..._fpr5``)
    where the frame holds them; a value the texts cannot resolve is left out."""
    numbers = {}
    rates = [m for m in ("tpr1", "tpr5") if m in intervals]
    for _, row in intervals.iterrows():
        tag = f"{prefix}_{_short(row['dataset'])}_{row['variant'].replace('-', '')}"
        numbers[f"{tag}_seeds"] = row["seeds"]
        for metric in rates:
            numbers[f"{tag}_{metric}"] = row[metric]
            if metric.replace("tpr", "fpr") in intervals:
                numbers[f"{tag}_{metric.replace('tpr', 'fpr')}"] = row[metric.replace("tpr", "fpr")]
        for metric in ("auc", *rates):
            for end in ("low", "high"):
                numbers[f"{tag}_{metric}_ci_{end}"] = row[f"{metric}_{end}"]
    return quoted_numbers(KEY, {k: v for k, v in numbers.items() if math.isfinite(v)})  # a TPR unresolved: none


def seed_numbers(grid: pd.DataFrame, prefix: str = "pre") -> dict[str, float]:
    """Each run's own perplexity, eq. 24 AUC and chosen learning rate, for a text that tells the seeds apart,
    keyed ``<prefix>_<dataset>_<variant>_s<seed>_ppl``, ``..._auc`` and ``..._lr`` (``grid``: one row per run, as
    :func:`grid_frame`)."""
    numbers, perplexities = {}, {}
    for _, row in grid.iterrows():
        tag = f"{prefix}_{_short(row['dataset'])}_{row['variant'].replace('-', '')}_s{int(row['seed'])}"
        perplexities[f"{tag}_ppl"] = row["ppl"]
        numbers[f"{tag}_auc"] = row["auc"]
        numbers[f"{tag}_lr"] = row["lr"]
    return {**quoted_numbers(KEY, numbers), **quoted_numbers(KEY, perplexities, digits=4)}


def difference_numbers(differences: pd.DataFrame, prefix: str = "") -> dict[str, float]:
    """:func:`grid_differences` as numbers the text quotes, keyed ``<prefix>_<dataset>_<a>_minus_<b>_<metric>``
    (``_low`` and ``_high`` for the interval; the default scale unprefixed, its synthetic e-mails ``email``)."""
    numbers = {}
    for _, row in differences.iterrows():
        tag = "_".join(
            p
            for p in (prefix, _short(row["dataset"]), row["a"].replace("-", ""), "minus", row["b"].replace("-", ""))
            if p
        )
        for key, column in (("", "diff"), ("_low", "low"), ("_high", "high")):
            numbers[f"{tag}_{row['metric']}{key}"] = row[column]
    return quoted_numbers(KEY, numbers)


def projection_numbers(table: pd.DataFrame, prefix: str = "proj") -> dict[str, float]:
    """:func:`projection_table` as numbers the text quotes, keyed ``<prefix>_<optimiser>_<column>`` (one dataset
    per scale), with ``<prefix>_<optimiser>_edge_arms``: how many of the two arms chose a rate at their grid's edge."""
    numbers = {}
    for _, row in table.iterrows():
        tag = f"{prefix}_{row['optimizer']}"
        for column in ("ppl_random", "ppl_fixed", "auc_random", "auc_fixed", "seeds"):
            numbers[f"{tag}_{column}"] = row[column]
        for metric in ("auc", "tpr1"):
            for key in ("diff", "low", "high"):
                numbers[f"{tag}_{metric}_{key}"] = row[f"{metric}_{key}"]
        numbers[f"{tag}_edge_arms"] = int(row["edge_random"]) + int(row["edge_fixed"])
    return quoted_numbers(KEY, numbers)


def model_numbers(scale: Scale) -> dict[str, int]:
    """The base models' sizes the book states (glued by the notebook): ``base_params`` at ``scale``, and the larger
    CPU scale's and the pretrained scale's (``large_base_params``, ``pre_base_params``), from their architectures."""
    from ...scale import get_scale

    sizes = {"base_params": scale, "large_base_params": get_scale(LARGER), "pre_base_params": get_scale(PRETRAINED)}
    return quoted_numbers(KEY, {name: s.engine.model.parameters() for name, s in sizes.items()})


def design_numbers() -> dict[str, int]:
    """The design each CPU scale's grid ran with, from its scale record (glued by the notebook so that the
    protocol table states it, not types it), keyed ``<small|large|pre>_<what>``: the base model's layers, width,
    context and vocabulary, the epochs and batch size of training, and how many learning rates each family's
    grid holds."""
    from ...scale import get_scale

    numbers = {}
    for prefix, name in (("small", "cpu-small"), ("large", LARGER), ("pre", PRETRAINED)):
        engine = get_scale(name).engine
        model = engine.model
        numbers |= {
            f"{prefix}_layers": model.n_layer,
            f"{prefix}_width": model.n_embd,
            f"{prefix}_context": model.block_size,
            f"{prefix}_vocab": model.vocab_size,
            f"{prefix}_epochs": engine.dense.epochs,
            f"{prefix}_batch": engine.dense.batch_size,
            f"{prefix}_dense_rates": len(engine.dense.lr_grid),
            f"{prefix}_lora_rates": len(engine.lora.lr_grid),
        }
    return quoted_numbers(KEY, numbers)


def core_outcomes(claims: list[Claim]) -> dict[str, int]:
    """How the core checks of Table 1's claims came out (glue keys ``a6_membership_core_<claim>_<outcome>``, with
    ``_total``), so that the page's counts follow the verdicts: A-6.lora's AUC gaps, A-6.rank's comparisons and
    A-6.attribution's matched ones; A-6.lora's core TPR checks (``core_lora_tpr_<outcome>``); for each adapter of
    :data:`ADAPTERS`, LoRA considerably below it on the same cells (``below_<adapter>_<outcome>``), of which
    ``table1_fit_<adapter>`` are core under the adapter-fit rule (the adapter fits better than LoRA, resolved); and
    under plan version 1's threshold against full fine-tuning, LoRA that far below it (``strict_full_<outcome>``);
    under version 2's, full fine-tuning's TPR that many times LoRA's (``tpr_drop_<outcome>``)."""
    numbers = {}

    def count(name: str, found: list[Check], decided: dict[str, str] | None = None) -> None:
        """``decided``: outcomes decided together (Holm's), which replace the checks' own where given."""
        numbers[f"{name}_total"] = len(found)
        for outcome in ("passes", "unresolved", "fails"):
            numbers[f"{name}_{outcome}"] = sum((decided or {}).get(c.name, c.outcome) == outcome for c in found)

    for claim in claims:
        if claim.claim_id not in ("A-6.adapter", "A-6.lora", "A-6.rank", "A-6.attribution"):
            continue
        core = [c for c in claim.checks if c.role == "core" and ("AUC" in c.name or claim.claim_id == "A-6.rank")]
        count(f"core_{claim.claim_id.split('.')[1]}", core)
        if claim.claim_id != "A-6.lora":
            continue
        cells = {c.name.split(": AUC")[0] for c in core}

        def on_cells(checks: list[Check], words: str, cells: set[str] = cells) -> list[Check]:
            """The checks of the deciding cells whose names hold ``words``."""
            return [c for c in checks if c.name.split(": AUC")[0] in cells and words in c.name]

        count("core_lora_tpr", [c for c in claim.checks if c.role == "core" and "TPR" in c.name])
        readings = {r.name: r for r in getattr(claim, "readings", [])}
        fit = readings.get(SENSITIVITY[0].name)
        for a, name in ADAPTERS.items():
            count(f"below_{a}", on_cells(claim.checks, f"below {name}'s"))
            if fit is not None:
                numbers[f"table1_fit_{a}"] = sum(c.role == "core" for c in on_cells(fit.checks, f"below {name}'s"))
        strict = readings.get(SENSITIVITY[1].name)
        if strict is not None:  # its comparisons as Holm's procedure over the reading's core checks decides them
            found = on_cells(strict.checks, f"at least {CONSIDERABLE_FULL} below full's")
            count("strict_full", found, family_outcomes(strict.checks))
        dropped = readings.get(SENSITIVITY[2].name)
        if dropped is not None:  # version 2's TPR drops, as Holm's procedure over its core checks decides them
            found = [c for c in dropped.checks if c.role == "core" and "times LoRA's" in c.name]
            count("tpr_drop", found, family_outcomes(dropped.checks))
    return quoted_numbers(KEY, numbers)


def key_numbers(
    summary: pd.DataFrame, matched: dict[str, pd.DataFrame], trends: pd.DataFrame, base_ppl: dict[str, float]
) -> dict[str, float]:
    """The numbers the chapter's text quotes (glued by the notebook), the readings of the paper's vague words
    among them."""
    numbers = {
        "considerable": CONSIDERABLE,
        "considerable_full": CONSIDERABLE_FULL,
        "slight_gain": SLIGHT_GAIN,
        "slight": SLIGHT,
        "tpr_drop": TPR_DROP,
        "agreement_pct": 100 * AGREEMENT_RTOL,
    }
    for d in dict.fromkeys(summary["dataset"]):
        short = _short(d)
        numbers[f"{short}_base_ppl"] = base_ppl.get(d, math.nan)
        for v in ("full", "frozenemb", "adapter", "lora-r8", "lora-r16", "dpsgd-r8"):
            tag = v.replace("-", "")
            numbers[f"{short}_{tag}_auc"] = _mean(summary, d, v, "auc")
            numbers[f"{short}_{tag}_ppl"] = _mean(summary, d, v, "ppl")
        numbers[f"{short}_dpsgdr8_eps"] = _mean(summary, d, "dpsgd-r8", "epsilon")
        numbers[f"{short}_seeds"] = _mean(summary, d, "full", "seeds")
        numbers[f"{short}_part_texts"] = _mean(summary, d, "full", "nonmembers")  # members and auxiliary alike
        rows = trends.loc[trends["dataset"] == d]
        if len(rows):
            numbers[f"{short}_rho_rank_auc"] = rows["rho_rank_auc"].iloc[0]
            numbers[f"{short}_rho_rank_ppl"] = rows["rho_rank_ppl"].iloc[0]
    numbers["grid_seeds"] = int(summary["seeds"].min())  # the fewest seeds of any run of the grid
    numbers |= _matched_numbers(matched, list(dict.fromkeys(summary["dataset"])))
    return _quoted(numbers)


def _quoted(numbers: dict[str, float]) -> dict[str, float]:
    # four significant digits: on Penn Treebank the methods' perplexities differ in the fourth, and a difference
    # such as -0.02047 rounded to three (-0.0205) would read -0.021 where the page shows three decimals
    return quoted_numbers(KEY, numbers, digits=4)


SHORT = {"ptb": "ptb", "synthetic-email": "email"}  # the datasets' short names in the quoted numbers' keys


def _short(dataset: str) -> str:
    """A dataset's name in the quoted numbers' keys: its SHORT name, else its name without hyphens."""
    return SHORT.get(dataset, dataset.replace("-", ""))


def _matched_numbers(matched: dict[str, pd.DataFrame], datasets: list[str], prefix: str = "") -> dict[str, float]:
    """LoRA r = 8 and 16 at level 0 of each :func:`matched_frame` (by baseline), keyed ``<prefix><dataset>_vs<baseline>
    [_r16]_*``, and the counts of comparisons resolved below and above the baseline, overall and per dataset."""
    numbers = {}
    for baseline, table in matched.items():
        rows = []
        for d in datasets:
            short = f"{prefix}{_short(d)}"
            mine = []
            for v in ("lora-r8", "lora-r16"):
                row = _row(table, v, d)
                if row is None:
                    continue
                mine.append(row)
                tag = f"{short}_vs{baseline}" + ("" if v == "lora-r8" else "_r16")
                for key, column in (("ppl", "ppl"), ("lora", "ours"), ("baseline", "baseline")):
                    numbers[f"{tag}_{key}"] = row[column]
                for column in ("diff", "diff_low", "diff_high", "seeds"):
                    numbers[f"{tag}_{column}"] = row[column]
            numbers[f"{short}_vs{baseline}_below"] = sum(float(r["diff_high"]) < 0 for r in mine)  # resolved below
            rows += mine
        numbers[f"{prefix}vs{baseline}_below"] = sum(float(r["diff_high"]) < 0 for r in rows)
        numbers[f"{prefix}vs{baseline}_above"] = sum(float(r["diff_low"]) > 0 for r in rows)  # resolved above
        numbers[f"{prefix}vs{baseline}_comparisons"] = len(rows)
    return numbers


def frontier_numbers(points: pd.DataFrame, prefix: str = "pre_") -> dict[str, float]:
    """Every trained checkpoint of a frontier (:func:`points_frame` or :func:`frontier_points`) as the chapter
    quotes it: perplexity and AUC, keyed ``<prefix><dataset>_<variant>_lr<rate>_e<epoch>[_s<seed>]_{ppl,auc}``
    (rate as ``1e-03``; the seed where it is not 0)."""
    numbers = {}
    for _, p in points[points["epoch"] > 0].iterrows():
        tag = f"{prefix}{_short(p['dataset'])}_{p['variant'].replace('-', '')}"
        tag += f"_lr{p['lr']:.0e}_e{int(p['epoch'])}" + (f"_s{int(p['seed'])}" if p.get("seed", 0) else "")
        numbers[f"{tag}_ppl"] = p["ppl"]
        numbers[f"{tag}_auc"] = p["auc"]
    return _quoted(numbers)


def matched_numbers(matched: dict[str, pd.DataFrame], prefix: str = "pre_") -> dict[str, float]:
    """Another scale's comparisons at matched perplexity (:func:`matched_frame` by baseline) as the chapter quotes
    them, keyed ``<prefix><dataset>_vs<baseline>_*`` (LoRA r = 8; ``_r16_*`` for r = 16) with the counts resolved
    below and above the baseline."""
    datasets = list(dict.fromkeys(d for table in matched.values() for d in table["dataset"]))
    return _quoted(_matched_numbers(matched, datasets, prefix))


def pretrained_matched(frontier: dict, scale: Scale) -> dict[str, pd.DataFrame]:
    """The pretrained frontier's comparisons at matched perplexity, by baseline: adapter fine-tuning and LoRA r = 8
    and 16 against full fine-tuning (``"full"``), LoRA against adapter fine-tuning (``"adapter"``), and LoRA r = 8
    against r = 16 (``"r16"``); a variant the frontier has not run on a corpus is left out."""
    return {
        "full": matched_frame(frontier, scale, compared=("adapter", "lora-r8", "lora-r16")),
        "adapter": matched_frame(frontier, scale, baseline="adapter", compared=("lora-r8", "lora-r16")),
        "r16": matched_frame(frontier, scale, baseline="lora-r16", compared=("lora-r8",)),
    }


AGREEMENT_RTOL = 1e-3  # a frontier run and its grid cell are one training: perplexities this close agree


def grid_agreement(points: pd.DataFrame, grid: pd.DataFrame, epochs: int) -> pd.DataFrame:
    """Each frontier run at the rate its grid cell chose beside that cell (:func:`grid_frame`): the run's last
    checkpoint (epoch ``epochs``) is meant to be the cell's model, so their perplexities and AUCs should agree;
    with the perplexities' relative difference and whether it is within ``AGREEMENT_RTOL``."""
    last = points[points["epoch"] == epochs].assign(lr=lambda f: f["lr"].round(8))
    cells = grid.assign(lr=lambda f: f["lr"].round(8))
    same = last.merge(cells, on=["dataset", "variant", "lr", "seed"], suffixes=("", "_grid"))
    same["ppl_rel_diff"] = (same["ppl"] / same["ppl_grid"] - 1).round(4)
    same["agrees"] = same["ppl_rel_diff"].abs() <= AGREEMENT_RTOL
    return same[["dataset", "variant", "seed", "lr", "ppl", "ppl_grid", "ppl_rel_diff", "auc", "auc_grid", "agrees"]]


def agreement_numbers(agreement: pd.DataFrame, prefix: str = "pre_") -> dict[str, float]:
    """:func:`grid_agreement` as the chapter quotes it: the pairs, those that agree, and the largest relative
    difference of perplexity."""
    return _quoted(
        {
            f"{prefix}grid_pairs": len(agreement),
            f"{prefix}grid_pairs_agree": int(agreement["agrees"].sum()),
            f"{prefix}grid_largest_rel_diff": float(agreement["ppl_rel_diff"].abs().max()) if len(agreement) else 0.0,
        }
    )


def seed_matched_numbers(frontier: dict, scale: Scale, prefix: str = "pre_") -> dict[str, float]:
    """Each seed's own :func:`pretrained_matched` comparisons, where the frontier (:func:`load_frontier_seeds`) has
    several seeds, as :func:`matched_numbers` quotes them, keyed ``<prefix>s<seed>_<dataset>_vs<baseline>_*``."""
    seeds = sorted({s for by_seed in frontier.values() for s in by_seed})
    if len(seeds) < 2:
        return {}
    numbers = {}
    for seed in seeds:
        one = {d: {seed: by_seed[seed]} for d, by_seed in frontier.items() if seed in by_seed}
        numbers |= matched_numbers(pretrained_matched(one, scale), f"{prefix}s{seed}_")
    return numbers
