"""What a result was made with: package versions and the git commit, for manifests."""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

MANIFEST_PACKAGES = ("torch", "transformers", "peft", "opacus", "numpy", "scipy", "scikit-learn", "lorapriv-utils")


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
