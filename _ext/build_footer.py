"""Show, in every page's footer, the commit and the date the book was built from, so that a
reader quoting a number can quote the exact source (Sphinx extension).

The commit is that of the checkout being built (``git rev-parse``), marked ``+ local changes``
when the working tree differs from it; outside a git checkout the footer says so.  A book built from a clean checkout
points its launch and source links (Binder, the repository button) at that commit rather than at the branch, so that
a cited page opens the notebooks it was built from.
"""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

from sphinx.application import Sphinx


def build_provenance(root: Path) -> tuple[str, bool]:
    """(commit, dirty) of the checkout at ``root``; ("unknown", False) outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown", False
    return commit, bool(status.strip())


def footer_html(repository: str, commit: str, dirty: bool, date: datetime.date) -> str:
    if commit == "unknown":
        source = "built outside a git checkout"
    else:
        short = commit[:12]
        link = f'<a href="{repository}/commit/{commit}">{short}</a>' if repository else short
        source = f"built from commit {link}{' + local changes' if dirty else ''}"
    return f'<p class="lorapriv-build">{source} on {date.isoformat()}</p>'


def _set_footer(app: Sphinx, config) -> None:
    commit, dirty = build_provenance(Path(app.srcdir))
    repository = (config.html_theme_options or {}).get("repository_url", "")
    options = dict(config.html_theme_options or {})
    footer = footer_html(repository, commit, dirty, datetime.date.today())
    options["extra_footer"] = (options.get("extra_footer") or "") + footer
    if commit != "unknown" and not dirty:  # Binder and the source links open the commit the book was built from
        options["repository_branch"] = commit
    config.html_theme_options = options
    config.lorapriv_commit = commit
    # the repository's address, for pages to link to it: {{ repository }} and {{ readme }} (MyST substitutions)
    substitutions = dict(getattr(config, "myst_substitutions", None) or {})
    substitutions |= {"repository": f"<{repository}>", "readme": f"[README]({repository}#readme)"}
    config.myst_substitutions = substitutions


def setup(app: Sphinx) -> dict:
    app.add_config_value("lorapriv_commit", "unknown", "html")
    app.connect("config-inited", _set_footer)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
