"""Table 1's protocol: the grid's records as frames, the paper beside ours, the attacks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...catalogue import regenerate_kind
from ...labels import CORPORA
from ...mia.engine.methods import position
from ...numbers import rounded_frame
from ...scale import Scale
from .checks import _mean, gain_share
from .common import PAPER_SOURCES, PAPER_TABLE1, label, results_dir, variant_name


# ---------------------------------------------------------------- the grid (Table 1's protocol)
def load_grid(scale: Scale) -> list[dict]:
    from ...mia.records.report import load_records

    folder = results_dir(scale)
    try:
        records = load_records(folder)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no grid results under {folder}; regenerate them with: {regenerate_kind(scale.name, 'cell')}"
        ) from None
    return [r for r in records if r["manifest"]["config"]["scale"] == scale.name]


def _rate(entry: dict) -> float:
    return entry["value"] if entry["resolvable"] else np.nan


def _edge(selection: dict) -> str:
    """Which end of its grid a run's chosen rate lies at, ``"top"`` or ``"bottom"``; ``"fixed"`` where it swept one
    rate (``--lr``), which has no inside; else ``""`` (inside)."""
    if len(selection["sweep"]) == 1:
        return "fixed"
    if not selection["at_grid_edge"]:
        return ""
    return "top" if selection["chosen"] == max(r["lr"] for r in selection["sweep"]) else "bottom"


def grid_frame(records: list[dict]) -> pd.DataFrame:
    """One row per finished cell: perplexity, each attack's AUC, eq. 24's TPRs, the chosen rate, epsilon."""
    rows = []
    for record in records:
        cell, m = record["manifest"]["cell"], record["metrics"]
        ref = m["reference_attack"]
        rows.append(
            {
                "dataset": cell["dataset"],
                "variant": variant_name(cell["method"], cell["rank"]),
                "method": cell["method"],
                "seed": cell["seed"],
                "ppl": m["validation_perplexity"],
                "auc": ref["auc"]["value"],
                "auc_low": ref["auc"]["low"],
                "auc_high": ref["auc"]["high"],
                "tpr1": _rate(ref["tpr_at_0.01"]),
                "fpr1": ref["tpr_at_0.01"].get("achieved_fpr", np.nan),  # the FPR that 1% nominal achieves
                "tpr001": _rate(ref["tpr_at_0.0001"]),
                "loss_auc": m["loss_attack"]["auc"]["value"],
                "zlib_auc": m["zlib_attack"]["auc"]["value"],
                "minkpp_auc": m["minkpp_attack"]["auc"]["value"],
                "nonmembers": m["texts"]["nonmembers"],
                "lr": m["lr_selection"]["chosen"],
                "lr_at_edge": m["lr_selection"]["at_grid_edge"],
                "lr_edge": _edge(m["lr_selection"]),
                "params": m["training"].get("trainable_parameters", np.nan),
                "epsilon": m["training"].get("epsilon", np.nan) if m["training"].get("epsilon") is not None else np.nan,
            }
        )
    frame = pd.DataFrame(rows)
    frame["order"] = frame["method"].map(position)
    return frame.sort_values(["dataset", "order", "variant", "seed"]).drop(columns="order").reset_index(drop=True)


def paired_utility(frame: pd.DataFrame, bases: dict[tuple[str, int], float] | None = None) -> pd.DataFrame:
    """Each method's utility cost against full fine-tuning, seed by seed: over the seeds both ran (``paired_seeds``),
    the geometric mean of the perplexity ratio (``ppl_ratio``) and the mean share of full fine-tuning's
    log-perplexity gain over the base it recovers (``gain_share``, where ``bases`` gives that seed's base
    perplexity, keyed (dataset, seed): each seed's validation texts are its own).  A ratio of means over different
    seed sets would divide one seed's split by another's."""
    rows = []
    for (d, v), runs in frame.groupby(["dataset", "variant"], sort=False):
        full = frame[(frame["dataset"] == d) & (frame["variant"] == "full")].set_index("seed")["ppl"]
        own = runs.set_index("seed")["ppl"]
        seeds = sorted(set(own.index) & set(full.index))
        shares = [gain_share(bases[(d, s)], full[s], own[s]) for s in seeds if bases and (d, s) in bases]
        rows.append(
            {
                "dataset": d,
                "variant": v,
                "paired_seeds": len(seeds),
                "ppl_ratio": math.exp(np.mean([math.log(own[s] / full[s]) for s in seeds])) if seeds else math.nan,
                "gain_share": float(np.mean(shares)) if shares and len(shares) == len(seeds) else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "variant", "paired_seeds", "ppl_ratio", "gain_share"])


def grid_summary(frame: pd.DataFrame, bases: dict[tuple[str, int], float] | None = None) -> pd.DataFrame:
    """Per dataset and method: the mean over seeds, and the seeds' spread (half the range) of perplexity and AUC;
    the utility cost against full fine-tuning paired by seed (:func:`paired_utility`, with each seed's base
    perplexity from ``bases``)."""
    numeric = ["ppl", "auc", "tpr1", "tpr001", "loss_auc", "zlib_auc", "minkpp_auc", "epsilon"]
    numeric += [c for c in ("fpr1",) if c in frame]  # the FPR achieved, where the records give it
    grouped = frame.groupby(["dataset", "variant"], sort=False)
    out = grouped[numeric].mean()
    out["ppl_spread"] = grouped["ppl"].agg(lambda v: (v.max() - v.min()) / 2)
    out["auc_spread"] = grouped["auc"].agg(lambda v: (v.max() - v.min()) / 2)
    out["seeds"] = grouped["seed"].nunique()
    out["nonmembers"] = grouped["nonmembers"].first()
    out["lr_at_edge"] = grouped["lr_at_edge"].any()
    if "params" in frame:
        out["params"] = grouped["params"].first()
    out = out.reset_index().merge(paired_utility(frame, bases), on=["dataset", "variant"], how="left")
    return rounded_frame(out, 4)


def table1_comparison(summary: pd.DataFrame, scale: Scale) -> pd.DataFrame:
    """Paper A's Table 1 beside ours, dataset by dataset and metric by metric, the scale first; AUC and TPR as
    fractions, as everywhere in the book (paper A prints them in percent)."""
    rows, present = [], set(summary["dataset"])
    for _, paper in PAPER_TABLE1.iterrows():
        ours_name = next((k for k in PAPER_SOURCES[paper["dataset"]] if k in present), None)
        mine = summary[(summary["dataset"] == ours_name) & (summary["variant"] == paper["variant"])]
        row = {
            "paper dataset": paper["dataset"],
            "method": label(paper["variant"]),
            "our data": CORPORA.get(ours_name, "not run at this scale"),
            "PPL paper": paper["ppl"],
            "PPL ours": np.nan,
            "AUC paper": paper["auc_pct"] / 100,
            "AUC ours": np.nan,
            "TPR@1% paper": paper["tpr1_pct"] / 100,
            "TPR@1% nominal ours": np.nan,
            "TPR@0.01% paper": paper["tpr001_pct"] / 100,
            "TPR@0.01% nominal ours": np.nan,
        }
        if len(mine):
            m = mine.iloc[0]
            row |= {"PPL ours": m["ppl"], "AUC ours": m["auc"], "TPR@1% nominal ours": m["tpr1"]}
            row["TPR@0.01% nominal ours"] = m["tpr001"]  # NaN: not resolvable with our non-members
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.insert(0, "scale", np.where(frame["our data"] == "not run at this scale", "", scale.name))
    return rounded_frame(frame, 4)


def table1_by_corpus(summary: pd.DataFrame, intervals: pd.DataFrame, paper_dataset: str) -> pd.DataFrame:
    """Paper A's Table 1 for one of its corpora beside one scale's runs, built for a narrow screen: one row per
    method of Table 1 that the scale ran, our AUC (eq. 24, with its interval over seeds and texts) first, then the
    paper's, both perplexities, and our TPR at 5% nominal FPR with its interval (the paper reports none at 5%)."""
    ours = next((k for k in PAPER_SOURCES[paper_dataset] if k in set(summary["dataset"])), None)
    rows = []
    for _, paper in PAPER_TABLE1[PAPER_TABLE1["dataset"] == paper_dataset].iterrows():
        found = intervals[(intervals["dataset"] == ours) & (intervals["variant"] == paper["variant"])]
        if ours is None or not len(found):
            continue
        row = found.iloc[0]
        rows.append(
            {
                "method": label(paper["variant"]),
                "AUC ours": row["auc"],
                "AUC ours_low": row["auc_low"],
                "AUC ours_high": row["auc_high"],
                "AUC paper": paper["auc_pct"] / 100,
                "PPL ours": _mean(summary, ours, paper["variant"], "ppl"),
                "PPL paper": paper["ppl"],
                "TPR@5% nominal ours": row.get("tpr5", np.nan),
                "TPR@5% nominal ours_low": row.get("tpr5_low", np.nan),
                "TPR@5% nominal ours_high": row.get("tpr5_high", np.nan),
            }
        )
    return rounded_frame(pd.DataFrame(rows), 4)


def attack_table(summary: pd.DataFrame) -> pd.DataFrame:
    """AUC of the four attacks for each method (means over seeds)."""
    cols = {"auc": "eq. 24 (reference)", "loss_auc": "loss", "zlib_auc": "zlib ratio", "minkpp_auc": "Min-K%++"}
    frame = summary[["dataset", "variant", *cols]].rename(columns=cols)
    frame["variant"] = frame["variant"].map(label)
    return frame
