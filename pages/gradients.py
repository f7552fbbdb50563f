"""Gradients: the backward pass of the current scenario, every gradient beside its matrix.
The sections: :mod:`attnviz.ui.gradients_view`."""

import streamlit as st

from attnviz.scenarios.gradients import LOSSES, Loss, gradients, kv_head
from attnviz.teach import backward
from attnviz.teach.text import gradients as text
from attnviz.ui import controls, heads, layout, state
from attnviz.ui.gradients_view import (
    backward_pairs,
    loss_target,
    param_pairs,
    saturation,
    traced_cell,
)
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import scenario_caption

scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
st.write(text.INTRO)
result = controls.compute(scenario)
if result is None:
    end_page()
if scenario.spec.backward is None:
    st.info(text.NO_BACKWARD.format(variant=scenario.spec.name))
    end_page()


@st.fragment
def backward_pass() -> None:
    """The loss and everything computed from it. A fragment: a loss, head, target, traced
    cell or √d_k value picked here reruns this part alone, not the page's frame and header
    (nothing here writes what they read: the scenario is only read, its run is the one the
    page computed, kept by :func:`attnviz.ui.controls.compute`)."""
    scenario = state.get_scenario()
    result = controls.compute(scenario)
    if result is None:
        return
    att = result.attention
    c_loss, c_head, c_pattern = st.columns(layout.LOSS_HEAD_PATTERN)
    kind = c_loss.selectbox(text.LOSS_LABEL, LOSSES, format_func=text.LOSS_NAMES.get,
                            key="gradients_loss", help=text.LOSS_HELP)
    head = heads.head_picker(att, "gradients_head", c_head) or 0
    with st.container():  # one element whatever the loss: the charts below keep their place,
        loss = Loss(kind, loss_target(scenario, result, kind, c_pattern))  # so are not remade
    try:
        grads = gradients(scenario, loss)
    except ValueError as exc:
        st.error(f"{text.CANNOT}: {exc}")
        return
    kv = kv_head(scenario, grads, head)
    f = backward.formulas(backward.settings_of(scenario.spec, scenario, att,
                                               shared_kv=kv.n_kv < grads.attention.n_heads,
                                               loss=kind))
    st.markdown(f"### {text.LOSS_VALUE.format(value=f'{grads.loss:.6g}')}")
    st.latex(f["loss"])
    backward_pairs(scenario, result, grads, head, kv, f)
    param_pairs(scenario, result, grads, f)
    traced_cell(result, grads, head)  # ---- one dS̃_ij traced
    saturation(scenario, result, loss, head)  # ---- the √d_k story


backward_pass()
