"""The recorded training run as one figure: the loss curve above, the weights and the trained
matrices below, and one slider (with Play) that steps all of them through the recorded steps
in the browser, with no server round trip."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.base import axis, figure
from attnviz.figures.heatmap import SIGNED_SCALE, WEIGHTS_SCALE, colour_scale, tick_text
from attnviz.figures.lines import COLOURS

_PANELS = ((0.0, 0.30), (0.35, 0.65), (0.70, 1.0))  # x domains of the heatmaps below
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
    steps = np.arange(losses.shape[0])
    positive = bool((losses > 0).all())
    data = [dict(type="scatter", x=steps, y=losses, mode="lines", name=loss_title,
                 line=dict(color=COLOURS[0], width=2), xaxis="x", yaxis="y",
                 hovertemplate=f"{step_title} %{{x}}<br>{loss_title} %{{y:.6g}}<extra></extra>")]
    layout = dict(height=height, showlegend=False, margin=dict(l=70, r=20, t=50, b=130),
                  xaxis=axis(step_title, domain=[0, 1], anchor="y"),
                  yaxis=axis(loss_title, domain=[0.64, 1.0], anchor="x",
                             type="log" if positive else "linear"),
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
    marker = len(data)
    data.append(dict(type="scatter", x=[frames[-1]], y=[losses[frames[-1]]], mode="markers",
                     marker=dict(size=12, color="#d62728"), xaxis="x", yaxis="y",
                     hoverinfo="skip"))
    out = []
    for i, step in enumerate(frames):
        traces = [dict(z=h[i]) for h in heatmaps]
        traces.append(dict(x=[step], y=[losses[step]]))
        out.append(dict(name=str(step), data=traces, traces=[*range(1, marker), marker]))
    animate = dict(mode="immediate", frame=dict(duration=0, redraw=True),
                   transition=dict(duration=0))
    layout["sliders"] = [dict(
        active=len(frames) - 1, len=1.0, x=0.0, y=-0.16, yanchor="top", pad=dict(t=0, b=0),
        currentvalue=dict(prefix=step_prefix, xanchor="left", font=dict(size=15)),
        steps=[dict(label=str(s), method="animate", args=[[str(s)], animate]) for s in frames])]
    layout["updatemenus"] = [dict(
        type="buttons", direction="left", x=0.0, y=1.02, xanchor="left", yanchor="bottom",
        pad=dict(t=0, r=0), showactive=False,
        buttons=[dict(label=play, method="animate",
                      args=[None, dict(frame=dict(duration=100, redraw=True), fromcurrent=True,
                                       transition=dict(duration=0), mode="immediate")]),
                 dict(label=pause, method="animate", args=[[None], animate])])]
    return figure(data, layout), out
