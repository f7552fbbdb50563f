"""The sidebar every page shares: presets, the current scenario, presenter mode."""

from __future__ import annotations

import streamlit as st

from attnviz.scenarios.presets import PRESETS, truthful
from attnviz.teach.text import common as text
from attnviz.ui import lecture_bar, state


def render():
    """Draw the shared sidebar; return the slot :func:`current` fills after the page ran."""
    with st.sidebar:
        st.markdown(f"### {text.SIDEBAR_PRESETS}")
        keys = list(PRESETS)
        if state.PRESET_LOADED in st.session_state:  # a preset loaded elsewhere (Home)
            st.session_state[state.PRESET_CHOICE] = st.session_state.pop(state.PRESET_LOADED)
        choice = st.selectbox(text.SIDEBAR_PRESET_CHOICE, keys,
                              format_func=lambda k: PRESETS[k].title, key=state.PRESET_CHOICE)
        if st.button(text.SIDEBAR_LOAD, key="sidebar_load_preset", width="stretch",
                     help=text.SIDEBAR_LOAD_HELP):
            state.load_preset(choice)
            st.rerun()
        st.markdown(f"### {text.SIDEBAR_CURRENT}")
        slot = st.empty()
        st.toggle(text.SIDEBAR_PRESENTER, key=state.PRESENTER, help=text.SIDEBAR_PRESENTER_HELP)
        st.toggle(text.SIDEBAR_PROJECTOR, key=state.PROJECTOR, help=text.SIDEBAR_PROJECTOR_HELP)
        lecture_bar.sidebar_picker()
    return slot


def current(slot) -> None:
    """The current scenario in the sidebar, written after the page ran: the page's own edits
    (a variant picked, a cell typed) are in it, so it never lags one rerun behind."""
    scenario = truthful(state.get_scenario())
    with slot.container():
        if scenario.title:
            st.text(scenario.title)  # may come from an uploaded file: never as Markdown
        st.text(text.SIDEBAR_SCENARIO.format(variant=scenario.spec.name,
                                             tokens=text.count(scenario.t, "token"),
                                             d_model=scenario.d_model)
                + (text.SIDEBAR_HEADS.format(heads=text.count(scenario.n_heads, "head"))
                   if scenario.spec.always_heads else ""))
