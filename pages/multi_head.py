"""Multi-head: split W_Q, W_K, W_V into heads, one weights map per head, concat, W_O, head mix."""

import numpy as np
import streamlit as st

from attnviz.core.attention import mix_heads
from attnviz.figures import heatmap
from attnviz.figures.grid import compact
from attnviz.teach.text import common
from attnviz.teach.text import multi_head as text
from attnviz.ui import controls, heads, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import matrix_panel, scenario_caption, show_figure

st.header(text.HEADER)
scenario = state.get_scenario()
scenario_caption(scenario)
st.write(text.INTRO)

controls.require_projection("multi_head", text.DIRECT, "seed_004_two_heads")

c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
with c1:
    scenario, n, bad_count = heads.head_count_control("multi_head", scenario)
dk, dv = scenario.w_q.shape[1], scenario.w_v.shape[1]
c2.text(text.WIDTHS.format(dk=dk, heads=common.count(n, "head"), d_k=dk // n, dv=dv, d_v=dv // n,
                           choices=", ".join(map(str, heads.head_choices(scenario)))))
if bad_count:
    st.error(bad_count)

# lazy: the tokens and the five matrix editors (~30 ms a rerun) run only while it is open
inputs = st.expander(text.INPUTS_EXPANDER, expanded=False, key="multi_head_inputs",
                     on_change="rerun")
if inputs.open:
    with inputs:
        scenario = controls.token_controls("multi_head", scenario)
        controls.size_controls("multi_head", scenario)
        scenario = controls.embedding_editor("multi_head", scenario)
        scenario = controls.weight_editors("multi_head", scenario)

result = controls.compute(scenario, heads=n, what=text.COMPUTE_WHAT)
if result is None:
    st.stop()
att = result.attention

labels = [f"{i}:{tok}" for i, tok in enumerate(scenario.tokens)]
st.text(text.SETTINGS_LINE.format(scale=att.scale, tau=att.temperature,
                                  scale_mode=common.SCALE_MODES[scenario.scale_mode])
        + (text.WITH_PE if scenario.use_pe else "")
        + ("" if att.mask.all() else text.WITH_MASK))
per_row = 2 if n <= 2 else (3 if n == 3 else 4)
small = len(labels) <= (8 if per_row <= 2 else 5)
bars = per_row <= 2  # wider grids: one shared scale, explained in the caption

st.subheader(text.WEIGHTS_HEADER)
st.caption(text.WEIGHTS + ("" if bars else " " + text.WEIGHTS_SCALE))
extra = 0.0 if bars else heads.label_room(labels, per_row)
for h, col in enumerate(heads.grid(n, per_row, first_extra=extra)):
    with col:
        st.markdown(text.HEAD_TITLE.format(h=h))
        fig = heatmap(att.weights[h], labels, labels, kind="weights", show_text=small,
                      digits=2, y_title=common.AXIS_QUERY, x_title=common.AXIS_KEY)
        if not bars:
            compact(fig, y_labels=h % per_row == 0, colour_bar=False)
        show_figure(fig, key=f"multi_head_fig_head_{h}")

st.subheader(text.OUTPUTS_HEADER)
bound = float(np.max(np.abs(att.head_outputs))) or 1.0
st.caption(text.HEAD_OUTPUTS + ("" if bars else " " + text.OUTPUTS_SCALE.format(bound=bound)))
for h, col in enumerate(heads.grid(n, per_row, first_extra=extra)):
    with col:
        st.markdown(text.HEAD_OUTPUT_TITLE.format(h=h))
        out = att.head_outputs[h]
        fig = heatmap(out, [f"h{h}.v{j}" for j in range(out.shape[1])], labels, kind="signed",
                      zmin=-bound, zmax=bound, show_text=small, digits=2)
        if not bars:
            compact(fig, y_labels=h % per_row == 0, colour_bar=False)
        show_figure(fig, key=f"multi_head_fig_out_{h}")

d_v = att.head_outputs.shape[2]
concat_labels = [f"h{j // d_v}.v{j % d_v}" for j in range(att.concat.shape[1])]
title, formula, why = common.MATRICES["concat"]
c1, _ = st.columns([3, 2]) if att.concat.shape[1] <= 8 else (st.container(), None)
with c1:
    matrix_panel(title, heatmap(att.concat, concat_labels, labels), key="multi_head_fig_concat",
                 formula=formula, explanation=why)

st.subheader(text.PROJECT_HEADER)
c1, c2 = st.columns([2, 3], gap="large")
with c1:
    st.latex(text.WO_FORMULA)
    w_o = matrix_editor(text.W_O_LABEL, scenario.w_o, key="multi_head_w_o",
                        row_labels=concat_labels,
                        col_labels=controls.dims("o", scenario.w_o.shape[1]))
    if not np.array_equal(w_o, scenario.w_o):
        # only the output depends on W_O: recompute it here, no rerun of the page
        scenario = state.update(w_o=w_o)
        result = controls.compute(scenario, heads=n, what=text.COMPUTE_WHAT)
        if result is None:
            st.stop()
        att = result.attention
with c2:
    title, _, why = common.MATRICES["multi_head_output"]
    out = att.output
    matrix_panel(title, heatmap(out, controls.dims("o", out.shape[1]), labels),
                 key="multi_head_fig_output", explanation=why)

st.subheader(text.MIX_HEADER)
st.caption(text.MIX)
c1, c2 = st.columns([2, 3], gap="large")
with c1:
    st.latex(text.MIX_FORMULA)
    mix = heads.head_mix_editor("multi_head", scenario, n)
with c2:
    try:
        mixed = mix_heads(att.head_outputs, mix)
        matrix_panel(text.MIXED_TITLE, heatmap(mixed, controls.dims("v", d_v), labels),
                     key="multi_head_fig_mixed")
    except ValueError as exc:
        st.error(text.CANNOT_MIX.format(reason=exc))
