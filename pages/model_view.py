"""Model view: every layer and head of a real model as thumbnails, one head opened, rollout."""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.teach.text import model_view as text
from attnviz.ui import model_view as mv
from attnviz.ui import presenter, state

state.init_state()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)

sources = list(text.SOURCES)
if not mv.models_allowed():
    sources = ["example", "upload"]
    st.info(text.MODELS_OFF.format(env=mv.NO_MODELS_ENV))
source = st.radio(text.SOURCE_LABEL, sources, format_func=text.SOURCES.get, horizontal=True,
                  key="model_view_source")

if source == "upload":
    file = st.file_uploader(text.UPLOAD_LABEL, type=["npz", "npy"], key="model_view_upload",
                            max_upload_size=limits.MAX_UPLOAD_MB)
    if file is not None:
        mv.uploaded(file)
elif source in ("directory", "hub"):
    missing = mv.missing_extra()
    online = False
    if missing:
        st.info(text.NO_TORCH.format(module=missing))
    elif source == "hub" and not mv.hub_allowed():
        st.info(text.HUB_OFFLINE.format(env=mv.HUB_OFFLINE_ENV))
    else:
        if source == "hub":
            online = st.checkbox(text.HUB_ONLINE_LABEL, value=False, key="model_view_online")
            where = st.text_input(text.HUB_NAME_LABEL, key="model_view_hub_name",
                                  disabled=not online)
        else:
            where = st.text_input(text.DIRECTORY_LABEL, key="model_view_path")
        text_a = st.text_input(text.TEXT_LABEL, value=text.DEFAULT_TEXT, key="model_view_text",
                               max_chars=mv.MAX_TEXT_CHARS)
        text_b = st.text_input(text.TEXT_B_LABEL, key="model_view_text_b",
                               max_chars=mv.MAX_TEXT_CHARS)
        st.caption(text.TEXT_LIMIT.format(t=mv.MAX_TEXT_TOKENS, chars=mv.MAX_TEXT_CHARS))
        if st.button(text.CAPTURE_BUTTON, key="model_view_capture",
                     disabled=source == "hub" and not online):
            loader = mv.from_hub if source == "hub" else mv.from_folder
            mv.load(loader, where, text_a, text_b)

data = mv.current(source)
if source != "example" and mv.DATA_KEY in st.session_state:
    st.caption(text.MEMORY.format(bytes=f"{data.nbytes:,}"))
mv.show(data)
