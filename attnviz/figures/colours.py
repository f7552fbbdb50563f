"""Colour conventions: one per kind of matrix, the same on every page, and a projector theme.

* ``"weights"`` (probabilities): a fixed 0..1 sequential scale, whatever the values;
* ``"signed"`` (scores, scaled scores, Q, K, V, X, outputs, PE, biases, gradients, differences):
  a diverging scale centred at 0 with a symmetric range, also while every value is positive
  (a matrix changes colour scheme when it is edited, never because one value turns negative);
* ``"sequential"`` (non-negative by nature: angles, norms, entropies): its range;
* ``"mask"``: two colours.

Charts that compare heads give them one shared range (``zmin``/``zmax`` of
:func:`attnviz.figures.heatmap.heatmap`), so heads that differ look different.

Signed matrices have no gaps between cells: the gaps show the plot's background, and a light
line on a scale whose middle is white reads as a row of zeros.

The projector theme (:data:`PROJECTOR`) restyles a built figure (:func:`themed`): scales with
a wider range of lightness, bold cell numbers, no gaps. Every builder keeps the default
scales; the page shell applies the theme where a session turned it on.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import plotly.graph_objects as go

KINDS = ("weights", "signed", "sequential", "mask")


@dataclass(frozen=True)
class Theme:
    """A colour scale per kind of matrix (a Plotly scale name or ``((stop, colour), ...)``)."""

    name: str
    weights: str | tuple
    signed: str | tuple
    sequential: str | tuple
    bold: bool = False  # cell numbers and labels drawn bold
    gaps: bool = True  # 1-px gaps between the cells of weights and sequential matrices


DEFAULT = Theme("default", weights="Viridis", signed="RdBu_r", sequential="Cividis")
# A projector washes out pale colours and flattens dark ones: black-to-yellow weights (the widest
# lightness range of the colour-blind-safe scales), a diverging scale that is already clearly
# blue or red at a tenth of its range, bold type.
PROJECTOR = Theme(
    "projector", weights="Inferno",
    signed=((0.0, "#00204d"), (0.3, "#2166ac"), (0.45, "#92c5de"), (0.5, "#ffffff"),
            (0.55, "#f4a582"), (0.7, "#d6302b"), (1.0, "#5e0013")),
    sequential="Plasma", bold=True, gaps=False)
THEMES = {theme.name: theme for theme in (DEFAULT, PROJECTOR)}


def colour_scale(scale: str | tuple) -> list[list]:
    """A colour scale as plotly.py's validator writes it (a named scale becomes its colours)."""
    return [list(step) for step in _validated_scale(scale)]


@functools.cache
def _validated_scale(scale: str | tuple) -> tuple:
    return tuple(tuple(step) for step in go.Heatmap(colorscale=scale).colorscale)


def _same_scale(a, b) -> bool:
    """Two written-out colour scales are equal (stops compared as numbers)."""
    if a is None or len(a) != len(b):
        return False
    return all(float(x[0]) == float(y[0]) and str(x[1]) == str(y[1])
               for x, y in zip(a, b, strict=True))


def themed(fig: go.Figure, theme: Theme = PROJECTOR) -> go.Figure:
    """``fig`` restyled in place with ``theme``: every heatmap drawn on a default scale gets the
    theme's scale of that kind (masks and one-colour overlays keep theirs); the theme's type
    weight and gaps. Returns ``fig``.

    Works on any figure of :mod:`attnviz.figures` (the scale tells the kind), so a builder never
    needs to know the theme.
    """
    pairs = [(colour_scale(getattr(DEFAULT, kind)), colour_scale(getattr(theme, kind)))
             for kind in ("weights", "signed", "sequential")]
    for trace in fig.data:
        if trace.type != "heatmap":
            continue
        for before, after in pairs:
            if _same_scale(trace.colorscale, before):
                trace.colorscale = after
                break
        if not theme.gaps:
            trace.update(xgap=0, ygap=0)
        if theme.bold:
            trace.textfont.weight = "bold"
    if theme.bold:
        fig.update_layout(font_weight="bold")
    return fig
