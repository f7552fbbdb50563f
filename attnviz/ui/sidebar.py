"""The sidebar every page shares: presets, the current scenario, presenter mode."""

from __future__ import annotations

import streamlit as st

from attnviz.presets import PRESETS
from attnviz.ui import state


def render() -> None:
    """Draw the shared sidebar."""
    scenario = state.get_scenario()
    with st.sidebar:
        st.markdown("### Presets")
        keys = list(PRESETS)
        choice = st.selectbox("Classroom demos", keys, format_func=lambda k: PRESETS[k].title,
                              key=state.PRESET_CHOICE)
        if st.button("Load preset", key="sidebar_load_preset", width="stretch",
                     help="Replaces the whole scenario (tokens, embeddings, weights, settings)"):
            state.load_preset(choice)
            st.rerun()
        st.markdown("### Current scenario")
        if scenario.title:
            st.caption(scenario.title)
        st.text(f"{scenario.spec.name}\n"
                f"{scenario.t} tokens · d_model {scenario.d_model}"
                + (f" · {scenario.n_heads} heads" if scenario.spec.kind == "multi_head" else ""))
        st.toggle("Presenter mode", key=state.PRESENTER,
                  help="Bigger type and figures, editors collapsed — for a projector")
