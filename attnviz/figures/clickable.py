"""Make heatmap cells clickable (``attnviz.ui.panels.show_figure(..., on_select=...)``).

Plotly heatmaps send no selection events (streamlit#8760), so :func:`add_cell_picker` lays an
invisible scatter point on the centre of every cell. With ``hoverdistance=-1`` the point under
the pointer is always the centre of the cell under it, so a click anywhere in a cell selects
that cell. :func:`cell_from_selection` reads the (row, column) back from the selection event.
Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

MAX_PICKER_CELLS = 64 * 64  # above this, pages offer select boxes only (SVG points are slow)


def add_cell_picker(fig: go.Figure, z: ArrayLike, x_labels: Sequence[str],
                    y_labels: Sequence[str], *, value_name: str = "value",
                    row_name: str = "query", col_name: str = "key") -> int:
    """Add one invisible, clickable point per cell of the heatmap ``fig``; return its trace index.

    The heatmap's own hover is switched off; the points' hover shows the row, the column and
    the value of ``z`` instead.

    Parameters
    ----------
    fig : go.Figure
        A heatmap from :func:`attnviz.figures.heatmap` (category axes with these labels).
    z : array_like of shape (rows, cols)
    x_labels, y_labels : sequence of str
        The heatmap's column and row labels.

    Returns
    -------
    int
        The index of the picker trace in ``fig.data`` (selection events name it as
        ``curve_number``).
    """
    z = np.atleast_2d(np.asarray(z, dtype=float))
    rows, cols = z.shape
    rr, cc = np.divmod(np.arange(rows * cols), cols)  # point k is cell (k // cols, k % cols)
    fig.update_traces(hoverinfo="skip", hovertemplate=None, selector=dict(type="heatmap"))
    fig.add_trace(go.Scatter(
        x=[x_labels[c] for c in cc], y=[y_labels[r] for r in rr], mode="markers",
        marker=dict(size=8, opacity=0.0, color="#000000"),
        selected=dict(marker=dict(opacity=0.0)), unselected=dict(marker=dict(opacity=0.0)),
        customdata=z.ravel(), showlegend=False, name="cells",
        hovertemplate=(f"{row_name} %{{y}}<br>{col_name} %{{x}}<br>"
                       f"{value_name} %{{customdata:.6g}}<extra></extra>"),
    ))
    fig.update_layout(hoverdistance=-1, clickmode="event+select", dragmode=False)
    return len(fig.data) - 1


def cell_from_selection(event: Mapping[str, Any] | None, curve: int,
                        n_cols: int) -> tuple[int, int] | None:
    """The (row, column) of the last clicked picker point, or None.

    Parameters
    ----------
    event : mapping or None
        What the clicked chart stores in session state (the chart component and
        ``st.plotly_chart(..., on_select=...)`` alike):
        ``{"selection": {"points": [{"curve_number": ..., "point_index": ...}, ...]}}``.
    curve : int
        The picker's trace index from :func:`add_cell_picker`.
    n_cols : int
        The heatmap's number of columns.
    """
    if not event:
        return None
    selection = event.get("selection") or {}
    points = [p for p in (selection.get("points") or [])
              if p.get("curve_number") == curve and p.get("point_index") is not None]
    if not points:
        return None
    index = int(points[-1]["point_index"])
    return index // n_cols, index % n_cols


def point_from_selection(event: Mapping[str, Any] | None,
                         curves: Sequence[int]) -> tuple[int, int] | None:
    """``(curve_number, point_index)`` of the last selected point on one of ``curves``."""
    if not event:
        return None
    selection = event.get("selection") or {}
    points = [p for p in (selection.get("points") or [])
              if p.get("curve_number") in curves and p.get("point_index") is not None]
    if not points:
        return None
    return int(points[-1]["curve_number"]), int(points[-1]["point_index"])
