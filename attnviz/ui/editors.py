"""Matrix editors: ``st.data_editor`` over a float64 frame, with a base snapshot.

The editor is never fed its own output (edits would get lost, streamlit #7749): each editor
keeps the matrix it started from (its *base*) in session state and Streamlit applies the user's
edits on top. A new editor generation (``state.editor_version``) or a widget Streamlit has
dropped (after a page switch) starts again from the current scenario, which holds every edit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.teach.text import common as text
from attnviz.ui import state
from attnviz.ui.safe import md_escape


def _frame(matrix: np.ndarray, row_labels: Sequence[str],
           col_labels: Sequence[str]) -> pd.DataFrame:
    """A float64 DataFrame (integer frames would truncate typed decimals).

    The labels are plain object indexes: with pandas' default (Arrow-backed) string labels,
    each of the ~10 attribute probes Streamlit makes on the frame per column costs a slow
    label lookup (an editor took ~9 ms a rerun instead of ~2).
    """
    return pd.DataFrame(np.asarray(matrix, dtype=np.float64),
                        index=pd.Index(list(row_labels), dtype=object),
                        columns=pd.Index(list(col_labels), dtype=object))


def matrix_editor(label: str, matrix: np.ndarray, *, key: str, row_labels: Sequence[str],
                  col_labels: Sequence[str], disabled: bool = False) -> np.ndarray:
    """Show an editable matrix and return its current values.

    Cells left empty or holding NaN/±inf keep their previous value, and a warning names them,
    so one bad cell never throws away the user's other edits.

    Parameters
    ----------
    label : str
        Shown above the grid.
    matrix : ndarray of shape (rows, cols)
        The current value (from the scenario).
    key : str
        Page-prefixed widget key; the editor generation is appended.

    Returns
    -------
    ndarray of shape (rows, cols)
        The edited matrix (equal to ``matrix`` when nothing was edited).
    """
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    widget_key = f"{key}_v{state.editor_version()}"
    base_key = f"_base_{widget_key}"
    stored = st.session_state.get(base_key)
    if widget_key not in st.session_state or stored is None or stored.shape != matrix.shape:
        st.session_state[base_key] = matrix.copy()  # new or dropped widget: start from scenario
    base = st.session_state[base_key]
    edited = st.data_editor(
        _frame(base, row_labels, col_labels), key=widget_key, num_rows="fixed",
        width="stretch", disabled=disabled,
        column_config={c: st.column_config.NumberColumn(c, format="%.4g")
                       for c in col_labels},
    )
    return _accept(label, edited, matrix, row_labels, col_labels)


def _accept(label: str, edited: pd.DataFrame, previous: np.ndarray,
            row_labels: Sequence[str], col_labels: Sequence[str]) -> np.ndarray:
    """Numbers from the editor; non-finite or empty cells fall back to ``previous``."""
    frame = pd.DataFrame(edited)
    if not all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes):  # text typed in a cell
        frame = frame.apply(pd.to_numeric, errors="coerce")  # (per column: ~50x slower)
    values = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    if values.shape != previous.shape:
        st.error(text.EDITOR_BAD_SHAPE.format(label=label, rows=previous.shape[0],
                                              cols=previous.shape[1], got_rows=values.shape[0],
                                              got_cols=values.shape[1]))
        return previous
    bad = ~np.isfinite(values)
    if bad.any():
        cells = ", ".join(f"({md_escape(row_labels[r])}, {md_escape(col_labels[c])})"
                          for r, c in np.argwhere(bad)[:5])
        more = "" if bad.sum() <= 5 else text.EDITOR_MORE.format(n=int(bad.sum()) - 5)
        st.warning(text.EDITOR_BAD_CELLS.format(label=label, cells=cells, more=more))
        values = np.where(bad, previous, values)
    return values
