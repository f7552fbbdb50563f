"""Encoder–decoder & additive: cross-attention, Bahdanau's scores and attention pooling."""

import numpy as np
import streamlit as st

from attnviz.core.additive import attention_pooling
from attnviz.figures import heatmap
from attnviz.scenarios.scenario import with_positions, with_variant
from attnviz.teach.text import encoder_decoder as text
from attnviz.ui import controls, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.fitting import fit_vector
from attnviz.ui.panels import matrix_panel, scenario_caption

st.header(text.TITLE)
scenario = state.get_scenario()
scenario_caption(scenario)
st.write(text.INTRO)

controls.require_projection("encoder_decoder", text.DIRECT, "translation")
# the page shows every part of the encoder–decoder story: fill the ones a preset left out
scenario = controls.fill_parts(scenario, ("source", "additive", "pooling"))

# lazy, as on Multi-head: the tokens, sizes and two embedding editors run only while it is open
inputs = st.expander(text.INPUTS_TITLE, expanded=False,
                     key="encoder_decoder_inputs", on_change="rerun")
if inputs.open:
    with inputs:
        controls.size_controls("encoder_decoder", scenario)
        tgt, src = st.columns(2, gap="large")
        with tgt:
            st.markdown(f"**{text.TARGET_TITLE}**")
            scenario = controls.token_controls("encoder_decoder", scenario)
            scenario = controls.embedding_editor("encoder_decoder", scenario)
        with src:
            st.markdown(f"**{text.SOURCE_TITLE}**")
            scenario = controls.token_controls("encoder_decoder", scenario, source=True)
            scenario = controls.embedding_editor("encoder_decoder", scenario, source=True)
# lazy: its three editors (~15 ms a rerun) run only while it is open
weights = st.expander(text.CROSS_WEIGHTS_TITLE, expanded=False,
                      key="encoder_decoder_cross_weights", on_change="rerun")
if weights.open:
    with weights:
        scenario = controls.weight_editors("encoder_decoder", scenario)
if scenario.use_pe:
    st.caption(text.PE_ON)

# --- 1) cross-attention ---------------------------------------------------------------------------
st.subheader(text.CROSS_TITLE)
st.latex(text.CROSS_FORMULA)
st.caption(text.CROSS)
cross = controls.compute(with_variant(scenario, "cross"))
if cross is not None:
    att = cross.attention
    c1, c2 = st.columns(2, gap="large")
    with c1:
        fig = heatmap(att.weights, cross.k_labels, cross.q_labels, kind="weights",
                      y_title=text.AXIS_TARGET_QUERY, x_title=text.AXIS_SOURCE_KEY)
        matrix_panel(text.CROSS_WEIGHTS, fig, key="encoder_decoder_fig_cross_weights")
    with c2:
        fig = heatmap(att.output, controls.dims("o", att.output.shape[1]), cross.q_labels,
                      y_title=text.AXIS_TARGET)
        matrix_panel(text.CROSS_OUTPUT, fig, key="encoder_decoder_fig_cross_output")

# --- 2) additive (Bahdanau) attention -------------------------------------------------------------
st.subheader(text.ADDITIVE_TITLE)
st.write(text.ADDITIVE)
st.latex(text.ADDITIVE_FORMULA)
d_a = scenario.w_a_q.shape[1] if scenario.w_a_q.ndim == 2 else 0
# lazy and collapsed, like the cross-attention weights: its editors run only while open
additive_title = text.ADDITIVE_WEIGHTS_TITLE.format(d_model=scenario.d_model, d_a=d_a)
additive_weights = st.expander(additive_title, expanded=False,
                               key="encoder_decoder_additive_inputs", on_change="rerun")
