"""Streamlit rendering of a traced cell (see :mod:`attnviz.core.trace`) and the click-to-pick glue.

Formulas come from ``attnviz.teach.text.TRACE_STEPS``; this module appends the numbers of the chosen
cell. Token labels never go into LaTeX or Markdown: only indices do; labels are shown with
``st.text``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from attnviz.core.trace import AdditiveCellTrace, CellTrace, SoftmaxSteps
from attnviz.figures.clickable import cell_from_selection
from attnviz.teach.text import common as text

MAX_TERMS = 4  # write out sums with up to this many terms; longer ones are summarised


def num(x: float, digits: int = 5) -> str:
    """A number for LaTeX: 5 significant digits, −∞ as \\infty, no exponent soup."""
    x = float(x)
    if np.isneginf(x):
        return r"-\infty"
    if np.isposinf(x):
        return r"\infty"
    if np.isnan(x):
        return r"\text{NaN}"
    s = f"{x:.{digits}g}"
    if "e" in s:
        mantissa, exp = s.split("e")
        s = rf"{mantissa}\times 10^{{{int(exp)}}}"
    return s


def vec(a, limit: int = 8) -> str:
    """A row vector as a LaTeX bmatrix (the middle elided beyond ``limit`` entries)."""
    a = np.ravel(a)
    if a.size > limit:
        items = [num(v, 4) for v in a[: limit - 2]] + [r"\dots", num(a[-1], 4)]
    else:
        items = [num(v, 4) for v in a]
    return r"\begin{bmatrix}" + " & ".join(items) + r"\end{bmatrix}"


def _sum_terms(terms) -> str:
    """'a + b + c' for a few terms, or 'Σ of n terms' for many."""
    terms = list(terms)
    if len(terms) > MAX_TERMS:
        return rf"\textstyle\sum(\text{{{len(terms)} terms}})"
    return " + ".join(terms) if terms else "0"


def step(name: str, *numbers: str, steps: dict | None = None) -> None:
    """One step: bold title, its symbolic formula, then one line per piece of arithmetic."""
    title, formula = (steps or text.TRACE_STEPS)[name]
    st.markdown(f"**{title}**")
    st.latex(formula)
    for line in numbers:
        st.latex(line)


def labels_key(*labels: Sequence[str]) -> str:
    """A short fingerprint of token labels, for widget keys that must restart when the labels
    change (a select box keeps showing an old label while its index stays valid)."""
    return f"{zlib.crc32(chr(31).join(chr(30).join(ls) for ls in labels).encode()):08x}"


def ensure_cell(query_key: str, key_key: str, t_q: int, t_k: int) -> None:
    """Keep the query/key select boxes' values inside the current matrix (sizes can change)."""
    for k, n in ((query_key, t_q), (key_key, t_k)):
        if st.session_state.get(k) not in range(n):
            st.session_state[k] = 0


def click_handler(chart_key: str, curve: int, n_cols: int, query_key: str,
                  key_key: str) -> Callable[[], None]:
    """An ``on_select`` callback: a clicked cell becomes the chosen query and key."""

    def on_select() -> None:
        cell = cell_from_selection(st.session_state.get(chart_key), curve, n_cols)
        if cell is not None:
            st.session_state[query_key], st.session_state[key_key] = cell

    return on_select


def _minus(x: float) -> str:
    """``− x`` for LaTeX, with a negative x in parentheses."""
    return rf"- ({num(x, 4)})" if x < 0 else rf"- {num(x, 4)}"


def _softmax(sm: SoftmaxSteps, i: int, j: int, steps: dict, sym: str = "s''",
             e: str = "e") -> None:
    """Mask, exp, row sum, weight (``sym``: the masked score's symbol, ``e``: the exp's)."""
    cell = f"{{{i},{j}}}"
    if sm.allowed:
        step("mask", rf"M_{cell} = \text{{True}},\ {sym}_{cell} = {num(sm.masked)}", steps=steps)
    else:
        step("mask", rf"M_{cell} = \text{{False}},\ {sym}_{cell} = -\infty", steps=steps)
        st.caption(text.TRACE_MASKED)
    if sm.row_sum == 0:
        st.caption(text.TRACE_FULLY_MASKED)
        step("alpha", rf"\alpha_{cell} = 0", steps=steps)
        return
    exp = (rf"{e}_{cell} = \exp({num(sm.masked, 4)} {_minus(sm.row_max)}) = "
           rf"{num(sm.exp_shifted)}" if sm.allowed else rf"{e}_{cell} = \exp(-\infty) = 0")
    step("exp", rf"m_{{{i}}} = {num(sm.row_max)}", exp, steps=steps)
    st.caption(text.TRACE_SHIFT_NOTE)
    step("row_sum", rf"Z_{{{i}}} = {_sum_terms(num(x, 3) for x in sm.row_exp)}",
         rf"= {num(sm.row_sum)}", steps=steps)
    step("alpha", rf"\alpha_{cell} = \frac{{{num(sm.exp_shifted)}}}{{{num(sm.row_sum)}}} "
                  rf"= {num(sm.alpha, 8)}", steps=steps)
    st.caption(text.TRACE_CHECK)
    st.text(f"recomputed here: {sm.alpha:.17g}\nheatmap (core):  {sm.stored_alpha:.17g}")


def _value(tr: CellTrace | AdditiveCellTrace, steps: dict) -> None:
    i = tr.i
    out = "c" if steps is not text.TRACE_STEPS else "o"
    step("value", rf"{num(tr.softmax.alpha)} \times {vec(tr.v_j)}",
         rf"= {vec(tr.contribution)}", rf"{out}_{{{i}}} = {vec(tr.output_i)}", steps=steps)


def render_dot_trace(tr: CellTrace) -> None:
    """The chain of a dot-product cell, step by step with its numbers."""
    i, j = tr.i, tr.j
    steps = text.TRACE_STEPS
    step("q_k", rf"q_{{{i}}} = {vec(tr.q_i)}", rf"k_{{{j}}} = {vec(tr.k_j)}")
    products = (rf"({num(a, 3)})({num(b, 3)})" for a, b in zip(tr.q_i, tr.k_j, strict=True))
    step("score", rf"s_{{{i},{j}}} = {_sum_terms(products)} = {num(tr.score)}")
    step("scale", rf"{num(tr.score)} \times {num(tr.scale)} = {num(tr.scaled)}")
    step("temperature", rf"{num(tr.scaled)} \div {num(tr.temperature)} = {num(tr.divided)}")
    _softmax(tr.softmax, i, j, steps)
    _value(tr, steps)
    if tr.through_w_o is not None:
        step("w_o", rf"{vec(tr.contribution)}\, W_O[\text{{head {tr.head}}}]",
             rf"= {vec(tr.through_w_o)}", rf"\text{{output}}_{{{i}}} = {vec(tr.final_output_i)}")
        st.caption(text.TRACE_W_O)


def render_additive_trace(tr: AdditiveCellTrace) -> None:
    """The chain of an additive (Bahdanau) cell."""
    i, j = tr.i, tr.j
    steps = text.TRACE_ADDITIVE_STEPS
    step("features", rf"f_{{{i},{j}}} = {vec(tr.features)}", steps=steps)
    products = (rf"({num(a, 3)})({num(b, 3)})" for a, b in zip(tr.v_a, tr.features, strict=True))
    step("score", rf"e_{{{i},{j}}} = {_sum_terms(products)}", rf"= {num(tr.score)}",
         steps=steps)
    _softmax(tr.softmax, i, j, steps, sym="e''", e=r"\epsilon")
    _value(tr, steps)
