"""Model view: every layer and head of a real model as thumbnails, one head opened, rollout."""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.teach.text import model_view as text
from attnviz.ui import circuits_view, presenter, state
from attnviz.ui import model_view as mv

state.init_state()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)

sources = mv.sources()
if not mv.models_allowed():
    st.info(text.MODELS_OFF.format(env=mv.NO_MODELS_ENV, flag=mv.ALLOW_MODELS_FLAG))
source = st.radio(text.SOURCE_LABEL, sources, format_func=text.SOURCES.get, horizontal=True,
                  key="model_view_source")

if source == "upload":
    file = st.file_uploader(text.UPLOAD_LABEL, type=["npz", "npy"], key="model_view_upload",
                            max_upload_size=limits.MAX_UPLOAD_MB)
    if file is not None:
        mv.uploaded(file)
elif source in ("directory", "hub"):
    missing = mv.missing_extra()
    listing = mv.model_listing() if source == "directory" and not missing else None
    if missing:
        st.info(text.NO_TORCH.format(module=missing))
    elif listing is not None and not listing.entries:
        st.info(text.MODELS_EMPTY.format(path=listing.folder, env=mv.MODELS_DIR_ENV))
    else:
        if source == "hub":
            where = st.text_input(text.HUB_NAME_LABEL, key="model_view_hub_name")
            st.caption(text.HUB_CAPTION)
        else:
            labels = {e.key: mv.model_label(e) for e in listing.entries}
            where = st.selectbox(text.MODELS_LABEL, list(labels),
                                 format_func=lambda key: labels.get(key, key),
                                 key="model_view_model")
            st.caption(text.MODELS_CAPTION.format(path=listing.folder))
            if listing.truncated:
                st.warning(text.MODELS_TRUNCATED.format(n=mv.MAX_LISTED))
        text_a = st.text_input(text.TEXT_LABEL, value=text.DEFAULT_TEXT, key="model_view_text",
                               max_chars=mv.MAX_TEXT_CHARS)
        text_b = st.text_input(text.TEXT_B_LABEL, key="model_view_text_b",
                               max_chars=mv.MAX_TEXT_CHARS)
        st.caption(text.TEXT_LIMIT.format(t=mv.MAX_TEXT_TOKENS, chars=mv.MAX_TEXT_CHARS))
        if st.button(text.CAPTURE_BUTTON, key="model_view_capture"):
            loader = mv.from_hub if source == "hub" else mv.from_models_dir
            mv.load(loader, where, text_a, text_b)

data = mv.current(source)
if source != "example" and mv.DATA_KEY in st.session_state:
    st.caption(text.MEMORY.format(bytes=f"{data.nbytes:,}"))
kind = mv.show(data)
circuits_view.show(data, kind)
