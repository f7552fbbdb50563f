"""Gradients: the backward pass of the current scenario, every gradient beside its matrix.
The sections: :mod:`attnviz.ui.gradients_view`."""

import streamlit as st

from attnviz.scenarios.gradients import LOSSES
from attnviz.teach.text import gradients as text
from attnviz.ui import controls, layout, presenter, state
from attnviz.ui.gradients_view import Slots, loss_part, matrices
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import scenario_caption

scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
presenter.page_intro(text.INTRO)
result = controls.compute(scenario)
if result is None:
    end_page()
if scenario.spec.backward is None:
    st.info(text.NO_BACKWARD.format(variant=scenario.spec.name))
    end_page()


@st.fragment
def by_loss(slots: Slots) -> None:
    """The loss select, then the loss and everything computed from it, each written in its
    place of ``slots`` (laid out by :func:`backward_pass`). A fragment of its own: a loss,
    pattern, target, traced cell or √d_k value picked here redraws only this part — the
    forward matrices, their titles and most formulas are not sent again."""
    kind = slots.loss.selectbox(text.LOSS_LABEL, LOSSES, format_func=text.LOSS_NAMES.get,
                                key="gradients_loss", help=text.LOSS_HELP)
    scenario = state.get_scenario()
    result = controls.compute(scenario)
    if result is not None:
        loss_part(slots, scenario, result, kind)


@st.fragment
def backward_pass() -> None:
    """The head, the forward matrices with their titles and formulas, then :func:`by_loss`. A
    fragment: a head picked here reruns this part alone, not the page's frame and header
    (nothing here writes what they read: the scenario is only read, its run is the one the
    page computed, kept by :func:`attnviz.ui.controls.compute`)."""
    scenario = state.get_scenario()
    result = controls.compute(scenario)
    if result is None:
        return
    c_loss, c_head, c_pattern = st.columns(layout.LOSS_HEAD_PATTERN)
    head = controls.head_picker(result.attention, "gradients_head", c_head) or 0
    by_loss(matrices(scenario, result, head, c_loss, c_pattern))


backward_pass()
