"""Figures of the Induction page: the loss curve over a layers × heads grid of attention patterns
stepped by one slider (Play in the browser), the heads' scores over training, the loss by
position, and what each head writes into the residual stream.

Nothing here imports Streamlit; every word comes in as an argument.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures import training
from attnviz.figures.base import axis, figure
from attnviz.figures.heatmap import WEIGHTS_SCALE, Values, colour_scale, heatmap, tick_text
from attnviz.figures.lines import COLOURS, REFERENCE_COLOUR

PHASE_COLOUR = "rgba(214, 39, 40, 0.12)"  # the phase change's band
MARKER_COLOUR = training.MARKER_COLOUR
# vertical layout in pixels, from the top: the loss curve and its step numbers, the slider (the
# step shown, Play and Pause), then the heads' grid under its titles and its turned labels.
# The grid is sized for the plot area beside the sidebar at 1024 × 768 (~500 px wide) so that
# the whole figure (~600 px at 2 layers × 2 heads) fits on that screen under the page's title.
_MARGIN_TOP = 8
_LOSS_PX = 100
_LOSS_TICKS_PX = 22
_SLIDER_PX = 54
_GRID_PX = 365  # the grid's height, titles included, at most (the default)
_GRID_WIDTH_PX = 470  # its width at most
_TITLE_LINE_PX = 18  # one line of a head's title (13 px type)
_BESIDE_LOSS, _BESIDE_GRID = 0.4, 0.47  # beside: the loss's and the grid's share of the width
_BESIDE_LOSS_PX = 200  # beside: the loss curve's height
_BESIDE_MARGIN_TOP = 30  # beside: room for the chart's toolbar above the heads' titles
_GAP = 2  # cells between two heads' patterns
_LABEL_ROOM = 1.3  # a position label needs this many times its type size along the axis


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


@dataclass(frozen=True)
class GridLayout:
    """Where every head's t × t pattern sits in the one heatmap that draws them all.

    The heatmap has ``rows`` × ``cols`` cells: layer l's patterns start at row
    ``row0[l]`` (under ``title_rows`` rows left empty for the heads' titles), head h's at
    column ``col0[h]`` (``_GAP`` empty columns between two heads). ``cell_px`` is a cell's side
    in pixels (square cells: the figure keeps x and y at one scale).
    """

    t: int
    row0: tuple[int, ...]
    col0: tuple[int, ...]
    rows: int
    cols: int
    title_rows: int
    title_lines: int
    cell_px: float

    def tile(self, weights: np.ndarray) -> np.ndarray:
        """(..., n_layers, n_heads, t, t) -> (..., rows, cols): every pattern in its place,
        NaN (not drawn) between them."""
        out = np.full((*weights.shape[:-4], self.rows, self.cols), np.nan, dtype=weights.dtype)
        t = self.t
        for layer, r in enumerate(self.row0):
            for head, c in enumerate(self.col0):
                out[..., r:r + t, c:c + t] = weights[..., layer, head, :, :]
        return out


def grid_layout(n_layers: int, n_heads: int, t: int, *, height_px: float = _GRID_PX,
                title_lines: int = 1) -> GridLayout:
    """The heads' grid within :data:`_GRID_WIDTH_PX` × ``height_px`` (titles included), cells
    square: the cell is the largest both allow, and each layer's title gets the rows
    ``title_lines`` lines of type need at that size."""
    cols = n_heads * t + (n_heads - 1) * _GAP

    def cell_for(title_rows: int) -> float:
        return min(_GRID_WIDTH_PX / cols, height_px / (n_layers * (t + title_rows)))

    title_rows = 0
    for _ in range(3):  # the titles' rows depend on the cell, the cell on the rows: settle
        title_rows = math.ceil(title_lines * _TITLE_LINE_PX / cell_for(title_rows))
    return GridLayout(t, tuple(layer * (t + title_rows) + title_rows for layer in range(n_layers)),
                      tuple(head * (t + _GAP) for head in range(n_heads)),
                      n_layers * (t + title_rows), cols, title_rows, title_lines,
                      cell_for(title_rows))


def formation_figure(losses: ArrayLike, frames: Sequence[int], weights: ArrayLike,
                     labels: Sequence[str], titles: Sequence[Sequence[str]], *,
                     phase: tuple[int, int, int] | None, loss_title: str, step_title: str,
                     step_prefix: str, play: str, pause: str, query_title: str, key_title: str,
                     label_px: int = 9, grid_px: float = _GRID_PX, beside: bool = False
                     ) -> tuple[go.Figure, list[dict]]:
    """The training loss above (or beside) every head's attention, stepped together through
    the recorded steps by one slider (and Play) in the browser.

    The heads' patterns are drawn as one heatmap (:class:`GridLayout`: a layer a row, a head a
    column, square cells), so that the whole figure fits one screen at 1024 × 768; a position's
    label is written on every k-th row and column (as many as fit at ``label_px``), and the
    hover names every cell's head, query and key.

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
        ``titles[layer][head]``, written above each pattern (on two lines, split at " · ",
        when one line is wider than the pattern).
    phase : (step, start, end) or None
        The phase change, marked on the loss curve.
    loss_title, step_title, step_prefix, play, pause, query_title, key_title : str
        Words.
    label_px : int
        The position labels' type size (presenter mode draws them bigger, so fewer of them).
    grid_px : float
        The most height the grid takes, its titles included (its labels below come on top).
    beside : bool
        The loss curve and the slider to the left of the grid (a page as wide as presenter
        mode's, ~950 px at 1024), not above it.

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
    n_layers, n_heads, t = weights.shape[1:4]
    grid = grid_layout(n_layers, n_heads, t, height_px=grid_px)
    if any(len(title) * _TITLE_LINE_PX * 0.72 * 0.55 > grid.cell_px * t
           for row in titles for title in row):
        grid = grid_layout(n_layers, n_heads, t, height_px=grid_px, title_lines=2)
        titles = [[title.replace(" · ", "<br>") for title in row] for row in titles]
    grid_height = grid.cell_px * grid.rows
    ticks = [tick_text(s) for s in labels]
    ticks_px = round(max(map(len, ticks)) * label_px * 0.62) + 12  # turned labels below
    curve_px = _BESIDE_LOSS_PX if beside else _LOSS_PX
    loss_px = curve_px + _LOSS_TICKS_PX + _SLIDER_PX  # the curve, its steps, the slider
    area = max(grid_height, loss_px) if beside else loss_px + grid_height
    top = _BESIDE_MARGIN_TOP if beside else _MARGIN_TOP

    def y(px: float) -> float:  # pixels from the top of the plot area -> paper fraction
        return 1 - px / area

    loss_x = [0, _BESIDE_LOSS] if beside else [0, 1]
    last = frames[-1] if frames else 0
    data = [training.loss_line(np.arange(1, len(losses) + 1), losses, loss_title=loss_title,
                               step_title=step_title, digits=4)]
    layout = dict(height=round(area + top + ticks_px), showlegend=False,
                  margin=dict(l=70, r=20, t=top, b=ticks_px),
                  xaxis=dict(domain=loss_x, anchor="y", range=[0, max(last, 1)],
                             tickfont=dict(size=11)),
                  yaxis=training.loss_axis(loss_title, losses, domain=[y(curve_px), 1]),
                  shapes=_phase_shapes(phase, "x", "y"), annotations=[])
    layout["yaxis"]["title"]["font"] = dict(size=14)  # whole in presenter mode too
    # the grid: one heatmap, square cells (x follows y's scale and shrinks to the middle)
    every = max(1, math.ceil(label_px * _LABEL_ROOM / grid.cell_px))
    shown = [s if i % every == 0 else "" for i, s in enumerate(ticks)]
    hover = np.full((grid.rows, grid.cols), "", dtype=object)
    for layer, r in enumerate(grid.row0):
        for head, c in enumerate(grid.col0):
            name = titles[layer][head].replace("<br>", " · ")
            for i in range(t):
                hover[r + i, c:c + t] = [f"{name}<br>{query_title} {labels[i]} → {key_title} "
                                         f"{labels[j]}" for j in range(t)]
    data.append(dict(type="heatmap", z=grid.tile(weights[-1]), text=hover, xaxis="x2",
                     yaxis="y2", showscale=False, colorscale=colour_scale(WEIGHTS_SCALE),
                     zmin=0.0, zmax=1.0, hoverongaps=False,
                     hovertemplate="%{text}: %{z:.3f}<extra></extra>"))
    tick_font = dict(size=label_px)
    layout["xaxis2"] = dict(domain=[_BESIDE_GRID, 1] if beside else [0, 1], anchor="y2",
                            range=[-0.5, grid.cols - 0.5], scaleanchor="y2", scaleratio=1,
                            constrain="domain", constraintoward="left" if beside else "center",
                            tickmode="array", tickangle=-90,
                            tickfont=tick_font, ticks="",
                            tickvals=[c + i for c in grid.col0 for i in range(t)],
                            ticktext=shown * n_heads, showgrid=False, zeroline=False)
    layout["yaxis2"] = dict(domain=[y(grid_height), 1] if beside else [0, y(loss_px)],
                            anchor="x2", range=[grid.rows - 0.5, -0.5], constrain="domain",
                            constraintoward="top", tickmode="array", tickfont=tick_font,
                            ticks="", tickvals=[r + i for r in grid.row0 for i in range(t)],
                            ticktext=shown * n_layers, showgrid=False, zeroline=False)
    for layer, r in enumerate(grid.row0):
        for head, c in enumerate(grid.col0):
            layout["annotations"].append(dict(
                text=f"<b>{titles[layer][head]}</b>", x=c + (t - 1) / 2, y=r - 0.5,
                xref="x2", yref="y2", yanchor="bottom", showarrow=False,
                font=dict(size=round(_TITLE_LINE_PX * 0.72))))
    slider_top = y(curve_px + _LOSS_TICKS_PX)
    return training.replay_figure(
        data, layout, [grid.tile(weights)],
        [(step, _loss_at(losses, step)) for step in frames], frames,
        step_prefix=step_prefix, play=play, pause=pause, frame_ms=150,
        slider=dict(len=loss_x[1], x=0.0, y=slider_top, yanchor="top", pad=dict(t=0, b=0),
                    font=dict(color="rgba(0, 0, 0, 0)"), ticklen=0, minorticklen=0),
        current_colour="#444444",
        buttons=dict(x=loss_x[1], y=slider_top, xanchor="right", yanchor="top",
                     pad=dict(t=0, r=0), font=dict(size=13)))


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
    return heatmap(norms, list(col_labels), list(row_labels), kind="sequential", x_title=x_title,
                   values=Values(zmin=0.0))
