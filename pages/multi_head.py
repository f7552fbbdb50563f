"""Multi-head: split W_Q, W_K, W_V into heads, one weights map per head, concat, W_O, head mix.
The grids and panels: :mod:`attnviz.ui.multi_head_view`."""

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.teach.text import common
from attnviz.teach.text import multi_head as text
from attnviz.ui import controls, layout, multi_head_view, presenter, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import matrix_panel, scenario_caption

st.header(text.HEADER)
scenario = state.get_scenario()
scenario_caption(scenario)
presenter.page_intro(text.INTRO)

controls.require_projection("multi_head", text.DIRECT, "seed_004_two_heads")

c1, c2 = st.columns(layout.LABEL_BESIDE_CONTROL, vertical_alignment="bottom")
with c1:
    scenario, n, bad_count = multi_head_view.head_count_control("multi_head", scenario)
dk, dv = scenario.w_q.shape[1], scenario.w_v.shape[1]
c2.text(text.WIDTHS.format(dk=dk, heads=common.count(n, "head"), d_k=dk // n, dv=dv, d_v=dv // n,
                           choices=", ".join(map(str, multi_head_view.head_choices(scenario)))))
# presenter mode: the heads' maps come first, right under the head count (the first screen);
# the notes, inputs and settings line under them (drawn first: the maps are computed from them)
maps = st.container() if state.presenter() else None
if bad_count:
    st.error(bad_count)
elif n != scenario.n_heads:  # a one-head scenario opens with several heads, not stored
    st.caption(text.OPENING_HEADS.format(heads=common.count(n, "head"),
                                         stored=common.count(scenario.n_heads, "head")))

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
    end_page()
att = result.attention

labels = [f"{i}:{tok}" for i, tok in enumerate(scenario.tokens)]
st.text(text.SETTINGS_LINE.format(scale=att.scale, tau=att.temperature,
                                  scale_mode=common.SCALE_MODES[scenario.scale_mode])
        + (text.WITH_PE if scenario.use_pe else "")
        + ("" if att.mask.all() else text.WITH_MASK))
with maps or st.container():
    multi_head_view.head_grids(att, labels, n)
concat_labels = multi_head_view.concat_panel(att, labels)

st.subheader(text.PROJECT_HEADER)
c1, c2 = st.columns(layout.NARROW_LEFT, gap="large")
with c1:
    st.latex(text.WO_FORMULA)
    w_o = matrix_editor(text.W_O_LABEL, scenario.w_o, key="multi_head_w_o",
                        row_labels=concat_labels,
                        col_labels=controls.dims("o", scenario.w_o.shape[1]), field="w_o")
    if not np.array_equal(w_o, scenario.w_o):  # an edit the callback did not see (AppTest)
        # only the output depends on W_O: recompute it here, no rerun of the page
        scenario = state.get_scenario()
        result = controls.compute(scenario, heads=n, what=text.COMPUTE_WHAT)
        if result is None:
            end_page()
        att = result.attention
with c2:
    title, _, why = common.MATRICES["multi_head_output"]
    out = att.output
    matrix_panel(title, heatmap(out, controls.dims("o", out.shape[1]), labels),
                 key="multi_head_fig_output", explanation=why)

st.subheader(text.MIX_HEADER)
st.caption(text.MIX)
c1, c2 = st.columns(layout.NARROW_LEFT, gap="large")
with c1:
    st.latex(text.MIX_FORMULA)
    mix = multi_head_view.head_mix_editor("multi_head", scenario, n)
with c2:
    multi_head_view.mixed_panel(att, mix, labels)
