"""Charts of the why-√d_k experiment (line charts from :mod:`attnviz.figures.lines`) and a
grouped bar chart of weight distributions. Nothing here imports Streamlit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.lines import COLOURS, line_chart
from attnviz.sqrt_dk import SqrtDkResult

UNSCALED, SCALED = "unscaled q·k", "scaled q·k/√d_k"
THEORY_COLOUR = "#777777"


def _log2_axis(fig: go.Figure, d_ks: np.ndarray) -> go.Figure:
    fig.update_xaxes(type="log", tickvals=list(d_ks), ticktext=[str(d) for d in d_ks])
    return fig


def variance_figure(res: SqrtDkResult) -> go.Figure:
    """Variance of the scores against d_k (log-log), unscaled, scaled and the theory d_k."""
    fig = line_chart(res.d_ks, {UNSCALED: res.var_unscaled, SCALED: res.var_scaled,
                                "theory: d_k": res.d_ks.astype(float),
                                "theory: 1": np.ones(res.d_ks.shape)},
                     x_title="d_k", y_title="variance of the scores")
    for trace in fig.data[2:]:
        trace.line.dash = "dash"
        trace.line.width = 1.5
        trace.line.color = THEORY_COLOUR
        trace.mode = "lines"
    fig.update_yaxes(type="log", dtick=1)
    return _log2_axis(fig, res.d_ks)


def entropy_figure(res: SqrtDkResult) -> go.Figure:
    """Mean softmax entropy against d_k, unscaled vs scaled, with ln t_k (uniform) dashed."""
    fig = line_chart(res.d_ks, {UNSCALED: res.entropy_unscaled, SCALED: res.entropy_scaled,
                                f"uniform: ln {res.t_k}": np.full(res.d_ks.shape,
                                                                 res.max_entropy)},
                     x_title="d_k", y_title="mean entropy (nats)",
                     y_range=(0.0, res.max_entropy * 1.08))
    fig.data[2].line.dash = "dash"
    fig.data[2].line.width = 1.5
    fig.data[2].line.color = THEORY_COLOUR
    fig.data[2].mode = "lines"
    return _log2_axis(fig, res.d_ks)


def max_weight_figure(res: SqrtDkResult) -> go.Figure:
    """Mean largest weight of a row against d_k."""
    fig = line_chart(res.d_ks, {UNSCALED: res.max_weight_unscaled,
                                SCALED: res.max_weight_scaled},
                     x_title="d_k", y_title="mean max weight", y_range=(0.0, 1.05))
    return _log2_axis(fig, res.d_ks)


def grouped_bars(categories: Sequence[str], series: Mapping[str, ArrayLike], *,
                 y_title: str = "", y_range: tuple[float, float] | None = None,
                 height: int = 300) -> go.Figure:
    """One group of bars per category, one bar per series (e.g. unscaled vs scaled weights)."""
    fig = go.Figure()
    for i, (name, y) in enumerate(series.items()):
        fig.add_trace(go.Bar(x=list(categories), y=np.asarray(y, dtype=float), name=name,
                             marker_color=COLOURS[i % len(COLOURS)],
                             hovertemplate=f"{name}<br>%{{x}}: %{{y:.4g}}<extra></extra>"))
    fig.update_layout(
        barmode="group", height=height, margin=dict(l=10, r=10, t=10, b=10),
        plot_bgcolor="white", font=dict(size=13),
        xaxis=dict(type="category", automargin=True),
        yaxis=dict(title=y_title or None, range=y_range, automargin=True, gridcolor="#eeeeee"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
    )
    return fig
