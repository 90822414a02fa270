"""Small numeric helpers shared by the package: argument checks and reproducible rounding.

Numbers shown in notebooks and stored in the ledger are rounded to a fixed number of
significant digits, so that stored outputs do not depend on the last bits of a float
(which can differ between machines and BLAS builds).
"""

from __future__ import annotations

import math
import numbers
from html import escape

import pandas as pd

from .labels import readable

DISPLAY_DIGITS = 5
TABLE_DIGITS = 3  # the house style of the book's tables: three significant digits
# Quantities that are zero in exact arithmetic come out of float64 linear algebra at about 1e-16 times their
# scale, with digits that depend on the BLAS build and thread count; below this they are shown as 0.
ROUNDING_FLOOR = 1e-12


def round_sig(value: float, digits: int = DISPLAY_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (0, inf and nan pass through)."""
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        return value
    return float(f"{value:.{digits}g}")


def rounded_frame(frame: pd.DataFrame, digits: int = DISPLAY_DIGITS, floor: float = 0.0) -> pd.DataFrame:
    """A copy of ``frame`` whose float columns are rounded with :func:`round_sig`, values of magnitude below
    ``floor`` (rounding residue, e.g. :data:`ROUNDING_FLOOR`) set to 0."""

    def _round(v: float) -> float:
        return 0.0 if abs(v) < floor else round_sig(v, digits)

    return frame.apply(lambda col: col.map(_round) if col.dtype.kind == "f" else col)


def check_positive(name: str, value: float) -> float:
    """``value`` as a float if it is a finite number > 0; otherwise a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_order(name: str, value: int) -> int:
    """``value`` if it is an integer >= 0; otherwise a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def check_rank(r: int) -> int:
    """A projection's rank ``r`` if it is an integer >= 1; otherwise a ValueError that says so."""
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 1:
        raise ValueError(f"the rank r must be an integer >= 1, got {r!r}")
    return int(r)


def format_column(values, sig: int = TABLE_DIGITS, missing: str = "n/a") -> list[str]:
    """Floats as text with ``sig`` significant digits each, in one notation for the whole column.

    Fixed notation when every non-zero magnitude lies in [1e-4, 1e6), each value with the decimals its own ``sig``
    digits need (at most 6; a value of ``sig`` or more integer digits keeps them all, with no decimals), scientific
    notation otherwise: never ``9.97e-01`` beside ``20106000``.  Zero is ``0``; missing values (NaN) become
    ``missing``.
    """
    values = [float(v) for v in values]
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0.0]
    fixed = not finite or (min(finite) >= 1e-4 and max(finite) < 1e6)
    out = []
    for v in values:
        if math.isnan(v):
            out.append(missing)
        elif math.isinf(v):
            out.append("∞" if v > 0 else "-∞")
        elif not fixed:
            out.append(format(v, f".{sig - 1}e"))
        elif v == 0.0:
            out.append("0")
        else:
            decimals = min(6, max(0, sig - 1 - math.floor(math.log10(abs(v)))))
            text = format(v, f".{decimals}f")
            if decimals and len(text.lstrip("-").replace(".", "").lstrip("0")) > sig:  # 0.9996 -> 1.000: one fewer
                text = format(v, f".{decimals - 1}f")
            out.append(text)
    return out


ACRONYMS = frozenset({"auc", "ppl", "tpr", "fpr", "lr", "ci", "tv", "mc", "se", "sd", "kl", "dp", "rdp", "prv", "mse"})


# column names that words cannot spell out by splitting: the metric they abbreviate, in full
HEADERS = {
    "tpr1": "TPR at 1% FPR",
    "tpr001": "TPR at 0.01% FPR",
    "lira_auc": "offline LiRA AUC",
    "eq24_auc": "eq. 24 AUC",
    "lr_at_edge": "rate at grid edge",
    "base_ppl": "base model PPL",
    "diff": "difference",
}


def header(name) -> str:
    """A column name as a reader sees it: an abbreviation of :data:`HEADERS` in full, else snake_case split into
    words with known acronyms in capitals (``ppl_spread`` -> ``PPL spread``); a name that is already words, or a
    symbol (``r``, ``m``), is kept."""
    name = str(name)
    if name in HEADERS:
        return HEADERS[name]
    words = name.split("_")
    if len(words) == 1 and name.lower() not in ACRONYMS:
        return name
    return " ".join(w.upper() if w.lower() in ACRONYMS else w for w in words if w)


