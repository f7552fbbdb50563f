"""Inference: KV-cache decoding step by step and FlashAttention's online softmax tile by tile,
on the current scenario (through the kv_cache and online_softmax variants). The figures and
their drag sliders: :mod:`attnviz.ui.inference_view`."""

import streamlit as st

from attnviz.teach.text import common
from attnviz.teach.text import inference as text
from attnviz.ui import controls, state
from attnviz.ui.inference_view import (
    kv_views,
    online_views,
    sink_views,
    start_at,
    with_params,
)
from attnviz.ui.panels import scenario_caption

scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
st.write(text.INTRO)
kv_tab, online_tab, sinks_tab = st.tabs([text.KV_TAB, text.ONLINE_TAB, text.SINKS_TAB])

with kv_tab:
    t = scenario.t
    start_at("inference_prefill", min(2, t), 1, max(t, 2))  # also set by a drag slider
    prefill = st.slider(text.PREFILL_LABEL, 1, max(t, 2), key="inference_prefill",
                        disabled=t < 2)
    result = controls.compute(with_params(scenario, "kv_cache", prefill=min(prefill, t)))
    if result is not None:
        calls = len(result.attention.steps)
        if calls == 1:
            st.caption(text.PREFILL_CLAMPED.format(t=common.count(t, "token")))
            call = 0
        else:
            start_at("inference_call", calls, 1, calls)
            call = st.slider(text.CALL_LABEL, 1, calls, key="inference_call") - 1
        kv_views(scenario, result, call, min(prefill, t))

with online_tab:
    t_k = len(scenario.key_tokens) if scenario.direct else scenario.t
    start_at("inference_tile", min(2, t_k), 1, max(t_k, 2))  # also set by a drag slider
    tile = st.slider(text.TILE_SIZE_LABEL, 1, max(t_k, 2), key="inference_tile",
                     disabled=t_k < 2)
    result = controls.compute(with_params(scenario, "online_softmax", tile=min(tile, t_k)))
    if result is not None:
        n = len(result.attention.tiles)
        if n == 1:
            st.caption(text.TILE_CLAMPED.format(t_k=t_k))
            j = 0
        else:
            start_at("inference_tile_step", n, 1, n)
            j = st.slider(text.TILE_STEP_LABEL, 1, n, key="inference_tile_step") - 1
        online_views(scenario, result, j, min(tile, t_k))

with sinks_tab:
    st.write(text.SINKS_INTRO)
    t = scenario.t
    c1, c2, c3, c4 = st.columns(4)
    start_at("inference_window", min(3, t), 1, max(t, 2))  # also set by a drag slider
    window = c1.slider(text.WINDOW_LABEL, 1, max(t, 2), key="inference_window")
    start_at("inference_n_sink", min(1, t), 0, t)
    n_sink = c2.slider(text.N_SINK_LABEL, 0, t, key="inference_n_sink")
    learned = c3.toggle(text.LEARNED_LABEL, key="inference_learned")
    start_at("inference_logit", 0.0, -10.0, 10.0)
    logit = c4.slider(text.LOGIT_LABEL, -10.0, 10.0, step=0.5, key="inference_logit",
                      disabled=not learned)
    sinks = with_params(scenario, "sinks", window=int(window), n_sink=int(n_sink),
                        learned_sink=bool(learned), sink_logit=float(logit))
    result = controls.compute(sinks)
    if result is not None:
        sink_views(sinks, result, window=int(window), n_sink=int(n_sink),
                   logit=float(logit) if learned else None)
