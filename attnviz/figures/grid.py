"""Small multiples: trim a figure so that many of them fit side by side (one per head).

Nothing here imports Streamlit.
"""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.figures.heatmap import LINE_PX, TITLE_PX


def compact(fig: go.Figure, *, y_labels: bool = True, colour_bar: bool = True) -> go.Figure:
    """Drop what a grid of figures on a shared scale repeats in every cell.

    Parameters
    ----------
    fig : go.Figure
        A heatmap from :func:`attnviz.figures.heatmap`.
    y_labels : bool
        Keep the row labels (only the first figure of a grid row needs them).
    colour_bar : bool
        Keep the colour bar (a shared scale can be explained once, in words).

    Returns
    -------
    go.Figure
        The same figure, changed in place.
    """
    # plain property assignments: the update_* helpers parse paths and selectors and cost
    # ~5 ms a figure, a lot for a grid of 16 heads (same result: tests/pages/test_speed.py)
    for trace in fig.data:
        if trace.type == "heatmap":
            trace.showscale = colour_bar
    margin = fig.layout.margin
    if fig.layout.xaxis.title.text and margin.t is not None:  # room the titles no longer need
        margin.t = max(margin.t - TITLE_PX, 10)
    if fig.layout.yaxis.title.text and margin.l is not None:
        margin.l = max(margin.l - LINE_PX, 4)
    fig.layout.xaxis.title = None
    fig.layout.yaxis.title = None
    fig.layout.yaxis.showticklabels = y_labels
    if not y_labels:
        fig.layout.margin.l = 4
    if not colour_bar:
        fig.layout.margin.r = 4
    return fig
