"""The views of the Your own attention page for one layer of uploaded weights: the chosen
head's (or the mean's) weights, every head's thumbnail, the line view, the diagnostics per query
and the downloads. Long sequences are pooled in blocks for drawing
(:mod:`attnviz.core.downsample`); the downloads keep the exact numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.core.diagnostics import row_diagnostics
from attnviz.core.downsample import block_factor, block_labels, downsample
from attnviz.figures import Sizing, Values, heatmap
from attnviz.figures.line_view import MAX_TOKENS as LINE_VIEW_MAX
from attnviz.figures.line_view import head_view
from attnviz.io import attention_io as aio
from attnviz.scenarios import limits
from attnviz.teach.text import common
from attnviz.teach.text import your_attention as text
from attnviz.ui import layout, one_map, share, state
from attnviz.ui.head_grid import grid, pooled_heads
from attnviz.ui.panels import matrix_panel, show_figure

HEADS_SHOWN = 16  # thumbnails at once; a number input pages through more heads


def head_name(h) -> str:
    """'mean' -> 'mean of the heads'; 3 -> 'head 3'."""
    return text.MEAN_OF_HEADS if h == "mean" else common.HEAD_NAME.format(h=h)


def weights_view(att, matrix, labels: list[str], name: str, figures: list) -> None:
    """The chosen weights, pooled in blocks beyond limits.MAX_DISPLAY_T tokens a side."""
    factor = block_factor(att.t, limits.MAX_DISPLAY_T)
    if factor > 1:
        st.info(text.DOWNSAMPLED.format(t=att.t, limit=limits.MAX_DISPLAY_T, f=factor,
                                        shown=-(-att.t // factor)))
    shown = block_labels(labels, limits.MAX_DISPLAY_T)
    # (1-px gaps would hide cells of a few pixels)
    fig = heatmap(downsample(matrix, limits.MAX_DISPLAY_T), shown, shown, kind="weights",
                  y_title=common.AXIS_QUERY, x_title=common.AXIS_KEY,
                  sizing=Sizing(gaps=att.t <= 64))
    # presenter mode: its height follows the screen (its cells end on the first screen)
    matrix_panel(text.WEIGHTS_TITLE.format(name=name), fig, key="your_attention_fig_weights",
                 formula=text.WEIGHTS_FORMULA, explanation=text.WEIGHTS_EXPLANATION,
                 fit=one_map.fit(fig) if state.presenter() else None)
    figures.append((text.WEIGHTS_TITLE.format(name=name), fig))


def heads_view(att, tokens: list[str], weights, layer: int, figures: list) -> None:
    """Every head of the layer as a thumbnail (up to HEADS_SHOWN at once), pooled in blocks
    beyond limits.THUMBNAIL_T tokens."""
    st.subheader(text.EVERY_HEAD_TITLE.format(layer=layer))
    heads_shown = min(att.heads, HEADS_SHOWN)
    first = 0
    if att.heads > heads_shown:
        first = st.number_input(text.FIRST_HEAD_LABEL, 0, att.heads - heads_shown, 0,
                                step=heads_shown, key="your_attention_first_head")
        st.caption(text.HEADS_RANGE.format(first=first, last=first + heads_shown - 1,
                                           n_heads=att.heads))
    short = [f"{i}:{tok[:6]}" for i, tok in enumerate(tokens)]  # thumbnails: short labels
    pooled = pooled_heads(short, short, text.HEADS_EXACT)
    heads = range(first, first + heads_shown)
    # presenter mode, where the thumbnails side by side leave their cells too narrow for a
    # number: one head at a time, picked above it, across the page (ui/one_map.py; below the
    # first screen, so its height is the chart's own)
    one = state.presenter() and not one_map.side_by_side(
        min(heads_shown, layout.HEADS_PER_ROW), len(pooled.k_labels))
    picked = one_map.pick("your_attention_head_map", {
        h: common.HEAD_NAME.format(h=h) for h in heads}, default=first) if one else None
    figs = {h: heatmap(pooled(weights[h]), pooled.k_labels, pooled.q_labels, kind="weights",
                       title=common.HEAD_NAME.format(h=h), sizing=Sizing(gaps=att.t <= 24))
            for h in heads}
    figures.extend((text.HEAD_FIGURE.format(layer=layer, h=h), fig) for h, fig in figs.items())
    shown = list(heads) if picked is None else [picked]  # (the report keeps every head)
    per_row = layout.HEADS_PER_ROW if picked is None else 1
    for h, col in zip(shown, grid(len(shown), per_row), strict=True):
        with col:
            show_figure(figs[h], key=f"your_attention_fig_head_{h}")


def line_view(att, weights, labels: list[str], head, layer: int, figures: list) -> None:
    """The line view of the chosen head (or every head for the mean), while it fits."""
    st.subheader(text.LINE_VIEW_TITLE)
    if att.t > LINE_VIEW_MAX:
        st.info(text.LINE_VIEW_TOO_LONG.format(limit=LINE_VIEW_MAX))
        return
    line_heads = list(range(att.heads)) if head == "mean" else [head]
    focus_q = st.selectbox(text.FOCUS_LABEL, [None, *range(att.t)],
                           key=f"your_attention_focus_{att.t}",
                           format_func=lambda i: text.ALL_QUERIES if i is None else labels[i])
    fig = head_view(weights, labels, labels, heads=line_heads,
                    focus=None if focus_q is None else ("query", focus_q))
    show_figure(fig, key="your_attention_fig_lines")
    figures.append((text.LINE_VIEW_FIGURE.format(layer=layer), fig))


def diagnostics_view(att, weights, matrix, labels: list[str], head, head_names: list[str],
                     figures: list):
    """Every head's entropy per query (queries pooled beyond 128), and the chosen weights'
    diagnostics per query as a table; returns the diagnostics."""
    st.subheader(text.DIAGNOSTICS_TITLE)
    st.caption(text.DIAGNOSTICS)
    diag = row_diagnostics(weights, tol=aio.ROW_SUM_TOL)
    # (heads, t) -> queries averaged in blocks: downsample's row mean, on the transpose
    fig = heatmap(downsample(diag.entropy.T, 128).T, block_labels(labels, 128), head_names,
                  kind="sequential", title=text.ENTROPY_TITLE, x_title=common.AXIS_QUERY,
                  y_title=text.AXIS_HEAD, values=Values(zmin=0.0, zmax=diag.max_entropy),
                  sizing=Sizing(role="list", gaps=att.t <= 24))
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
    height = min(layout.TABLE_MAX_PX, layout.TABLE_HEADER_PX + layout.TABLE_ROW_PX * rows)
    st.dataframe(table, hide_index=True, height=height)
    return diag


def downloads(att, matrix, diag, labels: list[str], head_names: list[str], layer: int, head,
              name: str, figures: list) -> None:
    """The chosen weights and the diagnostics as files, and the report of every figure."""
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
