"""Charts of the why-√d_k experiment (line charts from :mod:`attnviz.figures.lines`) and a
grouped bar chart of weight distributions. Nothing here imports Streamlit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.base import axis, figure
from attnviz.figures.heatmap import add_step_slider
from attnviz.figures.lines import COLOURS, line_chart
from attnviz.teach.sqrt_dk import SqrtDkResult
from attnviz.teach.text import why_sqrt_dk as text

UNSCALED, SCALED = text.UNSCALED, text.SCALED


def _log2_axis(d_ks: np.ndarray) -> dict:
    """A log x axis ticked at the widths tried."""
    return dict(type="log", tickvals=list(d_ks), ticktext=[str(d) for d in d_ks])


def variance_figure(res: SqrtDkResult) -> go.Figure:
    """Variance of the scores against d_k (log-log), unscaled, scaled and the theory d_k."""
    return line_chart(res.d_ks, {UNSCALED: res.var_unscaled, SCALED: res.var_scaled,
                                 text.THEORY_DK: res.d_ks.astype(float),
                                 text.THEORY_ONE: np.ones(res.d_ks.shape)},
                      x_title=text.AXIS_DK, y_title=text.AXIS_VARIANCE,
                      references=(text.THEORY_DK, text.THEORY_ONE), x_axis=_log2_axis(res.d_ks),
                      y_axis=dict(type="log", dtick=1))


def entropy_figure(res: SqrtDkResult) -> go.Figure:
    """Mean softmax entropy against d_k, unscaled vs scaled, with ln t_k (uniform) dashed."""
    uniform = text.UNIFORM.format(t_k=res.t_k, value=f"{res.max_entropy:.3g}")
    return line_chart(res.d_ks, {UNSCALED: res.entropy_unscaled, SCALED: res.entropy_scaled,
                                 uniform: np.full(res.d_ks.shape, res.max_entropy)},
                      x_title=text.AXIS_DK, y_title=text.AXIS_ENTROPY,
                      y_range=(0.0, res.max_entropy * 1.08), references=(uniform,),
                      x_axis=_log2_axis(res.d_ks))


def max_weight_figure(res: SqrtDkResult) -> go.Figure:
    """Mean largest weight of a row against d_k."""
    return line_chart(res.d_ks, {UNSCALED: res.max_weight_unscaled,
                                 SCALED: res.max_weight_scaled},
                      x_title=text.AXIS_DK, y_title=text.AXIS_MAX_WEIGHT, y_range=(0.0, 1.05),
                      x_axis=_log2_axis(res.d_ks))


def grouped_bars(categories: Sequence[str], series: Mapping[str, ArrayLike], *,
                 y_title: str = "", y_range: tuple[float, float] | None = None,
                 height: int = 300) -> go.Figure:
    """One group of bars per category, one bar per series (e.g. unscaled vs scaled weights)."""
    data = [dict(type="bar", x=list(categories), y=np.asarray(y, dtype=float), name=name,
                 marker=dict(color=COLOURS[i % len(COLOURS)]),
                 hovertemplate=f"{name}<br>%{{x}}: %{{y:.4g}}<extra></extra>")
            for i, (name, y) in enumerate(series.items())]
    y_range = {"range": list(y_range)} if y_range is not None else {}
    return figure(data, dict(
        barmode="group", height=height, margin=dict(l=10, r=10, t=10, b=10),
        plot_bgcolor="white", font=dict(size=13),
        xaxis=dict(type="category", automargin=True),
        yaxis=axis(y_title, automargin=True, gridcolor="#eeeeee", **y_range),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0),
    ))


def bars_with_slider(fig: go.Figure, steps: Sequence[Mapping[str, ArrayLike]],
                     labels: Sequence[str], active: int, *, prefix: str) -> list[dict]:
    """Give :func:`grouped_bars` a slider that steps through ``steps`` (one mapping of series
    name to bar heights per label, the figure's series in its order) in the browser; returns
    the frames to send with it (``attnviz.ui.plotly_view``)."""
    frames = [dict(name=str(label), data=[dict(y=np.asarray(y, dtype=float))
                                          for y in series.values()],
                   traces=list(range(len(series))))
              for label, series in zip(labels, steps, strict=True)]
    # the categories' labels are under the bars: the slider's value goes below them
    add_step_slider(fig, labels, active, prefix=prefix, clear=BELOW_TICKS_PX)
    return frames


BELOW_TICKS_PX = 26  # one line of category labels under a bar chart (13 px font) and its gap
