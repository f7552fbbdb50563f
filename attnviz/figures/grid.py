"""Small multiples: trim a figure so that many of them fit side by side (one per head).

Nothing here imports Streamlit.
"""

from __future__ import annotations

import plotly.graph_objects as go


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
    fig.update_traces(showscale=colour_bar, selector=dict(type="heatmap"))
    fig.update_xaxes(title=None)
    fig.update_yaxes(title=None, showticklabels=y_labels)
    fig.update_layout(margin=dict(l=4, r=4))
    return fig
