"""Unit tests of the matrix editors' cell parsing (what a person types into a grid cell)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.ui.editors import _apply, cell_text, foreign_digits, parse_cell
from attnviz.ui.grid import MAX_CELL_CHARS, read_edits


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


def apply(delta, base, previous, columns):
    """read_edits then _apply, as the editor runs them: (values, bad cells, problem)."""
    edits = read_edits(delta, base.shape[0], columns)
    if edits.problem:
        return None, [], edits.problem
    values, bad = _apply(edits, base, previous)
    return values, bad, ""


def test_apply_keeps_previous_values_for_bad_cells_and_names_them():
    base = np.zeros((2, 2))
    previous = np.array([[1.0, 2.0], [3.0, 4.0]])
    delta = {"edited_rows": {0: {"d0": "1e-3", "d1": "1,5"}, "1": {"d1": "1.2.3"},
                             1: {"_index": "x"}}}
    values, bad, problem = apply(delta, base, previous, ["d0", "d1"])
    assert not problem and bad == [(0, 1), (1, 1)]
    np.testing.assert_array_equal(values, [[1e-3, 2.0], [0.0, 4.0]])


def test_apply_refuses_a_row_outside_the_matrix():
    _, _, problem = apply({"edited_rows": {5: {"d0": "1"}}}, np.zeros((2, 1)),
                          np.zeros((2, 1)), ["d0"])
    assert problem == "row 5 is outside the matrix (rows 0 to 1)"


# States a hand-made client can send: each a message, never a traceback.
@pytest.mark.parametrize("state, problem", [
    ({"edited_rows": {"abc": {"d0": "1"}}}, "the row “abc” is not a whole number from 0 up"),
    ({"edited_rows": {"1.5": {"d0": "1"}}}, "the row “1.5” is not a whole number from 0 up"),
    ({"edited_rows": {"-1": {"d0": "1"}}}, "the row “-1” is not a whole number from 0 up"),
    ({"edited_rows": {"01": {"d0": "1"}}}, "the row “01” is not a whole number from 0 up"),
    ({"edited_rows": {"１": {"d0": "1"}}}, "the row “?” is not a whole number from 0 up"),
    ({"edited_rows": {"99999999999999": {"d0": "1"}}},
     "row 99999999999999 is outside the matrix (rows 0 to 2)"),
    ({"edited_rows": {"9" * 5000: {"d0": "1"}}},
     "row 99999999999999999999… is outside the matrix (rows 0 to 2)"),
    ({"edited_rows": {"999999999": {"d0": "1"}}},
     "row 999999999 is outside the matrix (rows 0 to 2)"),
    ({"edited_rows": {99999999999999: {"d0": "1"}}},
     "row 99999999999999 is outside the matrix (rows 0 to 2)"),
    ({"edited_rows": {"0": {"d0": [1, 2]}}},
     "the cell in row 0, column 0 must be text or a number"),
    ({"edited_rows": {"0": {"d0": {"a": 1}}}},
     "the cell in row 0, column 0 must be text or a number"),
    ({"edited_rows": {"0": {"d0": True}}}, "the cell in row 0, column 0 must be text or a number"),
    ({"edited_rows": {"0": ["1"]}}, "row 0 must be an object of at most one value per column"),
    ({"edited_rows": {"0": "1"}}, "row 0 must be an object of at most one value per column"),
    ({"edited_rows": {"0": {f"c{i}": "1" for i in range(10)}}},
     "row 0 must be an object of at most one value per column"),
    ({"edited_rows": [{"d0": "1"}]}, "edited_rows must be an object of rows"),
    ({"edited_rows": "x"}, "edited_rows must be an object of rows"),
    ({"edited_rows": {str(i): {} for i in range(4)}}, "row 3 is outside the matrix (rows 0 to 2)"),
    ([1, 2], "the grid's edits must be an object of rows"),
    ("edits", "the grid's edits must be an object of rows"),
])
def test_malformed_grid_states_are_refused_as_a_whole(state, problem):
    values, bad, got = apply(state, np.zeros((3, 2)), np.zeros((3, 2)), ["d0", "d1"])
    assert got == problem and values is None and bad == []


@pytest.mark.parametrize("state", [None, {}, {"edited_rows": None}, {"edited_rows": {}},
                                   {"edited_rows": {"0": None}}, {"other": 1}])
def test_empty_states_are_no_edits(state):
    edits = read_edits(state, 3, ["d0"])
    assert edits.cells == () and not edits.problem


def test_a_huge_cell_is_cut_before_it_is_kept_or_parsed():
    huge = "1" * 10_000_000  # the 10 MB cell
    edits = read_edits({"edited_rows": {"0": {"d0": huge}}}, 1, ["d0"])
    (_, _, raw), = edits.cells
    assert len(raw) == MAX_CELL_CHARS + 1
    assert parse_cell(raw) is None and parse_cell(huge) is None
    assert edits.as_state(["d0"]) == {"0": {"d0": raw}}  # what a grid drawn again is sent


@pytest.mark.parametrize("raw", ["١٢", "１", "１.５", "۳", "१२", "1٢", "𝟏"])
def test_digits_of_other_scripts_are_refused_and_recognised(raw):
    assert float(raw.replace("𝟏", "1")) > 0  # Python's float reads them (𝟏 aside)
    assert parse_cell(raw) is None
    assert foreign_digits(raw)


@pytest.mark.parametrize("raw", ["12", "abc", "1,5", 12.0, None])
def test_ascii_text_has_no_foreign_digits(raw):
    assert not foreign_digits(raw)


def test_a_whole_number_beyond_float_range_is_refused():
    assert parse_cell(10**400) is None


def _edit_then_switch(preset: str, editor: str, field: str, row_labels, col_labels, edit):
    """Draw one page's editor for ``field``, then run what the editor's change callback runs when
    the edit arrives together with a page switch (the new page never draws the editor)."""
    from streamlit.testing.v1 import AppTest

    def script(preset, editor, field, row_labels, col_labels, edit):
        import numpy as np
        import streamlit as st

        from attnviz.ui import editors, state

        if "drawn" not in st.session_state:
            state.load_preset(preset)
            value = np.atleast_2d(getattr(state.get_scenario(), field))
            editors.matrix_editor(field, value, key=editor, row_labels=row_labels,
                                  col_labels=col_labels, field=field)
            st.session_state["drawn"] = True
        else:  # the page-switch run: only the callback sees the edit
            widget_key = f"{editor}_v{state.editor_version()}"
            st.session_state[widget_key] = {"edits": {"edited_rows": edit}}
            editors._write_edit(widget_key, field, tuple(col_labels))

    at = AppTest.from_function(script, args=(preset, editor, field, row_labels, col_labels,
                                              edit)).run()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at.session_state["scenario"]


@pytest.mark.parametrize("preset, field, rows, cols, edit, where", [
    ("bahdanau", "w_a_q", ["d0", "d1", "d2"], None, {1: {"a2": "-1.5"}}, (1, 2)),
    ("bahdanau", "v_a", ["v_a"], None, {0: {"a0": "3"}}, (0,)),
    ("seed_004_two_heads", "pool_b", ["b"], None, {0: {"c3": "-2"}}, (3,)),
    ("seed_004_two_heads", "head_mix", ["w_h"], None, {0: {"c1": "0.5"}}, (1,)),
])
def test_the_change_callback_writes_vectors_and_matrices_in_their_own_shape(
        preset, field, rows, cols, edit, where):
    """Encoder–decoder's additive and pooling editors and Multi-head's head mix pass ``field=``
    (without it, an edit followed at once by a page switch is lost there)."""
    from attnviz.scenarios.presets import PRESETS

    before = np.asarray(getattr(PRESETS[preset].build(), field), dtype=float)
    width = np.atleast_2d(before).shape[1]
    prefix = "a" if field in ("w_a_q", "v_a") else "c"
    cols = [f"{prefix}{j}" for j in range(width)]
    rows = rows if len(rows) == np.atleast_2d(before).shape[0] else \
        [f"r{i}" for i in range(np.atleast_2d(before).shape[0])]
    after = getattr(_edit_then_switch(preset, "page_" + field, field, rows, cols, edit), field)
    value = float(next(iter(next(iter(edit.values())).values())))
    expected = before.copy()
    expected[where] = value
    assert after.shape == before.shape
    np.testing.assert_array_equal(after, expected)


@pytest.mark.parametrize("page, editor", [
    ("pages/encoder_decoder.py", "encoder_decoder_{name}"),
    ("pages/encoder_decoder.py", "encoder_decoder_pool_w"),
    ("pages/encoder_decoder.py", "encoder_decoder_pool_b"),
    ("attnviz/ui/multi_head_view.py", "{prefix}_head_mix_{n}"),
])
def test_these_editors_pass_their_scenario_field(page, editor):
    """The editors above hand their field to matrix_editor (read from the source: AppTest cannot
    deliver a grid edit and a page switch in one message, as a browser does)."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).parents[2] / page).read_text(encoding="utf-8"))
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
             and getattr(c.func, "id", None) == "matrix_editor"
             and any(k.arg == "key" and editor.split("{")[0] in ast.unparse(k.value)
                     for k in c.keywords)]
    assert calls and all(any(k.arg == "field" for k in c.keywords) for c in calls)