class Table:
    """A formatted table as a notebook page shows it: no 0..N row index (a meaningful index is the first column),
    readable headers, every float column in one format.  ``frame`` is the formatted DataFrame."""

    def __init__(self, frame: pd.DataFrame, caption: str | None = None) -> None:
        self.frame = frame
        self.caption = caption

    def _repr_html_(self) -> str:
        """The table in a figure: its caption above, outside the box in which a wide table scrolls (so that it is
        never cut), and, with a caption, an id to cite it by (:func:`table_id`)."""
        html = self.frame.to_html(index=False, border=0, classes="lorapriv-table")
        box = f'<div class="lorapriv-table-scroll">\n{html}\n</div>'
        if not self.caption:
            return f'<figure class="lorapriv-table">\n{box}\n</figure>'
        return (
            f'<figure class="lorapriv-table" id="{table_id(self.caption)}">\n'
            f"<figcaption>{escape(self.caption)}</figcaption>\n{box}\n</figure>"
        )

    def __repr__(self) -> str:
        text = self.frame.to_string(index=False)
        return f"{self.caption}\n{text}" if self.caption else text


def table_id(caption: str, words: int = 12) -> str:
    """A table's anchor, from the first ``words`` words of its caption: ``table-`` and their letters and digits,
    lower case, joined by hyphens ("Table 1 of paper A beside ..." -> ``table-table-1-of-paper-a-beside-...``).
    Captions on one page differ within their first words (the browser check fails a page with two equal ids)."""
    kept = ["".join(ch for ch in word.lower() if ch.isalnum()) for word in caption.split()[:words]]
    return "table-" + "-".join(word for word in kept if word)


def interval_columns(columns: list, name) -> tuple:
    """The columns holding ``name``'s interval: ``name_low`` and ``name_high``, or else the two columns right after
    it when their names end in "low" and "high" ("difference low", "95% high"); (None, None) when there are none."""
    if f"{name}_low" in columns and f"{name}_high" in columns:
        return f"{name}_low", f"{name}_high"
    at = columns.index(name)
    after = [str(c) for c in columns[at + 1 : at + 3]]
    owned = any(c.endswith(("_low", "_high")) and c.rsplit("_", 1)[0] in columns for c in after)  # another's interval
    if len(after) == 2 and after[0].endswith("low") and after[1].endswith("high") and not owned:
        return columns[at + 1], columns[at + 2]
    return None, None


def display_table(
    frame: pd.DataFrame, sig: int = TABLE_DIGITS, missing: str = "n/a", caption: str | None = None
) -> Table:
    """``frame`` for display (:class:`Table`): every float column formatted by :func:`format_column`, a column ``X``
    with ``X_low`` and ``X_high`` beside it shown as one cell with its interval, the headers made readable
    (:func:`header`), booleans, corpora and methods' variants by their names (:func:`lorapriv_utils.labels.readable`),
    a row index other than 0..N kept as the first column, and ``caption`` above it."""
    out = frame.copy()
    if not isinstance(out.index, pd.RangeIndex) or out.index.name is not None:
        out = out.reset_index()
    for name in list(out.columns):  # a value and its interval in one unbreakable cell: "0.910 [0.880, 0.932]"
        if name not in out:
            continue
        low, high = interval_columns(list(out.columns), name)
        if low and all(out[c].dtype.kind == "f" for c in (name, low, high)):
            n = len(out)
            texts = format_column([*out[name], *out[low], *out[high]], sig, missing)
            out[name] = [
                v if v == missing else f"{v}\u00a0[{lo},\u00a0{hi}]"  # no-break spaces: a narrow column wraps elsewhere
                for v, lo, hi in zip(texts[:n], texts[n : 2 * n], texts[2 * n :], strict=True)
            ]
            out = out.drop(columns=[low, high])
    for name in out.columns:
        if out[name].dtype.kind == "f":
            out[name] = format_column(out[name], sig, missing)
        elif out[name].dtype.kind in "bO":
            out[name] = out[name].map(readable)
    return Table(out.rename(columns=header), caption)


def quoted_numbers(prefix: str, values: dict[str, float], digits: int = 3) -> dict[str, float | int]:
    """Numbers a chapter quotes in its text, keyed ``<prefix>_<name>``: whole numbers kept exact,
    others rounded to ``digits`` significant digits (the same on every machine)."""
    out: dict[str, float | int] = {}
    for name, value in values.items():
        value = float(value)
        whole = math.isfinite(value) and value.is_integer() and abs(value) < 2**53
        out[f"{prefix}_{name}"] = int(value) if whole else round_sig(value, digits)
    return out


UNITS = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0}


def measured_times(prefix: str, groups: dict[str, tuple[str, ...]], unit: str = "minutes") -> dict[str, float | int]:
    """The run times a chapter quotes, keyed ``<prefix>_<name>_<unit>``: each group's catalogue entries or Make
    targets, summed over their records' own measured wall times (``catalogue.measured_seconds``), to two
    significant digits.  Never typed: a rerun that took longer changes the number."""
    from .catalogue import measured_seconds

    if unit not in UNITS:
        raise ValueError(f"unit: choose one of {', '.join(UNITS)}, got {unit!r}")
    values = {f"{name}_{unit}": measured_seconds(*names) / UNITS[unit] for name, names in groups.items()}
    return quoted_numbers(prefix, values, digits=2)
