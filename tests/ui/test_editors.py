"""Unit tests of the matrix editors' cell parsing (what a person types into a grid cell)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.ui.editors import _apply, cell_text, parse_cell


@pytest.mark.parametrize("raw, value", [
    ("1e-3", 1e-3), ("2.5e2", 250.0), ("2.5E+2", 250.0), ("-0", -0.0), ("+3", 3.0),
    (".5", 0.5), ("5.", 5.0), ("  7.25 ", 7.25), ("\u22122", -2.0), ("1e308", 1e308),
    (0.5, 0.5), (3, 3.0), (np.float32(0.25), 0.25),
])
def test_numbers_mean_what_was_typed(raw, value):
    got = parse_cell(raw)
    assert got == value and math.copysign(1.0, got) == math.copysign(1.0, value)


@pytest.mark.parametrize("raw", [
    "1,5", "1.2.3", "1e400", "-1e400", "inf", "-inf", "nan", "NaN", "infinity", "", "   ",
    "abc", "1e", "e3", "--1", "1_000", "0x10", "1 2", "½", None, float("nan"), float("inf"),
    True,
])
def test_anything_else_is_refused(raw):
    assert parse_cell(raw) is None


@pytest.mark.parametrize("value", [0.1, -0.0, 1e-300, 1.7976931348623157e308, 1 / 3, -2.5e-7])
def test_a_cell_shows_text_that_reads_back_exactly(value):
    back = parse_cell(cell_text(value))
    assert back == value and math.copysign(1.0, back) == math.copysign(1.0, value)


def test_apply_keeps_previous_values_for_bad_cells_and_names_them():
    base = np.zeros((2, 2))
    previous = np.array([[1.0, 2.0], [3.0, 4.0]])
    delta = {"edited_rows": {0: {"d0": "1e-3", "d1": "1,5"}, "1": {"d1": "1.2.3"},
                             1: {"_index": "x"}}}
    values, bad, ok = _apply(delta, base, previous, ["d0", "d1"])
    assert ok and bad == [(0, 1), (1, 1)]
    np.testing.assert_array_equal(values, [[1e-3, 2.0], [0.0, 4.0]])


def test_apply_refuses_a_row_outside_the_matrix():
    _, _, ok = _apply({"edited_rows": {5: {"d0": "1"}}}, np.zeros((2, 1)), np.zeros((2, 1)),
                      ["d0"])
    assert not ok
