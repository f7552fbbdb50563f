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
st.header("Your own attention")
st.write(text.INTRO)
with st.expander("Saving attention from a transformers model"):
    st.code(text.HOWTO, language="python")
c1, c2 = st.columns(2)
weights_file = c1.file_uploader("Attention weights (.npy or .npz)", type=["npy", "npz"],
                                key="ya_weights", max_upload_size=limits.MAX_UPLOAD_MB)
tokens_file = c2.file_uploader("Tokens, optional (.txt or .json)", type=["txt", "json"],
                               key="ya_tokens", max_upload_size=limits.MAX_UPLOAD_MB)
st.caption(f"{text.SAFETY} Limits: {limits.MAX_UPLOAD_MB} MB per file, t ≤ "
           f"{limits.MAX_UPLOAD_T} tokens, ≤ {limits.MAX_UPLOAD_HEADS} heads, ≤ "
           f"{limits.MAX_UPLOAD_LAYERS} layers, ≤ {limits.MAX_UPLOAD_VALUES:,} values in all.")

att, error = uploads.attention_upload(weights_file)
if error:
    st.error(share.plain(f"This file cannot be shown: {error}."))
    st.stop()
if weights_file is None:
    st.info(text.EXAMPLE)
parsed, token_error = uploads.tokens_upload(tokens_file)
tokens, token_warnings, token_error = uploads.labels_for(att, parsed, token_error)
if token_error:
    st.error(share.plain(f"The token file is not used: {token_error}."))
for warning in (*att.warnings, *token_warnings):
    st.warning(share.plain(f"{warning}."))
st.text(f"Shape in the file {att.source_shape} → {att.layers} layer(s) × {att.heads} head(s) × "
        f"{att.t} × {att.t}")

c1, c2 = st.columns(2)
layer = c1.selectbox("Layer", range(att.layers), key=f"ya_layer_{att.layers}",
                     format_func=lambda i: f"layer {i}", disabled=att.layers == 1)
head = c2.selectbox("Head", ["mean", *range(att.heads)], key=f"ya_head_{att.heads}",
                    format_func=lambda h: "mean of the heads" if h == "mean" else f"head {h}")
weights = att.weights[layer]  # (heads, t, t)
matrix = weights.mean(axis=0) if head == "mean" else weights[head]
name = f"layer {layer}, " + ("mean of the heads" if head == "mean" else f"head {head}")
labels = position_labels(tokens)
figures = []

factor = block_factor(att.t, limits.MAX_DISPLAY_T)
if factor > 1:
    st.info(text.DOWNSAMPLED.format(t=att.t, limit=limits.MAX_DISPLAY_T, f=factor,
                                        shown=-(-att.t // factor)))
shown = block_labels(labels, limits.MAX_DISPLAY_T)
fig = heatmap(downsample(matrix, limits.MAX_DISPLAY_T), shown, shown, kind="weights",
              y_title="query", x_title="key")
if att.t > 64:
    fig.update_traces(xgap=0, ygap=0)  # 1-px gaps would hide cells of a few pixels
matrix_panel(f"Attention weights — {name}", fig, key="ya_fig_weights",
             formula=r"A_{ij} = \text{weight of key } j \text{ for query } i",
             explanation="Each row is one query's weights over the keys (0–1 scale).")
figures.append((f"Attention weights — {name}", fig))

st.subheader(f"Every head of layer {layer}")
GRID = limits.THUMBNAIL_T  # cells a side in the thumbnails: a few pixels each at least
heads_shown = min(att.heads, 16)
first = 0
if att.heads > heads_shown:
    first = st.number_input("First head shown", 0, att.heads - heads_shown, 0, step=heads_shown,
                            key="ya_first_head")
    st.caption(f"Heads {first}–{first + heads_shown - 1} of {att.heads}.")
short = [f"{i}:{tok[:6]}" for i, tok in enumerate(tokens)]  # thumbnails: short labels
small = block_labels(short, GRID)
if len(small) < len(short):
    st.caption(common.HEADS_POOLED.format(t=att.t, shown=len(small), f=block_factor(att.t, GRID))
               + text.HEADS_EXACT)
for h, col in zip(range(first, first + heads_shown), grid(heads_shown, 4), strict=True):
    with col:
        fig = heatmap(downsample(weights[h], GRID), small, small, kind="weights",
                      title=f"head {h}", show_text=att.t <= 6, digits=2)
        if att.t > 24:
            fig.update_traces(xgap=0, ygap=0)
        show_figure(fig, key=f"ya_fig_head_{h}")
        figures.append((f"Layer {layer}, head {h}", fig))

st.subheader("Line view")
if att.t <= LINE_VIEW_MAX:
    line_heads = list(range(att.heads)) if head == "mean" else [head]
    focus_q = st.selectbox("Focus on a query", [None, *range(att.t)], key=f"ya_focus_{att.t}",
                           format_func=lambda i: "all queries" if i is None else labels[i])
    fig = head_view(weights, labels, labels, heads=line_heads,
                    focus=None if focus_q is None else ("query", focus_q))
    show_figure(fig, key="ya_fig_lines")
    figures.append((f"Line view — layer {layer}", fig))
else:
    st.info(text.LINE_VIEW_TOO_LONG.format(limit=LINE_VIEW_MAX))

st.subheader("Diagnostics")
st.caption(text.DIAGNOSTICS)
diag = row_diagnostics(weights, tol=aio.ROW_SUM_TOL)
# (heads, t) -> queries averaged in blocks: downsample's row mean, on the transpose
fig = heatmap(downsample(diag.entropy.T, 128).T, block_labels(labels, 128),
              [f"head {h}" for h in range(att.heads)], kind="sequential", zmin=0.0,
              zmax=diag.max_entropy, title="Entropy (nats) per head and query",
              x_title="query", y_title="head", show_text=att.t <= 8 and att.heads <= 8,
              height=160 + 24 * att.heads)
if att.t > 24:
    fig.update_traces(xgap=0, ygap=0)
show_figure(fig, key="ya_fig_entropy")
figures.append(("Entropy per head and query", fig))
rows = diag.entropy.shape[1]
sel = slice(None) if head == "mean" else head
table = pd.DataFrame({
    "query": labels[:rows],
    "entropy": np.asarray(diag.entropy[sel]).mean(axis=0) if head == "mean"
    else diag.entropy[head],
    "effective keys": np.asarray(diag.effective[sel]).mean(axis=0) if head == "mean"
    else diag.effective[head],
    "max weight": matrix.max(axis=1),
    "top key": [labels[j] for j in matrix.argmax(axis=1)],
    "row sum": matrix.sum(axis=1),
})
st.dataframe(table, hide_index=True, height=min(400, 38 + 35 * rows))

st.subheader("Download")
stem = f"attention_layer{layer}_" + ("mean" if head == "mean" else f"head{head}")
share.matrix_downloads({"weights": matrix, "entropy": diag.entropy,
                        "effective": diag.effective}, key="ya_dl", stem=stem,
                       labels={"weights": (labels, labels),
                               "entropy": ([f"head {h}" for h in range(att.heads)], labels),
                               "effective": ([f"head {h}" for h in range(att.heads)], labels)},
                       q_labels=labels, k_labels=labels)
share.report_button(figures, key="ya_report", title="attnviz — your own attention",
                    notes=[f"{att.layers} layers × {att.heads} heads × {att.t} tokens; {name}"],
                    file_name=f"{stem}_report.html")
