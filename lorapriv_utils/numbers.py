"""Small numeric helpers shared by the package: argument checks and reproducible rounding.

Numbers shown in notebooks and stored in the ledger are rounded to a fixed number of
significant digits, so that stored outputs do not depend on the last bits of a float
(which can differ between machines and BLAS builds).
"""

from __future__ import annotations

import math
import numbers

import pandas as pd

DISPLAY_DIGITS = 5


def round_sig(value: float, digits: int = DISPLAY_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (0, inf and nan pass through)."""
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        return value
    return float(f"{value:.{digits}g}")


def rounded_frame(frame: pd.DataFrame, digits: int = DISPLAY_DIGITS) -> pd.DataFrame:
    """A copy of ``frame`` whose float columns are rounded with :func:`round_sig`."""
    return frame.apply(lambda col: col.map(lambda v: round_sig(v, digits)) if col.dtype.kind == "f" else col)


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
