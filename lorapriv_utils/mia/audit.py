"""The canary audit of one grid cell's method on the engine (``python -m lorapriv_utils audit``).

The audit trains the cell's method once, with the cell's data, learning rate (the same sweep and rule
as the grid) and steps, on the members plus the canaries that came up "in" (``canary``), and turns the
canaries' scores into an epsilon lower bound.  A record is written atomically with a manifest, and an
intact, current one is reused; its staleness key is the grid cell's plus the audit's settings and the
audit's own code, so that editing this module or ``canary`` re-keys audits but not the grid.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import asdict
from pathlib import Path

from ..files import atomic_write_text
from ..provenance import source_digest
from ..scale import DPConfig, Scale
from . import canary, finetune, models
from .canary import CanaryConfig
from .grid import Cell
from .report import SCHEMA, record_checksum
from .runner import Runner, load_result, perplexity

AUDIT_CODE = ("mia/audit.py", "mia/canary.py")  # beside the engine's (``runner.CODE``, in the cell's key)


def audit_path(out: Path, scale: Scale, cell: Cell, dp: DPConfig | None) -> Path:
    sigma = "" if dp is None or cell.method != "dpsgd" else f"-z{dp.noise_multiplier:g}"
    return Path(out) / scale.name / "audit" / f"{cell.name}{sigma}.json"


def audit_key(work: Runner, cell: Cell, config: CanaryConfig, dp: DPConfig) -> dict:
    """The grid cell's staleness key, plus one digest of the audit's settings and code."""
    own = {"canaries": asdict(config), "dp": asdict(dp), "code": source_digest(AUDIT_CODE)}
    return {**work.key(cell), "audit": record_checksum(own)[:16]}


def run_audit(work: Runner, cell: Cell, config: CanaryConfig, dp: DPConfig | None = None) -> dict:
    """The one-run canary audit of ``cell``'s method (``dp``: DP-SGD's settings for a ``dpsgd`` cell)."""
    dp = dp or work.engine.dp
    path = audit_path(work.out, work.scale, cell, dp)
    key = audit_key(work, cell, config, dp)
    done = load_result(path, key, with_scores=False)
    if done is not None:
        return done
    start = time.perf_counter()
    prepared = work.dataset(cell.dataset, cell.seed)
    base, tokenizer, _ = work.base()
    context = work.engine.model.block_size
    canaries = canary.canary_texts(prepared.texts["nonmembers"], config.canaries)
    included = canary.inclusion(config.canaries, cell.seed)
    texts = canary.with_canaries(prepared.texts["members"], canaries, included)
    windows = models.encode_texts(tokenizer, texts, context)
    lr = work.sweep(cell.dataset, cell.method, cell.rank, cell.seed)["lr"]
    cfg = work.train_config(cell.method, cell.seed, lr)
    trained, stats = finetune.fine_tune(
        copy.deepcopy(base),
        cell.method,
        windows,
        cfg,
        rank=cell.rank,
        dp=dp,
        rowscale=work.engine.rowscale,
        progress=work.progress,
        desc=f"audit {cell.name}",
        device=work.device,
    )
    scores = canary.audit_scores(base, trained, tokenizer, canaries, context, device=work.device)
    record = {
        "schema": SCHEMA,
        "audit": canary.canary_audit(scores, included, config),
        "scores": [float(x) for x in scores],
        "included": [bool(x) for x in included],
        "validation_perplexity": perplexity(trained, prepared.validation, work.device),
        "training": {k: v for k, v in stats.items() if k != "seconds"},
        "manifest": {
            **work.provenance(key, start),
            "cell": asdict(cell),
            "canary_config": asdict(config),
            "canary_source": "the split's non-members (held-out texts of the corpus), in its seeded order",
            "dp": asdict(dp) if cell.method == "dpsgd" else None,
            "train_config": asdict(cfg),
        },
    }
    record["checksum"] = record_checksum(record)
    atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True))
    return record
