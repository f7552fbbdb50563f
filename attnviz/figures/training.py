"""The recorded training run as one figure: the loss curve above, the weights and the trained
matrices below, and one slider (with Play) that steps all of them through the recorded steps
in the browser, with no server round trip.

:func:`loss_line`, :func:`loss_axis` and :func:`replay_figure` (the marker on the loss curve,
the frames, the slider and Play) are shared with the Induction page's figure
(:mod:`attnviz.figures.induction`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.base import axis, figure
from attnviz.figures.heatmap import SIGNED_SCALE, WEIGHTS_SCALE, colour_scale, tick_text
from attnviz.figures.lines import COLOURS

_PANELS = ((0.0, 0.30), (0.35, 0.65), (0.70, 1.0))  # x domains of the heatmaps below
MARKER_COLOUR = "#d62728"  # the recorded step shown, on the loss curve
_TEXT_LIMIT = 10  # numbers in cells up to this many rows and columns


def training_figure(losses: ArrayLike, frames: Sequence[int],
                    panels: Mapping[str, tuple[np.ndarray, list[str], list[str], bool]], *,
                    loss_title: str, step_title: str, step_prefix: str, play: str,
                    pause: str, height: int = 620) -> tuple[go.Figure, list[dict]]:
    """The loss curve and up to three matrices, stepped together by one slider.

    Parameters
    ----------
    losses : array_like of shape (n + 1,)
        The loss at every step.
    frames : sequence of int
        The recorded steps.
    panels : mapping of title to (stack, x_labels, y_labels, is_weights)
        Up to three matrices, each a stack of shape (len(frames), rows, cols); weights are
        drawn on the fixed 0..1 scale, the others on a diverging scale fixed over all steps.
    loss_title, step_title, step_prefix, play, pause : str
        Words: the loss axis, the step axis, the slider's prefix, the two buttons.

    Returns
    -------
    (go.Figure, list of dict)
        The figure at its last recorded step, and the frames for
        :func:`attnviz.ui.panels.show_figure`.
    """
    losses = np.asarray(losses, dtype=float)
    frames = [int(f) for f in frames]
    data = [loss_line(np.arange(losses.shape[0]), losses, loss_title=loss_title,
                      step_title=step_title)]
    layout = dict(height=height, showlegend=False, margin=dict(l=70, r=20, t=50, b=130),
                  xaxis=axis(step_title, domain=[0, 1], anchor="y"),
                  yaxis=loss_axis(loss_title, losses, domain=[0.64, 1.0]),
                  annotations=[])
    heatmaps = []
    for n, (title, (stack, x_labels, y_labels, weights)) in enumerate(list(panels.items())[:3]):
        stack = np.asarray(stack, dtype=float)
        bound = float(np.abs(stack).max()) or 1.0
        colours = (dict(colorscale=colour_scale(WEIGHTS_SCALE), zmin=0.0, zmax=1.0) if weights else
                   dict(colorscale=colour_scale(SIGNED_SCALE), zmin=-bound, zmax=bound, zmid=0.0))
        xa, ya = f"x{n + 2}", f"y{n + 2}"
        text = max(stack.shape[1:]) <= _TEXT_LIMIT
        data.append(dict(type="heatmap", z=stack[-1], x=[tick_text(s) for s in x_labels],
                         y=[tick_text(s) for s in y_labels], xaxis=xa, yaxis=ya,
                         showscale=False, xgap=1, ygap=1, **colours,
                         texttemplate="%{z:.2f}" if text else None,
                         hovertemplate="%{y} · %{x}: %{z:.6g}<extra></extra>"))
        lo, hi = _PANELS[n]
        layout[f"xaxis{n + 2}"] = dict(domain=[lo, hi], anchor=ya, type="category",
                                       tickangle=-45)
        layout[f"yaxis{n + 2}"] = dict(domain=[0.0, 0.43], anchor=xa, autorange="reversed",
                                       type="category")
        layout["annotations"].append(dict(text=f"<b>{title}</b>", x=(lo + hi) / 2, y=0.47,
                                          xref="paper", yref="paper", showarrow=False,
                                          font=dict(size=15)))
        heatmaps.append(stack)
    return replay_figure(
        data, layout, heatmaps, [(step, losses[step]) for step in frames], frames,
        step_prefix=step_prefix, play=play, pause=pause, frame_ms=100,
        slider=dict(len=1.0, x=0.0, y=-0.16, yanchor="top", pad=dict(t=0, b=0)),
        buttons=dict(x=0.0, y=1.02, xanchor="left", yanchor="bottom", pad=dict(t=0, r=0)))


def loss_line(steps: ArrayLike, losses: np.ndarray, *, loss_title: str, step_title: str,
              digits: int = 6) -> dict:
    """The loss curve: a line on the axes x and y, its hover the step and the loss."""
    return dict(type="scatter", x=steps, y=losses, mode="lines", name=loss_title,
                line=dict(color=COLOURS[0], width=2), xaxis="x", yaxis="y",
                hovertemplate=f"{step_title} %{{x}}<br>{loss_title} %{{y:.{digits}g}}"
                              "<extra></extra>")


def loss_axis(title: str, losses: np.ndarray, **props) -> dict:
    """The loss axis (y, on x): logarithmic when every loss is positive."""
    positive = bool(len(losses) and (losses > 0).all())
    return axis(title, anchor="x", type="log" if positive else "linear", **props)


def replay_figure(data: list[dict], layout: dict, stacks: Sequence[np.ndarray],
                  points: Sequence[tuple[float, float]], frames: Sequence[int], *,
                  step_prefix: str, play: str, pause: str, frame_ms: int, slider: dict,
                  buttons: dict, current_colour: str | None = None
                  ) -> tuple[go.Figure, list[dict]]:
    """Finish a figure that replays a training run: a marker on the loss curve, one frame per
    recorded step, the slider and the Play and Pause buttons.

    Parameters
    ----------
    data : list of dict
        The traces: the loss curve first (axes x, y), then one trace per stack.
    layout : dict
        The layout so far (its ``sliders`` and ``updatemenus`` are set here).
    stacks : sequence of ndarray, each of shape (len(frames), ...)
        ``stacks[i][f]`` is trace ``1 + i``'s z at recorded step f.
    points : sequence of (x, y)
        Where the marker sits on the loss curve at each recorded step.
    frames : sequence of int
        The recorded steps (the frames' names).
    step_prefix, play, pause : str
        Words: the slider's prefix, the two buttons.
    frame_ms : int
        Play's time per frame.
    slider, buttons : dict
        Where the slider and the buttons go (and any other of their properties).
    current_colour : str, optional
        The colour of the step shown above the slider (default: the slider's font colour;
        set it when that font is hidden).

    Returns
    -------
    (go.Figure, list of dict)
        The figure at its last recorded step, and the frames for
        :func:`attnviz.ui.panels.show_figure`.
    """
    marker = len(data)
    data.append(dict(type="scatter", x=[points[-1][0]], y=[points[-1][1]], mode="markers",
                     marker=dict(size=12, color=MARKER_COLOUR), xaxis="x", yaxis="y",
                     hoverinfo="skip"))
    stepped = [*range(1, 1 + len(stacks)), marker]
    out = [dict(name=str(step), data=[*(dict(z=stack[i]) for stack in stacks),
                                      dict(x=[points[i][0]], y=[points[i][1]])],
                traces=stepped) for i, step in enumerate(frames)]
    animate = dict(mode="immediate", frame=dict(duration=0, redraw=True),
                   transition=dict(duration=0))
    layout["sliders"] = [dict(
        active=len(frames) - 1,
        currentvalue=dict(prefix=step_prefix, xanchor="left",
                          font=dict(size=15, **({"color": current_colour} if current_colour
                                                else {}))),
        steps=[dict(label=str(s), method="animate", args=[[str(s)], animate]) for s in frames],
        **slider)]
    layout["updatemenus"] = [dict(
        type="buttons", direction="left", showactive=False,
        buttons=[dict(label=play, method="animate",
                      args=[None, dict(frame=dict(duration=frame_ms, redraw=True),
                                       fromcurrent=True, transition=dict(duration=0),
                                       mode="immediate")]),
                 dict(label=pause, method="animate", args=[[None], animate])],
        **buttons)]
    return figure(data, layout), out
