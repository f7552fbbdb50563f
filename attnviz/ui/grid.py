"""The matrix editors' grid: a Streamlit component of ``<input>`` cells that sends on Enter.

``st.data_editor`` sends an edit 150 ms after it was made (a fixed debounce in its frontend):
measured, a typed cell reached a minimal app in 177 ms that way and in 32 ms with this grid
(``benchmarks/bench_grid_commit.py``), which the Playground's cell-edit target (≤ 300 ms to
the repainted charts) needs. The grid sends every edit so far in ``st.data_editor``'s shape
(``{"edited_rows": {row: {column: text}}}``), so :mod:`attnviz.ui.editors` parses either alike.
Only the rows in view are drawn (a 256 × 64 matrix would otherwise put 16,384 inputs in the
page and slow every later rerun: Playground cell edit at t=256 1.1 s, 280 ms drawn this way),
and of a wide matrix (more than 48 columns: a real head's x and W_Q, 769 wide for GPT-2 small)
only the columns in view (10,766 inputs -> 196; benchmarks/bench_wide_head.py).
The JavaScript and CSS are ``grid.js`` and ``grid.css`` beside this file; labels are written as
text (never as HTML). Keys: Enter commits and moves down (Shift+Enter up), the arrows move up
and down, Tab to the next cell (in a wide grid also to one not drawn, the row's end wrapping to
the next row), Escape takes back what is being typed; a tab-separated block
pasted into a cell fills the cells from it.

The edits come from the browser and are untrusted (a hand-made client can send any JSON):
:func:`read_edits` checks their shape, row numbers and cell types before anything uses them,
and cuts a cell's text to :data:`MAX_CELL_CHARS` (+1, so it is still refused as a number).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from attnviz.teach.text import common as text

NAME = "attnviz_grid"
STATE = "edits"  # the component's state value: {"edited_rows": ...}
_HERE = Path(__file__).parent
MAX_CELL_CHARS = 64  # characters of one cell's text (a float64's repr needs at most 24)
# A grid of more cells than this is sent without its cells when the browser has them already
# (the same digest, sent to the grid drawn in the last run): a real head's x at 128 tokens is
# 2.2 MB of JSON, which every rerun sent again. grid.js keeps the cells of the last grids it
# drew by digest, and asks for them (the state value's "need") should it have none.
ELIDE_CELLS = 2048
_SENT = "_attnviz_grid_sent"  # session state: grid key -> the digest last sent with its cells
_ROW_KEY = re.compile(r"0|[1-9][0-9]*")  # a row number as the browser writes it


@functools.cache
def _component():
    """The registered component (once per process)."""
    return st.components.v2.component(
        NAME, js=(_HERE / "grid.js").read_text(encoding="utf-8"),
        css=(_HERE / "grid.css").read_text(encoding="utf-8"), isolate_styles=False)


def _ignore() -> None:
    """The change callback when the caller has none (a state needs one to exist)."""


def grid(label: str, cells: Sequence[Sequence[str]], *, key: str, row_labels: Sequence[str],
         col_labels: Sequence[str], disabled: bool = False, big: bool = False,
         on_change: Callable[[], None] | None = None, cells_digest: str | None = None):
    """Show a grid of the texts ``cells`` and return its edits so far (``{"edited_rows": {row:
    {column: text}}}``, or None before the first).

    ``key`` identifies the grid: later runs with the same key keep what the person typed, and a
    grid the browser draws again under that key (moved to another place of the page) starts
    from the edits the server holds; ``on_change`` runs (before the rerun) when an edit
    arrives; ``big``: presenter mode's type. ``cells_digest``: a digest of ``cells`` the caller
    keeps (a wide matrix's 0.1 M texts are then not hashed again on every run). A grid of more
    than :data:`ELIDE_CELLS` cells is sent without them (``cells`` None) when the grid of the
    last run under this key was sent them with the same digest.
    """
    data = {"label": label, "rows": list(row_labels), "cols": list(col_labels),
            "cells": cells if cells_digest is not None else [list(row) for row in cells],
            "disabled": disabled, "big": big}
    data["sig"] = _signature(data, cells_digest)
    # for a grid drawn afresh (not in the digest): the edits the server holds, checked
    state = edits_of(st.session_state.get(key))
    held = read_edits(state, len(data["rows"]), data["cols"])
    data["edits"] = held.as_state(data["cols"])
    if _has_cells(key, data["sig"], len(data["rows"]) * len(data["cols"]), state):
        data["cells"] = None
    result = _component()(key=key, data=data, default={STATE: None},
                          on_edits_change=on_change or _ignore)
    return getattr(result, STATE, None)


def _has_cells(key: str, sig: str, n_cells: int, state) -> bool:
    """True when the browser holds this grid's cells already: a large grid (more than
    ELIDE_CELLS) drawn in the last run under ``key`` (its state is kept) and sent its cells with
    digest ``sig``, and the browser has not asked for them (``state["need"] == sig``). Records
    what is sent; forgets the grids no longer drawn."""
    sent = st.session_state.setdefault(_SENT, {})
    for gone in [k for k in sent if k != key and k not in st.session_state]:
        del sent[gone]
    asked = isinstance(state, Mapping) and state.get("need") == sig
    if n_cells > ELIDE_CELLS and key in st.session_state and sent.get(key) == sig and not asked:
        return True
    sent[key] = sig
    return False


def _signature(data: dict, cells_digest: str | None = None) -> str:
    """A digest of what the grid is drawn from: the browser compares it (not the whole data)
    to tell a rerun's same grid from new data. The cells count through ``cells_digest`` when
    one is given."""
    cells = ([cells_digest] if cells_digest is not None
             else itertools.chain.from_iterable(data["cells"]))
    parts = [data["label"], *data["rows"], *data["cols"], str(data["disabled"]),
             str(data["big"]), *cells]
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"),
                           digest_size=12).hexdigest()


def edits_of(value) -> Mapping | None:
    """The edits in a grid's session-state value (``st.session_state[key]``: the component's
    states, ``{"edits": {...}}``), or None."""
    if isinstance(value, Mapping):
        inner = value.get(STATE)
        return inner if isinstance(inner, Mapping) else None
    return None


@dataclass(frozen=True)
class Edits:
    """A grid's edits after :func:`read_edits`.

    Attributes
    ----------
    cells : tuple of (row, column, raw)
        Each edited cell: its row and column index and what was sent (text of at most
        ``MAX_CELL_CHARS + 1`` characters, a number, or None for an emptied cell).
    problem : str
        Why the edits were refused as a whole ("" when they were not; then ``cells`` is empty).
    """

    cells: tuple[tuple[int, int, object], ...] = ()
    problem: str = ""

    def as_state(self, columns: Sequence[str]) -> dict:
        """The edits as the grid sends them (``{row: {column: raw}}``), to draw a grid again."""
        out: dict[str, dict] = {}
        for r, c, raw in self.cells:
            out.setdefault(str(r), {})[columns[c]] = raw
        return out


def read_edits(value, n_rows: int, columns: Sequence[str], *, ticks: bool = False) -> Edits:
    """The edits of a grid with ``n_rows`` rows and these ``columns``, checked.

    ``value`` is the grid's state (``{"edited_rows": {row: {column: raw}}}``, or None). Refused
    as a whole, with the reason in :attr:`Edits.problem` and without allocating anything the
    size of a row number: ``edited_rows`` that is not an object, a row that is not a whole
    number (``"abc"``, ``"1.5"``, ``"-1"``) or is outside the matrix (``99999999999999``), a
    row's cells that are not an object, or a cell holding true/false, a list or an object.
    A column that is not one of ``columns`` (the row labels' column) is ignored; a cell's text
    is cut to ``MAX_CELL_CHARS + 1`` characters (then refused as a number by its editor).
    ``ticks``: the cells are tick boxes (the mask editor's ``st.data_editor``, same shape of
    edits): true and false are allowed too (other text and numbers are left to Streamlit, which
    ignores what a tick box cannot hold).
    """
    if value is None:
        return Edits()
    if not isinstance(value, Mapping):
        return Edits(problem=text.GRID_NOT_OBJECT.format(what=text.GRID_EDITS))
    rows = value.get("edited_rows")
    if rows is None:
        return Edits()
    if not isinstance(rows, Mapping):
        return Edits(problem=text.GRID_NOT_OBJECT.format(what=text.GRID_EDITED_ROWS))
    index = {c: j for j, c in enumerate(columns)}
    cells = []
    for key, row_cells in rows.items():
        r = _row_number(key)
        if r is None:
            return Edits(problem=text.GRID_BAD_ROW.format(row=_shown_key(key)))
        if r >= n_rows:
            return Edits(problem=text.GRID_ROW_OUTSIDE.format(row=_shown_key(key),
                                                              last=n_rows - 1))
        if row_cells is None:
            continue
        if not isinstance(row_cells, Mapping) or len(row_cells) > len(columns) + 1:
            return Edits(problem=text.GRID_BAD_CELLS.format(row=r))
        for col, raw in row_cells.items():
            c = index.get(col)
            if c is None:  # the row labels' column, or a name the grid does not have
                continue
            allowed = raw is None or isinstance(raw, (str, int, float)) and (
                ticks or not isinstance(raw, bool))
            if not allowed:
                return Edits(problem=(text.GRID_BAD_TICK if ticks else text.GRID_BAD_CELL)
                             .format(row=r, col=c))
            if isinstance(raw, str) and len(raw) > MAX_CELL_CHARS:
                raw = raw[:MAX_CELL_CHARS + 1]
            cells.append((r, c, raw))
    return Edits(cells=tuple(cells))


def _row_number(key) -> int | None:
    """A row key as a row number (``"3"``, or the int AppTest passes), or None. A key of more
    than 20 digits is taken as 10**20 (outside every matrix) without converting it."""
    if isinstance(key, int) and not isinstance(key, bool):
        return key if key >= 0 else None
    if isinstance(key, str) and _ROW_KEY.fullmatch(key):
        return int(key) if len(key) <= 20 else 10**20
    return None


def _shown_key(key) -> str:
    """A row key for a message: at most 20 characters, ASCII letters, digits and ``. -`` only
    (the message is Markdown); a huge number as "a huge number"."""
    if isinstance(key, int):
        return str(key) if key < 10**20 else text.GRID_HUGE_ROW
    shown = re.sub(r"[^A-Za-z0-9.-]", "?", str(key)[:20])
    return shown + ("…" if len(str(key)) > 20 else "")
