"""Presenter mode: one map large at a time, picked above it, where a page draws several side
by side.

Side by side, a projector's 1024×768 leaves each of four maps of eight tokens ~25-px cells:
too small for a number, so none is written ("hover a cell" is no use to a class). In
presenter mode such a page shows one of its maps across the page's width, its height following
the screen (the chart component's ``fit``: its cells end on the first screen, each row between
:data:`layout.PRESENTER_MIN_ROW_PX` and :data:`layout.PRESENTER_MAX_ROW_PX`), and a row of
buttons above it picks which (as the Playground's focus tabs do). Outside presenter mode
:func:`pick` returns None and the page draws every map as before.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnviz.teach.text import common as text
from attnviz.ui import layout, state

FIT_GAP_PX = 12  # room kept under a fitted map's bottom margin (the window's edge)


def pick(key: str, names: Mapping[str, str], default: str) -> str | None:
    """Presenter mode: the map to show, picked in a row of buttons (``names``: map -> its
    button's words; ``key``: the widget's key); None outside presenter mode (draw every
    map). A map that is no longer offered falls back to ``default``."""
    if not state.presenter():
        return None
    if st.session_state.get(key) not in names:
        st.session_state[key] = default
    # (its label hidden: the buttons name the maps, and the first screen keeps the room)
    return st.segmented_control(text.ONE_MAP_LABEL, list(names), format_func=names.get,
                                required=True, key=key,
                                label_visibility="collapsed") or default


def side_by_side(maps: int, columns: int) -> bool:
    """True when ``maps`` maps of ``columns`` columns side by side keep a number in every cell
    on the narrowest projector (1024 px: each column as wide as a number at 14 px needs)."""
    need = maps * (columns * layout.WEIGHTS_COLUMN_PX + layout.WEIGHTS_FRAME_PX)
    return need <= layout.PRESENTER_ROW_WIDTH_PX


def fit(fig: go.Figure) -> dict:
    """The chart component's ``fit`` (``show_figure(..., fit=...)``) that lets the map's height
    follow the screen: its cells end :data:`FIT_GAP_PX` above the window's bottom edge (with
    its bottom margin), its rows as high as that leaves. The figure is read, not changed."""
    rows = int(np.atleast_2d(np.asarray(fig.data[0].z)).shape[0]) if fig.data else 1
    bottom = fig.layout.margin.b or 0
    return dict(bottom=bottom + FIT_GAP_PX, rows=rows,
                minRow=layout.PRESENTER_MIN_ROW_PX, maxRow=layout.PRESENTER_MAX_ROW_PX)
