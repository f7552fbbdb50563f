"""Your own attention: upload weights (.npy/.npz) and tokens, explore them with the same views."""

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.core.diagnostics import row_diagnostics
from attnviz.core.downsample import block_factor, block_labels, downsample
from attnviz.figures import heatmap
from attnviz.figures.line_view import MAX_TOKENS as LINE_VIEW_MAX
from attnviz.figures.line_view import head_view
from attnviz.io import attention_io as aio
from attnviz.scenarios import limits
from attnviz.scenarios.scenario import position_labels
from attnviz.teach.text import common
from attnviz.teach.text import your_attention as text
from attnviz.ui import share, state, uploads
from attnviz.ui.heads import grid
from attnviz.ui.panels import matrix_panel, show_figure

state.init_state()
st.header(text.TITLE)
st.write(text.INTRO)
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
    st.stop()
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

c1, c2 = st.columns(2)


def head_name(h) -> str:
    """'mean' -> 'mean of the heads'; 3 -> 'head 3'."""
    return text.MEAN_OF_HEADS if h == "mean" else common.HEAD_NAME.format(h=h)


layer = c1.selectbox(text.LAYER_LABEL, range(att.layers), key=f"your_attention_layer_{att.layers}",
                     format_func=lambda i: text.LAYER_NAME.format(i=i), disabled=att.layers == 1)
head = c2.selectbox(common.HEAD_LABEL, ["mean", *range(att.heads)],
                    key=f"your_attention_head_{att.heads}",
                    format_func=head_name)
weights = att.weights[layer]  # (heads, t, t)
matrix = weights.mean(axis=0) if head == "mean" else weights[head]
name = text.SELECTION.format(layer=text.LAYER_NAME.format(i=layer), head=head_name(head))
labels = position_labels(tokens)
figures = []

factor = block_factor(att.t, limits.MAX_DISPLAY_T)
if factor > 1:
    st.info(text.DOWNSAMPLED.format(t=att.t, limit=limits.MAX_DISPLAY_T, f=factor,
                                        shown=-(-att.t // factor)))
shown = block_labels(labels, limits.MAX_DISPLAY_T)
fig = heatmap(downsample(matrix, limits.MAX_DISPLAY_T), shown, shown, kind="weights",
              y_title=common.AXIS_QUERY, x_title=common.AXIS_KEY)
if att.t > 64:
    fig.update_traces(xgap=0, ygap=0)  # 1-px gaps would hide cells of a few pixels
matrix_panel(text.WEIGHTS_TITLE.format(name=name), fig, key="your_attention_fig_weights",
             formula=text.WEIGHTS_FORMULA, explanation=text.WEIGHTS_EXPLANATION)
figures.append((text.WEIGHTS_TITLE.format(name=name), fig))

st.subheader(text.EVERY_HEAD_TITLE.format(layer=layer))
GRID = limits.THUMBNAIL_T  # cells a side in the thumbnails: a few pixels each at least
heads_shown = min(att.heads, 16)
first = 0
if att.heads > heads_shown:
    first = st.number_input(text.FIRST_HEAD_LABEL, 0, att.heads - heads_shown, 0, step=heads_shown,
                            key="your_attention_first_head")
    st.caption(text.HEADS_RANGE.format(first=first, last=first + heads_shown - 1,
                                       n_heads=att.heads))
short = [f"{i}:{tok[:6]}" for i, tok in enumerate(tokens)]  # thumbnails: short labels
small = block_labels(short, GRID)
if len(small) < len(short):
    st.caption(common.HEADS_POOLED.format(t=att.t, shown=len(small), f=block_factor(att.t, GRID))
               + text.HEADS_EXACT)
for h, col in zip(range(first, first + heads_shown), grid(heads_shown, 4), strict=True):
    with col:
        fig = heatmap(downsample(weights[h], GRID), small, small, kind="weights",
                      title=common.HEAD_NAME.format(h=h), show_text=att.t <= 6, digits=2)
        if att.t > 24:
            fig.update_traces(xgap=0, ygap=0)
        show_figure(fig, key=f"your_attention_fig_head_{h}")
        figures.append((text.HEAD_FIGURE.format(layer=layer, h=h), fig))

st.subheader(text.LINE_VIEW_TITLE)
if att.t <= LINE_VIEW_MAX:
    line_heads = list(range(att.heads)) if head == "mean" else [head]
    focus_q = st.selectbox(text.FOCUS_LABEL, [None, *range(att.t)],
                           key=f"your_attention_focus_{att.t}",
                           format_func=lambda i: text.ALL_QUERIES if i is None else labels[i])
    fig = head_view(weights, labels, labels, heads=line_heads,
                    focus=None if focus_q is None else ("query", focus_q))
    show_figure(fig, key="your_attention_fig_lines")
    figures.append((text.LINE_VIEW_FIGURE.format(layer=layer), fig))
else:
    st.info(text.LINE_VIEW_TOO_LONG.format(limit=LINE_VIEW_MAX))

st.subheader(text.DIAGNOSTICS_TITLE)
st.caption(text.DIAGNOSTICS)
diag = row_diagnostics(weights, tol=aio.ROW_SUM_TOL)
head_names = [common.HEAD_NAME.format(h=h) for h in range(att.heads)]
# (heads, t) -> queries averaged in blocks: downsample's row mean, on the transpose
fig = heatmap(downsample(diag.entropy.T, 128).T, block_labels(labels, 128),
              head_names, kind="sequential", zmin=0.0,
              zmax=diag.max_entropy, title=text.ENTROPY_TITLE,
              x_title=common.AXIS_QUERY, y_title=text.AXIS_HEAD,
              show_text=att.t <= 8 and att.heads <= 8, height=160 + 24 * att.heads)
if att.t > 24:
    fig.update_traces(xgap=0, ygap=0)
show_figure(fig, key="your_attention_fig_entropy")
figures.append((text.ENTROPY_FIGURE, fig))
rows = diag.entropy.shape[1]
sel = slice(None) if head == "mean" else head
columns = text.COLUMNS
table = pd.DataFrame({
    columns["query"]: labels[:rows],
    columns["entropy"]: np.asarray(diag.entropy[sel]).mean(axis=0) if head == "mean"
    else diag.entropy[head],
    columns["effective"]: np.asarray(diag.effective[sel]).mean(axis=0) if head == "mean"
    else diag.effective[head],
    columns["max_weight"]: matrix.max(axis=1),
    columns["argmax"]: [labels[j] for j in matrix.argmax(axis=1)],
    columns["row_sum"]: matrix.sum(axis=1),
})
st.dataframe(table, hide_index=True, height=min(400, 38 + 35 * rows))

st.subheader(text.DOWNLOAD_TITLE)
stem = f"attention_layer{layer}_" + ("mean" if head == "mean" else f"head{head}")
share.matrix_downloads({"weights": matrix, "entropy": diag.entropy,
                        "effective": diag.effective}, key="your_attention_dl", stem=stem,
                       labels={"weights": (labels, labels),
                               "entropy": (head_names, labels),
                               "effective": (head_names, labels)},
                       q_labels=labels, k_labels=labels)
share.report_button(figures, key="your_attention_report", title=text.REPORT_TITLE,
                    notes=[text.REPORT_NOTE.format(layers=common.count(att.layers, "layer"),
                                                   heads=common.count(att.heads, "head"),
                                                   tokens=common.count(att.t, "token"),
                                                   name=name)],
                    file_name=f"{stem}_report.html")
