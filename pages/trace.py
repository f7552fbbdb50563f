"""Trace a cell: click a weight (or pick a query and a key) and follow it back to q_i and k_j."""

import numpy as np
import streamlit as st

from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import MultiHeadResult
from attnviz.core.trace import trace_additive_cell, trace_cell
from attnviz.figures import heatmap
from attnviz.figures.clickable import MAX_PICKER_CELLS, add_cell_picker
from attnviz.teach.text import common as text
from attnviz.ui import controls, state, trace_view
from attnviz.ui.diagnostics import diagnostics_panel
from attnviz.ui.panels import show_figure

scenario = state.get_scenario()
st.header("Trace a cell")
st.write(text.TRACE_INTRO)
result = controls.compute(scenario)
if result is None:
    st.stop()
att = result.attention
q_lab, k_lab = result.q_labels, result.k_labels
multi = isinstance(att, MultiHeadResult)

c_head, c_query, c_key = st.columns(3)
head = 0
if multi:
    head = c_head.selectbox("Head", range(att.n_heads), format_func=lambda h: f"head {h}",
                            key="trace_head")
part = att.heads[head] if multi else att
weights = np.atleast_2d(part.weights)
t_q, t_k = weights.shape
tag = trace_view.labels_key(q_lab, k_lab)  # new tokens: new select boxes (fresh labels)
query_key, key_key = f"trace_query_{tag}", f"trace_key_{tag}"
trace_view.ensure_cell(query_key, key_key, t_q, t_k)
i = c_query.selectbox("Query i", range(t_q), format_func=lambda r: q_lab[r], key=query_key)
j = c_key.selectbox("Key j", range(t_k), format_func=lambda c: k_lab[c], key=key_key)

left, right = st.columns([5, 7], gap="large")
with left:
    st.markdown(f"**Attention weights{f' — head {head}' if multi else ''}**")
    fig = heatmap(weights, k_lab, q_lab, kind="weights", x_title="key",
                  y_title="query", highlight_rows=[i], highlight_cells=[(i, j)])
    if weights.size <= MAX_PICKER_CELLS:
        curve = add_cell_picker(fig, weights, k_lab, q_lab, value_name="α")
        st.caption(text.TRACE_CLICK)
        show_figure(fig, key="trace_fig_weights", on_select=trace_view.click_handler(
            "trace_fig_weights", curve, t_k, query_key, key_key))
    else:
        show_figure(fig, key="trace_fig_weights")
    diagnostics_panel(weights, q_lab, k_lab, key="trace_diag")
    if not isinstance(att, AdditiveResult):
        for name, z, labels, row in (("Q", part.q, q_lab, i), ("K", part.k, k_lab, j),
                                     ("V", part.v, k_lab, j)):
            st.markdown(f"**{name}** (row {row} outlined)")
            show_figure(heatmap(z, [f"d{m}" for m in range(z.shape[1])], labels,
                                highlight_rows=[row]), key=f"trace_fig_{name}")

with right:
    st.text(f"query i = {q_lab[i]}\nkey j = {k_lab[j]}")
    if isinstance(att, AdditiveResult):
        values = result.source_x if result.source_x is not None else result.x
        trace_view.render_additive_trace(trace_additive_cell(att, values, scenario.v_a, i, j))
    else:
        trace_view.render_dot_trace(trace_cell(att, i, j, head=head if multi else None,
                                               w_o=scenario.w_o if multi else None))
        if multi and scenario.head_mix is not None:
            st.caption(text.TRACE_MIXED)
