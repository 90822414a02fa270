import math

import pandas as pd
import pytest

from lorapriv_utils import numbers


def test_round_sig():
    assert numbers.round_sig(123456.789) == 123460.0
    assert numbers.round_sig(0.000123456789, 3) == 0.000123
    assert numbers.round_sig(0.0) == 0.0
    assert math.isnan(numbers.round_sig(float("nan")))
    assert numbers.round_sig(float("inf")) == float("inf")


def test_rounded_frame_rounds_only_float_columns():
    frame = pd.DataFrame({"k": [1, 2], "x": [1 / 3, 2 / 3], "name": ["a", "b"]})
    out = numbers.rounded_frame(frame, digits=3)
    assert list(out["x"]) == [0.333, 0.667] and list(out["k"]) == [1, 2] and list(out["name"]) == ["a", "b"]


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "3"])
def test_check_positive(bad):
    with pytest.raises(ValueError, match="width must be a finite number > 0"):
        numbers.check_positive("width", bad)
    assert numbers.check_positive("width", 2) == 2.0


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_check_order(bad):
    with pytest.raises(ValueError, match="order must be an integer >= 0"):
        numbers.check_order("order", bad)
    assert numbers.check_order("order", 0) == 0