def _editor_app():
    """An app with one field-less 2×2 editor (its caller keeps nothing: the editor alone must
    hold the accepted edits); the returned values go to ``st.session_state["got"]``."""
    from streamlit.testing.v1 import AppTest

    def script():
        import numpy as np
        import streamlit as st

        from attnviz.ui import editors

        st.session_state["got"] = editors.matrix_editor(
            "X", np.array([[1.0, 2.0], [3.0, 4.0]]), key="ed", row_labels=["a", "b"],
            col_labels=["c0", "c1"])

    return AppTest.from_function(script).run()


def _type(at, widget_key: str, edits: dict):
    at.session_state[widget_key] = {"edits": {"edited_rows": edits}}
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_refused_cell_is_quoted_with_the_value_the_charts_use_instead():
    """The grid keeps showing what was typed (for the person to correct; restarting the grid
    raced with the next keys typed); the warning quotes it and gives the kept value, and the
    other edit of the same run is applied."""
    at = _type(_editor_app(), "ed_v0", {0: {"c0": "5", "c1": "abc"}})
    np.testing.assert_array_equal(at.session_state["got"], [[5.0, 2.0], [3.0, 4.0]])
    (message,) = [w.value for w in at.warning]
    assert "(a, c1) typed as “abc” (kept: 2\\.0)" in message, message
    assert "previous value is kept" in message and "every chart uses it" in message
    at = _type(at, "ed_v0", {0: {"c0": "5", "c1": "7"}})  # corrected: the message goes
    assert not at.warning
    np.testing.assert_array_equal(at.session_state["got"], [[5.0, 7.0], [3.0, 4.0]])


@pytest.mark.parametrize("typed, shown", [
    ("", "left empty"), ("   ", "left empty"), ("\ud800x", "typed as “\\?x”"),
    ("abcdefgh" * 5, "typed as “" + "abcdefgh" * 3 + "…”"),
    ("**b** <i>", "typed as “\\*\\*b\\*\\* \\<i\\>”"),
])
def test_a_refused_cells_text_is_quoted_safely(typed, shown):
    """Empty, a lone surrogate (which no page can send), long text, Markdown and HTML."""
    at = _type(_editor_app(), "ed_v0", {1: {"c1": typed}})
    (message,) = [w.value for w in at.warning]
    assert f"(b, c1) {shown} (kept: 4\\.0)" in message, message
    np.testing.assert_array_equal(at.session_state["got"], [[1.0, 2.0], [3.0, 4.0]])
