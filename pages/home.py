"""Home: what attention is, what each page shows, the presets."""

import streamlit as st

from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import home as text
from attnviz.ui import state

state.init_state()
st.title(text.TITLE)
st.write(text.INTRO)

st.subheader("What each page shows")
for name, what in text.PAGES_OVERVIEW.items():
    st.markdown(f"- **{name}** — {what}")

st.subheader("Start from a classroom demo")
cols = st.columns(3)
for i, (key, preset) in enumerate(PRESETS.items()):
    with cols[i % 3].container(border=True):
        st.markdown(f"**{preset.title}**")
        st.caption(preset.source)
        if st.button("Load", key=f"home_load_{key}"):
            state.load_preset(key)
            st.switch_page("pages/playground.py")
