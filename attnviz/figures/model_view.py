"""The model view's figures: a grid of thumbnails (one per layer and head), an opened head's
heatmap, the heads fused per layer and the attention rollout.

The grid is ONE heatmap trace: the thumbnails are tiled into one matrix with blank (NaN) gaps
between them, so 144 heads of 64 tokens draw as one image (one trace per thumbnail costs
plotly.js a layout pass each). Every thumbnail shares the 0–1 colour scale. Token labels are in
the hover only (no tick labels that could overlap): an invisible point at each thumbnail's
centre, with ``hoverdistance=-1``, is always the one under the pointer, carries the
thumbnail's hover text and makes the thumbnail clickable (heatmaps send no click the chart
component accepts; see :mod:`attnviz.figures.clickable`).

Causal models are drawn causal: the upper triangle is NaN — blank, not the colour of 0.
Sentence pairs: a white line where the second segment starts, in every thumbnail.
Cross-attention (an encoder–decoder model) tiles (t_target, t_source) matrices: each thumbnail
is as tall as the target and as wide as the source, its cells square.
Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attnviz.core.downsample import block_factor, downsample
from attnviz.figures.base import figure
from attnviz.figures.heatmap import WEIGHTS_SCALE, colour_scale, heatmap
from attnviz.teach.text import common
from attnviz.teach.text import model_view as text

Array = NDArray[np.float64]

# the plot width a thumbnail row is sized for: the grid keeps its squares by shrinking toward
# the top-left, so a narrower window (1024 px: ~560) leaves white below, a wider one at the right
TARGET_WIDTH_PX = 700
TILE_PX = (56, 170)  # smallest and largest thumbnail side, in pixels
FRAME_COLOUR = "#c8c8c8"
SELECTED_COLOUR = "#ff7f0e"  # the opened head (the line view's focus colour)
SEGMENT_COLOUR = "#ffffff"
COLOUR_BAR_PX = 180  # the shared colour bar, at the top right
GRID_T = 48  # thumbnails pool longer sequences to at most this many cells a side


def causal_blank(w: ArrayLike) -> Array:
    """Weights with the upper triangle (keys after the query) set to NaN: drawn blank."""
    w = np.array(w, dtype=np.float64)
    t_q, t_k = w.shape[-2:]
    w[..., ~np.tri(t_q, t_k, dtype=bool)] = np.nan
    return w


def pooled(weights: ArrayLike, size: int = GRID_T) -> tuple[Array, int]:
    """Thumbnails pooled to at most ``size`` cells a side, and the tokens per cell."""
    w = np.asarray(weights, dtype=np.float64)
    return downsample(w, size), block_factor(w.shape[-1], size)


def links(w: ArrayLike, labels: Sequence[str], causal: bool,
          key_labels: Sequence[str] | None = None) -> dict[str, str]:
    """One matrix's strongest link (``query`` → ``key``, ``weight``; in self-attention a link to
    oneself does not count unless t = 1) and the key it attends most on average (``top``,
    ``mean``: over the queries that can see it), as the hover templates' fields.
    ``key_labels``: the keys' labels when they are another sequence's (cross-attention, where
    no key is the query itself); default ``labels``."""
    w = np.asarray(w, dtype=np.float64)
    t_q, t = w.shape[-2:]
    keys = labels if key_labels is None else key_labels
    off = w if t == 1 or key_labels is not None else w * (1 - np.eye(t))
    i, j = divmod(int(off.argmax()), t)
    seen_by = np.arange(t, 0, -1) if causal else np.full(t, t_q)  # key j: t − j queries
    received = w.sum(axis=0) / seen_by  # (t,)
    top = int(received.argmax())
    return dict(query=labels[i], key=keys[j], weight=f"{w[i, j]:.3f}", top=keys[top],
                mean=f"{received[top]:.3f}")


def tile_hovers(weights: ArrayLike, labels: Sequence[str], causal: bool,
                key_labels: Sequence[str] | None = None) -> list[list[str]]:
    """Each thumbnail's hover text (:data:`TILE_HOVER`): its layer and head, strongest link and
    most attended key with token labels, from the exact weights (not the pooled thumbnail).

    Parameters
    ----------
    weights : array_like of shape (n_layers, n_heads, t_q, t_k)
    labels : sequence of str
        One label per query token.
    causal : bool
        Only the lower triangle counts (it is all there is).
    key_labels : sequence of str, optional
        One label per key token when the keys are another sequence (cross-attention).
    """
    w = np.asarray(weights, dtype=np.float64)
    return [[text.TILE_HOVER.format(layer=layer, h=h,
                                    **links(w[layer, h], labels, causal, key_labels))
             for h in range(w.shape[1])] for layer in range(w.shape[0])]


def _rect(x0: float, x1: float, y0: float, y1: float) -> list:
    return [x0, x1, x1, x0, x0, None], [y0, y0, y1, y1, y0, None]


def _lines(segments: list[tuple[list, list]]) -> dict[str, list]:
    """Polylines (x, y), each ending in None, as one trace's ``x`` and ``y``."""
    return dict(x=[v for x, _ in segments for v in x], y=[v for _, y in segments for v in y])


