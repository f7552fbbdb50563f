"""The heatmap builder used by every page (d2l's ``show_heatmaps``, one place for all matrices).

Conventions:

* rows are queries / tokens (top to bottom, like a printed matrix), columns keys / dimensions;
* labels are unique by position ("0:the", "3:the"): Plotly merges duplicate category labels;
* weights use a fixed 0..1 sequential scale (Viridis, colour-blind safe);
* signed matrices use a diverging scale centred at 0 (RdBu reversed: blue < 0 < red);
* masks use two colours; −inf (a masked score) is drawn as a grey cell saying "−∞";
* numbers are written in the cells of matrices up to ``CELL_TEXT_LIMIT`` on each side, and the
  hover shows the exact value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

CELL_TEXT_LIMIT = 12  # write numbers in cells up to this many rows and columns
_FLOAT32_ABOVE = 128 * 128  # send float32 to the browser for matrices larger than this
WEIGHTS_SCALE = "Viridis"
SIGNED_SCALE = "RdBu_r"
SEQUENTIAL_SCALE = "Cividis"
MASK_COLOURS = ("#b8b8b8", "#1f78b4")  # forbidden, allowed
MINUS_INF_BG = "#d9d9d9"
KINDS = ("weights", "signed", "sequential", "mask")


def matrix_kind(z: np.ndarray) -> str:
    """``"signed"`` when the matrix has negative entries, else ``"sequential"``."""
    finite = z[np.isfinite(z)]
    return "signed" if finite.size and finite.min() < 0 else "sequential"


def _cell_text(z: np.ndarray, digits: int) -> np.ndarray:
    """Formatted cell values, with "−∞" for masked cells."""
    text = np.char.mod(f"%.{digits}g", np.where(np.isfinite(z), z, 0.0))
    return np.where(np.isneginf(z), "−∞", text)


def _colour_args(z: np.ndarray, kind: str, zmin: float | None, zmax: float | None) -> dict:
    """Colour scale and range for a kind of matrix."""
    if kind == "weights":
        return dict(colorscale=WEIGHTS_SCALE, zmin=0.0 if zmin is None else zmin,
                    zmax=1.0 if zmax is None else zmax)
    if kind == "mask":
        c0, c1 = MASK_COLOURS
        return dict(colorscale=[[0, c0], [0.5, c0], [0.5, c1], [1, c1]], zmin=0, zmax=1,
                    showscale=False)
    finite = z[np.isfinite(z)]
    if kind == "signed":
        bound = float(np.max(np.abs(finite))) if finite.size else 1.0
        bound = bound or 1.0
        lo = -bound if zmin is None else zmin
        hi = bound if zmax is None else zmax
        return dict(colorscale=SIGNED_SCALE, zmin=lo, zmax=hi, zmid=0.0)
    lo = float(finite.min()) if zmin is None and finite.size else zmin
    hi = float(finite.max()) if zmax is None and finite.size else zmax
    return dict(colorscale=SEQUENTIAL_SCALE, zmin=lo, zmax=hi)


def heatmap(z: ArrayLike, x_labels: Sequence[str] | None = None,
            y_labels: Sequence[str] | None = None, *, kind: str | None = None,
            title: str = "", x_title: str = "", y_title: str = "",
            zmin: float | None = None, zmax: float | None = None, digits: int = 3,
            highlight_rows: Sequence[int] = (), highlight_cells: Sequence[tuple[int, int]] = (),
            show_text: bool | None = None, height: int | None = None) -> go.Figure:
    """A labelled heatmap of one matrix.

    Parameters
    ----------
    z : array_like of shape (rows, cols)
        1-D input is drawn as one row. −inf is drawn as a grey "−∞" cell.
    x_labels, y_labels : sequence of str, optional
        Column and row labels; must be unique (use :func:`attnviz.position_labels`).
    kind : {"weights", "signed", "sequential", "mask"}, optional
        Colour convention; by default "signed" if any entry is negative, else "sequential".
    zmin, zmax : float, optional
        Shared colour range (e.g. the same scale for every head).
    digits : int
        Significant digits of the numbers written in the cells.
    highlight_rows, highlight_cells
        Rows / (row, col) cells outlined in orange.
    show_text : bool, optional
        Write numbers in cells; by default only for matrices up to CELL_TEXT_LIMIT per side.
    height : int, optional
        Figure height in pixels; by default it grows with the number of rows.

    Returns
    -------
    go.Figure
    """
    z = np.atleast_2d(np.asarray(z, dtype=float))
    rows, cols = z.shape
    kind = kind or matrix_kind(z)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    x_labels = list(x_labels) if x_labels is not None else [str(j) for j in range(cols)]
    y_labels = list(y_labels) if y_labels is not None else [str(i) for i in range(rows)]
    shown = np.where(np.isneginf(z), np.nan, z)  # −inf: a gap, painted over by _hatch_minus_inf
    if z.size > _FLOAT32_ABOVE:
        shown = shown.astype(np.float32)
    if show_text is None:
        show_text = rows <= CELL_TEXT_LIMIT and cols <= CELL_TEXT_LIMIT
    trace = dict(z=shown, x=x_labels, y=y_labels, xgap=1, ygap=1, hoverongaps=True,
                 colorbar=dict(thickness=12, len=0.9, outlinewidth=0),
                 **_colour_args(z, kind, zmin, zmax))
    hover_rows = f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>"
    if show_text:
        exact = _cell_text(z, 17)
        trace.update(text=_cell_text(z, digits), texttemplate="%{text}", customdata=exact,
                     hovertemplate=hover_rows + "value %{customdata}<extra></extra>")
        if kind == "mask":
            trace.update(text=np.where(z > 0.5, "✓", "✕"), customdata=np.where(
                z > 0.5, "may attend", "masked"))
    else:
        trace.update(hovertemplate=hover_rows + "value %{z:.10g}<extra></extra>")
    fig = go.Figure(go.Heatmap(**trace))
    row_px = 34 if rows <= CELL_TEXT_LIMIT else max(4, 420 // rows)
    fig.update_layout(
        title=dict(text=title, x=0, font=dict(size=14)) if title else None,
        height=height or int(min(640, max(180, 70 + row_px * rows))),
        margin=dict(l=10, r=10, t=34 if title else 10, b=10),
        plot_bgcolor=MINUS_INF_BG,
        xaxis=dict(title=x_title or None, side="top", type="category",
                   automargin=True),
        yaxis=dict(title=y_title or None, autorange="reversed", type="category",
                   automargin=True),
        font=dict(size=13),
    )
    if np.isneginf(z).any():
        fig.update_layout(plot_bgcolor="white")
        _hatch_minus_inf(fig, z, x_labels, y_labels, show_text)
    for r in highlight_rows:
        _outline(fig, r - 0.5, r + 0.5, -0.5, cols - 0.5)
    for r, c in highlight_cells:
        _outline(fig, r - 0.5, r + 0.5, c - 0.5, c + 0.5)
    return fig


def _outline(fig: go.Figure, y0: float, y1: float, x0: float, x1: float) -> None:
    """Draw an orange rectangle in data (category index) coordinates."""
    fig.add_shape(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, xref="x", yref="y",
                  line=dict(color="#ff7f0e", width=3), fillcolor="rgba(0,0,0,0)")


def _hatch_minus_inf(fig: go.Figure, z: np.ndarray, x_labels, y_labels, show_text: bool) -> None:
    """Overlay −inf cells with a grey "−∞" trace so a masked score never reads as a number."""
    fig.add_trace(go.Heatmap(
        z=np.where(np.isneginf(z), 0.0, np.nan), x=x_labels, y=y_labels, xgap=1, ygap=1,
        colorscale=[[0, MINUS_INF_BG], [1, MINUS_INF_BG]], showscale=False,
        text=np.where(np.isneginf(z), "−∞", ""), texttemplate="%{text}" if show_text else None,
        hovertemplate="−∞ (masked)<extra></extra>", hoverongaps=False, name="masked",
    ))


def mask_figure(mask: ArrayLike, x_labels: Sequence[str] | None = None,
                y_labels: Sequence[str] | None = None, **kwargs) -> go.Figure:
    """A boolean mask in two colours: blue ✓ = may attend, grey ✕ = masked."""
    return heatmap(np.asarray(mask, dtype=float), x_labels, y_labels, kind="mask", **kwargs)
