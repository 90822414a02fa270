"""An author-year bibliography style, so that the bibliography's labels match the author-year
citations in the text (pybtex's built-in label styles are numbers or alpha codes only)
(Sphinx extension; registers the pybtex style ``author_year``).
"""

from __future__ import annotations

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.application import Sphinx


def label_for(entry) -> str:
    """'Surname Year', 'Surname and Other Year' or 'Surname et al. Year' (organisation names kept whole)."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [" ".join(p.last_names) or " ".join(p.first_names) for p in people]
    names = [n.strip("{}") for n in names]
    if not names:
        names = [entry.fields.get("title", entry.key)[:20]]
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who} {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        seen: dict[str, int] = {}
        for entry in sorted_entries:
            label = label_for(entry)
            seen[label] = seen.get(label, 0) + 1
            yield label if seen[label] == 1 else f"{label}{chr(ord('a') + seen[label] - 1)}"


class AuthorYearStyle(UnsrtStyle):
    default_label_style = "author_year"
    default_sorting_style = "author_year_title"


def setup(app: Sphinx) -> dict:
    register_plugin("pybtex.style.labels", "author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
