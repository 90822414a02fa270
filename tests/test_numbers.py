import math

import numpy as np
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


def test_rounded_frame_floor_zeroes_rounding_residue_only():
    frame = pd.DataFrame({"x": [4.8e-18, -3e-16, 2.5e-9, 0.0]})
    out = numbers.rounded_frame(frame, digits=3, floor=numbers.ROUNDING_FLOOR)
    assert list(out["x"]) == [0.0, 0.0, 2.5e-9, 0.0]
    assert list(numbers.rounded_frame(frame, digits=2)["x"]) == [4.8e-18, -3e-16, 2.5e-9, 0.0]


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


def test_format_column_keeps_one_notation_per_column():
    assert numbers.format_column([0.99654, 20106000.0]) == ["9.97e-01", "2.01e+07"]
    assert numbers.format_column([0.99654, 20106000.0], sig=4) == ["9.965e-01", "2.011e+07"]
    assert numbers.format_column([float("nan"), 1e-7, float("inf")]) == ["n/a", "1.00e-07", "∞"]
    assert numbers.format_column([]) == []


def test_format_column_shows_three_significant_digits_per_value():
    # the house style: three significant digits in every cell, never digits the smallest value of the column needs
    assert numbers.format_column([0.0501, 8.51, 0.0]) == ["0.0501", "8.51", "0"]
    assert numbers.format_column([0.2376, 0.00546, 105.34, 2966.4]) == ["0.238", "0.00546", "105", "2966"]
    assert numbers.format_column([2.0, -0.0376]) == ["2.00", "-0.0376"]
    assert numbers.format_column([0.9996, 9.9996]) == ["1.00", "10.0"]  # rounding up adds no digit
    assert numbers.format_column([-0.262, 0.000932]) == ["-0.262", "0.000932"]  # fixed down to 1e-4


def test_display_table_formats_floats_and_names_labels():
    import pandas as pd

    frame = pd.DataFrame({"r": [1, 64], "tv": [0.2376, 0.00546], "ok": [True, False], "corpus": ["ptb", "enron"]})
    shown = numbers.display_table(frame, sig=3).frame
    assert list(shown["r"]) == [1, 64] and list(shown["ok"]) == ["yes", "no"]
    assert list(shown["corpus"]) == ["Penn Treebank", "Enron"]
    assert list(shown["TV"]) == ["0.238", "0.00546"]
    assert frame["tv"].dtype.kind == "f"  # the input is left alone


def test_a_displayed_table_has_no_row_index_and_readable_headers():
    import pandas as pd

    table = numbers.display_table(pd.DataFrame({"lira_auc": [0.5, 0.75], "ppl": [10.0, 20.0], "method": ["a", "b"]}))
    html = table._repr_html_()
    assert "<th>offline LiRA AUC</th>" in html and "<th>PPL</th>" in html and "<th>method</th>" in html
    assert "<tbody>\n    <tr>\n      <td>" in html  # every row starts with a data cell: no index header cell
    assert repr(table).splitlines()[0].split() == ["offline", "LiRA", "AUC", "PPL", "method"]
    assert [numbers.header(n) for n in ("tpr1", "ppl_spread", "diff", "r")] == [
        "TPR at 1% FPR",
        "PPL spread",
        "difference",
        "r",
    ]
    ci = pd.DataFrame({"auc": [0.91, float("nan")], "auc_low": [0.88, 0.1], "auc_high": [0.932, 0.2]})
    unbroken = "0.910\u00a0[0.880,\u00a00.932]"  # one cell, with no-break spaces
    assert list(numbers.display_table(ci, sig=3).frame["AUC"]) == [unbroken, "n/a"]
    after = pd.DataFrame({"AUC - full": [-0.2], "difference low": [-0.25], "difference high": [-0.15], "n": [2]})
    assert list(numbers.display_table(after).frame.columns) == ["AUC - full", "n"]  # the two columns after a value
    assert numbers.display_table(after).frame["AUC - full"][0] == "-0.200\u00a0[-0.250,\u00a0-0.150]"
    other = pd.DataFrame({"x": [1.0], "y_low": [0.5], "y_high": [2.0], "y": [1.5]})
    assert list(numbers.display_table(other).frame.columns) == ["x", "y"]  # y's interval is y's, not x's
    indexed = numbers.display_table(pd.DataFrame({"x": [1.0]}, index=pd.Index(["row"], name="case")))
    assert list(indexed.frame.columns) == ["case", "x"]  # a meaningful index is kept, as a column
    assert numbers.header("ratio_to_8r") == "ratio to 8r" and numbers.header("m") == "m"
    captioned = numbers.display_table(pd.DataFrame({"x": [1.0]}), caption="Table 2 <of> one row")
    html = captioned._repr_html_()
    # the caption above the table, outside the box in which a wide table scrolls, and an id to cite it by
    assert html.startswith('<figure class="lorapriv-table" id="table-table-2-of-one-row">\n<figcaption>Table 2 &lt;of')
    assert html.index("</figcaption>") < html.index('<div class="lorapriv-table-scroll">') < html.index("<table")
    assert numbers.table_id("Eq. 24's AUC, r = 8: (mean) over seeds 0-1 and all the texts", words=8) == (
        "table-eq-24s-auc-r-8-mean-over"  # "=" has no letter or digit: it counts, and is left out
    )
    plain = numbers.display_table(pd.DataFrame({"x": [1.0]}))._repr_html_()
    assert "<figcaption>" not in plain and " id=" not in plain.split("<table")[0]
    assert repr(captioned).splitlines()[0] == "Table 2 <of> one row"


def test_quoted_numbers_keep_whole_numbers_and_round_the_rest():
    quoted = numbers.quoted_numbers("a9_x", {"m": 4096.0, "tv": 0.237612, "k": 3})
    assert quoted == {"a9_x_m": 4096, "a9_x_tv": 0.238, "a9_x_k": 3}
    assert isinstance(quoted["a9_x_m"], int)


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "8", None])
def test_check_rank(bad):
    with pytest.raises(ValueError, match="the rank r must be an integer >= 1"):
        numbers.check_rank(bad)
    assert numbers.check_rank(8) == 8 and numbers.check_rank(np.int64(3)) == 3


def test_measured_times_come_from_the_records(monkeypatch):
    from lorapriv_utils import catalogue
    from lorapriv_utils.numbers import measured_times

    seconds = {("whitebox",): 3725.0, ("alignment", "results-b3"): 30.0}
    monkeypatch.setattr(catalogue, "measured_seconds", lambda *names: seconds[names])
    quoted = measured_times("b2", {"game": ("whitebox",), "both": ("alignment", "results-b3")})
    assert quoted == {"b2_game_minutes": 62.0, "b2_both_minutes": 0.5}  # two significant digits
    assert measured_times("b2", {"game": ("whitebox",)}, unit="hours") == {"b2_game_hours": 1.0}
    with pytest.raises(ValueError, match="unit: choose one of seconds, minutes, hours"):
        measured_times("b2", {}, unit="days")
