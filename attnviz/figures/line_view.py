"""The line (head) view: BertViz's head view drawn with Plotly, offline.

Queries on the left (x = 0), keys on the right (x = 1), token 0 at the top. A line joins query
i to key j with opacity α_ij, in the colour of its head (Okabe–Ito, colour-blind safe). Plotly
gives one opacity per trace, so the lines are grouped by opacity rounded to 1/``LEVELS``: one
trace per (head, level). Weights below 1/(2·LEVELS) round to 0 and are not drawn.

Focusing a query (or a key) keeps only its lines. Token labels go to the two y axes only
(left: queries, right: keys); the marker traces named ``"queries"`` and ``"keys"`` can be
clicked to choose the focus.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attnviz.figures.base import figure
from attnviz.figures.heatmap import tick_text
from attnviz.figures.lines import COLOURS
from attnviz.teach.text import common

LEVELS = 40
MAX_TOKENS = 64  # per side, without a focus
FOCUS_COLOUR = "#ff7f0e"
MARKER_COLOUR = "#9a9a9a"


def head_colour(head: int) -> str:
    """The colour of a head (Okabe–Ito, cycled after 8 heads)."""
    return COLOURS[head % len(COLOURS)]


def line_segments(weights: ArrayLike, *, focus: tuple[str, int] | None = None,
                  levels: int = LEVELS) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                 NDArray[np.int64]]:
    """The (query, key, level) of every line that is drawn, for one head's weights.

    Parameters
    ----------
    weights : array_like of shape (t_q, t_k)
    focus : ("query", i) or ("key", j), optional
        Keep only the lines of that token.
    levels : int
        Opacity = level / levels with level = round(weight · levels); level 0 is not drawn.

    Returns
    -------
    rows, cols, level : ndarray of int
    """
    w = np.asarray(weights, dtype=float)
    level = np.rint(np.clip(w, 0.0, 1.0) * levels).astype(np.int64)  # (t_q, t_k)
    keep = level > 0
    if focus is not None:
        side, index = focus
        only = np.zeros_like(keep)
        if side == "query":
            only[index, :] = True
        elif side == "key":
            only[:, index] = True
        else:
            raise ValueError(f"focus side must be 'query' or 'key', got {side!r}")
        keep &= only
    rows, cols = np.nonzero(keep)
    return rows, cols, level[rows, cols]


MAX_TICKS = 48  # label at most this many tokens per axis (every k-th one on a longer axis)


def _tick_axis(labels: Sequence[str], n: int, side: str) -> dict:
    """A y axis whose ticks are the token labels, token 0 at the top.

    A long axis labels every k-th token only: 256 labels would overlap unreadably, and Plotly
    takes seconds to lay them out (5.7 s instead of 0.3 s for 2 × 256 in headless Chromium).
    """
    step = -(-len(labels) // MAX_TICKS)  # ceil
    shown = range(0, len(labels), max(step, 1))
    return dict(tickmode="array", tickvals=list(shown),
                ticktext=[tick_text(labels[i]) for i in shown], side=side,
                range=[n - 0.5, -0.5], showgrid=False, zeroline=False, automargin=True,
                ticks="", tickfont=dict(size=13))


def head_view(weights: ArrayLike, q_labels: Sequence[str], k_labels: Sequence[str], *,
              heads: Sequence[int] | None = None, focus: tuple[str, int] | None = None,
              levels: int = LEVELS, height: int | None = None) -> go.Figure:
    """Lines from queries (left) to keys (right), opacity = weight, a colour per head.

    Parameters
    ----------
    weights : array_like of shape (t_q, t_k) or (n_heads, t_q, t_k)
    q_labels, k_labels : sequence of str
        Unique labels (e.g. "0:the").
    heads : sequence of int, optional
        Which heads to draw (default: all).
    focus : ("query", i) or ("key", j), optional
        Draw only that token's lines and mark it.
    levels : int
        Opacity resolution (see :func:`line_segments`).

    Returns
    -------
    go.Figure
        Traces: per drawn head one legend entry, then its line traces (``meta`` =
        {"head": h, "level": l}), then the ``"queries"`` and ``"keys"`` marker traces.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim == 2:
        w = w[None]
    n_heads, t_q, t_k = w.shape
    if len(q_labels) != t_q or len(k_labels) != t_k:
        raise ValueError(f"need {t_q} query labels and {t_k} key labels, got "
                         f"{len(q_labels)} and {len(k_labels)}")
    heads = list(range(n_heads)) if heads is None else [int(h) for h in heads]
    n = max(t_q, t_k)
    spread = 0.25 / max(len(heads), 1)  # offset heads vertically so their lines stay visible
    data = []
    for rank, h in enumerate(heads):
        colour = head_colour(h)
        offset = (rank - (len(heads) - 1) / 2) * spread if len(heads) > 1 else 0.0
        data.append(dict(type="scatter", x=[None], y=[None], mode="lines",
                         name=common.HEAD_NAME.format(h=h), legendgroup=f"head{h}",
                         line=dict(color=colour, width=3), hoverinfo="skip"))
        rows, cols, level = line_segments(w[h], focus=focus, levels=levels)
        for lv in np.unique(level):
            sel = level == lv
            r, c = rows[sel], cols[sel]
            # plain lists, None between segments: dozens of small traces, and plotly.py spends
            # ~0.3 ms per numpy array on checks and base64 (half of this figure's cost)
            xs = [0.0, 1.0, None] * int(r.size)
            ys = [v for a, b in zip((r + offset).tolist(), (c + offset).tolist(), strict=True)
                  for v in (a, b, None)]
            data.append(dict(
                type="scatter", x=xs, y=ys, mode="lines", line=dict(color=colour, width=2.5),
                opacity=float(lv) / levels, legendgroup=f"head{h}", showlegend=False,
                hoverinfo="skip", meta=dict(head=h, level=int(lv)),
                name=common.HEAD_NAME.format(h=h),
            ))
    focus_q = focus[1] if focus and focus[0] == "query" else None
    focus_k = focus[1] if focus and focus[0] == "key" else None
    for side_name, side, count, x, focused in (
            (common.AXIS_QUERIES, common.AXIS_QUERY, t_q, 0.0, focus_q),
            (common.AXIS_KEYS, common.AXIS_KEY, t_k, 1.0, focus_k)):
        colours = [FOCUS_COLOUR if i == focused else MARKER_COLOUR for i in range(count)]
        sizes = [16 if i == focused else 11 for i in range(count)]
        data.append(dict(
            type="scatter", x=np.full(count, x), y=np.arange(count), mode="markers",
            name=side_name,
            marker=dict(color=colours, size=sizes, line=dict(color="white", width=1)),
            selected=dict(marker=dict(opacity=1.0)), unselected=dict(marker=dict(opacity=1.0)),
            showlegend=False, customdata=np.arange(count),
            hovertemplate=f"{side} %{{customdata}}<extra></extra>",
            yaxis="y" if x == 0.0 else "y2",
        ))
    return figure(data, dict(
        height=height or int(min(900, max(260, 90 + 30 * n))),
        margin=dict(l=10, r=10, t=30, b=40),
        plot_bgcolor="white", font=dict(size=13),
        xaxis=dict(range=[-0.04, 1.04], visible=False, fixedrange=True),
        yaxis=_tick_axis(q_labels, n, "left"),
        yaxis2=dict(_tick_axis(k_labels, n, "right"), overlaying="y", matches="y"),
        legend=dict(orientation="h", yanchor="top", y=-0.02, x=0.5, xanchor="center"),
        hovermode="closest", clickmode="event+select", dragmode=False,
        annotations=[dict(x=x, y=1.0, xref="x", yref="paper", text=name, showarrow=False,
                          yanchor="bottom", xanchor="center", font=dict(size=12))
                     for x, name in ((0, common.AXIS_QUERIES), (1, common.AXIS_KEYS))],
    ))
