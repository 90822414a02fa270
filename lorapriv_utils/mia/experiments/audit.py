"""The canary audit of one grid cell's method on the engine (``python -m lorapriv_utils audit``).

The audit trains the cell's method once, with the cell's data, learning rate (the same sweep and rule
as the grid, or a rate fixed by ``--lr``) and steps, on the members plus the canaries that came up "in"
(``canary``), and turns the canaries' scores into an epsilon lower bound.  A record is written atomically
with a manifest, and an intact, current one is reused; its spec (``specs.audit_spec``) is the grid cell's plus
the canaries' settings and the canary audit's numerics version.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict

from ...scale import DPConfig
from ...store import seal, write_record
from ..attacks import canary
from ..attacks.canary import CanaryConfig
from ..engine import finetune, models
from ..records import specs
from .grid import Cell, audit_path
from .reuse import reused_or_computed
from .scoring import perplexity
from .sweep import sweep
from .workspace import Workspace


def audit_spec(work: Workspace, cell: Cell, config: CanaryConfig, dp: DPConfig) -> dict:
    """The grid cell's spec, with the audit's DP-SGD settings (for a ``dpsgd`` cell) and canaries."""
    corpus = work.corpus(cell.dataset, cell.seed)
    return specs.audit_spec(work.engine, cell, corpus, asdict(config), dp, **work.options())


def run_audit(work: Workspace, cell: Cell, config: CanaryConfig, dp: DPConfig | None = None) -> dict:
    """The one-run canary audit of ``cell``'s method (``dp``: DP-SGD's settings for a ``dpsgd`` cell)."""
    dp = dp or work.engine.dp
    fixed = work.overrides.lr  # a rate fixed by --lr: trained as given, no sweep
    path = audit_path(work.out, work.scale, cell, dp, fixed)
    spec = audit_spec(work, cell, config, dp)

    def compute() -> dict:
        start = time.perf_counter()
        prepared = work.dataset(cell.dataset, cell.seed)
        base, tokenizer, _ = work.base()
        context = work.engine.model.block_size
        canaries = canary.canary_texts(prepared.texts["nonmembers"], config.canaries)
        included = canary.inclusion(config.canaries, cell.seed)
        texts = canary.with_canaries(prepared.texts["members"], canaries, included)
        windows = models.encode_texts(tokenizer, texts, context, work.engine.max_windows_per_text)
        lr = fixed if fixed is not None else sweep(work, cell.dataset, cell.method, cell.rank, cell.seed)["lr"]
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
        scores = canary.audit_scores(
            base, trained, tokenizer, canaries, context, work.device, work.engine.max_windows_per_text
        )
        record = {
            "kind": "canary-audit",
            "audit": canary.canary_audit(scores, included, config),
            "scores": [float(x) for x in scores],
            "included": [bool(x) for x in included],
            "validation_perplexity": perplexity(trained, prepared.validation, work.device),
            "training": {k: v for k, v in stats.items() if k != "seconds"},
            "manifest": {
                **work.provenance(spec, start),
                "cell": asdict(cell),
                "canary_config": asdict(config),
                "canary_source": "the split's non-members (held-out texts of the corpus), in its seeded order",
                "dp": asdict(dp) if cell.method == "dpsgd" else None,
                "train_config": asdict(cfg),
            },
        }
        return write_record(path, seal(record))

    return reused_or_computed(path, spec, compute, with_scores=False)
