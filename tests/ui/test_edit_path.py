"""One edit path: a cell edit is parsed and applied once, by the grid's
change callback, which writes the scenario; the editor's run only draws what the scenario
holds. The calls to the one apply function (``editors._apply``) are counted per rerun.

AppTest cannot deliver a component's change event, so the browser's order is played by the
test script: on the run of an edit it sets the grid's state and calls the editor's change
callback before drawing, as Streamlit does before the script runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import grid_state, open_page
from streamlit.testing.v1 import AppTest

from attnviz.scenarios.presets import default_scenario
from attnviz.ui import editors, state


@pytest.fixture
def applies(monkeypatch) -> list[int]:
    """Count the calls to ``editors._apply`` (the AppTest scripts run in this process)."""
    calls: list[int] = []
    real = editors._apply

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(editors, "_apply", counted)
    return calls


def _script():
    """X's editor on the default scenario; ``st.session_state["send"]`` (a grid state) is
    delivered through the change callback before the editor is drawn, as a browser's edit."""
    import streamlit as st

    from attnviz.ui import editors, state

    scenario = state.get_scenario()
    widget_key = f"x_v{state.editor_version()}"
    cols = tuple(f"d{j}" for j in range(scenario.x.shape[1]))
    sent = st.session_state.pop("send", None)
    if sent is not None:  # the browser's edit: the callback runs first
        st.session_state[widget_key] = sent
        editors._write_edit(widget_key, "x", cols)
        scenario = state.get_scenario()  # the page reads the scenario after the callback
    st.session_state["page_saw"] = scenario.x.copy()
    st.session_state["got"] = editors.matrix_editor(
        "X", scenario.x, key="x", row_labels=[str(i) for i in range(scenario.t)],
        col_labels=cols, field="x")


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_browser_edit_is_applied_once_by_the_callback_and_only_drawn_by_the_run(applies):
    at = _run(AppTest.from_function(_script))
    assert applies == []  # drawing an editor applies nothing
    at.session_state["send"] = grid_state({"1": {"d0": "0.25"}})
    _run(at)
    assert len(applies) == 1
    x = at.session_state[state.SCENARIO].x
    assert x[1, 0] == 0.25
    # the page and the editor read the same scenario, which already holds the edit
    np.testing.assert_array_equal(at.session_state["page_saw"], x)
    np.testing.assert_array_equal(at.session_state["got"], x)
    _run(at)  # a rerun without a new edit (another widget, a page switch back)
    assert len(applies) == 1
    assert at.session_state[state.SCENARIO].x[1, 0] == 0.25


def test_each_edit_is_applied_once_and_earlier_edits_are_kept(applies):
    at = _run(AppTest.from_function(_script))
    at.session_state["send"] = grid_state({"0": {"d0": "1.5"}})
    _run(at)
    at.session_state["send"] = grid_state({"0": {"d0": "1.5"}, "2": {"d1": "-2"}})
    _run(at)
    assert len(applies) == 2
    x = at.session_state[state.SCENARIO].x
    assert (x[0, 0], x[2, 1]) == (1.5, -2.0)


def test_a_refused_cell_is_applied_once_changes_no_number_and_is_named(applies):
    at = _run(AppTest.from_function(_script))
    before = at.session_state[state.SCENARIO].x.copy()
    at.session_state["send"] = grid_state({"0": {"d0": "1,5", "d1": "3"}})
    _run(at)
    assert len(applies) == 1
    x = at.session_state[state.SCENARIO].x
    assert x[0, 0] == before[0, 0] and x[0, 1] == 3.0  # the good cell of the same edit is kept
    (message,) = [w.value for w in at.warning]
    assert "(0, d0) typed as “1\\,5”" in message, message
    _run(at)  # the message stays while the grid shows the refused text; nothing re-applied
    assert len(applies) == 1 and [w.value for w in at.warning] == [message]


def test_a_state_the_callback_never_saw_is_applied_once_by_the_run(applies):
    """AppTest (or any path without the change event) sets the grid's state directly: the
    editor's run applies it, once, and writes the scenario itself."""
    at = _run(AppTest.from_function(_script))
    at.session_state["x_v0"] = grid_state({"3": {"d1": "7"}})
    _run(at)
    assert len(applies) == 1 and at.session_state[state.SCENARIO].x[3, 1] == 7.0
    _run(at)
    assert len(applies) == 1


def test_the_playground_applies_an_edit_once_per_rerun(applies):
    """The whole app (frame, sidebar, page): one edit, one apply, across its reruns."""
    at = open_page("playground")
    assert applies == []
    key = f"playground_x_v{at.session_state[state.EDITOR_VERSION]}"
    at.session_state[key] = grid_state({"0": {"d1": "0.875"}})
    _run(at)
    assert len(applies) == 1
    assert at.session_state[state.SCENARIO].x[0, 1] == 0.875
    _run(at)
    assert len(applies) == 1
    assert default_scenario().x[0, 1] != 0.875  # the edit made a difference
