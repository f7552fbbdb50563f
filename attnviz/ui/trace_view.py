"""Streamlit rendering of one traced cell (:meth:`attnviz.core.explain.RowSteps.cell`) and the
click-to-pick glue of Trace a cell.

Formulas come from :func:`attnviz.teach.explain.formulas_for` (the table Step by step uses too;
a step that did not happen is not shown), titles from ``attnviz.teach.text.trace``; this module
appends the numbers of the chosen cell. Token labels never go into LaTeX or Markdown: only
indices do; labels are shown with ``st.text``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from attnviz.core.explain import CellSteps
from attnviz.core.score_mods import At
from attnviz.figures import heatmap
from attnviz.figures.clickable import cell_from_selection
from attnviz.teach.explain import formulas_for, number, output_symbol, settings_of
from attnviz.teach.text import trace as text
from attnviz.ui.panels import show_figure
from attnviz.ui.step_by_step_view import is_wide

MAX_TERMS = 4  # write out sums with up to this many terms; longer ones are summarised


def num(x: float, digits: int = 5) -> str:
    """A number for LaTeX (:func:`attnviz.teach.explain.number`, 5 significant digits)."""
    return number(x, digits, "latex")


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
        return text.SUM_OF_TERMS.format(n=len(terms))
    return " + ".join(terms) if terms else "0"


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


def qkv_rows(part, q_labels: Sequence[str], k_labels: Sequence[str], i: int, j: int) -> None:
    """Head ``part``'s Q, K and V as heatmaps, query i's row of Q and key j's rows of K and V
    outlined. A wide head's (:func:`attnviz.ui.step_by_step_view.is_wide`: a real head's 64 columns)
    sit in a closed lazy expander, built, sent and drawn only while it is open: drawing them
    takes a third of the page's time to open in the browser at 128 tokens."""
    matrices = (("Q", part.q, q_labels, i), ("K", part.k, k_labels, j),
                ("V", part.v, k_labels, j))
    where = st.container()
    if any(is_wide(np.shape(z)) for _, z, _, _ in matrices):
        (t_q, d_k), (t_k, d_v) = np.shape(part.q), np.shape(part.v)
        where = st.expander(text.QKV_WIDE.format(t_q=t_q, t_k=t_k, d_k=d_k, d_v=d_v),
                            key="trace_qkv", on_change="rerun")
        if not where.open:
            return
    with where:
        for name, z, labels, row in matrices:
            st.markdown(text.MATRIX_TITLE.format(name=name, row=row))
            show_figure(heatmap(z, [text.DIMENSION.format(m=m) for m in range(z.shape[1])], labels,
                                highlight=[row]), key=f"trace_fig_{name}")


def _titles(row, titles: dict[str, str]) -> dict[str, str]:
    """The step titles: the teaching text's, and a score modifier's own where it has none."""
    return {**{ms.mod.key: ms.mod.title for ms in row.mod_steps}, **titles}


def _minus(x: float) -> str:
    """``− x`` for LaTeX, with a negative x in parentheses."""
    return rf"- ({num(x, 4)})" if x < 0 else rf"- {num(x, 4)}"


class _Steps:
    """Numbered steps: bold title, symbolic formula, then one line per piece of arithmetic.
    A step missing from the formula table (it did not happen) is skipped."""

    def __init__(self, formulas: dict[str, str], titles: dict[str, str]) -> None:
        self.formulas, self.titles, self.count = formulas, titles, 0

    def __call__(self, name: str, *numbers: str) -> bool:
        if name not in self.formulas:
            return False
        self.count += 1
        st.markdown(f"**{self.count}. {self.titles[name]}**")
        st.latex(self.formulas[name])
        for line in numbers:
            st.latex(line)
        return True


