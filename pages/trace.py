"""Trace a cell: click a weight (or pick a query and a key) and follow it back to q_i and k_j."""

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.figures.clickable import MAX_PICKER_CELLS, add_cell_picker
from attnviz.teach.text import common
from attnviz.teach.text import trace as text
from attnviz.ui import controls, layout, one_map, presenter, state, trace_view
from attnviz.ui.diagnostics import diagnostics_panel
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import show_figure
from attnviz.ui.step_by_step_view import explained_row

scenario = state.get_scenario()
st.header(text.HEADER)
presenter.page_intro(text.INTRO)
result = controls.compute(scenario)
if result is None:
    end_page()
att = result.attention
q_lab, k_lab = result.q_labels, result.k_labels
multi = scenario.always_heads  # the path goes on through W_O

c_head, c_query, c_key = st.columns(3)
head = controls.head_picker(att, "trace_head", c_head) or 0
part = att.head(head)
weights = np.atleast_2d(part.weights)
t_q, t_k = weights.shape
tag = trace_view.labels_key(q_lab, k_lab)  # new tokens: new select boxes (fresh labels)
query_key, key_key = f"trace_query_{tag}", f"trace_key_{tag}"
trace_view.ensure_cell(query_key, key_key, t_q, t_k)
i = c_query.selectbox(text.QUERY_LABEL, range(t_q), format_func=lambda r: q_lab[r], key=query_key)
j = c_key.selectbox(text.KEY_LABEL, range(t_k), format_func=lambda c: k_lab[c], key=key_key)

# presenter mode: the weights wider (a number in every cell on the first screen at 1024×768)
left, right = st.columns(layout.TRACE_COLUMNS_PRESENTER if state.presenter()
                         else layout.TRACE_COLUMNS, gap="large")
with left:
    st.markdown(text.WEIGHTS_TITLE.format(head=text.HEAD_SUFFIX.format(h=head) if multi else ""))
    # presenter mode: the axes named in the caption, the height following the screen
    presenting = state.presenter()
    fig = heatmap(weights, k_lab, q_lab, kind="weights",
                  x_title="" if presenting else common.AXIS_KEY,
                  y_title="" if presenting else common.AXIS_QUERY, highlight=[i, (i, j)])
    fit = one_map.fit(fig) if presenting else None
    if weights.size <= MAX_PICKER_CELLS:
        curve = add_cell_picker(fig, weights, k_lab, q_lab, value_name="α")
        st.caption(text.CLICK_PRESENTER if presenting else text.CLICK)
        show_figure(fig, key="trace_fig_weights", fit=fit, on_select=trace_view.click_handler(
            "trace_fig_weights", curve, t_k, query_key, key_key))
    else:
        show_figure(fig, key="trace_fig_weights", fit=fit)
    diagnostics_panel(weights, q_lab, k_lab, key="trace_diag")
    if scenario.spec.projections:  # additive attention has no Q, K, V matrices
        trace_view.qkv_rows(part, q_lab, k_lab, i, j)

with right:
    st.text(text.CHOSEN.format(query=q_lab[i], key=k_lab[j]))
    row = explained_row(scenario, result, i, head=head if multi else None,
                        w_o=scenario.w_o if multi else None)  # additive: its score network
    trace_view.render_cell(row.cell(j))
    if multi and scenario.head_mix is not None:
        st.caption(text.MIXED)
