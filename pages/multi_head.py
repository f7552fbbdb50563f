"""Multi-head: split W_Q, W_K, W_V into heads, one weights map per head, concat, W_O, head mix."""

import numpy as np
import streamlit as st

from attnviz.core.attention import mix_heads
from attnviz.figures import heatmap
from attnviz.figures.grid import compact
from attnviz.teach.text import common as text
from attnviz.ui import controls, heads, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import matrix_panel, scenario_caption, show_figure

st.header("Multi-head attention")
scenario = state.get_scenario()
scenario_caption(scenario)
st.write(text.MHA_INTRO)

controls.require_projection("mha", text.MHA_DIRECT, "seed_004_two_heads")

c1, c2 = st.columns([1, 3], vertical_alignment="bottom")
with c1:
    scenario, n, bad_count = heads.head_count_control("mha", scenario)
dk, dv = scenario.w_q.shape[1], scenario.w_v.shape[1]
c2.text(f"Q/K width {dk} = {n} heads × d_k {dk // n};  V width {dv} = {n} heads × d_v {dv // n}."
        f"  Valid head counts: {', '.join(map(str, heads.head_choices(scenario)))}")
if bad_count:
    st.error(bad_count)

# lazy: the tokens and the five matrix editors (~30 ms a rerun) run only while it is open
inputs = st.expander("Tokens, embeddings and weight matrices", expanded=False, key="mha_inputs",
                     on_change="rerun")
if inputs.open:
    with inputs:
        scenario = controls.token_controls("mha", scenario)
        controls.size_controls("mha", scenario)
        scenario = controls.embedding_editor("mha", scenario)
        scenario = controls.weight_editors("mha", scenario)

result = controls.compute(scenario, heads=n, what="multi-head attention")
if result is None:
    st.stop()
att = result.attention

labels = [f"{i}:{tok}" for i, tok in enumerate(scenario.tokens)]
scale_txt = "1/√d_k" if scenario.scale_mode == "sqrt_dk" else scenario.scale_mode
st.text(f"scale = {att.scale:.4g} ({scale_txt}), temperature τ = {att.temperature:g}"
        + (", positional encoding added to X" if scenario.use_pe else "")
        + ("" if att.mask.all() else ", with the scenario's mask"))
per_row = 2 if n <= 2 else (3 if n == 3 else 4)
small = len(labels) <= (8 if per_row <= 2 else 5)
bars = per_row <= 2  # wider grids: one shared scale, explained in the caption

st.subheader("Attention weights per head")
st.caption(text.MHA_WEIGHTS + ("" if bars else " " + text.MHA_WEIGHTS_SCALE))
extra = 0.0 if bars else heads.label_room(labels, per_row)
for h, col in enumerate(heads.grid(n, per_row, first_extra=extra)):
    with col:
        st.markdown(f"**head {h}**")
        fig = heatmap(att.weights[h], labels, labels, kind="weights", show_text=small,
                      digits=2, y_title="query", x_title="key")
        if not bars:
            compact(fig, y_labels=h % per_row == 0, colour_bar=False)
        show_figure(fig, key=f"mha_fig_head_{h}")

st.subheader("Output of each head")
bound = float(np.max(np.abs(att.head_outputs))) or 1.0
st.caption(text.MHA_HEAD_OUTPUTS + ("" if bars else " " + text.MHA_OUTPUTS_SCALE.format(
    bound=bound)))
for h, col in enumerate(heads.grid(n, per_row, first_extra=extra)):
    with col:
        st.markdown(f"**head {h}: O{h}**")
        out = att.head_outputs[h]
        fig = heatmap(out, [f"h{h}.v{j}" for j in range(out.shape[1])], labels, kind="signed",
                      zmin=-bound, zmax=bound, show_text=small, digits=2)
        if not bars:
            compact(fig, y_labels=h % per_row == 0, colour_bar=False)
        show_figure(fig, key=f"mha_fig_out_{h}")

d_v = att.head_outputs.shape[2]
concat_labels = [f"h{j // d_v}.v{j % d_v}" for j in range(att.concat.shape[1])]
title, formula, why = text.MATRICES["concat"]
c1, _ = st.columns([3, 2]) if att.concat.shape[1] <= 8 else (st.container(), None)
with c1:
    matrix_panel(title, heatmap(att.concat, concat_labels, labels), key="mha_fig_concat",
                 formula=formula, explanation=why)

st.subheader("Project with W_O")
c1, c2 = st.columns([2, 3], gap="large")
with c1:
    st.latex(text.MHA_WO_FORMULA)
    w_o = matrix_editor("W_O", scenario.w_o, key="mha_w_o", row_labels=concat_labels,
                        col_labels=controls.dims("o", scenario.w_o.shape[1]))
    if not np.array_equal(w_o, scenario.w_o):
        # only the output depends on W_O: recompute it here, no rerun of the page
        scenario = state.update(w_o=w_o)
        result = controls.compute(scenario, heads=n, what="multi-head attention")
        if result is None:
            st.stop()
        att = result.attention
with c2:
    title, _, why = text.MATRICES["mha_output"]
    out = att.output
    matrix_panel(title, heatmap(out, controls.dims("o", out.shape[1]), labels),
                 key="mha_fig_output", explanation=why)

st.subheader("Alternative: mix the heads with one weight each (seed 004)")
st.caption(text.MHA_MIX)
c1, c2 = st.columns([2, 3], gap="large")
with c1:
    st.latex(text.MHA_MIX_FORMULA)
    mix = heads.head_mix_editor("mha", scenario, n)
with c2:
    try:
        mixed = mix_heads(att.head_outputs, mix)
        matrix_panel("Mixed output O_mix", heatmap(mixed, controls.dims("v", d_v), labels),
                     key="mha_fig_mixed")
    except ValueError as exc:
        st.error(f"Cannot mix the heads: {exc}.")
