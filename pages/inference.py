"""Inference: KV-cache decoding step by step and FlashAttention's online softmax tile by tile,
on the current scenario (through the kv_cache and online_softmax variants)."""

from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.core.decode import cache_bytes
from attnviz.core.online import memory_traffic
from attnviz.figures import heatmap
from attnviz.scenarios.scenario import with_variant
from attnviz.teach.text import common
from attnviz.teach.text import inference as text
from attnviz.ui import controls, state
from attnviz.ui.panels import scenario_caption, show_figure


def with_params(key: str, **params):
    """The scenario under variant ``key`` with these settings of it (the current variant's
    settings do not apply to it)."""
    return replace(with_variant(scenario, key), params=params)


scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
st.write(text.INTRO)
kv_tab, online_tab, sinks_tab = st.tabs([text.KV_TAB, text.ONLINE_TAB, text.SINKS_TAB])

with kv_tab:
    t = scenario.t
    prefill = st.slider(text.PREFILL_LABEL, 1, max(t, 2), min(2, t), key="inference_prefill",
                        disabled=t < 2)
    result = controls.compute(with_params("kv_cache", prefill=min(prefill, t)))
    if result is not None:
        att = result.attention
        labels = result.q_labels
        calls = len(att.steps)
        if calls == 1:
            st.caption(text.PREFILL_CLAMPED.format(t=t))
            call = 0
        else:
            call = st.slider(text.CALL_LABEL, 1, calls, calls, key="inference_call") - 1
        step = att.steps[call]
        rows = step.queries
        st.markdown(text.CALL.format(call=call + 1, calls=calls, cache=step.cache_len,
                                     rows=", ".join(labels[i] for i in rows)))
        st.markdown(f"**{text.CALL_WEIGHTS}**")
        show_figure(heatmap(step.weights, labels[:step.cache_len], [labels[i] for i in rows],
                            kind="weights", x_title=common.AXIS_KEY, y_title=common.AXIS_QUERY),
                    key="inference_fig_call_weights")
        left, right = st.columns([2, 3], gap="large")
        with left:
            st.markdown(f"**{text.CACHE_K}**")
            show_figure(heatmap(np.asarray(att.k)[:step.cache_len],
                                controls.dims("d", np.shape(att.k)[1]), labels[:step.cache_len]),
                        key="inference_fig_cache_k")
        with right:
            st.markdown(f"**{text.ASSEMBLED}**")
            done = np.full(np.shape(att.weights), np.nan)
            done[:rows.stop] = np.asarray(att.weights)[:rows.stop]
            show_figure(heatmap(done, labels, labels, kind="weights",
                                highlight_rows=list(rows)), key="inference_fig_assembled")
        st.caption(text.ALIGN_NOTE)
        st.markdown(text.DIFFERENCE.format(value=f"{att.difference:.1e}"))
        entries = 2 * step.cache_len * int(np.shape(att.k)[1])
        llama = cache_bytes(step.cache_len, n_layers=32, n_kv_heads=8, d_head=128)
        st.caption(text.CACHE_SIZE.format(entries=entries, kib=f"{entries * 8 / 1024:.2f}",
                                          llama=text.KIB.format(kib=f"{llama / 1024:.0f}")))

