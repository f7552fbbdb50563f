"""Matrix editors: attnviz's grid (:mod:`attnviz.ui.grid`) over a float64 matrix, with a base
snapshot.

The grid is never fed its own output: each editor keeps the matrix it started from (its
*base*) in session state and applies the grid's edits (every edit so far) on top. A new
editor generation (``state.editor_version``) or a grid Streamlit has dropped (after a page
switch) starts again from the current scenario, which holds every edit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial

import numpy as np
import streamlit as st

from attnviz.teach.text import common as text
from attnviz.ui import state
from attnviz.ui.grid import edits_of, grid
from attnviz.ui.safe import md_escape

TYPED_SHOWN = 24  # characters of a refused cell's text quoted in the message


def cell_text(value: float) -> str:
    """How a cell shows a number: the shortest text that reads back as the same float64
    (``repr``), so opening a cell and pressing Enter never rounds it."""
    return repr(float(value))


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def parse_cell(raw) -> float | None:
    """The number a person typed into a cell, or None when it is not one finite number.

    Accepted: an optional sign, digits with at most one decimal point, an optional exponent
    (``1e-3``, ``2.5E2``, ``-0``, ``.5``); a Unicode minus (U+2212) counts as ``-``. Refused:
    anything else, including a decimal comma (``1,5`` could be 1.5 or, with a thousands
    separator, 15; guessing would silently change a number a thousandfold, so the cell is named
    and the user types a point), several points (``1.2.3``), words (``inf``, ``nan``) and
    numbers that overflow to ±inf (``1e400``). AppTest and the editors' own numbers pass
    through as floats.
    """
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float, np.integer, np.floating)):
        value = float(raw)
    else:
        cleaned = str(raw).strip().replace("\u2212", "-")
        if not _NUMBER.fullmatch(cleaned):
            return None
        value = float(cleaned)
    return value if np.isfinite(value) else None


def matrix_editor(label: str, matrix: np.ndarray, *, key: str, row_labels: Sequence[str],
                  col_labels: Sequence[str], disabled: bool = False,
                  field: str | None = None) -> np.ndarray:
    """Show an editable matrix and return its current values.

    Cells are edited as text and parsed here (:func:`parse_cell`): Streamlit's number column
    drops the characters it does not accept while a person types (``1e-3`` became -13). A cell
    that is empty or not one finite number keeps its previous value, so one bad cell never
    throws away the user's other edits, and a warning names the cell, quotes what was typed
    (the grid keeps showing it, for the person to correct) and gives the value the charts use.
    (Restarting the grid with the kept value was tried: the remount lands ~0.3 s after the
    bad cell and ate the first key of the next cell typed in that time, 2.5 becoming .5.)

    Parameters
    ----------
    label : str
        Shown above the grid.
    matrix : ndarray of shape (rows, cols)
        The current value (from the scenario).
    key : str
        Page-prefixed widget key; the editor generation is appended.
    field : str, optional
        The scenario field ``matrix`` comes from. Given, the edit is also written to the
        scenario by the editor's change callback, which Streamlit runs before any script, so
        an edit followed at once by a page switch (whose run never draws this editor) is kept.

    Returns
    -------
    ndarray of shape (rows, cols)
        The edited matrix (equal to ``matrix`` when nothing was edited).
    """
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    widget_key = f"{key}_v{state.editor_version()}"
    base_key = state.base_key(widget_key)
    stored = st.session_state.get(base_key)
    if widget_key not in st.session_state or stored is None or stored.shape != matrix.shape:
        st.session_state[base_key] = matrix.copy()  # new or dropped widget: start from scenario
    base = st.session_state[base_key]
    callback = None if field is None else partial(_write_edit, widget_key, field,
                                                   tuple(col_labels))
    delta = grid(label, [[cell_text(v) for v in row] for row in base], key=widget_key,
                 row_labels=[str(r) for r in row_labels], col_labels=list(col_labels),
                 disabled=disabled, big=state.presenter(), on_change=callback)
    values, bad, shape_ok = _apply(delta, base, matrix, col_labels)
    if not shape_ok:
        st.error(text.EDITOR_BAD_SHAPE.format(
            label=label, rows=matrix.shape[0], cols=matrix.shape[1],
            got_rows=values.shape[0], got_cols=values.shape[1]))
        return matrix
    if bad:
        st.warning(_refused_message(label, delta, bad, values, row_labels, col_labels))
    return values


def _write_edit(widget_key: str, field: str, col_labels: tuple[str, ...]) -> None:
    """The editor's change callback: write its edits to ``scenario.<field>`` (bad cells keep
    their value; the editor's own run names them when it is drawn)."""
    base = st.session_state.get(state.base_key(widget_key))
    current = getattr(state.get_scenario(), field, None)
    if base is None or current is None:
        return
    previous = np.atleast_2d(np.asarray(current, dtype=np.float64))
    if previous.shape != base.shape:
        return  # the scenario was replaced since this editor was drawn
    values, _, shape_ok = _apply(edits_of(st.session_state.get(widget_key)), base, previous,
                                 col_labels)
    if shape_ok and not np.array_equal(values, previous):
        state.update(**{field: values.reshape(np.shape(current))})


