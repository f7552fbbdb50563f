"""Heatmaps of the pitfalls gallery: the shared builder, plus honest NaN and ±inf cells.

A wrong computation may produce NaN (0/0, inf/inf) or inf. :func:`attnviz.figures.heatmap`
writes −inf as "−∞" but has no convention for NaN; here NaN cells are painted grey and labelled
"NaN" (in the cell and in the hover) so that a broken number never reads as a plausible one.
Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnviz.figures.heatmap import MINUS_INF_BG, Sizing, Values, heatmap, minus_signs
from attnviz.teach.pitfalls import Panel
from attnviz.teach.text import pitfalls as text


def cell_labels(z: np.ndarray, digits: int) -> np.ndarray:
    """Formatted values with "NaN", "∞" and "−∞" for the non-finite cells."""
    out = minus_signs(np.char.mod(f"%.{digits}g", np.where(np.isfinite(z), z, 0.0))).astype(object)
    out[np.isnan(z)] = "NaN"
    out[np.isposinf(z)] = "∞"
    out[np.isneginf(z)] = "−∞"
    return out.astype(str)


def shared_range(panels: Sequence[Panel]) -> dict:
    """zmin/zmax shared by the same matrix on the wrong and the right side (finite values).

    Non-negative matrices (row sums, PE similarities) get a range that includes 0 and 1, so a
    row sum of exactly 1 has the same colour on both sides.
    """
    kinds = {p.kind for p in panels}
    if kinds & {"weights", "mask"}:
        return {}
    finite = np.concatenate([p.z[np.isfinite(p.z)].ravel() for p in panels])
    if not finite.size:
        return {}
    if "signed" in kinds or finite.min() < 0:
        bound = float(np.max(np.abs(finite))) or 1.0
        return dict(zmin=-bound, zmax=bound)
    return dict(zmin=min(0.0, float(finite.min())), zmax=max(1.0, float(finite.max())))


def panel_figure(panel: Panel, **ranges) -> go.Figure:
    """The heatmap of one pitfall panel; NaN and +inf cells are labelled, not hidden.

    ``ranges``: a colour range shared with another panel (``zmin``, ``zmax``: :func:`shared_range`).
    """
    z = np.atleast_2d(np.asarray(panel.z, dtype=float))
    strip = Sizing(role="strip") if z.shape[0] == 1 else Sizing()  # row sums, a single query
    fig = heatmap(z, panel.x_labels, panel.y_labels, kind=panel.kind, values=Values(**ranges),
                  sizing=strip)
    odd = np.isnan(z) | np.isposinf(z)
    if not odd.any():
        return fig
    base = fig.data[0]
    if base.texttemplate:
        base.text = cell_labels(z, 3)
        base.customdata = cell_labels(z, 17)
    fig.add_trace(go.Heatmap(
        z=np.where(odd, 0.0, np.nan), x=list(panel.x_labels), y=list(panel.y_labels), xgap=1,
        ygap=1, colorscale=[[0, MINUS_INF_BG], [1, MINUS_INF_BG]], showscale=False,
        text=np.where(np.isnan(z), "NaN", np.where(np.isposinf(z), "∞", "")),
        texttemplate="%{text}", hoverongaps=False, name=text.NAN_NAME,
        hovertemplate="%{text}<extra></extra>",
    ))
    return fig
