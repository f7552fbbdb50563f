"""The Playground's view: its focus tabs, which stage of the computation fills the screen.

Each focus is a tab (``st.tabs``) below the controls the foci share (:mod:`attnviz.ui.lecture`).
The charts of every lecture focus are sent to the browser, and a chart in a hidden tab is drawn
when its tab is first shown (plotly_lazy.js), so switching between Weights, Scores, Q K V and
Heads is the browser's alone: the charts are there at the click, and the run the switch starts
(the open tab is kept in the session: guided lectures set it) changes nothing on screen. A run
after a change (an edit) fills the open tab alone, so an edit costs what one focus costs; once
those are drawn, the browser asks for one more run, which fills every tab
(:func:`ask_for_filling_run`), so a switch after an edit needs no run either (a switch before
that run has ended waits for it). "All" (every matrix, with the diagnostics and downloads) is
drawn only while it is open: the run its click starts draws it.
"""

from __future__ import annotations

import functools
from pathlib import Path

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
    return [f for f in text.FOCUS if f != "heads" or scenario.always_heads]


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
    others hold a caption: nothing from before the change stays in them), so an edit costs what
    one focus costs (filling every tab makes it ~150 ms slower in the browser); a run that
    changes nothing (a tab switch, or the run the browser asks for once the open tab is drawn:
    :func:`ask_for_filling_run`) fills every tab (:func:`fill_every_tab`), sending each chart
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
    boxes = {f: tab.container() for f, tab in tabs.items()}
    hidden = [f for f in names if f != now]
    if not every:
        for f in hidden:
            boxes[f].caption(text.TAB_ON_OPEN)
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
    # a message shown once stays on the screen: the other tabs are filled on a click
    if not every and not state.shows_one_time_message():
        ask_for_filling_run(boxes[hidden[0]])


FILLED = "_playground_tabs_filled"  # what the last run showed (the scenario, head, presenter)


def fill_every_tab(scenario) -> bool:
    """True when this run fills every tab: nothing they show (the scenario, the head, presenter
    mode) has changed since the last run."""
    now = (fingerprint(scenario), st.session_state.get(HEAD_KEY), state.presenter())
    every = st.session_state.get(FILLED) == now
    st.session_state[FILLED] = now
    return every


FILL_KEY = "playground_fill_tabs"  # the component that asks for the run filling every tab
_ASKED = "_playground_fill_asked"  # how many times it was sent (what it asks for, once each)


def ask_for_filling_run(box) -> None:
    """In ``box`` (a hidden tab): ask the browser for one more run once the open tab's charts are
    drawn (``fill_tabs.js``); that run changes nothing, so it fills every tab, and a tab
    clicked after it needs no run. The edit's own run stays as light as with one focus."""
    st.session_state[_ASKED] = st.session_state.get(_ASKED, 0) + 1
    with box:
        _fill_component()(key=FILL_KEY, data=st.session_state[_ASKED],
                          on_fill_change=_filled_next)


def _filled_next() -> None:
    """The browser's ask (a trigger): the run it starts fills every tab by itself."""


@functools.cache
def _fill_component():
    """The component behind :func:`ask_for_filling_run` (registered once per process)."""
    return st.components.v2.component(
        "attnviz_fill_tabs",
        js=(Path(__file__).parent / "fill_tabs.js").read_text(encoding="utf-8"),
        isolate_styles=False)
