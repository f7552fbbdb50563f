"""Masks: causal, padding, sliding-window and custom masks, and what −∞ does to the softmax.
The controls and views: :mod:`attnviz.ui.masks_view`."""

import numpy as np
import streamlit as st

from attnviz import position_labels
from attnviz.scenarios.scenario import MASK_KINDS
from attnviz.teach.text import common
from attnviz.teach.text import masks as text
from attnviz.ui import controls, presenter, state
from attnviz.ui.masks_view import (
    bind,
    custom_mask_controls,
    fully_masked,
    mask_views,
    on_kind,
    window_on_chart,
)
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import scenario_caption

st.header(text.TITLE)
scenario = state.get_scenario()
scenario_caption(scenario)
presenter.page_intro(text.INTRO)
q_lab, k_lab = position_labels(scenario.tokens), position_labels(scenario.key_tokens)
t_q, t_k = len(q_lab), len(k_lab)

# 1) the user's mask: kind and its controls. The widgets show the scenario's values and write
#    changes back through callbacks, so a scenario changed elsewhere is never overwritten here.
st.session_state["masks_kind"] = scenario.mask_kind  # as bind() does; stored by on_kind()
kind = st.radio(text.KIND_LABEL, list(MASK_KINDS), horizontal=True, format_func=text.KINDS.get,
                key="masks_kind", on_change=on_kind)
st.caption(text.KIND_HELP[kind])
if kind == "padding":
    st.slider(text.VALID_LEN_LABEL, 0, t_k,
              **bind("masks_valid_len", "valid_len", min(max(scenario.valid_len, 0), t_k)))
elif kind == "window" and window_on_chart(t_q, t_k):
    st.caption(text.WINDOW_ON_CHART)  # its one control: the weights chart's own slider
elif kind == "window" and max(t_q, t_k) > 1:
    top = max(t_q, t_k) - 1
    st.slider(text.WINDOW_LABEL, 0, top,
              **bind("masks_window", "window", min(max(scenario.window, 0), top)))
elif kind == "custom":
    scenario = custom_mask_controls(scenario, q_lab, k_lab)
scenario = state.get_scenario()  # with the values the widgets' callbacks stored
if scenario.spec.causal:
    st.info(text.CAUSAL_VARIANT)

# 2) compute with the core; pick a head for multi-head attention
result = controls.compute(scenario)
if result is None:
    end_page()
att = result.attention
head = controls.head_picker(att, "masks_head") or 0
att = att.head(head)
mask = result.mask
blocked_rows = np.flatnonzero(~mask.any(axis=1))
if not mask.any():
    st.warning(common.MASKS_ALL_BLOCKED)
elif blocked_rows.size:
    rows = ", ".join(str(r) for r in blocked_rows)
    st.warning(text.BLOCKED_ROWS.format(rows=rows))

# 3) the mask, the masked scores, the weights with and without the mask; 4) fully masked rows
mask_views(scenario, mask, att, head, kind, blocked_rows, q_lab, k_lab)
fully_masked(att, q_lab, k_lab, blocked_rows)
