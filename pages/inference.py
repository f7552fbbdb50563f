"""Inference: KV-cache decoding step by step and FlashAttention's online softmax tile by tile,
on the current scenario (through the kv_cache and online_softmax variants). The figures and
their drag sliders: :mod:`attnviz.ui.inference_view`."""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.teach.text import common
from attnviz.teach.text import inference as text
from attnviz.ui import controls, presenter, state
from attnviz.ui.inference_view import (
    call_on_chart,
    kv_views,
    on_chart_caption,
    online_views,
    prefill_on_chart,
    sink_on_chart,
    sink_views,
    size_slider,
    start_at,
    step_slider,
    tile_size_on_chart,
    tile_step_on_chart,
    with_params,
)
from attnviz.ui.panels import scenario_caption

scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
presenter.page_intro(text.INTRO)
kv_tab, online_tab, sinks_tab = st.tabs([text.KV_TAB, text.ONLINE_TAB, text.SINKS_TAB])

# One control per value: a setting whose chart carries a frame for each of its
# values is set with that chart's own slider (its release writes the key; start_at keeps the key
# every run); a slider above only where the chart has none.
with kv_tab:
    t = scenario.t
    prefill = size_slider("inference_prefill", text.PREFILL_LABEL, t, prefill_on_chart(t))
    result = controls.compute(with_params(scenario, "kv_cache", prefill=min(prefill, t)))
    if result is not None:
        on_chart = [text.CALL_NAME] if call_on_chart(result.attention) else []
        on_chart += [text.PREFILL_NAME] if prefill_on_chart(t) else []
        call = step_slider("inference_call", text.CALL_LABEL, len(result.attention.steps),
                           call_on_chart(result.attention),
                           text.PREFILL_CLAMPED.format(t=common.count(t, "token")))
        if where := on_chart_caption(on_chart, text.CALL_CHART):
            st.caption(where)
        kv_views(scenario, result, call, min(prefill, t))

with online_tab:
    t_k = len(scenario.key_tokens) if scenario.direct else scenario.t
    tile = size_slider("inference_tile", text.TILE_SIZE_LABEL, t_k,
                       tile_size_on_chart(scenario.t, t_k))
    result = controls.compute(with_params(scenario, "online_softmax", tile=min(tile, t_k)))
    if result is not None:
        on_chart = [text.TILE_STEP_NAME] if tile_step_on_chart(result.attention) else []
        on_chart += [text.TILE_SIZE_NAME] if tile_size_on_chart(scenario.t, t_k) else []
        j = step_slider("inference_tile_step", text.TILE_STEP_LABEL, len(result.attention.tiles),
                        tile_step_on_chart(result.attention), text.TILE_CLAMPED.format(t_k=t_k))
        if where := on_chart_caption(on_chart, text.RUNNING_CHART):
            st.caption(where)
        online_views(scenario, result, j, min(tile, t_k))

with sinks_tab:
    st.write(text.SINKS_INTRO)
    t = scenario.t
    c1, c2, c3, c4 = st.columns(4)
    learned = c1.toggle(text.LEARNED_LABEL, key="inference_learned")
    start_at("inference_window", min(3, t), 1, max(t, 2))  # also set by a drag slider
    start_at("inference_n_sink", min(1, t), 0, t)
    start_at("inference_logit", 0.0, limits.SINK_LOGIT_MIN, limits.SINK_LOGIT_MAX)
    window, n_sink, logit = (st.session_state[f"inference_{k}"]
                             for k in ("window", "n_sink", "logit"))
    if not sink_on_chart("window", t):
        window = c2.slider(text.WINDOW_LABEL, 1, max(t, 2), key="inference_window")
    if not sink_on_chart("n_sink", t):
        n_sink = c3.slider(text.N_SINK_LABEL, 0, t, key="inference_n_sink")
    if learned and not sink_on_chart("sink_logit", t):
        logit = c4.slider(text.LOGIT_LABEL, limits.SINK_LOGIT_MIN, limits.SINK_LOGIT_MAX,
                          step=limits.SINK_LOGIT_STEP, key="inference_logit")
    on_chart = [name for name, key in ((text.WINDOW_NAME, "window"), (text.N_SINK_NAME, "n_sink"),
                                       (text.LOGIT_NAME, "sink_logit"))
                if sink_on_chart(key, t) and (learned or key != "sink_logit")]
    if where := on_chart_caption(on_chart, text.SINK_CHART):
        st.caption(where)
    sinks = with_params(scenario, "sinks", window=int(window), n_sink=int(n_sink),
                        learned_sink=bool(learned), sink_logit=float(logit))
    result = controls.compute(sinks)
    if result is not None:
        sink_views(sinks, result, window=int(window), n_sink=int(n_sink),
                   logit=float(logit) if learned else None)
