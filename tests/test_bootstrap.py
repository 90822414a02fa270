"""`make` set-up stops with a message that says what is missing."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BOOTSTRAP = REPO / "tools" / "bootstrap.py"


def _run(env: dict, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BOOTSTRAP)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_an_old_python_is_refused_with_a_clear_message(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho '3 9'\n")
    fake.chmod(0o755)
    result = _run({"PATH": str(tmp_path), "HOME": str(tmp_path), "VENV": str(tmp_path / "venv")})
    assert result.returncode == 2
    assert "Python 3.11 or newer is required" in result.stderr and "3.9" in result.stderr


@pytest.mark.slow
def test_no_package_index_is_reported_as_such(tmp_path):
    env = dict(
        os.environ,
        VENV=str(tmp_path / "venv"),
        PYTHON=sys.executable,
        PIP_INDEX_URL="http://127.0.0.1:9/simple",
        PIP_CONFIG_FILE=os.devnull,
        PIP_FIND_LINKS="",
        PIP_RETRIES="0",
        PIP_TIMEOUT="2",
        PIP_NO_CACHE_DIR="1",
    )
    result = _run(env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "does not answer" in result.stderr and "network access to PyPI" in result.stderr
