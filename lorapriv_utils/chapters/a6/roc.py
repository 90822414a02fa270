"""ROC curves, score distributions and LiRA."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...catalogue import regenerate, regenerate_kind
from ...mia.engine.methods import position
from ...numbers import quoted_numbers, rounded_frame
from ...scale import Scale
from .common import KEY, results_dir, variant_name


# ---------------------------------------------------------------- ROC curves and score distributions
def part_texts(dataset: str, seed: int, scale: Scale, hashes: dict) -> dict[str, list[str]]:
    """The member and non-member texts of a grid cell, re-derived from the corpus and checked against the
    hashes its manifest recorded (the zlib attack needs the texts, which the results do not store)."""
    from ...mia.engine import data

    engine = scale.engine
    split = data.split_corpus(data.load_corpus(dataset, seed=seed, synthetic_count=engine.synthetic_count), seed)
    texts = {
        "members": split.members[: engine.texts_per_part(dataset)],
        "nonmembers": split.nonmembers[: engine.texts_per_part(dataset)],
    }
    for part, values in texts.items():
        if data.texts_digest(values) != hashes[part]:
            raise ValueError(f"the {part} of {dataset} (seed {seed}) differ from the ones the results were computed on")
    return texts


def cell_signals(record: dict, scores: dict[str, np.ndarray], texts: dict[str, list[str]] | None) -> dict:
    """Every attack's (member, non-member) signals of one grid cell (lower looks like a member)."""
    from ...mia.attacks import metrics

    out = {
        "eq. 24 (reference)": (
            scores["members_target"] - scores["members_reference"],
            scores["nonmembers_target"] - scores["nonmembers_reference"],
        ),
        "loss": (scores["members_target"], scores["nonmembers_target"]),
        "Min-K%++": (-scores["members_minkpp"], -scores["nonmembers_minkpp"]),
    }
    if texts is not None:
        out["zlib ratio"] = tuple(
            metrics.zlib_signal(scores[f"{part}_target"], texts[part]) for part in ("members", "nonmembers")
        )
    return out


