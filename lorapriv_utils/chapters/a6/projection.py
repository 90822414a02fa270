"""The projection arms: LoRA-FA with its random frozen A against a fixed A."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...ledger import Check
from ...mia.attacks.matching import UTILITY_MATCH
from ...numbers import rounded_frame
from ...scale import Scale
from .checks import _bound
from .common import DATASETS, RESULTS, label
from .intervals import grid_differences
from .table1 import grid_frame, grid_summary

# The projection arms: LoRA-FA r=8 with its random frozen A against the same training with a fixed A (a DCT
# basis, the same for every seed), each optimiser in its own results folder under results/published
PROJECTION = {"adamw": "projection/adamw", "sgd": "projection/sgd"}
PROJECTION_PAIR = ("lorafa-r8", "lorafixed-r8")


def projection_root(optimizer: str) -> Path:
    from ...ledger import ledger_dir

    return ledger_dir().parent / RESULTS / PROJECTION[optimizer]


def load_projection(scale: Scale, roots: dict[str, Path] | None = None) -> dict[str, list[dict]]:
    """The projection arms' records of ``scale`` by optimiser (``roots``: their results folders, by default
    :func:`projection_root`'s); an optimiser without records is left out."""
    from ...mia.records.report import load_records

    out = {}
    for optimizer in PROJECTION:
        folder = (roots or {}).get(optimizer) or projection_root(optimizer)
        if (folder / scale.name).is_dir():
            records = [r for r in load_records(folder / scale.name) if r["manifest"]["config"]["scale"] == scale.name]
            if records:
                out[optimizer] = records
    return out


def projection_table(
    arms: dict[str, list[dict]],
    scale: Scale,
    pair: tuple[str, str] = PROJECTION_PAIR,
    roots: dict[str, Path] | None = None,
) -> pd.DataFrame:
    """Per optimiser and dataset: both arms' mean perplexity and eq. 24's AUC over the seeds, their chosen rates,
    and the AUC and TPR at 1% FPR of the random-A arm minus the fixed-A arm with the seeds-and-texts paired
    bootstrap's 95% interval (:func:`grid_differences`)."""
    random_arm, fixed_arm = pair
    rows = []
    for optimizer, records in arms.items():
        frame = grid_frame(records)
        summary = grid_summary(frame).set_index(["dataset", "variant"])
        root = (roots or {}).get(optimizer) or projection_root(optimizer)
        differences = grid_differences(records, scale, pairs=(pair,), root=root)
        for dataset in dict.fromkeys(differences["dataset"]):
            rows.append({"optimizer": optimizer, "dataset": dataset})
            for arm, name in ((random_arm, "random"), (fixed_arm, "fixed")):
                rates = frame[(frame["dataset"] == dataset) & (frame["variant"] == arm)]
                rows[-1] |= {
                    f"ppl_{name}": summary.loc[(dataset, arm), "ppl"],
                    f"auc_{name}": summary.loc[(dataset, arm), "auc"],
                    f"lr_{name}": ", ".join(f"{lr:g}" for lr in sorted(set(rates["lr"]))),
                    f"edge_{name}": bool(rates["lr_at_edge"].any()),
                }
            for metric in ("auc", "tpr1"):
                row = differences[(differences["dataset"] == dataset) & (differences["metric"] == metric)].iloc[0]
                rows[-1] |= {"seeds": int(row["seeds"])} | {
                    f"{metric}_diff": row["diff"],
                    f"{metric}_low": row["low"],
                    f"{metric}_high": row["high"],
                }
    return rounded_frame(pd.DataFrame(rows), 4)


