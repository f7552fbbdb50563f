"""Save & share: the scenario as a file or a link, its matrices, and how charts save images."""

import streamlit as st

from attnviz.io import export
from attnviz.teach.text import share as text
from attnviz.ui import controls, presenter, share, sidebar, state

scenario = state.get_scenario()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)
share.show_flash()
st.text(text.CURRENT.format(title=state.with_true_title(scenario).title or text.UNTITLED,
                            summary=sidebar.summary(scenario)))

st.subheader(text.FILE_TITLE)
c1, c2 = st.columns(2, gap="large")
with c1:
    share.scenario_download(scenario, key="share")
with c2:
    share.scenario_upload(key="share_upload")

st.subheader(text.LINK_TITLE)
url = share.link_box(scenario, key="share", here="share")
if url is not None:
    share.room_box(url, key="share")

st.subheader(text.MATRICES_TITLE)
st.caption(text.MATRICES)
result = controls.compute(scenario)
if result is not None:
    share.matrix_downloads(export.matrices(result), key="share_mx",
                           stem=share.file_stem(scenario), labels=export.axis_labels(result),
                           q_labels=result.q_labels, k_labels=result.k_labels)

st.subheader(text.IMAGES_TITLE)
share.image_format_picker(key="share_image_format")