def tiles(matrices: ArrayLike, *, row_ticks: Sequence[str], col_ticks: Sequence[str],
          hovers: Sequence[Sequence[str]], causal: bool, boundary: int | None = None,
          selected: tuple[int, int] | None = None, colour_bar: bool = True,
          tile_px: int | None = None) -> tuple[go.Figure, int]:
    """A grid of small heatmaps as one tiled heatmap trace, with a click target per tile.

    Parameters
    ----------
    matrices : array_like of shape (rows, cols, n_q, n_k)
        One (pooled) weights matrix per tile, values in 0–1 (n_q ≠ n_k: cross-attention).
    row_ticks, col_ticks : sequence of str
        The grid's row and column names (e.g. "L0", "H3").
    hovers : rows × cols strings
        Each tile's hover text (see :func:`tile_hovers`).
    causal : bool
        Blank the upper triangle of every tile.
    boundary : int, optional
        The first cell of the second segment: a line is drawn there in every (square) tile.
    selected : (row, col), optional
        The tile outlined in orange.
    colour_bar : bool
        Show the shared 0–1 colour bar.
    tile_px : int, optional
        The tiles' width in pixels (default: a row fills TARGET_WIDTH_PX, within TILE_PX).

    Returns
    -------
    fig : go.Figure
    picker : int
        The index of the click-target trace: point ``r · cols + c`` is tile (r, c).
    """
    m = np.asarray(matrices, dtype=np.float64)
    rows, cols, n_q, n_k = m.shape
    if causal:
        m = causal_blank(m)
    gap = max(1, max(n_q, n_k) // 8)
    step_x, step_y = n_k + gap, n_q + gap
    z = np.full((rows * step_y - gap, cols * step_x - gap), np.nan, dtype=np.float32)
    for r in range(rows):
        for c in range(cols):
            z[r * step_y:r * step_y + n_q, c * step_x:c * step_x + n_k] = m[r, c]
    centre_x, centre_y = (n_k - 1) / 2, (n_q - 1) / 2
    frames, seams, where = [], [], []
    for r in range(rows):
        for c in range(cols):
            x0, y0 = c * step_x - 0.5, r * step_y - 0.5
            frames.append(_rect(x0, x0 + n_k, y0, y0 + n_q))
            if boundary is not None and n_q == n_k and 0 < boundary < n_k:
                seams.append(([x0 + boundary] * 2 + [None], [y0, y0 + n_q, None]))
                seams.append(([x0, x0 + n_k, None], [y0 + boundary] * 2 + [None]))
            where.append((c * step_x + centre_x, r * step_y + centre_y))
    data = [dict(type="heatmap", z=z, x0=0, dx=1, y0=0, dy=1, zmin=0.0, zmax=1.0,
                 colorscale=colour_scale(WEIGHTS_SCALE), hoverinfo="skip", showscale=colour_bar,
                 colorbar=dict(thickness=12, lenmode="pixels", len=COLOUR_BAR_PX, y=1,
                               yanchor="top", outlinewidth=0,
                               title=dict(text=text.COLOUR_BAR, side="right"))),
            dict(type="scatter", mode="lines", hoverinfo="skip", showlegend=False,
                 line=dict(color=FRAME_COLOUR, width=1), **_lines(frames))]
    if seams:
        data.append(dict(type="scatter", mode="lines", hoverinfo="skip", showlegend=False,
                         line=dict(color=SEGMENT_COLOUR, width=1.5),
                         **_lines(seams)))
    if selected is not None:
        r, c = selected
        xs, ys = _rect(c * step_x - 0.5 - gap / 2, c * step_x + n_k - 0.5 + gap / 2,
                       r * step_y - 0.5 - gap / 2, r * step_y + n_q - 0.5 + gap / 2)
        data.append(dict(type="scatter", mode="lines", x=xs, y=ys, hoverinfo="skip",
                         showlegend=False, line=dict(color=SELECTED_COLOUR, width=3)))
    data.append(dict(
        type="scatter", mode="markers", x=[p[0] for p in where], y=[p[1] for p in where],
        hovertext=[h for row in hovers for h in row], hovertemplate="%{hovertext}<extra></extra>",
        marker=dict(size=10, opacity=0.0, color="#000000"), showlegend=False, name="tiles",
        selected=dict(marker=dict(opacity=0.0)), unselected=dict(marker=dict(opacity=0.0))))
    px = tile_px or int(np.clip(TARGET_WIDTH_PX / cols, *TILE_PX))
    width, height = cols * step_x - gap, rows * step_y - gap
    return figure(data, dict(
        height=int(rows * px * step_y / n_k + 50), margin=dict(l=40, r=70 if colour_bar else 10,
                                                           t=30, b=10),
        plot_bgcolor="white", font=dict(size=12),
        xaxis=dict(range=[-0.5 - gap, width - 0.5 + gap], side="top", showgrid=False,
                   zeroline=False, fixedrange=True, constrain="domain", constraintoward="left",
                   tickmode="array",
                   tickvals=[c * step_x + centre_x for c in range(cols)],
                   ticktext=list(col_ticks),
                   ticks=""),
        yaxis=dict(range=[height - 0.5 + gap, -0.5 - gap], showgrid=False, zeroline=False,
                   fixedrange=True, scaleanchor="x", constrain="domain", constraintoward="top",
                   tickmode="array",
                   tickvals=[r * step_y + centre_y for r in range(rows)],
                   ticktext=list(row_ticks),
                   ticks=""),
        hovermode="closest", hoverdistance=-1, clickmode="event+select", dragmode=False,
    )), len(data) - 1


def model_grid(weights: ArrayLike, labels: Sequence[str], *, causal: bool,
               boundary: int | None = None, selected: tuple[int, int] | None = None,
               key_labels: Sequence[str] | None = None) -> tuple[go.Figure, int]:
    """Every layer (rows) and head (columns) as a thumbnail; see :func:`tiles`.

    Parameters
    ----------
    weights : array_like of shape (n_layers, n_heads, t_q, t_k)
        t_q = t_k for self-attention; cross-attention's target × source otherwise.
    labels : sequence of str
        One label per query token (for the hover).
    boundary : int, optional
        The first token of the second sentence of a pair.
    key_labels : sequence of str, optional
        One label per key token when the keys are another sequence (cross-attention).
    """
    w = np.asarray(weights, dtype=np.float64)
    small, factor = pooled(w)
    return tiles(small, row_ticks=[text.LAYER_TICK.format(i=i) for i in range(w.shape[0])],
                 col_ticks=[text.HEAD_TICK.format(h=h) for h in range(w.shape[1])],
                 hovers=tile_hovers(w, labels, causal, key_labels), causal=causal,
                 boundary=None if boundary is None else -(-boundary // factor),
                 selected=selected)


def layer_row(matrices: ArrayLike, labels: Sequence[str], *, causal: bool,
              boundary: int | None = None, tick: str = text.AGGREGATE_TILE) -> go.Figure:
    """One thumbnail per layer (fused heads, or the rollout up to each layer), one row.

    Parameters
    ----------
    matrices : array_like of shape (n_layers, t, t)
    """
    m = np.asarray(matrices, dtype=np.float64)
    small, factor = pooled(m)
    hovers = [text.LAYER_HOVER.format(layer=i, **links(a, labels, causal))
              for i, a in enumerate(m)]
    fig, _ = tiles(small[None], row_ticks=[""], col_ticks=[tick.format(i=i)
                                                           for i in range(m.shape[0])],
                   hovers=[hovers], causal=causal, colour_bar=False,
                   boundary=None if boundary is None else -(-boundary // factor),
                   tile_px=int(np.clip(TARGET_WIDTH_PX / max(m.shape[0], 6), *TILE_PX)))
    fig.update_layout(clickmode="none")
    return fig


def weights_heatmap(w: ArrayLike, labels: Sequence[str], *, causal: bool,
                    boundary: int | None = None, focus: int | None = None,
                    x_title: str = common.AXIS_KEY, y_title: str = common.AXIS_QUERY) -> go.Figure:
    """One matrix with its token labels (the attnviz heatmap), blank above the diagonal for a
    causal model and a line at the second segment's first token."""
    z = causal_blank(w) if causal else np.asarray(w, dtype=np.float64)
    fig = heatmap(z, list(labels), list(labels), kind="weights", x_title=x_title, y_title=y_title,
                  highlight=[] if focus is None else [focus])
    if causal:
        trace = fig.data[0]
        if trace.text is not None:
            trace.text = np.where(np.isnan(z), "", np.asarray(trace.text, dtype=object))
        trace.hoverongaps = False
        fig.layout.plot_bgcolor = "white"
    if boundary is not None and 0 < boundary < len(labels):
        b = boundary - 0.5
        for x0, x1, y0, y1 in ((b, b, -0.5, len(labels) - 0.5), (-0.5, len(labels) - 0.5, b, b)):
            fig.add_shape(type="line", x0=x0, x1=x1, y0=y0, y1=y1, xref="x", yref="y",
                          line=dict(color=SEGMENT_COLOUR, width=2))
    return fig
