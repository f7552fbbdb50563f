"""The Encoder–decoder & additive page's views: cross-attention's weights and output, the
additive (Bahdanau) score network's editors and matrices, and seed 004's attention pooling."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.core.additive import attention_pooling
from attnviz.figures import Sizing, heatmap
from attnviz.scenarios.scenario import with_positions
from attnviz.teach.text import encoder_decoder as text
from attnviz.ui import controls, one_map, state
from attnviz.ui import model_view as mv
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import matrix_panel, show_figure


def cross_views(cross) -> None:
    """Cross-attention's weights (target queries over source keys) beside its output; in
    presenter mode one of them at a time across the page, its height following the screen
    (side by side at 1024 px, eight tokens' cells are too narrow for a number: ui/one_map.py)."""
    att = cross.attention
    figs = {"weights": heatmap(att.weights, cross.k_labels, cross.q_labels, kind="weights",
                               y_title=text.AXIS_TARGET_QUERY, x_title=text.AXIS_SOURCE_KEY),
            "output": heatmap(att.output, controls.dims("o", att.output.shape[1]),
                              cross.q_labels, y_title=text.AXIS_TARGET)}
    titles = {"weights": text.CROSS_WEIGHTS, "output": text.CROSS_OUTPUT}
    shown = one_map.pick("encoder_decoder_cross_map", titles, "weights")
    if shown:
        show_figure(figs[shown], key=f"encoder_decoder_fig_cross_{shown}",
                    filename=titles[shown], fit=one_map.fit(figs[shown]))
        return
    for col, (name, fig) in zip(st.columns(2, gap="large"), figs.items(), strict=True):
        with col:
            matrix_panel(titles[name], fig, key=f"encoder_decoder_fig_cross_{name}")


def real_cross_section() -> None:
    """A real encoder–decoder model's cross-attention, from the model Model view captured (or
    the file it read): a layer and head picked, its weights, and "open this head on every
    page"; else where to capture one."""
    st.subheader(text.REAL_TITLE)
    data = st.session_state.get(mv.DATA_KEY)
    if data is None or not data.seq2seq:
        st.info(text.REAL_NONE)
        st.page_link("pages/model_view.py", label=text.REAL_LINK)
        return
    mv.cross_section(data, "encoder_decoder")


def additive_editors(scenario):
    """The additive score network's W_a^Q, W_a^K and v_a, one tab each (only the open tab's
    editor runs); returns the scenario with the edits."""
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
    return scenario


def additive_views(additive) -> None:
    """The additive scores, weights and context vectors."""
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


def pooling_views(scenario, new_w, new_b, tgt_labels: list[str]) -> None:
    """Attention pooling of the scenario's (position-encoded) x with ``new_w`` and ``new_b``:
    its scores, context vector and weights."""
    x_in, _ = with_positions(np.asarray(scenario.x, dtype=float), scenario)
    try:
        pool = attention_pooling(x_in, new_w, new_b)
    except ValueError as exc:
        st.error(text.POOLING_ERROR.format(reason=exc))
        return  # (drawn inside a fragment: the page's end_page would be an exception there)
    c1, c2 = st.columns(2, gap="large")
    with c1:
        matrix_panel(text.POOL_SCORES,
                     heatmap(pool.scores, tgt_labels, ["e"], sizing=Sizing(role="strip")),
                     key="encoder_decoder_fig_pool_scores")
        context = heatmap(pool.output, controls.dims("d", pool.output.shape[0]), ["c"],
                          sizing=Sizing(role="strip"))
        matrix_panel(text.POOL_CONTEXT, context, key="encoder_decoder_fig_pool_context")
    with c2:
        matrix_panel(text.POOL_WEIGHTS, heatmap(pool.weights, tgt_labels, ["α"], kind="weights",
                                                sizing=Sizing(role="strip")),
                     key="encoder_decoder_fig_pool_weights")