def _refused_message(label: str, delta, bad: list[tuple[int, int]], kept: np.ndarray,
                     row_labels: Sequence[str], col_labels: Sequence[str]) -> str:
    """The warning naming the first refused cells, each with what was typed in it (the grid
    still shows it) and the value the charts use instead (``kept``)."""
    edited = delta.get("edited_rows", {}) if isinstance(delta, dict) else {}

    def typed(r: int, c: int) -> str:
        raw = (edited.get(r) or edited.get(str(r)) or {}).get(col_labels[c])
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return text.EDITOR_EMPTY_CELL
        shown = str(raw)
        if len(shown) > TYPED_SHOWN:
            shown = shown[:TYPED_SHOWN] + "…"
        # a lone surrogate (JSON can carry one) cannot be sent to the page: shown as "?"
        shown = shown.encode("utf-8", "replace").decode("utf-8")
        return text.EDITOR_TYPED.format(typed=md_escape(shown))

    cells = ", ".join(f"({md_escape(row_labels[r])}, {md_escape(col_labels[c])}) {typed(r, c)} "
                      + text.EDITOR_KEPT.format(value=md_escape(cell_text(kept[r, c])))
                      for r, c in bad[:5])
    more = "" if len(bad) <= 5 else text.EDITOR_MORE.format(n=len(bad) - 5)
    return text.EDITOR_BAD_CELLS.format(label=label, cells=cells, more=more)


def _apply(delta, base: np.ndarray, previous: np.ndarray,
           col_labels: Sequence[str]) -> tuple[np.ndarray, list[tuple[int, int]], bool]:
    """``base`` with the edited cells of ``delta`` (the grid's ``edited_rows``) applied.

    Returns the values, the (row, column) of cells whose text is not a finite number (they
    keep their ``previous`` value: the scenario's, which holds every accepted edit), and False
    when an edit names a row outside the matrix.
    """
    values = base.copy()
    edited = delta.get("edited_rows", {}) if isinstance(delta, dict) else {}
    columns = {c: j for j, c in enumerate(col_labels)}
    bad: list[tuple[int, int]] = []
    for row, cells in (edited or {}).items():
        r = int(row)
        if not 0 <= r < values.shape[0]:
            return np.zeros((r + 1, values.shape[1])), [], False
        for col, raw in (cells or {}).items():
            c = columns.get(col)
            if c is None:  # the index column (row labels): not a value
                continue
            number = parse_cell(raw)
            if number is None:
                bad.append((r, c))
                values[r, c] = previous[r, c]
            else:
                values[r, c] = number
    return values, bad, True