if additive_weights.open:
    with additive_weights:
        # lazy tabs, like the weight tabs: only the selected tab's editor runs
        params = text.ADDITIVE_PARAMETERS
        tabs = st.tabs(list(params.values()), key="encoder_decoder_additive_weights",
                       on_change="rerun")
        changes = {}
        for tab, (name, label) in zip(tabs, params.items(), strict=True):
            if not tab.open:
                continue
            with tab:
                value = getattr(scenario, name)
                rows = ["v_a"] if name == "v_a" else controls.dims("d", value.shape[0])
                # each with its own width: in a scenario file they may disagree (compute says so)
                new = matrix_editor(label, value, key=f"encoder_decoder_{name}", row_labels=rows,
                                    col_labels=controls.dims("a", value.shape[-1]), field=name)
                new = new[0] if name == "v_a" else new
                if not np.array_equal(new, value):
                    changes[name] = new
        if changes:
            scenario = state.update(**changes)
additive = controls.compute(with_variant(scenario, "additive"))
if additive is not None:
    att = additive.attention
    q_lab, k_lab = additive.q_labels, additive.k_labels
    c1, c2 = st.columns(2, gap="large")
    with c1:
        matrix_panel(text.ADDITIVE_SCORES, heatmap(att.scores, k_lab, q_lab,
                                                   y_title=text.AXIS_TARGET,
                                                     x_title=text.AXIS_SOURCE),
                     key="encoder_decoder_fig_add_scores")
    with c2:
        matrix_panel(text.ADDITIVE_WEIGHTS, heatmap(att.weights, k_lab, q_lab, kind="weights",
                                                    y_title=text.AXIS_TARGET,
                                                    x_title=text.AXIS_SOURCE),
                     key="encoder_decoder_fig_add_weights")
    with c1:
        matrix_panel(text.ADDITIVE_CONTEXT,
                     heatmap(att.output, controls.dims("c", att.output.shape[1]), q_lab,
                             y_title=text.AXIS_TARGET), key="encoder_decoder_fig_add_context")

# --- 3) attention pooling (seed 004) --------------------------------------------------------------
@st.fragment
def attention_pooling_section() -> None:
    """Seed 004's pooling layer with its own w and b. A fragment: editing w or b reruns
    this section alone (nothing else on the page depends on them)."""
    st.subheader(text.POOLING_TITLE)
    st.write(text.POOLING)
    st.latex(text.POOLING_FORMULA)
    scenario = state.get_scenario()  # the latest, with this fragment's own edits
    tgt_labels = [f"{i}:{tok}" for i, tok in enumerate(scenario.tokens)]
    pool_w = fit_vector(scenario.pool_w, scenario.d_model, 0.5)
    pool_b = fit_vector(scenario.pool_b, scenario.t, 0.0)
    c1, c2 = st.columns([2, 3])
    with c1:
        new_w = matrix_editor(text.POOL_W, pool_w[None, :], key="encoder_decoder_pool_w",
                              row_labels=["w"],
                              col_labels=controls.dims("d", scenario.d_model), field="pool_w")[0]
    with c2:
        new_b = matrix_editor(text.POOL_B, pool_b[None, :], key="encoder_decoder_pool_b",
                              row_labels=["b"],
                              col_labels=tgt_labels, field="pool_b")[0]
    if not (np.array_equal(new_w, pool_w) and np.array_equal(new_b, pool_b)):  # an edit
        scenario = state.update(pool_w=new_w, pool_b=new_b)
    x_in, _ = with_positions(np.asarray(scenario.x, dtype=float), scenario)
    try:
        pool = attention_pooling(x_in, new_w, new_b)
    except ValueError as exc:
        st.error(text.POOLING_ERROR.format(reason=exc))
        st.stop()
    c1, c2 = st.columns(2, gap="large")
    with c1:
        matrix_panel(text.POOL_SCORES, heatmap(pool.scores, tgt_labels, ["e"], height=130),
                     key="encoder_decoder_fig_pool_scores")
        context = heatmap(pool.output, controls.dims("d", pool.output.shape[0]), ["c"],
                          height=130)
        matrix_panel(text.POOL_CONTEXT, context, key="encoder_decoder_fig_pool_context")
    with c2:
        matrix_panel(text.POOL_WEIGHTS, heatmap(pool.weights, tgt_labels, ["α"], kind="weights",
                                           height=130), key="encoder_decoder_fig_pool_weights")


attention_pooling_section()