def base_reference_signals(
    record: dict, scores: dict[str, np.ndarray], base_record: dict, base_scores: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The base-model reference attack on one grid cell, (member, non-member) signals: the target's loss minus the
    base model's on each text (lower looks like a member), the reference that needs no model trained beside the
    target; the analysis plan's lower-rate regime reads it beside eq. 24's.  ``base_record`` and ``base_scores``:
    the base model's epoch-0 frontier record of the cell's seed (``frontier --bases-only``), which must have scored
    the cell's own members and non-members (their split digests agree)."""
    for part in ("members", "nonmembers"):
        if record["manifest"]["split_hashes"][part] != base_record["manifest"]["split_hashes"][part]:
            raise ValueError(
                f"the base model's scores are of another split's {part} than this cell's: score the base model on "
                "the cell's seed (frontier --bases-only --seeds SEED)"
            )
    return tuple(scores[f"{part}_target"] - base_scores[f"e0_{part}_target"] for part in ("members", "nonmembers"))


LIRA_COMMAND = regenerate("lira")


def cell_scores(record: dict, scale: Scale, root=None) -> dict[str, np.ndarray]:
    """A grid cell's per-text scores, read beside its record under ``root`` (default the book's results folder)
    and checked against the digest the record holds."""
    from ...mia.experiments.grid import Cell, result_path
    from ...store import read_record

    path = result_path(root or results_dir(scale).parent, scale, Cell(**record["manifest"]["cell"]))
    try:
        stored, scores = read_record(path, "cell", with_arrays=True)
    except ValueError as err:
        raise ValueError(f"{path}: {err}; regenerate it with: {regenerate_kind(scale.name, 'cell')}") from None
    if stored["scores_sha256"] != record["scores_sha256"]:
        raise ValueError(
            f"{path} is not the record read before; regenerate it with: {regenerate_kind(scale.name, 'cell')}"
        )
    return scores


def lira_references(scale: Scale, dataset: str, variant: str, seed: int) -> np.ndarray | None:
    """Offline LiRA's per-text reference losses of a cell ((k, texts) for members and non-members),
    verified against their record; None where they were not computed."""
    from ...mia.attacks.lira import lira_path
    from ...store import read_record

    path = lira_path(results_dir(scale).parent, scale.name, dataset, variant, seed)
    if not path.is_file():
        return None
    try:
        return read_record(path, "lira-references", with_arrays=True)[1]
    except ValueError as err:
        raise ValueError(f"{path}: {err}; regenerate it with: {LIRA_COMMAND}") from None


def lira_table(records: list[dict], scale: Scale, seed: int = 0) -> pd.DataFrame:
    """Offline LiRA against eq. 24 on the same cells (seed ``seed``): AUC with bootstrap intervals, TPR at 1%."""
    from ...mia.attacks import metrics
    from ...mia.attacks.lira import lira_signals
    from ...mia.experiments.grid import Cell

    rows = []
    for record in records:
        cell = Cell(**record["manifest"]["cell"])
        name = variant_name(cell.method, cell.rank)
        refs = lira_references(scale, cell.dataset, name, seed) if cell.seed == seed else None
        if refs is None:
            continue
        scores = cell_scores(record, scale)
        m, n = lira_signals(scores["members_target"], scores["nonmembers_target"], refs["members"], refs["nonmembers"])
        ci = metrics.bootstrap(
            metrics.roc_auc, m, n, np.random.default_rng([seed, 5]), scale.engine.bootstrap_resamples
        )
        rows.append(
            {
                "dataset": cell.dataset,
                "variant": name,
                "references": refs["members"].shape[0],
                "lira_auc": ci.value,
                "lira_low": ci.low,
                "lira_high": ci.high,
                "lira_tpr1": metrics.tpr_at_fpr(m, n, 0.01).tpr,
                "eq24_auc": record["metrics"]["reference_attack"]["auc"]["value"],
            }
        )
    if not rows:
        raise FileNotFoundError(f"no LiRA references under {results_dir(scale)}; compute them with: {LIRA_COMMAND}")
    frame = pd.DataFrame(rows)
    frame["order"] = frame["variant"].map(lambda v: position(v.split("-")[0]))
    return rounded_frame(
        frame.sort_values(["dataset", "order", "variant"]).drop(columns="order").reset_index(drop=True), 4
    )


def lira_numbers(table: pd.DataFrame) -> dict[str, int]:
    """:func:`lira_table`'s design the text quotes: the fewest reference models behind a cell's LiRA."""
    return {f"{KEY}_lira_references": int(table["references"].min())}


def roc_curves(records: list[dict], dataset: str, seed: int, scale: Scale) -> tuple[dict, dict]:
    """ROC curves (per attack, per method) and the eq. 24 signals of one dataset and seed of the grid."""
    from sklearn.metrics import roc_curve

    from ...mia.attacks.lira import lira_signals
    from ...mia.experiments.grid import Cell

    chosen = [
        r for r in records if r["manifest"]["cell"]["dataset"] == dataset and r["manifest"]["cell"]["seed"] == seed
    ]
    if not chosen:
        raise FileNotFoundError(
            f"no grid result for {dataset}, seed {seed}; regenerate them with: {regenerate_kind(scale.name, 'cell')}"
        )
    texts = part_texts(dataset, seed, scale, chosen[0]["manifest"]["split_hashes"])
    curves: dict = {}
    signals: dict = {}
    for record in sorted(chosen, key=lambda r: position(r["manifest"]["cell"]["method"])):
        cell = Cell(**record["manifest"]["cell"])
        scores = cell_scores(record, scale)
        name = variant_name(cell.method, cell.rank)
        attacks = cell_signals(record, scores, texts)
        refs = lira_references(scale, dataset, name, seed)
        if refs is not None:
            attacks["offline LiRA"] = lira_signals(
                scores["members_target"], scores["nonmembers_target"], refs["members"], refs["nonmembers"]
            )
        for attack, (m, n) in attacks.items():
            truth = np.r_[np.ones(m.size), np.zeros(n.size)]
            fpr, tpr, _ = roc_curve(truth, -np.r_[m, n])
            curves.setdefault(attack, {})[name] = (fpr, tpr)
        signals[name] = cell_signals(record, scores, None)["eq. 24 (reference)"]
    return curves, signals


def tpr_summary(vs_full: pd.DataFrame, vs_adapter: pd.DataFrame) -> dict[str, float]:
    """How many LoRA comparisons at matched perplexity resolve a lower TPR at 1% FPR (the interval of the
    difference below zero), against full and against adapter fine-tuning (glued by the notebook)."""
    numbers = {}
    for name, frame in (("full", vs_full), ("adapter", vs_adapter)):
        lora = frame[frame["variant"].str.startswith("lora-")].dropna(subset=["diff"])
        numbers[f"tpr_lora_vs_{name}_below"] = int((lora["diff_high"] < 0).sum())
        numbers[f"tpr_lora_vs_{name}_above"] = int((lora["diff_low"] > 0).sum())
        numbers[f"tpr_lora_vs_{name}_count"] = len(lora)
    return quoted_numbers(KEY, numbers)
