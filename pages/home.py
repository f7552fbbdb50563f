"""Home: what attention is, what each page shows, the presets."""

import streamlit as st

from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import home as text
from attnviz.ui import lecture_bar, state

state.init_state()
st.title(text.TITLE)
st.write(text.INTRO)
lecture_bar.start_buttons("home")  # the three guided lectures

st.subheader(text.OVERVIEW_TITLE)
for name, what in text.PAGES_OVERVIEW.items():
    st.markdown(f"- **{name}** — {what}")

st.subheader(text.PRESETS_TITLE)
cols = st.columns(3)
for i, (key, preset) in enumerate(PRESETS.items()):
    with cols[i % 3].container(border=True):
        st.markdown(f"**{preset.title}**")
        st.caption(preset.source)
        if st.button(text.LOAD, key=f"home_load_{key}"):
            state.load_preset(key)
            st.switch_page("pages/playground.py")
