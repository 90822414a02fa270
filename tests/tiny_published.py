"""The test session's tiny published tree: one checkout-shaped folder (``ledger/claims.yml`` beside
``results/published/``) holding tiny records of every engine kind, run once per test session at the one tiny
scale (``ddp_driver.SCALE``) and read by the chapter and engine tests:

- ``grid``: synthetic e-mails, seed 0, full and adapter fine-tuning and LoRA r = 8 and r = 16;
- ``frontier``: the same four variants, both rates of their grids, checkpoints after epoch 1 and at the
  chapter's rank budget (4);
- ``lira``: two offline-LiRA reference models of the LoRA r = 8 cell;
- ``dp_compare``: DP-SGD at z = 1 on PTB on full, LoRA-FA r = 2 and compressed r = 2 weights;
- ``audit``: a canary audit of DP-SGD r = 2 at z = 0.5 (40 canaries, 5 guesses each side).

Each part is built on first use, under its own lock in the session's folder, so that two pytest-xdist workers
build different parts side by side and never the same part twice.  The tree is read-only: a test that edits,
corrupts or reruns records works on ``copy(...)`` of it.
"""

import shutil
from pathlib import Path

import ddp_driver
import pytest

from lorapriv_utils import files, ledger
from lorapriv_utils.chapters import a6_membership as a6
from lorapriv_utils.mia.attacks import canary, lira
from lorapriv_utils.mia.engine import models
from lorapriv_utils.mia.experiments import audit, dp_compare, frontier, grid, runner, workspace
from lorapriv_utils.scale import SCALES, DPConfig

SCALE = ddp_driver.SCALE
DATASET = "synthetic-email"
GRID = grid.plan([DATASET], ["full", "adapter", "lora"], [8, 16], [0])
VARIANTS = [grid.Variant("full"), grid.Variant("adapter")] + [grid.Variant("lora", r) for r in (8, 16)]
CHECKPOINTS = (1, a6.RANK_EPOCH)  # the chapter compares ranks at its fixed budget of epochs
LIRA_CELL = grid.Cell(DATASET, "lora", 8, 0)
LIRA_REFERENCES = 2
DP_CELLS = [
    dp_compare.DPCell("full", 1.0),
    dp_compare.DPCell("lorafa", 1.0, rank=2),
    dp_compare.DPCell("compressed", 1.0, rank=2),
]
AUDIT_CELL = grid.Cell(DATASET, "dpsgd", 2, 0)
AUDIT_CONFIG = canary.CanaryConfig(canaries=40, guesses_each_side=5)
AUDIT_DP = DPConfig(noise_multiplier=0.5)


def _grid(work):
    runner.run(work, GRID)


def _frontier(work):
    frontier.run_frontier(work, [DATASET], VARIANTS, [0], CHECKPOINTS)


def _lira(work):
    lira.run_cell_references(work, LIRA_CELL, LIRA_REFERENCES)


def _dp_compare(work):
    dp_compare.run(work, DP_CELLS)


def _audit(work):
    audit.run_audit(work, AUDIT_CELL, AUDIT_CONFIG, AUDIT_DP)


PARTS = {"grid": _grid, "frontier": _frontier, "lira": _lira, "dp_compare": _dp_compare, "audit": _audit}
NEEDS = {"lira": ("grid",)}  # LiRA's references score the grid's target
FOLDERS = {  # where each part's records lie under results/published
    "grid": f"{SCALE.name}/{DATASET}",
    "frontier": f"{SCALE.name}/frontier",
    "lira": f"{SCALE.name}/lira",
    "dp_compare": "dp_compare",
    "audit": f"{SCALE.name}/audit",
}


class TinyTree:
    """The tree's root; ``parts(...)`` builds the named parts where they are missing and returns the root."""

    def __init__(self, root: Path, cache: Path):
        self.root = Path(root)
        self.cache = Path(cache)
        self.published = self.root / "results" / "published"
        self.scale_dir = self.published / SCALE.name  # grid, frontier and audit records: cpu-small/...

    def parts(self, *names: str) -> Path:
        unknown = set(names) - set(PARTS)
        assert not unknown, f"unknown parts of the tiny tree: {sorted(unknown)}; known: {sorted(PARTS)}"
        for name in [need for asked in names for need in NEEDS.get(asked, ())] + list(names):
            done = self.root / f".built-{name}"
            lock = files.Lock(done)
            lock.acquire()
            try:
                if not done.exists():
                    self._build(PARTS[name])
                    done.touch()
            finally:
                lock.release()
        return self.root

    def _build(self, build) -> None:
        ledger_dir = self.root / "ledger"
        ledger_dir.mkdir(parents=True, exist_ok=True)
        claims = ledger_dir / "claims.yml"
        if not claims.exists():
            claims.write_text((ledger.ledger_dir() / "claims.yml").read_text())
        with pytest.MonkeyPatch.context() as patch:
            patch.setitem(SCALES, SCALE.name, SCALE)
            patch.setenv(models.CACHE_ENV_VAR, str(self.cache))
            build(workspace.Workspace(SCALE, self.published, progress=False, device="cpu"))

    def copy(self, destination: Path, *names: str) -> Path:
        """A writable results folder at ``destination`` holding the records of the parts ``names`` only (hidden
        lock and temporary files left out), laid out as ``results/published`` is."""
        self.parts(*names)
        for name in names:
            folder = FOLDERS[name]
            shutil.copytree(self.published / folder, Path(destination) / folder, ignore=shutil.ignore_patterns(".*"))
        return Path(destination)
