"""An editable boolean grid for a custom attention mask (``st.data_editor`` with checkboxes).

Same base-snapshot pattern as :mod:`attnviz.ui.editors`: the editor is never fed its own output
(streamlit #7749); it keeps the mask it started from in session state and Streamlit applies the
user's ticks on top. A new editor generation or a dropped widget (after a page switch) starts
again from the scenario's mask, which holds every edit.

The ticks come from the browser and are untrusted: Streamlit's own parsing of a data editor's
state raises on a row that is not a number, a row or a deleted row outside the table, or a
state that is not an object (each a traceback). :func:`_state_problem` reads and checks
the state before ``st.data_editor`` applies it; a state it refuses is dropped by moving the
editor to a fresh key (the grid starts again from the scenario's mask) and named in the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from attnviz.teach.text import common as text
from attnviz.ui import state
from attnviz.ui.grid import read_edits

_RESETS = "_mask_editor_resets"  # {editor key: times its state was refused}


def mask_frame(mask: NDArray[np.bool_], row_labels: Sequence[str],
               col_labels: Sequence[str]) -> pd.DataFrame:
    """A bool DataFrame: rows = queries, columns = keys."""
    return pd.DataFrame(np.asarray(mask, dtype=bool), index=list(row_labels),
                        columns=list(col_labels))


def mask_editor(mask: NDArray[np.bool_], *, key: str, row_labels: Sequence[str],
                col_labels: Sequence[str], field: str | None = None) -> NDArray[np.bool_]:
    """Show the mask as a grid of checkboxes (ticked = may attend) and return the edited mask.

    Parameters
    ----------
    mask : ndarray of bool, shape (t_q, t_k)
        The current custom mask (from the scenario).
    key : str
        Page-prefixed widget key; the editor generation is appended.
    row_labels, col_labels : sequence of str
        Unique query and key labels (position labels).
    field : str, optional
        The scenario field ``mask`` comes from. Given, the editor's change callback writes the
        ticks to it before the run (:func:`_write_ticks`), so the whole page draws them.

    Returns
    -------
    ndarray of bool, shape (t_q, t_k)
        Equal to ``mask`` when nothing was edited. A cell Streamlit reports empty keeps its
        previous value.
    """
    mask = np.asarray(mask, dtype=bool)
    widget_key = _widget_key(key)
    problem = _state_problem(widget_key, mask.shape[0], col_labels)
    if problem:
        st.error(text.MASK_EDITOR_BAD_STATE.format(reason=problem))
        resets = st.session_state.setdefault(_RESETS, {})
        resets[key] = resets.get(key, 0) + 1
        widget_key = _widget_key(key)  # a fresh grid, from the scenario's mask
    base_key = state.base_key(widget_key)
    stored = st.session_state.get(base_key)
    if widget_key not in st.session_state or stored is None or stored.shape != mask.shape:
        st.session_state[base_key] = mask.copy()  # new or dropped widget: start from scenario
    base = st.session_state[base_key]
    edited = st.data_editor(
        mask_frame(base, row_labels, col_labels), key=widget_key, num_rows="fixed",
        width="stretch",
        column_config={c: st.column_config.CheckboxColumn(c, default=True) for c in col_labels},
        on_change=_write_ticks if field else None, args=(widget_key, field, tuple(col_labels)),
    )
    values = pd.DataFrame(edited).to_numpy(dtype=object)
    if values.shape != mask.shape:
        st.error(text.MASK_EDITOR_BAD_SHAPE.format(rows=mask.shape[0], cols=mask.shape[1]))
        return mask
    empty = pd.isna(values)
    return np.where(empty, mask, values).astype(bool)


def _widget_key(key: str) -> str:
    """The data editor's key: the editor generation, and a count of refused states."""
    resets = st.session_state.get(_RESETS, {}).get(key, 0)
    return f"{key}_v{state.editor_version()}" + (f"_r{resets}" if resets else "")


def _state_problem(widget_key: str, rows: int, col_labels: Sequence[str]) -> str:
    """Why the data editor's state (sent by the browser) cannot be applied, or "".

    Reading it runs Streamlit's own parsing of the browser's JSON, which raises on a row key
    that is not a number; then the edits are checked as the matrix grids' are
    (:func:`attnviz.ui.grid.read_edits`, tick cells), and rows may be neither added nor
    deleted (the grid has a fixed size).
    """
    try:  # `in` reads the value too: both run Streamlit's parsing of the browser's JSON
        if widget_key not in st.session_state:
            return ""
        value = st.session_state[widget_key]
    except Exception:  # a hand-made state: int("abc"), a list, text that is not JSON, ...
        return text.MASK_STATE_UNREADABLE
    if not isinstance(value, Mapping):
        return text.GRID_NOT_OBJECT.format(what=text.GRID_EDITS)
    if value.get("added_rows") or value.get("deleted_rows"):
        return text.MASK_ROWS_FIXED
    return read_edits({"edited_rows": value.get("edited_rows")}, rows, col_labels,
                      ticks=True).problem


def _write_ticks(widget_key: str, field: str, col_labels: tuple[str, ...]) -> None:
    """The editor's change callback: the ticks applied to the editor's base mask become the
    scenario's ``field`` (a state :func:`_state_problem` refuses is left to the run, which
    names it; a cell that is not a tick keeps the scenario's value)."""
    base = st.session_state.get(state.base_key(widget_key))
    current = state.field_value(field)
    if base is None or current is None or np.shape(current) != base.shape:
        return
    if _state_problem(widget_key, base.shape[0], col_labels):
        return
    edits = read_edits({"edited_rows": st.session_state[widget_key].get("edited_rows")},
                       base.shape[0], col_labels, ticks=True)
    mask = np.array(base, dtype=bool)
    keep = np.asarray(current, dtype=bool)
    for r, c, raw in edits.cells:
        mask[r, c] = raw if isinstance(raw, bool) else keep[r, c]
    if not np.array_equal(mask, current):
        state.update(**{field: mask})
