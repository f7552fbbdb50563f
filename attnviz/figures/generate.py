"""The Generate page's figures: the new token's row of every layer and head as a grid of strips,
one head's row with its token labels, and the likeliest next tokens.

The grid is the Model view's thumbnail grid (:mod:`attnviz.figures.model_view`) with one row
per thumbnail: ONE heatmap trace in which each head's row is a strip (its cells pooled to at
most ``GRID_T`` keys, summing weights, as the thumbnails pool), the strips of a layer side by
side, the same 0–1 colour scale, frames, the selected head outlined in orange and an invisible
point at each strip's centre that carries its hover and makes it clickable. A strip is
``STRIP_ROWS`` rows of the heatmap (one row repeated) and a blank row parts two layers: one
regular grid, so cells keep their place whatever the number of tokens. Nothing here imports
Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.core.downsample import block_factor, downsample
from attnviz.figures.base import axis, figure
from attnviz.figures.heatmap import WEIGHTS_SCALE, colour_scale, heatmap
from attnviz.figures.model_view import (
    COLOUR_BAR_PX,
    FRAME_COLOUR,
    GRID_T,
    SELECTED_COLOUR,
    TARGET_WIDTH_PX,
    TILE_PX,
)
from attnviz.teach.text import common
from attnviz.teach.text import generate as text
from attnviz.teach.text import model_view as mv_text

STRIP_ROWS = 4  # heatmap rows of one strip (a layer), a blank one between two layers
ASPECT = 4.0  # a strip is this many times as wide as it is tall
CANDIDATE_PX = 34  # one bar of the candidates' chart
MODEL_COLOUR = "#7f7f7f"  # the candidates' bars; the one the next step adds is SELECTED_COLOUR
SAMPLED_COLOUR = "#1f78b4"


def _rect(x0: float, x1: float, y0: float, y1: float) -> tuple[list, list]:
    """A closed rectangle's corners as a polyline (x, y), ending in None."""
    return [x0, x1, x1, x0, x0, None], [y0, y0, y1, y1, y0, None]


def pooled_rows(rows: ArrayLike, size: int = GRID_T) -> tuple[np.ndarray, int]:
    """Rows of shape (..., t) pooled to at most ``size`` keys (each cell the sum of the weights
    of its keys: a row still sums to 1), and the keys per cell."""
    r = np.asarray(rows, dtype=np.float64)
    return downsample(r[..., None, :], size)[..., 0, :], block_factor(r.shape[-1], size)


def row_hovers(rows: ArrayLike, labels: Sequence[str]) -> list[list[str]]:
    """Each strip's hover text: its layer and head, the key it looks at most and its weight on
    the new token itself, from the exact rows (not the pooled strip)."""
    r = np.asarray(rows, dtype=np.float64)
    return [[text.ROW_HOVER.format(layer=layer, h=h, key=labels[int(r[layer, h].argmax())],
                                   weight=f"{r[layer, h].max():.3f}",
                                   self=f"{r[layer, h, -1]:.3f}")
             for h in range(r.shape[1])] for layer in range(r.shape[0])]


