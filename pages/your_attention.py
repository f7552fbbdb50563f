"""Your own attention: upload weights (.npy/.npz) and tokens, explore them with the same views.
The views: :mod:`attnviz.ui.your_attention_view`."""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.scenarios.scenario import position_labels
from attnviz.teach.text import common
from attnviz.teach.text import your_attention as text
from attnviz.ui import presenter, share, state, uploads
from attnviz.ui.page_end import end_page
from attnviz.ui.your_attention_view import (
    diagnostics_view,
    downloads,
    head_name,
    heads_view,
    line_view,
    weights_view,
)

state.init_state()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)
lesson = presenter.lesson_box()  # presenter mode: the weights above the uploads
with st.expander(text.HOWTO_TITLE):
    st.code(text.HOWTO, language="python")
c1, c2 = st.columns(2)
weights_file = c1.file_uploader(text.WEIGHTS_UPLOAD, type=["npy", "npz"],
                                key="your_attention_weights", max_upload_size=limits.MAX_UPLOAD_MB)
tokens_file = c2.file_uploader(text.TOKENS_UPLOAD, type=["txt", "json"],
                               key="your_attention_tokens", max_upload_size=limits.MAX_UPLOAD_MB)
st.caption(text.SAFETY + " " + text.LIMITS.format(
    mb=limits.MAX_UPLOAD_MB, t=limits.MAX_UPLOAD_T, heads=limits.MAX_UPLOAD_HEADS,
    layers=limits.MAX_UPLOAD_LAYERS, values=limits.MAX_UPLOAD_VALUES))

att, error = uploads.attention_upload(weights_file)
if error:
    st.error(share.plain(text.CANNOT_SHOW.format(reason=error)))
    end_page()
if weights_file is None:
    st.info(text.EXAMPLE)
parsed, token_error = uploads.tokens_upload(tokens_file)
tokens, token_warnings, token_error = uploads.labels_for(att, parsed, token_error)
if token_error:
    st.error(share.plain(text.TOKENS_NOT_USED.format(reason=token_error)))
for warning in (*att.warnings, *token_warnings):
    st.warning(share.plain(text.WARNING.format(warning=warning)))
st.text(text.SHAPE.format(shape=att.source_shape, layers=common.count(att.layers, "layer"),
                          heads=common.count(att.heads, "head"), t=att.t))

with lesson or st.container():
    c1, c2 = st.columns(2)
    layer = c1.selectbox(text.LAYER_LABEL, range(att.layers),
                         key=f"your_attention_layer_{att.layers}",
                         format_func=lambda i: text.LAYER_NAME.format(i=i),
                         disabled=att.layers == 1)
    head = c2.selectbox(common.HEAD_LABEL, ["mean", *range(att.heads)],
                        key=f"your_attention_head_{att.heads}", format_func=head_name)
    weights = att.weights[layer]  # (heads, t, t)
    matrix = weights.mean(axis=0) if head == "mean" else weights[head]
    name = text.SELECTION.format(layer=text.LAYER_NAME.format(i=layer), head=head_name(head))
    labels = position_labels(tokens)
    figures = []  # (title, figure) for the HTML report
    weights_view(att, matrix, labels, name, figures)
head_names = [common.HEAD_NAME.format(h=h) for h in range(att.heads)]
heads_view(att, tokens, weights, layer, figures)
line_view(att, weights, labels, head, layer, figures)
diag = diagnostics_view(att, weights, matrix, labels, head, head_names, figures)
downloads(att, matrix, diag, labels, head_names, layer, head, name, figures)
