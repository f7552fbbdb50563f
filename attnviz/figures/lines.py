"""Line charts: values over positions (the positional-encoding curves).

Nothing here imports Streamlit. Series are drawn in the order given, with the same colour cycle
on every page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.base import axis, figure

# Okabe–Ito, colour-blind safe; cycled when there are more series
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")
REFERENCE_COLOUR = "#777777"  # theory / reference curves, dashed
_GRID = dict(showgrid=True, gridcolor="#eeeeee")  # a light grid on both axes


def line_chart(x: ArrayLike, series: Mapping[str, ArrayLike], *, title: str = "",
               x_title: str = "", y_title: str = "", y_range: tuple[float, float] | None = None,
               markers: bool | None = None, height: int = 320, references: Sequence[str] = (),
               x_axis: Mapping | None = None, y_axis: Mapping | None = None) -> go.Figure:
    """One line per series over a shared x axis.

    Parameters
    ----------
    x : array_like of shape (n,)
        Shared x values (e.g. positions 0..n−1).
    series : mapping of str to array_like of shape (n,)
        Legend name -> y values.
    y_range : (float, float), optional
        Fixed y axis range (e.g. (−1.05, 1.05) for sines and cosines).
    markers : bool, optional
        Draw a marker at every point; by default only for up to 60 points.
    references : sequence of str
        Names of series drawn as thin grey dashed lines without markers (a theory curve).
    x_axis, y_axis : mapping, optional
        More axis properties (e.g. ``type="log"``).

    Returns
    -------
    go.Figure
    """
    x = np.asarray(x)
    if markers is None:
        markers = x.shape[0] <= 60
    data = []
    for i, (name, y) in enumerate(series.items()):
        y = np.asarray(y, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"series {name!r} has shape {y.shape}, expected {x.shape}")
        trace = dict(type="scatter", x=x, y=y, name=name,
                     mode="lines+markers" if markers else "lines",
                     line=dict(color=COLOURS[i % len(COLOURS)], width=2), marker=dict(size=5),
                     hovertemplate=f"{name}<br>{x_title or 'x'} %{{x}}<br>value %{{y:.6g}}"
                                   "<extra></extra>")
        if name in references:
            trace.update(mode="lines", line=dict(color=REFERENCE_COLOUR, width=1.5, dash="dash"))
        data.append(trace)
    layout = dict(
        height=height, margin=dict(l=10, r=10, t=34 if title else 10, b=10),
        xaxis=axis(x_title, automargin=True, zeroline=False, **_GRID, **(x_axis or {})),
        yaxis=axis(y_title, automargin=True, zeroline=True, zerolinecolor="#bbbbbb", **_GRID,
                    **({"range": list(y_range)} if y_range is not None else {}),
                    **(y_axis or {})),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
        plot_bgcolor="white", font=dict(size=13), hovermode="x unified",
    )
    if title:
        layout["title"] = dict(text=title, x=0, font=dict(size=14))
    return figure(data, layout)


def mark_x(fig: go.Figure, x: float, colour: str = "#d62728") -> go.Figure:
    """A dotted vertical line across the whole plot at ``x`` (the shape ``add_vline`` makes,
    added directly: ``add_vline`` takes ~5 ms a call looking through the axes)."""
    fig.add_shape(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain",
                  line=dict(dash="dot", color=colour))
    return fig
