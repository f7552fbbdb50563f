"""The matrix editors' grid: a Streamlit component of ``<input>`` cells that sends on Enter.

``st.data_editor`` sends an edit 150 ms after it was made (a fixed debounce in its frontend):
measured, a typed cell reached a minimal app in 177 ms that way and in 32 ms with this grid
(``benchmarks/bench_grid_commit.py``), which the Playground's cell-edit target (≤ 300 ms to
the repainted charts) needs. The grid sends every edit so far in ``st.data_editor``'s shape
(``{"edited_rows": {row: {column: text}}}``), so :mod:`attnviz.ui.editors` parses it as before.
Only the rows in view are drawn (a 256 × 64 matrix would otherwise put 16,384 inputs in the
page and slow every later rerun: Playground cell edit at t=256 1.1 s, 280 ms drawn this way).
The JavaScript and CSS are ``grid.js`` and ``grid.css`` beside this file; labels are written as
text (never as HTML). Keys: Enter commits and moves down (Shift+Enter up), the arrows move up
and down, Tab to the next cell, Escape takes back what is being typed; a tab-separated block
pasted into a cell fills the cells from it.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import streamlit as st

NAME = "attnviz_grid"
STATE = "edits"  # the component's state value: {"edited_rows": ...}
_HERE = Path(__file__).parent


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
         on_change: Callable[[], None] | None = None):
    """Show a grid of the texts ``cells`` and return its edits so far (``{"edited_rows": {row:
    {column: text}}}``, or None before the first).

    ``key`` identifies the grid: later runs with the same key keep what the person typed, and a
    grid the browser draws again under that key (moved to another place of the page) starts
    from the edits the server holds; ``on_change`` runs (before the rerun) when an edit
    arrives; ``big``: presenter mode's type.
    """
    data = {"label": label, "rows": list(row_labels), "cols": list(col_labels),
            "cells": [list(row) for row in cells], "disabled": disabled, "big": big}
    data["sig"] = _signature(data)
    held = edits_of(st.session_state.get(key))  # for a grid drawn afresh (not in the digest)
    data["edits"] = dict(held.get("edited_rows") or {}) if held else {}
    result = _component()(key=key, data=data, default={STATE: None},
                          on_edits_change=on_change or _ignore)
    return getattr(result, STATE, None)


def _signature(data: dict) -> str:
    """A digest of what the grid is drawn from: the browser compares it (not the whole data)
    to tell a rerun's same grid from new data."""
    parts = [data["label"], *data["rows"], *data["cols"], str(data["disabled"]),
             str(data["big"]), *itertools.chain.from_iterable(data["cells"])]
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"),
                           digest_size=12).hexdigest()


def edits_of(value) -> Mapping | None:
    """The edits in a grid's session-state value (``st.session_state[key]``: the component's
    states, ``{"edits": {...}}``), or None."""
    if isinstance(value, Mapping):
        inner = value.get(STATE)
        return inner if isinstance(inner, Mapping) else None
    return None