def projection_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`projection_table` for the page: one row per optimiser and dataset, values with their intervals."""
    rows = []
    for _, row in table.iterrows():
        rows.append(
            {
                "optimiser": {"adamw": "AdamW", "sgd": "SGD"}[row["optimizer"]],
                "dataset": DATASETS.get(row["dataset"], row["dataset"]),
                "seeds": row["seeds"],
                "perplexity, random A": f"{row['ppl_random']:.4g}",
                "perplexity, fixed A": f"{row['ppl_fixed']:.4g}",
                "rate (random / fixed)": f"{row['lr_random']} / {row['lr_fixed']}",
                "AUC, random A": f"{row['auc_random']:.3f}",
                "AUC, fixed A": f"{row['auc_fixed']:.3f}",
                "AUC random - fixed [95%]": _interval_text(row, "auc"),
                "TPR@1% nominal, random - fixed [95%]": _interval_text(row, "tpr1"),
            }
        )
    return pd.DataFrame(rows)


def _interval_text(row: pd.Series, metric: str) -> str:
    return f"{row[metric + '_diff']:+.3f} [{row[metric + '_low']:+.3f}, {row[metric + '_high']:+.3f}]"


def projection_checks(table: pd.DataFrame, scale_name: str | None = None) -> list[Check]:
    """A-6.attribution's direct test: with everything but A the same (rank, optimiser, data, seeds), the random
    projection's AUC lies below the fixed projection's (core; an interval that contains 0 leaves it unresolved);
    the two arms reach matched perplexity (caveat: within ``UTILITY_MATCH`` times each other), and neither arm's
    chosen rate lies at its grid's edge (caveat: an arm held below its best rate is not compared fairly).  Names start
    with ``scale_name`` where given (a claim that holds checks of several scales)."""
    out = []
    for _, row in table.iterrows():
        tag = f"{scale_name + ', ' if scale_name else ''}{row['dataset']}, LoRA-FA r=8 with {row['optimizer']}"
        out += [
            _bound(
                f"{tag}: AUC with a random A below with a fixed A (the projection's randomness protects)",
                float(row["auc_diff"]),
                0.0,
                interval=(float(row["auc_low"]), float(row["auc_high"])),
            ),
            _bound(
                f"{tag}: the two arms' perplexities within {UTILITY_MATCH} times each other (matched utility)",
                max(row["ppl_random"] / row["ppl_fixed"], row["ppl_fixed"] / row["ppl_random"]),
                UTILITY_MATCH,
                role="caveat",
            ),
            _bound(
                f"{tag}: arms whose chosen learning rate lies at their grid's edge, none (each arm at its best rate)",
                float(int(row["edge_random"]) + int(row["edge_fixed"])),
                0.0,
                role="caveat",
            ),
        ]
    return [c for c in out if c is not None]


def _direct_test_scope(arms: pd.DataFrame, pre_arms: pd.DataFrame, scale_name: str, pretrained_decides: bool) -> str:
    """Where A-6.attribution's direct test (:func:`projection_checks`) ran and which of its runs are core."""

    def ran(table: pd.DataFrame) -> str:
        corpora = ", ".join(DATASETS.get(d, d) for d in dict.fromkeys(table["dataset"]))
        optimisers = " and ".join({"adamw": "AdamW", "sgd": "SGD"}[o] for o in dict.fromkeys(table["optimizer"]))
        return f"{corpora}; {optimisers}"

    toy = f"at {scale_name} ({ran(arms)})" if len(arms) else ""
    if len(pre_arms):
        core = f"Its core runs are on the pretrained model ({ran(pre_arms)})"
        return f"{core}; those {toy} are caveats." if toy else f"{core}."
    if not toy:
        return "It was not run."
    role = "caveats (the pretrained scale decides)" if pretrained_decides else "core"
    return f"Its runs {toy} are {role}."


def differences_display(differences: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`grid_differences` of several scales (by scale name) as one table for the page: the comparison in
    words, the metric, the seeds, the difference and its 95% interval."""
    metric_names = {"auc": "AUC", "tpr1": "TPR@1% nominal", "log_ppl": "log perplexity (seeds only)"}
    frames = [
        frame.assign(
            scale=name,
            comparison=[f"{label(a)} - {label(b)}" for a, b in zip(frame["a"], frame["b"], strict=True)],
            metric=frame["metric"].map(metric_names),
        )
        for name, frame in differences.items()
        if len(frame)
    ]
    columns = ["scale", "dataset", "comparison", "metric", "seeds", "diff", "low", "high"]
    out = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return out.rename(columns={"diff": "difference", "low": "95% low", "high": "95% high"})
