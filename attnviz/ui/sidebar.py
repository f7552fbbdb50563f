"""The sidebar every page shares: presets, the current scenario, presenter mode."""

from __future__ import annotations

import streamlit as st

from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import common as text
from attnviz.ui import lecture_bar, state


def render() -> None:
    """Draw the shared sidebar, its summary from the scenario the run starts with: every
    control writes the scenario in its change callback, before the run, so the page below
    draws the same one."""
    with st.sidebar:
        st.markdown(f"### {text.SIDEBAR_PRESETS}")
        keys = list(PRESETS)
        if state.PRESET_LOADED in st.session_state:  # a preset loaded elsewhere (Home)
            st.session_state[state.PRESET_CHOICE] = st.session_state.pop(state.PRESET_LOADED)
        st.selectbox(text.SIDEBAR_PRESET_CHOICE, keys, format_func=lambda k: PRESETS[k].title,
                     key=state.PRESET_CHOICE)
        st.button(text.SIDEBAR_LOAD, key="sidebar_load_preset", width="stretch",
                  help=text.SIDEBAR_LOAD_HELP, on_click=_load_chosen)
        st.markdown(f"### {text.SIDEBAR_CURRENT}")
        current()
        st.toggle(text.SIDEBAR_PRESENTER, key=state.PRESENTER, help=text.SIDEBAR_PRESENTER_HELP)
        st.toggle(text.SIDEBAR_PROJECTOR, key=state.PROJECTOR, help=text.SIDEBAR_PROJECTOR_HELP)
        lecture_bar.sidebar_picker()


def _load_chosen() -> None:
    """The Load button's callback: the preset chosen in the box becomes the scenario."""
    choice = st.session_state.get(state.PRESET_CHOICE)
    if choice in PRESETS:
        state.load_preset(choice)


def current() -> None:
    """The current scenario in the sidebar: its title, variant, tokens and width."""
    scenario = state.with_true_title(state.get_scenario())
    with st.container():
        if scenario.title:
            st.text(scenario.title)  # may come from an uploaded file: never as Markdown
        st.text(summary(scenario))


def summary(scenario) -> str:
    """The scenario's variant, tokens and width (and heads, for a multi-head variant): the one
    sentence every page that names the current scenario writes under its title."""
    return (text.SIDEBAR_SCENARIO.format(variant=scenario.spec.name,
                                         tokens=text.count(scenario.t, "token"),
                                         d_model=scenario.d_model)
            + (text.SIDEBAR_HEADS.format(heads=text.count(scenario.n_heads, "head"))
               if scenario.always_heads else ""))
