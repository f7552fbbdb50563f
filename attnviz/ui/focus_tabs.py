"""The Playground's focus tabs: which stage of the computation fills the screen.

Each focus is a tab (``st.tabs``) below the controls the foci share (:mod:`attnviz.ui.lecture`).
The charts of every lecture focus are sent to the browser, and a chart in a hidden tab is drawn
when its tab is first shown (plotly_view.js), so switching between Weights, Scores, Q K V and
Heads is the browser's alone: the charts are there at the click, and the run the switch starts
(the open tab is kept in the session: guided lectures set it) changes nothing on screen. A run
after a change (an edit) fills the open tab alone, so an edit costs what it did with one focus;
the first switch after it waits for its run, which fills every tab (:func:`focus_tabs`). "All"
(every matrix, with the diagnostics and downloads) is drawn only while it is open: the run its
click starts draws it.
"""

from __future__ import annotations

import streamlit as st

from attnviz.scenarios.fingerprint import fingerprint
from attnviz.teach.text import common
from attnviz.teach.text import playground as text
from attnviz.ui import controls, layout, state
from attnviz.ui.full_view import every_matrix
from attnviz.ui.lecture import heads_row, inputs_row, lecture_charts, presenter_inputs, w_editor

FOCUS_KEY = "playground_focus"  # session state: the open tab's label (text.FOCUS's values)
DEFAULT = "weights"
HEAD_KEY = "playground_lecture_head"  # the head the lecture foci show


def foci(scenario) -> list[str]:
    """The scenario's foci, in the tabs' order (Heads for a variant whose heads are its
    point)."""
    return [f for f in text.FOCUS if f != "heads" or scenario.spec.always_heads]


def open_focus(scenario) -> str:
    """The focus whose tab is open (the default when the session's is not one of the
    scenario's: a variant without Heads after one with them)."""
    by_label = {text.FOCUS[f]: f for f in foci(scenario)}
    return by_label.get(st.session_state.get(FOCUS_KEY), DEFAULT)


def head_switch(att, box) -> int:
    """The head the lecture foci show: for a multi-head result a switch in ``box``, a select
    box in presenter mode's row for more than :data:`layout.HEADS_IN_ROW` heads (the row
    stays one row)."""
    if att.n_heads == 1:
        return 0
    heads, name = list(range(att.n_heads)), lambda i: common.HEAD_NAME.format(h=i)
    if state.presenter() and att.n_heads > layout.HEADS_IN_ROW:
        return box.selectbox(text.HEAD_LABEL, heads, format_func=name,
                             key=HEAD_KEY) or 0
    return box.segmented_control(text.HEAD_LABEL, heads, default=0, format_func=name,
                                 key=HEAD_KEY) or 0


def lecture(scenario) -> None:
    """The lecture view: the controls the foci share (presenter mode's row, else the X editor
    beside the tokens and settings), the head switch, then a tab per focus."""
    if state.presenter():
        scenario, charts, head_box = presenter_inputs(scenario)
    else:
        scenario, charts, head_box = inputs_row(scenario), st.container(), None
    with charts:
        focus_tabs(scenario, head_box)


def focus_tabs(scenario, head_box=None) -> None:
    """A tab per focus; the head switch in ``head_box``, else above the tabs.

    A run after a change (an edit, another head, presenter mode) fills the open tab only (the
    others hold a caption: nothing from before the change stays in them), so an edit costs what it
    did before the tabs (filling them too had made it ~150 ms slower in the browser); a run that
    changes nothing (a tab switch) fills every tab (:func:`fill_every_tab`), sending each chart
    the figure it had."""
    names, now = foci(scenario), open_focus(scenario)
    if st.session_state.get(FOCUS_KEY) not in (None, text.FOCUS[now]):
        st.session_state[FOCUS_KEY] = text.FOCUS[now]  # (before the tabs are drawn)
    every = fill_every_tab(scenario)
    above = st.container()
    head_box = head_box or above
    tabs = dict(zip(names, st.tabs([text.FOCUS[f] for f in names], key=FOCUS_KEY,
                                   default=text.FOCUS[DEFAULT], on_change="rerun"),
                    strict=True))
    # one block per tab: a tab left unfilled holds one caption in its place (what its click
    # waits for), so none of the charts it had before the change stays in it
    boxes = {f: tab.container() if every or f == now else tab.caption(text.TAB_ON_OPEN)
             for f, tab in tabs.items()}
    if (every or now == "projections") and not scenario.direct and scenario.spec.projections \
            and now != "all":
        with boxes["projections"]:  # its charts, then the weights' editors under them
            boxes["projections"] = st.container()
            # (in "All" while that is open: its own); drawn before the charts are computed,
            # so an edit is in the charts of the same run
            scenario = w_editor(scenario)
    with above:
        result = controls.compute(scenario)
        h = head_switch(result.attention, head_box) if result is not None else 0
    for focus in sorted(names, key=lambda f: f != now):
        if not (every or focus == now):
            continue
        with boxes[focus]:
            if focus == "all":
                if now == "all":
                    every_matrix(scenario)
                else:
                    st.caption(text.ALL_ON_OPEN)
            elif result is None:
                continue
            elif focus == "heads" and result.attention.n_heads > 1:
                heads_row(result.attention, result.q_labels, result.k_labels)
            else:
                lecture_charts(scenario, result, focus, h)


FILLED = "_playground_tabs_filled"  # what the last run showed (the scenario, head, presenter)


def fill_every_tab(scenario) -> bool:
    """True when this run fills every tab: nothing they show (the scenario, the head, presenter
    mode) has changed since the last run."""
    now = (fingerprint(scenario), st.session_state.get(HEAD_KEY), state.presenter())
    every = st.session_state.get(FILLED) == now
    st.session_state[FILLED] = now
    return every
