"""Figures of the Induction page: the loss curve over a layers × heads grid of attention patterns
stepped by one slider (Play in the browser), the heads' scores over training, the loss by
position, and what each head writes into the residual stream.

Nothing here imports Streamlit; every word comes in as an argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.base import axis, figure
from attnviz.figures.heatmap import WEIGHTS_SCALE, colour_scale, heatmap, tick_text
from attnviz.figures.lines import COLOURS, REFERENCE_COLOUR

PHASE_COLOUR = "rgba(214, 39, 40, 0.12)"  # the phase change's band
MARKER_COLOUR = "#d62728"
_PLAY_PX = 36  # the Play and Pause buttons
_LOSS_PX = 180  # the loss curve above the grid
_TITLE_PX = 26  # a heatmap's title
_ROW_PX = 290  # one layer's heatmaps
_MARGIN_TOP, _MARGIN_BOTTOM = 10, 100  # the slider lives in the bottom margin
_GAP = 0.06  # between two heatmaps, as a fraction of the width


def _phase_shapes(phase: tuple[int, int, int] | None, xref: str, yref: str) -> list[dict]:
    """A shaded band from the phase change's start to its end and a line at its steepest step
    (none for None)."""
    if phase is None:
        return []
    step, start, end = phase
    return [dict(type="rect", xref=xref, yref=f"{yref} domain", x0=start, x1=end, y0=0, y1=1,
                 fillcolor=PHASE_COLOUR, line=dict(width=0), layer="below"),
            dict(type="line", xref=xref, yref=f"{yref} domain", x0=step, x1=step, y0=0, y1=1,
                 line=dict(color=MARKER_COLOUR, width=1, dash="dot"))]


def formation_figure(losses: ArrayLike, frames: Sequence[int], weights: ArrayLike,
                     labels: Sequence[str], titles: Sequence[Sequence[str]], *,
                     phase: tuple[int, int, int] | None, loss_title: str, step_title: str,
                     step_prefix: str, play: str, pause: str, query_title: str, key_title: str,
                     label_px: int = 9) -> tuple[go.Figure, list[dict]]:
    """The training loss above every head's attention, stepped together through the recorded
    steps by one slider (and Play) in the browser.

    Parameters
    ----------
    losses : array_like of shape (n,)
        The training loss of steps 1 .. n.
    frames : sequence of int
        The recorded steps (0 = before training).
    weights : array_like of shape (len(frames), n_layers, n_heads, t, t)
    labels : sequence of str
        The t positions' labels (unique).
    titles : sequence of sequence of str
        ``titles[layer][head]``, written above each heatmap.
    phase : (step, start, end) or None
        The phase change, marked on the loss curve.
    loss_title, step_title, step_prefix, play, pause, query_title, key_title : str
        Words.
    label_px : int
        The position labels' type size; the rows grow so that every label has room (presenter
        mode draws them bigger).

    Returns
    -------
    (go.Figure, list of dict)
        The figure at its last recorded step and the frames for
        :func:`attnviz.ui.panels.show_figure`. The weights travel as float32 (0..1 drawn on a
        fixed scale: 7 significant digits are more than a colour shows).
    """
    losses = np.asarray(losses, dtype=float)
    weights = np.asarray(weights, dtype=np.float32)
    frames = [int(f) for f in frames]
    n_layers, n_heads = weights.shape[1:3]
    ticks = [tick_text(s) for s in labels]
    # vertical layout in pixels from the top of the plot area: the Play button, the loss
    # curve, its step axis, then per layer a title, the heatmaps and their turned labels
    row_px = max(_ROW_PX, round(len(labels) * label_px * 1.25))  # one label a row, no overlap
    ticks_px = round(max(map(len, ticks)) * label_px * 0.62) + 14  # turned labels below
    rows_px = [_PLAY_PX, _LOSS_PX, 30 + 4 * label_px] + [_TITLE_PX + row_px + ticks_px] * n_layers
    area = sum(rows_px)
    height = area + _MARGIN_TOP + _MARGIN_BOTTOM

    def y(px: float) -> float:  # pixels from the top of the plot area -> paper fraction
        return 1 - px / area

    steps = np.arange(1, len(losses) + 1)
    positive = bool(len(losses) and (losses > 0).all())
    data = [dict(type="scatter", x=steps, y=losses, mode="lines", name=loss_title,
                 line=dict(color=COLOURS[0], width=2), xaxis="x", yaxis="y",
                 hovertemplate=f"{step_title} %{{x}}<br>{loss_title} %{{y:.4g}}<extra></extra>")]
    layout = dict(height=height, showlegend=False,
                  margin=dict(l=70, r=20, t=_MARGIN_TOP, b=_MARGIN_BOTTOM),
                  xaxis=axis(step_title, domain=[0, 1], anchor="y"),
                  yaxis=axis(loss_title, domain=[y(_PLAY_PX + _LOSS_PX), y(_PLAY_PX)],
                             anchor="x", type="log" if positive else "linear"),
                  shapes=_phase_shapes(phase, "x", "y"), annotations=[])
    width = (1 - _GAP * (n_heads - 1)) / n_heads
    for layer in range(n_layers):
        top_px = sum(rows_px[:3 + layer]) + _TITLE_PX
        for head in range(n_heads):
            n = 2 + layer * n_heads + head
            xa, ya = f"x{n}", f"y{n}"
            x0 = head * (width + _GAP)
            data.append(dict(type="heatmap", z=weights[-1, layer, head], x=list(labels),
                             y=list(labels), xaxis=xa, yaxis=ya, showscale=False,
                             colorscale=colour_scale(WEIGHTS_SCALE), zmin=0.0, zmax=1.0,
                             hovertemplate=f"{query_title} %{{y}} → {key_title} %{{x}}: "
                                           "%{z:.3f}<extra></extra>"))
            small = dict(type="category", tickmode="array", tickvals=list(labels),
                         ticktext=ticks, tickfont=dict(size=label_px))
            layout[f"xaxis{n}"] = dict(domain=[x0, x0 + width], anchor=ya, tickangle=-90,
                                       **small)
            layout[f"yaxis{n}"] = dict(domain=[y(top_px + row_px), y(top_px)], anchor=xa,
                                       autorange="reversed", **small)
            layout["annotations"].append(dict(
                text=f"<b>{titles[layer][head]}</b>", x=x0 + width / 2, y=y(top_px),
                xref="paper", yref="paper", yanchor="bottom", showarrow=False,
                font=dict(size=14)))
    marker = len(data)
    last = frames[-1]
    data.append(dict(type="scatter", x=[max(last, 1)], y=[_loss_at(losses, last)],
                     mode="markers",
                     marker=dict(size=12, color=MARKER_COLOUR), xaxis="x", yaxis="y",
                     hoverinfo="skip"))
    out = []
    for i, step in enumerate(frames):
        traces = [dict(z=weights[i, layer, head]) for layer in range(n_layers)
                  for head in range(n_heads)]
        traces.append(dict(x=[max(step, 1)], y=[_loss_at(losses, step)]))  # step 0: at 1
        out.append(dict(name=str(step), data=traces, traces=[*range(1, marker), marker]))
    animate = dict(mode="immediate", frame=dict(duration=0, redraw=True),
                   transition=dict(duration=0))
    layout["sliders"] = [dict(
        active=len(frames) - 1, len=1.0, x=0.0, y=0, yanchor="top", pad=dict(t=40, b=0),
        currentvalue=dict(prefix=step_prefix, xanchor="left", font=dict(size=15)),
        steps=[dict(label=str(s), method="animate", args=[[str(s)], animate]) for s in frames])]
    layout["updatemenus"] = [dict(
        type="buttons", direction="left", x=0.0, y=1.0, xanchor="left", yanchor="top",
        pad=dict(t=0, r=0), showactive=False,
        buttons=[dict(label=play, method="animate",
                      args=[None, dict(frame=dict(duration=150, redraw=True), fromcurrent=True,
                                       transition=dict(duration=0), mode="immediate")]),
                 dict(label=pause, method="animate", args=[[None], animate])])]
    return figure(data, layout), out


def _loss_at(losses: np.ndarray, step: int) -> float:
    """The training loss of ``step`` (step 0, before training: the first step's loss)."""
    if not len(losses):
        return float("nan")
    return float(losses[min(max(step, 1), len(losses)) - 1])


def scores_figure(frames: Sequence[int], scores: Mapping[str, ArrayLike],
                  head_names: Sequence[str], *, phase: tuple[int, int, int] | None,
                  threshold: float, step_title: str, score_title: str,
                  height: int = 340) -> go.Figure:
    """Each score of every head over training: one panel per score, one line per head (the
    same colour in every panel), a dashed line at ``threshold`` and the phase change shaded.

    Parameters
    ----------
    frames : sequence of int
        The recorded steps.
    scores : mapping of title to array_like of shape (len(frames), n_layers, n_heads)
    head_names : sequence of str
        One per head, layer by layer.
    """
    frames = np.asarray(frames)
    panels = list(scores.items())
    gap = 0.06
    width = (1 - gap * (len(panels) - 1)) / len(panels)
    data, shapes, annotations = [], [], []
    layout: dict = dict(height=height, margin=dict(l=60, r=20, t=40, b=50),
                        legend=dict(orientation="h", y=-0.22))
    for p, (title, values) in enumerate(panels):
        values = np.asarray(values, dtype=float).reshape(len(frames), -1)
        xa, ya = ("x", "y") if p == 0 else (f"x{p + 1}", f"y{p + 1}")
        x0 = p * (width + gap)
        low = min(-0.05, float(values.min()) - 0.05)
        layout[f"xaxis{'' if p == 0 else p + 1}"] = axis(step_title, domain=[x0, x0 + width],
                                                         anchor=ya)
        layout[f"yaxis{'' if p == 0 else p + 1}"] = axis(score_title if p == 0 else "",
                                                         range=[low, 1.05], anchor=xa)
        for h, name in enumerate(head_names):
            data.append(dict(type="scatter", x=frames, y=values[:, h], mode="lines",
                             name=name, legendgroup=name, showlegend=p == 0, xaxis=xa, yaxis=ya,
                             line=dict(color=COLOURS[h % len(COLOURS)], width=2),
                             hovertemplate=f"{name}<br>{step_title} %{{x}}<br>{title} "
                                           "%{y:.3f}<extra></extra>"))
        shapes += _phase_shapes(phase, xa, ya)
        if p < 2:
            shapes.append(dict(type="line", xref=f"{xa} domain", yref=ya, x0=0, x1=1,
                               y0=threshold, y1=threshold,
                               line=dict(color=REFERENCE_COLOUR, width=1, dash="dash")))
        annotations.append(dict(text=f"<b>{title}</b>", x=x0 + width / 2, y=1.0, xref="paper",
                                yref="paper", yanchor="bottom", showarrow=False,
                                font=dict(size=14)))
    layout.update(shapes=shapes, annotations=annotations)
    return figure(data, layout)


def position_loss_figure(series: Mapping[str, ArrayLike], labels: Sequence[str],
                         repeat: tuple[int, int], *, x_title: str, y_title: str,
                         height: int = 340) -> go.Figure:
    """The next-token loss at every position, one line per series, the positions whose next
    token the repeat makes predictable shaded.

    Parameters
    ----------
    series : mapping of name to array_like of shape (t − 1,)
        Position i's loss of predicting token i + 1.
    labels : sequence of str
        The t − 1 predicting positions' labels.
    repeat : (first, last)
        The shaded positions, inclusive.
    """
    x = [tick_text(s) for s in labels]
    data = [dict(type="scatter", x=x, y=np.asarray(y, dtype=float), mode="lines+markers",
                 name=name, line=dict(color=COLOURS[i % len(COLOURS)], width=2),
                 marker=dict(size=6),
                 hovertemplate=f"{name}<br>%{{x}}: %{{y:.3f}}<extra></extra>")
            for i, (name, y) in enumerate(series.items())]
    first, last = repeat
    shapes = [dict(type="rect", xref="x", yref="y domain", x0=first - 0.5, x1=last + 0.5,
                   y0=0, y1=1, fillcolor="rgba(0, 158, 115, 0.12)", line=dict(width=0),
                   layer="below")]
    layout = dict(height=height, margin=dict(l=60, r=20, t=20, b=90), shapes=shapes,
                  xaxis=axis(x_title, type="category", tickangle=-90, tickfont=dict(size=10)),
                  yaxis=axis(y_title, rangemode="tozero"),
                  legend=dict(orientation="h", y=1.08, yanchor="bottom"))
    return figure(data, layout)


def residual_figure(norms: ArrayLike, row_labels: Sequence[str], col_labels: Sequence[str], *,
                    x_title: str) -> go.Figure:
    """‖what each part writes into the residual stream‖ at every position: a heatmap, rows
    the embedding and each head, columns the positions."""
    norms = np.asarray(norms, dtype=float)
    return heatmap(norms, list(col_labels), list(row_labels), kind="sequential",
                   x_title=x_title, zmin=0.0, digits=2)
