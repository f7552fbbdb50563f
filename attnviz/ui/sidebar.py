"""The sidebar every page shares: presets, the current scenario, presenter mode."""

from __future__ import annotations

import streamlit as st

from attnviz.scenarios.presets import PRESETS
from attnviz.ui import state


def render() -> None:
    """Draw the shared sidebar."""
    scenario = state.get_scenario()
    with st.sidebar:
        st.markdown("### Presets")
        keys = list(PRESETS)
        if state.PRESET_LOADED in st.session_state:  # a preset loaded elsewhere (Home)
            st.session_state[state.PRESET_CHOICE] = st.session_state.pop(state.PRESET_LOADED)
        choice = st.selectbox("Classroom demos", keys, format_func=lambda k: PRESETS[k].title,
                              key=state.PRESET_CHOICE)
        if st.button("Load preset", key="sidebar_load_preset", width="stretch",
                     help="Replaces the whole scenario (tokens, embeddings, weights, settings)"):
            state.load_preset(choice)
            st.rerun()
        st.markdown("### Current scenario")
        if scenario.title:
            st.text(scenario.title)  # may come from an uploaded file: never as Markdown
        st.text(f"{scenario.spec.name}\n"
                f"{scenario.t} tokens · d_model {scenario.d_model}"
                + (f" · {scenario.n_heads} heads" if scenario.spec.always_heads else ""))
        st.toggle("Presenter mode", key=state.PRESENTER,
                  help="Bigger type and figures, editors collapsed — for a projector")