def row_grid(rows: ArrayLike, labels: Sequence[str], *,
             selected: tuple[int, int] | None = None) -> tuple[go.Figure, int]:
    """Every layer (rows of the grid) and head (columns) as a strip: one token's attention row.

    Parameters
    ----------
    rows : array_like of shape (n_layers, n_heads, t)
        The new token's weights over the t tokens so far.
    labels : sequence of str
        One label per token (for the hover).
    selected : (layer, head), optional
        The strip outlined in orange.

    Returns
    -------
    fig : go.Figure
    picker : int
        The index of the click-target trace: point ``layer · n_heads + head`` is that head.
    """
    exact = np.asarray(rows, dtype=np.float64)
    small, _ = pooled_rows(exact)
    n_layers, n_heads, n = small.shape
    gap = max(1, n // 8)  # blank columns between two heads, as between thumbnails
    step = n + gap
    dy = n / ASPECT / STRIP_ROWS  # a heatmap row's height, in key cells
    z = np.full((n_layers * (STRIP_ROWS + 1) - 1, n_heads * step - gap), np.nan,
                dtype=np.float32)
    frames, where = [], []
    for layer in range(n_layers):
        top = layer * (STRIP_ROWS + 1)
        for h in range(n_heads):
            z[top:top + STRIP_ROWS, h * step:h * step + n] = small[layer, h]
            x0, y0 = h * step - 0.5, top * dy
            frames.append(_rect(x0, x0 + n, y0, y0 + STRIP_ROWS * dy))
            where.append((h * step + (n - 1) / 2, y0 + STRIP_ROWS * dy / 2))
    height = (n_layers * (STRIP_ROWS + 1) - 1) * dy
    px = int(np.clip(TARGET_WIDTH_PX / n_heads, *TILE_PX))  # a strip's width in pixels
    bar_px = int(height * px / n)  # the grid's height: a shorter grid gets a shorter bar
    data = [dict(type="heatmap", z=z, x0=0, dx=1, y0=dy / 2, dy=dy, zmin=0.0, zmax=1.0,
                 colorscale=colour_scale(WEIGHTS_SCALE), hoverinfo="skip",
                 colorbar=dict(thickness=12, lenmode="pixels", len=min(COLOUR_BAR_PX, bar_px),
                               y=1, yanchor="top", outlinewidth=0,
                               title=dict(text=mv_text.COLOUR_BAR, side="right"))),
            dict(type="scatter", mode="lines", hoverinfo="skip", showlegend=False,
                 line=dict(color=FRAME_COLOUR, width=1), x=[v for x, _ in frames for v in x],
                 y=[v for _, y in frames for v in y])]
    if selected is not None:
        layer, h = selected
        y0 = layer * (STRIP_ROWS + 1) * dy
        xs, ys = _rect(h * step - 0.5 - gap / 2, h * step + n - 0.5 + gap / 2,
                       y0 - dy / 2, y0 + (STRIP_ROWS + 0.5) * dy)
        data.append(dict(type="scatter", mode="lines", x=xs, y=ys, hoverinfo="skip",
                         showlegend=False, line=dict(color=SELECTED_COLOUR, width=3)))
    data.append(dict(
        type="scatter", mode="markers", x=[p[0] for p in where], y=[p[1] for p in where],
        hovertext=[h for row in row_hovers(exact, labels) for h in row],
        hovertemplate="%{hovertext}<extra></extra>", name="strips", showlegend=False,
        marker=dict(size=10, opacity=0.0, color="#000000"),
        selected=dict(marker=dict(opacity=0.0)), unselected=dict(marker=dict(opacity=0.0))))
    width = n_heads * step - gap
    return figure(data, dict(
        height=bar_px + 60, margin=dict(l=40, r=70, t=30, b=10),
        plot_bgcolor="white", font=dict(size=12),
        xaxis=dict(range=[-0.5 - gap, width - 0.5 + gap], side="top", showgrid=False,
                   zeroline=False, fixedrange=True, constrain="domain", constraintoward="left",
                   tickmode="array", tickvals=[h * step + (n - 1) / 2 for h in range(n_heads)],
                   ticktext=[mv_text.HEAD_TICK.format(h=h) for h in range(n_heads)], ticks=""),
        yaxis=dict(range=[height + dy, -dy], showgrid=False, zeroline=False, fixedrange=True,
                   scaleanchor="x", constrain="domain", constraintoward="top",
                   tickmode="array", tickvals=[p[1] for p in where[::n_heads]],
                   ticktext=[mv_text.LAYER_TICK.format(i=i) for i in range(n_layers)],
                   ticks=""),
        hovermode="closest", hoverdistance=-1, clickmode="event+select", dragmode=False,
    )), len(data) - 1


def head_row(row: ArrayLike, labels: Sequence[str], query: str) -> go.Figure:
    """One head's row: the new token (``query``) over the tokens so far, labelled, on the
    weights' 0–1 scale (the attnviz heatmap)."""
    return heatmap(np.asarray(row, dtype=np.float64)[None], list(labels), [query],
                   kind="weights", x_title=common.AXIS_KEY, y_title=common.AXIS_QUERY)


def candidates(labels: Sequence[str], probs: ArrayLike, *, chosen: int | None = None,
               sampled: ArrayLike | None = None, temperature: float | None = None) -> go.Figure:
    """The likeliest next tokens as horizontal bars, the likeliest on top.

    Parameters
    ----------
    labels : sequence of str
        The candidates' labels, best first (unique: position-free tokens are unique).
    probs : array_like of shape (k,)
        Their probabilities (the model's softmax, temperature 1).
    chosen : int, optional
        The index of the candidate the next step added (drawn in orange).
    sampled : array_like of shape (k,), optional
        Their probabilities at ``temperature`` (the distribution the token was drawn from).
    """
    p = np.asarray(probs, dtype=np.float64)
    names = [repr(str(s))[1:-1] or " " for s in labels]  # quotes off, control characters seen
    if len(set(names)) < len(names):  # a category axis merges equal names: number them
        names = [f"{i + 1}. {name}" for i, name in enumerate(names)]
    colours = [SELECTED_COLOUR if i == chosen else MODEL_COLOUR for i in range(p.size)]
    data = [dict(type="bar", orientation="h", x=p, y=names, name=text.MODEL_NAME,
                 marker=dict(color=colours),
                 text=[text.CANDIDATE_TEXT.format(p=f"{v:.3f}") for v in p],
                 textposition="outside", cliponaxis=False,
                 hovertemplate="%{y}: %{x:.6f}<extra></extra>")]
    if sampled is not None:
        q = np.asarray(sampled, dtype=np.float64)
        data.append(dict(type="bar", orientation="h", x=q, y=names,
                         name=text.SAMPLED_NAME.format(t=f"{temperature:g}"),
                         marker=dict(color=SAMPLED_COLOUR), opacity=0.55,
                         hovertemplate="%{y}: %{x:.6f}<extra></extra>"))
    top = float(max(p.max(), 0.0 if sampled is None else np.max(sampled)))
    return figure(data, dict(
        barmode="group", height=int(CANDIDATE_PX * p.size * (1 + (sampled is not None)) + 70),
        margin=dict(l=10, r=40, t=10, b=40), plot_bgcolor="white", font=dict(size=13),
        showlegend=sampled is not None, legend=dict(orientation="h", y=-0.25, x=0),
        xaxis=axis(text.PROBABILITY_AXIS, range=[0.0, min(1.0, top * 1.25) or 1.0],
                   gridcolor="#eeeeee", zeroline=False),
        yaxis=dict(type="category", autorange="reversed", automargin=True),
    ))
