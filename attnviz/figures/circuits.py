"""The circuit detector's figures: every head ranked by a chosen score in a table, and the
layers × heads grid coloured by it, the named heads outlined.

Scores read from attention lie in 0..1 and are drawn on the weights' fixed 0..1 scale; the
copying score lies in −1..1 and is drawn on the signed scale centred at 0. Nothing here
imports Streamlit.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attnviz.figures.base import figure
from attnviz.figures.heatmap import Values, heatmap
from attnviz.scenarios.circuits import COPYING, HeadScores
from attnviz.teach.text import circuits as text

ROW_PX = 26  # a table row
MAX_TABLE_PX = 520  # the table scrolls beyond this height
HEADER_FILL = "#e8e8e8"
NAMED_FILL = "#fff3c4"  # a row of a head named for the chosen score


def head_name(layer: int, head: int) -> str:
    return text.HEAD.format(layer=layer, head=head)


def score_grid(scores: HeadScores, kind: str) -> go.Figure:
    """The (n_layers × n_heads) grid of one score, the heads named for it outlined.

    Parameters
    ----------
    scores : HeadScores
    kind : str
        One of ``scores.kinds``.
    """
    z = scores.score(kind)
    n_layers, n_heads = z.shape
    signed = kind == COPYING
    return heatmap(z, [text.HEAD_TICK.format(head=h) for h in range(n_heads)],
                   [text.LAYER_TICK.format(layer=layer) for layer in range(n_layers)],
                   kind="signed" if signed else "weights",
                   title=text.GRID_TITLE.format(kind=text.KINDS[kind]), y_title=text.GRID_LAYER,
                   highlight=scores.named(kind),
                   values=Values(zmin=-1.0 if signed else 0.0, zmax=1.0, fixed=True, digits=2))


def ranked_table(scores: HeadScores, kind: str) -> go.Figure:
    """Every head, highest ``kind`` score first: its rank, name, every score (two decimals, a
    dash where it has no query) and the kinds it is named for; the rows of heads named for
    ``kind`` shaded.

    Parameters
    ----------
    scores : HeadScores
    kind : str
        One of ``scores.kinds``.
    """
    order = scores.ranked(kind)
    columns = [kind] + [k for k in scores.kinds if k != kind]
    named = set(scores.named(kind))
    cells = [list(range(1, len(order) + 1)), [head_name(*h) for h in order]]
    cells += [[_number(scores.score(k)[h]) for h in order] for k in columns]
    cells.append([", ".join(text.ROLES[r] for r in scores.roles(*h)) for h in order])
    fill = [NAMED_FILL if h in named else "white" for h in order]
    header = [text.TABLE_RANK, text.TABLE_HEAD] + [text.KINDS[k] for k in columns] \
        + [text.TABLE_NAMED]
    trace = dict(type="table", columnwidth=[0.5, 0.8] + [1.0] * len(columns) + [1.6],
                 header=dict(values=[f"<b>{h}</b>" for h in header],
                             fill=dict(color=HEADER_FILL), align="left"),
                 cells=dict(values=cells, fill=dict(color=[fill] * len(cells)), align="left",
                            height=ROW_PX))
    height = int(min(MAX_TABLE_PX, ROW_PX * (len(order) + 2) + 20))
    return figure([trace], dict(height=height, margin=dict(l=0, r=0, t=4, b=4)))


def _number(value: float) -> str:
    """Two decimals; a dash for a score with no query (no repeated token)."""
    return text.NO_SCORE if np.isnan(value) else f"{value:.2f}"


def table_rows(fig: go.Figure) -> list[list[str]]:
    """A ranked table's cells as rows (for tests and exports)."""
    columns = fig.data[0].cells.values
    return [list(map(str, row)) for row in np.array(columns, dtype=object).T]
