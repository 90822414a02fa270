"""Build the HTML book strictly: any notebook error, Sphinx warning, broken reference or
missing citation makes the build fail (non-zero exit).

Usage: python tools/build_book.py [BOOK_ROOT] [--fresh]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

STRICT_FLAGS = ["--warningiserror", "--nitpick", "--keep-going"]


def build(root: Path, fresh: bool = False) -> int:
    root = root.resolve()
    out = root / "_build"
    if fresh and out.exists():
        shutil.rmtree(out)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jupyter_book), "build", str(root), "--builder", "html", *STRICT_FLAGS]
    print("+ " + " ".join(cmd), flush=True)
    code = subprocess.call(cmd)
    if code != 0:
        print(
            f"\nbook build FAILED (exit {code}); notebook tracebacks are in {out / 'html' / 'reports'}", file=sys.stderr
        )
        return code
    print(f"\nbook built: open {out / 'html' / 'index.html'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", nargs="?", default=".", type=Path)
    parser.add_argument("--fresh", action="store_true", help="delete _build (and its execution cache) first")
    args = parser.parse_args()
    return build(args.root, args.fresh)


if __name__ == "__main__":
    sys.exit(main())