with online_tab:
    t_k = len(scenario.key_tokens) if scenario.direct else scenario.t
    tile = st.slider(text.TILE_SIZE_LABEL, 1, max(t_k, 2), min(2, t_k), key="inference_tile",
                     disabled=t_k < 2)
    result = controls.compute(with_params("online_softmax", tile=min(tile, t_k)))
    if result is not None:
        att = result.attention
        q_lab, k_lab = result.q_labels, result.k_labels
        n = len(att.tiles)
        if n == 1:
            st.caption(text.TILE_CLAMPED.format(t_k=t_k))
            j = 0
        else:
            j = st.slider(text.TILE_STEP_LABEL, 1, n, n, key="inference_tile_step") - 1
        state_j = att.tiles[j]
        st.markdown(text.TILE.format(tile=j + 1, tiles=n, start=k_lab[state_j.start],
                                     stop=k_lab[state_j.stop - 1]))
        cells = [(i, c) for i in range(len(q_lab)) for c in range(state_j.start, state_j.stop)]
        st.markdown(f"**{text.SCORES}**")
        show_figure(heatmap(att.masked, k_lab, q_lab, highlight_cells=cells,
                            x_title=common.AXIS_KEY, y_title=common.AXIS_QUERY),
                    key="inference_fig_scores")
        left, right = st.columns(2, gap="large")
        with left:
            st.markdown(f"**{text.RUNNING}**")
            with np.errstate(divide="ignore"):  # ℓ = 0: a query with only masked keys so far
                lse = state_j.m + np.log(state_j.l)
            stats = np.column_stack([state_j.m, state_j.l, state_j.alpha, lse])
            show_figure(heatmap(stats, list(text.RUNNING_COLUMNS), q_lab, kind="sequential"),
                        key="inference_fig_running")
            st.caption(text.RUNNING_NOTE)
        with right:
            st.markdown(f"**{text.PARTIAL}**")
            partial = np.divide(state_j.o, state_j.l[:, None], out=np.zeros_like(state_j.o),
                                where=state_j.l[:, None] > 0)
            show_figure(heatmap(partial, controls.dims("o", partial.shape[1]), q_lab),
                        key="inference_fig_partial")
        st.markdown(text.ONLINE_DIFFERENCE.format(value=f"{att.difference:.1e}"))
        traffic = memory_traffic(len(q_lab), len(k_lab), np.shape(att.q)[1],
                                 np.shape(att.v)[1], att.tile)
        st.markdown(f"**{text.MEMORY_TITLE}**")
        st.dataframe({text.MEMORY_COLUMNS[0]: [text.MEMORY_NAIVE, text.MEMORY_TILED],
                      text.MEMORY_COLUMNS[1]: [traffic["naive"], traffic["tiled"]],
                      text.MEMORY_COLUMNS[2]: [traffic["scores_kept_naive"],
                                               traffic["scores_kept_tiled"]]},
                     hide_index=True, key="inference_memory")

with sinks_tab:
    st.write(text.SINKS_INTRO)
    t = scenario.t
    c1, c2, c3, c4 = st.columns(4)
    window = c1.slider(text.WINDOW_LABEL, 1, max(t, 2), min(3, t), key="inference_window")
    n_sink = c2.slider(text.N_SINK_LABEL, 0, t, min(1, t), key="inference_n_sink")
    learned = c3.toggle(text.LEARNED_LABEL, key="inference_learned")
    logit = c4.slider(text.LOGIT_LABEL, -10.0, 10.0, 0.0, 0.5, key="inference_logit",
                      disabled=not learned)
    result = controls.compute(with_params("sinks", window=int(window), n_sink=int(n_sink),
                                          learned_sink=bool(learned), sink_logit=float(logit)))
    if result is not None:
        att = result.attention
        labels = result.q_labels
        left, mid, right = st.columns([4, 4, 3], gap="medium")
        with left:
            st.markdown(f"**{text.SINK_MASK}**")
            show_figure(heatmap(np.asarray(att.mask, dtype=float), labels, labels, kind="mask"),
                        key="inference_fig_sink_mask")
        with mid:
            st.markdown(f"**{text.SINK_WEIGHTS}**")
            show_figure(heatmap(att.weights, labels, labels, kind="weights"),
                        key="inference_fig_sink_weights")
        with right:
            st.markdown(f"**{text.SINK_SHARES}**")
            shares = np.column_stack([np.asarray(att.weights).sum(axis=1), att.sink_weight])
            # a row sum may round to 1 + 2e-16: the scale reaches it rather than clip it
            show_figure(heatmap(shares, list(text.SINK_COLUMNS), labels, kind="weights",
                                zmax=max(1.0, float(shares.max()))),
                        key="inference_fig_sink_shares")
        st.caption(text.SINKS_WHY)
