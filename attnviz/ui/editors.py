"""Matrix editors: attnviz's grid (:mod:`attnviz.ui.grid`) over a float64 matrix, with a base
snapshot.

The grid is never fed its own output: each editor keeps the matrix it started from (its
*base*) in session state and applies the grid's edits (every edit so far) on top. A new
editor generation (``state.editor_version``) or a grid Streamlit has dropped (after a page
switch) starts again from the current scenario, which holds every edit.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import streamlit as st

from attnviz.teach.text import common as text
from attnviz.ui import state
from attnviz.ui.grid import MAX_CELL_CHARS, STATE, Edits, grid, read_edits
from attnviz.ui.safe import md_escape

TYPED_SHOWN = 24  # characters of a refused cell's text quoted in the message
_CELLS = "_attnviz_editor_cells"  # session state: base key -> (base, its cell texts, digest)


def cell_text(value: float) -> str:
    """How a cell shows a number: the shortest text that reads back as the same float64
    (``repr``), so opening a cell and pressing Enter never rounds it."""
    return repr(float(value))


# ASCII digits only: Python's float() and re's \d also take other scripts' digits
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def foreign_digits(raw) -> bool:
    """True when ``raw`` is text holding a decimal digit other than ASCII 0-9 (Arabic-Indic
    ``١٢``, fullwidth ``１``, Devanagari ...): :func:`parse_cell` refuses those, and the
    warning says why."""
    return isinstance(raw, str) and any(ch.isdigit() and not "0" <= ch <= "9" for ch in raw)


def parse_cell(raw) -> float | None:
    """The number a person typed into a cell, or None when it is not one finite number.

    Accepted: an optional sign, ASCII digits with at most one decimal point, an optional
    exponent (``1e-3``, ``2.5E2``, ``-0``, ``.5``); a Unicode minus (U+2212) counts as ``-``.
    Refused: anything else, including a decimal comma (``1,5`` could be 1.5 or, with a
    thousands separator, 15; guessing would silently change a number a thousandfold, so the
    cell is named and the user types a point), digits of other scripts (``١٢``, fullwidth
    ``１``: Python's ``float`` reads them, but the grid and the charts would show a number
    nobody typed in those digits, so the cell is named with :data:`EDITOR_FOREIGN_DIGITS`),
    several points (``1.2.3``), words (``inf``, ``nan``), text longer than
    :data:`attnviz.ui.grid.MAX_CELL_CHARS` and numbers that overflow to ±inf (``1e400``).
    AppTest and the editors' own numbers pass through as floats.
    """
    if raw is None or isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float, np.integer, np.floating)):
        try:
            value = float(raw)
        except OverflowError:  # an int beyond float range
            return None
    else:
        raw = str(raw)
        if len(raw) > MAX_CELL_CHARS:
            return None
        cleaned = raw.strip().replace("\u2212", "-")
        if not _NUMBER.fullmatch(cleaned):
            return None
        value = float(cleaned)
    return value if np.isfinite(value) else None


def matrix_editor(label: str, matrix: np.ndarray, *, key: str, row_labels: Sequence[str],
                  col_labels: Sequence[str], disabled: bool = False,
                  field: str | None = None) -> np.ndarray:
    """Show an editable matrix and return its current values.

    One edit path: the grid's change callback (:func:`_write_edit`, which Streamlit runs before
    the script) parses and applies the grid's edits once and, with ``field``, writes them to
    the scenario; this function only draws the grid and the message about refused cells, and
    returns what the callback made of the edits. (Edits the callback has not seen, such as a
    state set directly by AppTest, are applied here instead, once.)

    Cells are edited as text and parsed in Python (:func:`parse_cell`): Streamlit's number
    column drops the characters it does not accept while a person types (``1e-3`` becomes -13).
    A cell that is empty or not one finite number keeps its previous value, so one bad cell
    never throws away the user's other edits, and a warning names the cell, quotes what was
    typed (the grid keeps showing it, for the person to correct) and gives the value the charts
    use. The grid is not restarted with the kept value: the remount lands ~0.3 s after the bad
    cell and eats the first key of the next cell typed in that time (2.5 becomes .5).

    Parameters
    ----------
    label : str
        Shown above the grid.
    matrix : ndarray of shape (rows, cols)
        The current value (from the scenario).
    key : str
        Page-prefixed widget key; the editor generation is appended.
    field : str, optional
        The scenario field ``matrix`` comes from. Given, the callback writes the edits to the
        scenario, so an edit followed at once by a page switch (whose run never draws this
        editor) is kept, and the page's scenario already holds them when it is drawn.

    Returns
    -------
    ndarray of shape (rows, cols)
        The edited matrix (equal to ``matrix`` when nothing was edited; with ``field``, the
        scenario's value).
    """
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    widget_key = f"{key}_v{state.editor_version()}"
    base_key = state.base_key(widget_key)
    stored = st.session_state.get(base_key)
    if widget_key not in st.session_state or stored is None or stored.shape != matrix.shape:
        st.session_state[base_key] = matrix.copy()  # new or dropped widget: start from scenario
        st.session_state.pop(state.outcome_key(widget_key), None)
    base = st.session_state[base_key]
    cells, digest = _cell_texts(base_key, base)
    grid(label, cells, key=widget_key, row_labels=[str(r) for r in row_labels],
         col_labels=list(col_labels), disabled=disabled, big=state.presenter(),
         on_change=partial(_write_edit, widget_key, field, tuple(col_labels)),
         cells_digest=digest)
    outcome = st.session_state.get(state.outcome_key(widget_key))
    raw = _sent(widget_key)
    if raw is not None and (outcome is None or outcome.source != _source(raw)):
        outcome = _write_edit(widget_key, field, tuple(col_labels))  # not seen by the callback
    if outcome is None:
        return matrix
    if outcome.edits.problem:
        st.error(text.EDITOR_BAD_STATE.format(label=label, reason=outcome.edits.problem))
        return matrix
    if outcome.bad:
        st.warning(_refused_message(label, outcome.edits, list(outcome.bad), outcome.values,
                                    row_labels, col_labels))
    if field is not None:  # what the scenario holds (the callback wrote the edits to it)
        held = state.field_value(field)
        if held is not None and np.shape(np.atleast_2d(held)) == matrix.shape:
            return np.atleast_2d(np.asarray(held, dtype=np.float64))
    return outcome.values


def _cell_texts(base_key: str, base: np.ndarray) -> tuple[list[list[str]], str]:
    """The grid's texts of an editor's base matrix and a digest of its values, made once per
    base: the base does not change between reruns, and
    a real head's x (128 × 769) takes 0.25 s to write out again on every edit. One session-state
    entry holds them all, by base key; a base released (a new editor generation) is forgotten."""
    memo = st.session_state.setdefault(_CELLS, {})
    for gone in [k for k in memo if k != base_key and k not in st.session_state]:
        del memo[gone]
    kept = memo.get(base_key)
    if kept is None or kept[0] is not base:
        cells = [[cell_text(v) for v in row] for row in base]
        digest = hashlib.blake2b(repr(base.shape).encode() + base.tobytes(),
                                 digest_size=12).hexdigest()
        kept = memo[base_key] = (base, cells, digest)
    return kept[1], kept[2]


@dataclass(frozen=True)
class Outcome:
    """What the change callback made of a grid's edits (kept in session state for the editor's
    run to draw).

    Attributes
    ----------
    source : str
        A digest of the grid state it was made from (:func:`_source`).
    edits : Edits
        The checked edits (``edits.problem`` when refused as a whole).
    values : ndarray of shape (rows, cols)
        The matrix with the edits applied (refused cells keep their previous value).
    bad : tuple of (row, column)
        The refused cells.
    """

    source: str
    edits: Edits
    values: np.ndarray
    bad: tuple[tuple[int, int], ...]


def _sent(widget_key: str):
    """What the grid ``widget_key`` sent (its state value "edits", unchecked: any JSON), or
    None before its first edit."""
    value = st.session_state.get(widget_key)
    return value.get(STATE) if isinstance(value, Mapping) else None


def _source(value) -> str:
    """A digest of a grid's edits as the session holds them, to tell edits already applied
    from new ones."""
    try:
        raw = json.dumps(value, default=repr, ensure_ascii=False)
    except (TypeError, ValueError):  # keys of mixed types, a cycle: treat as new every time
        raw = repr(id(value))
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _write_edit(widget_key: str, field: str | None,
                col_labels: tuple[str, ...]) -> Outcome | None:
    """The one place a grid's edits are applied: the editor's change callback (Streamlit runs
    it before the script). Parses every edited cell once (:func:`_apply` on the editor's base),
    writes the result to ``scenario.<field>`` when the editor has a field, and keeps the
    outcome for the editor's run to draw. Refused cells keep their previous value (the
    scenario's, which holds every accepted edit); edits refused as a whole change nothing."""
    base = st.session_state.get(state.base_key(widget_key))
    if base is None:
        return None
    raw = _sent(widget_key)
    key = state.outcome_key(widget_key)
    last = st.session_state.get(key)
    previous = last.values if last is not None and last.values.shape == base.shape else base
    current = state.field_value(field) if field is not None else None
    if current is not None and np.atleast_2d(current).shape == base.shape:
        previous = np.atleast_2d(np.asarray(current, dtype=np.float64))
    else:  # no field, or the scenario's is another shape (a vector the page fits to its
        current = None  # sequence, a scenario replaced since): the caller stores the values
    edits = read_edits(raw, base.shape[0], col_labels)
    if edits.problem:
        outcome = Outcome(_source(raw), edits, previous, ())
    else:
        values, bad = _apply(edits, base, previous)
        outcome = Outcome(_source(raw), edits, values, tuple(bad))
        if current is not None and not np.array_equal(values, previous):
            state.update(**{field: values.reshape(np.shape(current))})
    st.session_state[key] = outcome
    return outcome


def _refused_message(label: str, edits: Edits, bad: list[tuple[int, int]], kept: np.ndarray,
                     row_labels: Sequence[str], col_labels: Sequence[str]) -> str:
    """The warning naming the first refused cells, each with what was typed in it (the grid
    still shows it) and the value the charts use instead (``kept``); a sentence on digits of
    other scripts when one of them holds some."""
    typed_in = {(r, c): raw for r, c, raw in edits.cells}

    def typed(r: int, c: int) -> str:
        raw = typed_in.get((r, c))
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
    message = text.EDITOR_BAD_CELLS.format(label=label, cells=cells, more=more)
    if any(foreign_digits(typed_in.get(cell)) for cell in bad):
        message += " " + text.EDITOR_FOREIGN_DIGITS
    return message


def _apply(edits: Edits, base: np.ndarray,
           previous: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """``base`` with the checked ``edits`` (:func:`attnviz.ui.grid.read_edits`) applied.

    Returns the values and the (row, column) of cells whose text is not a finite number (they
    keep their ``previous`` value: the scenario's, which holds every accepted edit).
    """
    values = base.copy()
    bad: list[tuple[int, int]] = []
    for r, c, raw in edits.cells:
        number = parse_cell(raw)
        if number is None:
            bad.append((r, c))
            values[r, c] = previous[r, c]
        else:
            values[r, c] = number
    return values, bad