def render_cell(cell: CellSteps) -> None:
    """The chain of one cell, step by step with its numbers (dot product or additive)."""
    row, i, j = cell.row, cell.i, cell.j
    additive = row.kind == "additive"
    formulas = formulas_for(row)
    step = _Steps(formulas, _titles(row, text.ADDITIVE_TITLES if additive else text.TITLES))
    ij = f"{{{i},{j}}}"
    if additive:
        step("features", rf"f_{ij} = {vec(cell.features)}")
        products = (rf"({num(a, 3)})({num(b, 3)})" for a, b in
                    zip(row.v_a, cell.features, strict=True))
        step("score", rf"e_{ij} = {_sum_terms(products)}", rf"= {num(cell.score)}")
    else:
        step("query_key", rf"q_{{{i}}} = {vec(row.q)}", rf"k_{{{j}}} = {vec(cell.k_j)}")
        products = (rf"({num(a, 3)})({num(b, 3)})" for a, b in zip(row.q, cell.k_j, strict=True))
        step("score", rf"s_{ij} = {_sum_terms(products)} = {num(cell.score)}")
        step("scale", rf"{num(cell.score)} \times {num(row.scale)} = {num(cell.times_scale)}")
        step("temperature", rf"{num(cell.times_scale)} \div {num(row.temperature)} = "
                            rf"{num(row.factor_scaled[j])}")
        for ms in row.mod_steps:  # every later change of the scores: bias, cap, ...
            step(ms.mod.key, ms.mod.traced(float(ms.before[j]), float(ms.after[j]),
                                           At(ms.at.h, ms.at.i, np.intp(j)), num))
    _softmax(cell, step, sym="e''" if additive else "s''", e=r"\epsilon" if additive else "e")
    out = output_symbol(settings_of(row), i, row.head)
    step("term", rf"{num(cell.alpha)} \times {vec(cell.v_j)}", rf"= {vec(cell.term)}",
         rf"{out} = {vec(row.output)}")
    if row.w_o_block is not None and step(
            "w_o", rf"{vec(cell.term)}\, {text.HEAD_ROWS.format(h=row.head)}",
            rf"= {vec(cell.through_w_o)}", rf"o_{{{i}}} = {vec(row.final_output)}"):
        st.caption(text.W_O)


def _softmax(cell: CellSteps, step: _Steps, sym: str, e: str) -> None:
    """Mask, exp, row sum, weight (``sym``: the masked score's symbol, ``e``: the exp's)."""
    row, i, j = cell.row, cell.i, cell.j
    ij = f"{{{i},{j}}}"
    if cell.allowed:
        step("mask", rf"M_{ij} = \text{{True}},\ {sym}_{ij} = {num(cell.masked)}")
    elif step("mask", rf"M_{ij} = \text{{False}},\ {sym}_{ij} = -\infty"):
        st.caption(text.MASKED)
    if row.fully_masked:
        st.caption(text.FULLY_MASKED)
        step("weight", rf"\alpha_{ij} = 0")
        return
    exp = (rf"{e}_{ij} = \exp({num(cell.masked, 4)} {_minus(row.row_max)}) = {num(cell.exp)}"
           if cell.allowed else rf"{e}_{ij} = \exp(-\infty) = 0")
    step("max", rf"m_{{{i}}} = {num(row.row_max)}")
    step("exp", exp)
    st.caption(text.SHIFT_NOTE)
    terms = [num(x, 3) for x in row.exp]
    if row.sink_exp is not None:  # a learned sink logit takes part in the sum (attention sinks)
        terms.append(rf"\underbrace{{{num(row.sink_exp, 3)}}}_{{\text{{sink}}}}")
    step("sum", rf"Z_{{{i}}} = {_sum_terms(terms)}", rf"= {num(row.row_sum)}")
    step("weight", rf"\alpha_{ij} = \frac{{{num(cell.exp)}}}{{{num(row.row_sum)}}} "
                   rf"= {num(cell.alpha, 8)}")
    st.caption(text.CHECK)
    st.text(text.CHECK_LINES.format(recomputed=f"{cell.alpha:.17g}",
                                    core=f"{cell.core_alpha:.17g}"))
