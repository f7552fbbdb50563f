"""Encoder–decoder & additive: cross-attention, Bahdanau's scores and attention pooling.
The views: :mod:`attnviz.ui.encoder_decoder_view`."""

from contextlib import nullcontext

import numpy as np
import streamlit as st

from attnviz.scenarios.scenario import with_variant
from attnviz.teach.text import encoder_decoder as text
from attnviz.ui import controls, layout, presenter, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.encoder_decoder_view import (
    additive_editors,
    additive_views,
    cross_views,
    pooling_views,
    real_cross_section,
)
from attnviz.ui.fitting import fit_vector
from attnviz.ui.panels import scenario_caption

st.header(text.TITLE)
scenario = state.get_scenario()
scenario_caption(scenario)
presenter.page_intro(text.INTRO)

controls.require_projection("encoder_decoder", text.DIRECT, "translation")
# the page shows every part of the encoder–decoder story: fill the ones a preset left out
scenario = controls.fill_parts(scenario, ("source", "additive", "pooling"))
lesson = presenter.lesson_box()  # presenter mode: the cross-attention above the editors

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
with lesson or nullcontext():
    st.subheader(text.CROSS_TITLE)
    st.latex(text.CROSS_FORMULA)
    if not lesson:
        st.caption(text.CROSS)
    cross = controls.compute(with_variant(scenario, "cross"))
    if cross is not None:
        cross_views(cross)
    if lesson:  # (under the map: its rows keep the first screen)
        st.caption(text.CROSS)
real_cross_section()

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
        scenario = additive_editors(scenario)
additive = controls.compute(with_variant(scenario, "additive"))
if additive is not None:
    additive_views(additive)

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
    c1, c2 = st.columns(layout.NARROW_LEFT)
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
    pooling_views(scenario, new_w, new_b, tgt_labels)


attention_pooling_section()
