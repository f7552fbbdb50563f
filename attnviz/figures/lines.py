"""Line charts: values over positions (the positional-encoding curves).

Nothing here imports Streamlit. Series are drawn in the order given, with the same colour cycle
on every page.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

# Okabe–Ito, colour-blind safe; cycled when there are more series
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")


def line_chart(x: ArrayLike, series: Mapping[str, ArrayLike], *, title: str = "",
               x_title: str = "", y_title: str = "", y_range: tuple[float, float] | None = None,
               markers: bool | None = None, height: int = 320) -> go.Figure:
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

    Returns
    -------
    go.Figure
    """
    x = np.asarray(x)
    if markers is None:
        markers = x.shape[0] <= 60
    fig = go.Figure()
    for i, (name, y) in enumerate(series.items()):
        y = np.asarray(y, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"series {name!r} has shape {y.shape}, expected {x.shape}")
        fig.add_trace(go.Scatter(
            x=x, y=y, name=name, mode="lines+markers" if markers else "lines",
            line=dict(color=COLOURS[i % len(COLOURS)], width=2), marker=dict(size=5),
            hovertemplate=f"{name}<br>{x_title or 'x'} %{{x}}<br>value %{{y:.6g}}<extra></extra>",
        ))
    fig.update_layout(
        title=dict(text=title, x=0, font=dict(size=14)) if title else None,
        height=height, margin=dict(l=10, r=10, t=34 if title else 10, b=10),
        xaxis=dict(title=x_title or None, automargin=True, zeroline=False),
        yaxis=dict(title=y_title or None, automargin=True, range=y_range, zeroline=True,
                   zerolinecolor="#bbbbbb"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
        plot_bgcolor="white", font=dict(size=13), hovermode="x unified",
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eeeeee")
    fig.update_yaxes(showgrid=True, gridcolor="#eeeeee")
    return fig
