"""Component states a hand-made client can send, from the page.

A browser's component state crosses a trust boundary: a student with the developer tools can
send any JSON as a matrix grid's edits, the mask grid's ticks or a chart's click and slider
events. Each malformed state must end in a clear message in the page (or be ignored with one),
never a traceback, must keep the scenario as it was, and must not make the server allocate
memory by a number it was sent. The grid's and the mask grid's states are seeded in session
state as the browser's would arrive (AppTest cannot type into them).
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from apptest_helpers import grid_state, grids, open_page
from streamlit.testing.v1 import AppTest

from attnviz.teach.text import common as text
from attnviz.ui import state
from attnviz.ui.plotly_view import MAX_POINTS, state_problem

HUGE_ROW = "99999999999999"  # numpy had tried to allocate 2 PiB for it


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


# ---------------------------------------------------------------------------------------------
# The matrix grid (attnviz.ui.grid, parsed by attnviz.ui.editors)
# ---------------------------------------------------------------------------------------------

GRID_PAYLOADS = [  # (name, state value, the reason the page names)
    ("row abc", grid_state({"abc": {"d0": "1"}}), "the row “abc” is not a whole number"),
    ("row 1.5", grid_state({"1.5": {"d0": "1"}}), "the row “1.5” is not a whole number"),
    ("row -1", grid_state({"-1": {"d0": "1"}}), "the row “-1” is not a whole number"),
    ("huge row", grid_state({HUGE_ROW: {"d0": "1"}}),
     f"row {HUGE_ROW} is outside the matrix (rows 0 to 3)"),
    ("list cell", grid_state({"0": {"d0": [1, 2]}}),
     "the cell in row 0, column 0 must be text or a number"),
    ("object cell", grid_state({"0": {"d0": {"a": 1}}}),
     "the cell in row 0, column 0 must be text or a number"),
    ("bool cell", grid_state({"0": {"d0": True}}),
     "the cell in row 0, column 0 must be text or a number"),
    ("row list", grid_state({"0": ["1"]}), "row 0 must be an object"),
    ("edited_rows list", grid_state([{"d0": "1"}]), "edited_rows must be an object of rows"),
    ("edited_rows text", grid_state("x"), "edited_rows must be an object of rows"),
    ("edits list", {"edits": [1, 2]}, "the grid's edits must be an object of rows"),
]


@pytest.fixture
def playground():
    return open_page("playground")


def grid_key(at: AppTest) -> str:
    return f"playground_x_v{at.session_state[state.EDITOR_VERSION]}"


def test_every_malformed_grid_state_is_named_in_the_page(playground):
    """One page, every payload in turn (each followed by a good edit that must be taken)."""
    at = playground
    for name, value, reason in GRID_PAYLOADS:
        before = at.session_state[state.SCENARIO].x.copy()
        at.session_state[grid_key(at)] = value
        ok(at.run())
        shown = [e for e in errors(at) if reason in e and "attnviz cannot use" in e]
        assert shown, (name, errors(at))
        np.testing.assert_array_equal(at.session_state[state.SCENARIO].x, before, err_msg=name)
        # the next good edit is taken
        at.session_state[grid_key(at)] = grid_state({"1": {"d0": f"0.{len(name)}"}})
        ok(at.run())
        assert at.session_state[state.SCENARIO].x[1, 0] == float(f"0.{len(name)}"), name
        assert not [e for e in errors(at) if "attnviz cannot use" in e], name


def test_a_10_mb_cell_is_refused_and_cut_before_it_goes_back_to_the_browser(playground):
    at = playground
    huge = "1" * 10_000_000
    at.session_state[grid_key(at)] = grid_state({"0": {"d0": huge}})
    ok(at.run())
    warnings = [w.value for w in at.warning]
    assert any("is empty or not a finite number" in w and "1" * 24 + "…" in w
               for w in warnings), warnings
    # what the grid is sent to draw from is cut (it was the whole 10 MB on every rerun)
    sent = json.loads(grids(at)[0].proto.json)["edits"]
    assert len(sent["0"]["d0"]) == 65
    at.session_state[grid_key(at)] = grid_state({})
    ok(at.run())


@pytest.mark.parametrize("typed", ["١٢", "１", "１.５"])
def test_digits_of_other_scripts_are_refused_with_a_message_saying_so(playground, typed):
    at = playground
    before = at.session_state[state.SCENARIO].x[0, 0]
    at.session_state[grid_key(at)] = grid_state({"0": {"d0": typed}})
    ok(at.run())
    warnings = [w.value for w in at.warning]
    assert any(text.EDITOR_FOREIGN_DIGITS in w for w in warnings), warnings
    assert at.session_state[state.SCENARIO].x[0, 0] == before
    at.session_state[grid_key(at)] = grid_state({"0": {"d0": "12"}})
    ok(at.run())
    assert at.session_state[state.SCENARIO].x[0, 0] == 12.0
    assert not any(text.EDITOR_FOREIGN_DIGITS in w.value for w in at.warning)
    at.session_state[grid_key(at)] = grid_state({})
    ok(at.run())


def test_bidi_controls_are_taken_out_of_typed_tokens(playground):
    at = playground
    at.text_input(key="playground_tokens").set_value("the \u202ecat sat on").run()
    ok(at)
    assert at.session_state[state.SCENARIO].tokens == ("the", "cat", "sat", "on")


# ---------------------------------------------------------------------------------------------
# The mask grid (st.data_editor, attnviz.ui.mask_editor)
# ---------------------------------------------------------------------------------------------

def table(edited=None, added=(), deleted=()):
    return {"edited_rows": {} if edited is None else edited, "added_rows": list(added),
            "deleted_rows": list(deleted)}


MASK_PAYLOADS = [
    ("row abc", table({"abc": {"1:word_2": False}}), "the row “abc” is not a whole number"),
    ("row 1.5", table({"1.5": {"1:word_2": False}}), "the row “1.5” is not a whole number"),
    ("huge row", table({HUGE_ROW: {"1:word_2": False}}),
     f"row {HUGE_ROW} is outside the matrix (rows 0 to 3)"),
    ("list tick", table({"0": {"1:word_2": [True]}}), "the tick box in row 0, column 1"),
    ("object tick", table({"0": {"1:word_2": {"a": 1}}}), "the tick box in row 0, column 1"),
    ("edited_rows list", table([1]), "edited_rows must be an object of rows"),
    ("deleted rows", table(deleted=[99999]), text.MASK_ROWS_FIXED),
    ("added rows", table(added=[{"1:word_2": True}] * 3), text.MASK_ROWS_FIXED),
    ("not an object", [1, 2], "the grid's edits must be an object of rows"),
    ("text", "abc", "the grid's edits must be an object of rows"),
]


@pytest.fixture
def masks():
    at = open_page("masks")
    at.radio(key="masks_kind").set_value("causal").run()
    at.radio(key="masks_kind").set_value("custom").run()
    return ok(at)


def mask_key(at: AppTest) -> str:
    resets = at.session_state["_mask_editor_resets"]["masks_custom"] \
        if "_mask_editor_resets" in at.session_state else 0
    return f"masks_custom_v{at.session_state[state.EDITOR_VERSION]}" + \
        (f"_r{resets}" if resets else "")


def test_every_malformed_mask_state_is_named_in_the_page(masks):
    at = masks
    for name, value, reason in MASK_PAYLOADS:
        before = at.session_state[state.SCENARIO].custom_mask.copy()
        at.session_state[mask_key(at)] = value
        ok(at.run())
        assert [e for e in errors(at) if reason in e], (name, errors(at))
        np.testing.assert_array_equal(at.session_state[state.SCENARIO].custom_mask, before,
                                      err_msg=name)
        # the grid starts again under a fresh key, and takes the next tick
        tick = not before[0, 3]
        at.session_state[mask_key(at)] = table({0: {"3:word_4": tick}})
        ok(at.run())
        assert at.session_state[state.SCENARIO].custom_mask[0, 3] == tick, name
        assert not errors(at), name


# ---------------------------------------------------------------------------------------------
# The chart component's events (attnviz.ui.plotly_view)
# ---------------------------------------------------------------------------------------------

FIG = go.Figure([go.Heatmap(z=[[1, 2], [3, 4]]), go.Scatter(x=[0, 1, 0, 1], y=[0, 0, 1, 1])])
FRAMES = [{"name": "0.5"}, {"name": "1"}]


def point(curve, index):
    return {"selection": {"points": [{"curve_number": curve, "point_index": index}]}}


@pytest.mark.parametrize("value", [
    None, {}, point(1, 3), {"slider": "1"}, {"selection": {"points": []}}, {"other": 1},
])
def test_chart_states_a_page_sends_are_used(value):
    assert state_problem(value, FIG, FRAMES) == ""


@pytest.mark.parametrize("value, reason", [
    ([1], text.CHART_STATE_NOT_OBJECT), ("x", text.CHART_STATE_NOT_OBJECT),
    ({"selection": [1]}, "a selection must be an object"),
    ({"selection": {"points": {"a": 1}}}, "a selection must be an object"),
    ({"selection": {"points": [{}] * (MAX_POINTS + 1)}}, "a selection must be an object"),
    ({"selection": {"points": ["x"]}}, text.CHART_STATE_BAD_POINT),
    (point(1, 4), text.CHART_STATE_BAD_POINT), (point(2, 0), text.CHART_STATE_BAD_POINT),
    (point(1, -1), text.CHART_STATE_BAD_POINT), (point(1, "1"), text.CHART_STATE_BAD_POINT),
    (point(1, 1.5), text.CHART_STATE_BAD_POINT), (point(True, 0), text.CHART_STATE_BAD_POINT),
    (point(1, 10**400), text.CHART_STATE_BAD_POINT), (point(None, 0), text.CHART_STATE_BAD_POINT),
    ({"slider": "1e400"}, text.CHART_STATE_BAD_SLIDER), ({"slider": "nan"},
                                                        text.CHART_STATE_BAD_SLIDER),
    ({"slider": ["1"]}, text.CHART_STATE_BAD_SLIDER), ({"slider": 1}, text.CHART_STATE_BAD_SLIDER),
    ({"slider": "x" * 10**6}, text.CHART_STATE_BAD_SLIDER),
])
def test_malformed_chart_states_are_refused(value, reason):
    assert reason in state_problem(value, FIG, FRAMES)


def _chart_script():
    import plotly.graph_objects as go
    import streamlit as st

    from attnviz.ui.plotly_view import _if_valid, plotly_view

    fig = go.Figure([go.Heatmap(z=[[1, 2], [3, 4]])])
    frames = [{"name": "0.5", "data": []}, {"name": "1", "data": []}]

    def landed():
        st.session_state["landed"] = st.session_state["chart"]["slider"]

    _if_valid("chart", fig, frames, landed)  # what the component's on_slider_change runs
    plotly_view(fig, key="chart", config={}, frames=frames, on_slider=landed)


@pytest.mark.parametrize("slider, landed", [("1", "1"), ("1e400", None), (["1"], None)])
def test_a_chart_event_runs_its_callback_only_when_valid(slider, landed):
    at = AppTest.from_function(_chart_script)
    at.session_state["chart"] = {"slider": slider}
    ok(at.run())
    assert at.session_state["landed"] == landed if landed else "landed" not in at.session_state
    shown = [w.value for w in at.warning]
    if landed:
        assert not shown
    else:
        assert shown == [text.CHART_STATE_REFUSED.format(reason=text.CHART_STATE_BAD_SLIDER)]


class _Unparsable(dict):
    """Session state whose widget value Streamlit cannot parse (``in`` parses it, too)."""

    def __contains__(self, key):
        raise ValueError("invalid literal for int() with base 10: 'abc'")

    __getitem__ = __contains__


def test_a_mask_state_streamlit_cannot_parse_is_a_problem_not_a_traceback(monkeypatch):
    """Over the wire Streamlit parses the data editor's JSON when the state is read (AppTest
    hands the value over as it is, so this path is reached only with a hand-made client)."""
    from types import SimpleNamespace

    from attnviz.ui import mask_editor

    monkeypatch.setattr(mask_editor, "st", SimpleNamespace(session_state=_Unparsable()))
    assert mask_editor._state_problem("masks_custom_v0", 4, ["a"]) == text.MASK_STATE_UNREADABLE
