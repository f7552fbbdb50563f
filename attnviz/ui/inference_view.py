"""The figures of the Inference page: KV-cache decoding call by call, the online softmax tile by
tile and attention sinks, each with the frames its drag sliders step through."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import streamlit as st

from attnviz.core.decode import cache_bytes
from attnviz.core.online import memory_traffic
from attnviz.figures import heatmap
from attnviz.figures.heatmap import Values, axis_title, with_slider
from attnviz.scenarios import limits, sweep
from attnviz.scenarios.scenario import run_scenario, with_variant
from attnviz.teach.text import common
from attnviz.teach.text import inference as text
from attnviz.ui import controls, layout, one_map, state
from attnviz.ui.panels import set_widget_from_named_slider, show_figure

LOGITS = sweep.value_grid(limits.SINK_LOGIT_MIN, limits.SINK_LOGIT_MAX,  # the sink logit
                          limits.SINK_LOGIT_STEP)  # slider's values


def running_stats(tile_state) -> np.ndarray:
    """m, ℓ, α and the running log-sum-exp m + log ℓ of each query after a tile, as columns."""
    with np.errstate(divide="ignore"):  # ℓ = 0: a query with only masked keys so far
        lse = tile_state.m + np.log(tile_state.l)
    return np.column_stack([tile_state.m, tile_state.l, tile_state.alpha, lse])


def with_params(scenario, key: str, **params):
    """``scenario`` under variant ``key`` with these settings of it (the current variant's
    settings do not apply to it)."""
    return replace(with_variant(scenario, key), params=params)


def kept(control: str, n: int) -> int:
    """The 0-based step the page shows after a setting changes to one with ``n`` steps: slider
    ``control``'s stored value brought within 1..n (the last step when there is none), as
    :func:`start_at` does on the next run."""
    return min(max(st.session_state.get(control, n), 1), n) - 1


def call_title(att, c: int) -> str:
    """Which call of ``att`` a frame shows, written in the figure (it follows the drag)."""
    s_c = att.steps[c]
    return text.CALL.format(call=c + 1, calls=len(att.steps),
                            rows=common.count(len(s_c.queries), "row"),
                            cache=common.count(s_c.cache_len, "key"))


def call_on_chart(att) -> bool:
    """True when the model call's one control is the call weights' own slider (``att`` has
    several calls and their frames fit): no call slider above it."""
    return 1 < len(att.steps) and sum(np.size(s_c.weights) for s_c in att.steps) <= sweep.MAX_CELLS


def prefill_on_chart(t: int) -> bool:
    """True when the prefill's one control is the call weights' own slider (a frame for every
    prefill of ``t`` tokens fits): no prefill slider above it."""
    return 1 < t and t * t * t <= sweep.MAX_CELLS


def call_frames(fig, scenario, att, call: int, labels: list[str], prefill: int) -> list[dict]:
    """Frames for the call weights' drag sliders: every call of this prefill ("call:2") and
    every prefill ("prefill:3"), each at the call the page keeps after it; a slider only while
    its frames fit."""
    def slider(picks, values, active, prefix, name):
        return with_slider(fig, [a.steps[c].weights for a, c in picks],
                           [str(v) for v in values], active, prefix=prefix, kind="weights",
                           names=[f"{name}:{v}" for v in values],
                           x_labels=[labels[:a.steps[c].cache_len] for a, c in picks],
                           y_labels=[[labels[i] for i in a.steps[c].queries] for a, c in picks],
                           titles=[axis_title(call_title(a, c), common.AXIS_KEY)
                                   for a, c in picks])

    t, calls = len(labels), len(att.steps)
    frames = []
    if call_on_chart(att):
        frames += slider([(att, c) for c in range(calls)], range(1, calls + 1), call,
                         text.CALL_PREFIX, "call")
    if prefill_on_chart(t):
        runs = [run_scenario(with_params(scenario, "kv_cache", prefill=p)).attention
                for p in range(1, t + 1)]
        frames += slider([(a, kept("inference_call", len(a.steps))) for a in runs],
                         range(1, t + 1), prefill - 1, text.PREFILL_PREFIX, "prefill")
    return frames


def tile_title(att, k_lab: list[str], i: int) -> str:
    """Which tile of ``att`` a frame shows, written in the figure (it follows the drag)."""
    return text.TILE.format(tile=i + 1, tiles=len(att.tiles), start=k_lab[att.tiles[i].start],
                            stop=k_lab[att.tiles[i].stop - 1])


def tile_step_on_chart(att) -> bool:
    """True when the tile step's one control is the running statistics' own slider (``att``
    has several tiles and their frames fit): no tile slider above it."""
    n, t_q = len(att.tiles), len(att.tiles[0].m)
    return n > 1 and n * t_q * 4 <= sweep.MAX_CELLS


def tile_size_on_chart(t_q: int, t_k: int) -> bool:
    """True when the keys per tile's one control is the running statistics' own slider (a
    frame for every tile size of ``t_k`` keys fits): no tile size slider above it."""
    return 1 < t_k and t_k * t_q * t_k <= sweep.MAX_CELLS


def tile_frames(fig, scenario, att, j: int, k_lab: list[str], tile: int) -> list[dict]:
    """Frames for the running statistics' drag sliders: every tile of this tile size
    ("step:2") and every tile size ("size:3"), each after the tile the page keeps; a slider
    only while its frames fit."""
    def slider(picks, values, active, prefix, name):
        return with_slider(fig, [running_stats(a.tiles[i]) for a, i in picks],
                           [str(v) for v in values], active, prefix=prefix, kind="sequential",
                           names=[f"{name}:{v}" for v in values],
                           titles=[tile_title(a, k_lab, i) for a, i in picks])

    n, t_k, t_q = len(att.tiles), len(k_lab), len(att.tiles[0].m)
    frames = []
    if tile_step_on_chart(att):
        frames += slider([(att, i) for i in range(n)], range(1, n + 1), j, text.TILE_PREFIX,
                         "step")
    if tile_size_on_chart(t_q, t_k):
        runs = [run_scenario(with_params(scenario, "online_softmax", tile=b)).attention
                for b in range(1, t_k + 1)]
        frames += slider([(a, kept("inference_tile_step", len(a.tiles))) for a in runs],
                         range(1, t_k + 1), tile - 1, text.TILE_SIZE_PREFIX, "size")
    return frames


def sink_values(name: str, t: int) -> list:
    """The values the sink weights' slider ``name`` ("window", "n_sink", "sink_logit") steps
    through for ``t`` tokens."""
    return {"window": list(range(1, max(t, 2) + 1)), "n_sink": list(range(0, t + 1)),
            "sink_logit": LOGITS}[name]


def sink_on_chart(name: str, t: int) -> bool:
    """True when setting ``name``'s one control is the sink weights' own slider (a frame for
    each of its values fits for ``t`` tokens): no slider above it."""
    return len(sink_values(name, t)) * t * t <= sweep.MAX_CELLS


def sink_frames(fig, sinks, *, window: int, n_sink: int, logit: float | None) -> list[dict]:
    """Frames for the sink weights' drag sliders, each with the other settings as they are:
    every window width ("window:3"), every number of sink tokens ("n_sink:1") and, with a
    learned sink, every logit ("-10" … "10"); a slider only while its frames fit."""
    t = sinks.t
    frames = []
    for name, current, prefix in (("window", window, text.WINDOW_PREFIX),
                                  ("n_sink", n_sink, text.N_SINK_PREFIX)):
        if sink_on_chart(name, t):
            values = sink_values(name, t)
            frames += with_slider(fig, sweep.sweep(sinks, f"params.{name}", values, "weights"),
                                  [str(v) for v in values], values.index(current), prefix=prefix,
                                  kind="weights", names=[f"{name}:{v}" for v in values])
    if logit is not None and sink_on_chart("sink_logit", t):
        frames += with_slider(fig, sweep.sweep(sinks, "params.sink_logit", LOGITS, "weights"),
                              [f"{v:g}" for v in LOGITS], LOGITS.index(logit),
                              prefix=text.LOGIT_PREFIX, kind="weights")
    return frames


def on_chart_caption(settings: list[str], chart: str) -> str:
    """The caption saying which ``settings`` (their names in words) are set with the sliders
    under ``chart``: "" when none is."""
    if not settings:
        return ""
    if len(settings) == 1:
        return text.ON_CHART_ONE.format(settings=settings[0], chart=chart)
    names = ", ".join(settings[:-1]) + text.AND + settings[-1]
    return text.ON_CHART.format(settings=names, chart=chart)


def start_at(control: str, default, low, top) -> None:
    """Give slider ``control`` its first value, and bring a stored one back within low..top
    (the range follows other settings; the drag sliders set the value, not the widget)."""
    value = st.session_state.get(control, default)
    st.session_state[control] = min(max(value, low), top)


def show_dragged(fig, key: str, frames: list[dict], drag: str, controls: dict, *,
                 fitted: bool = False) -> None:
    """Show ``fig`` (chart key ``key``) with its drag sliders' ``frames`` (none: no slider):
    with frames, the caption ``drag`` above it and a slider's release setting the control
    ``controls`` names for it (:func:`~attnviz.ui.panels.set_widget_from_named_slider`).
    ``fitted`` (presenter mode, the page's first chart): its height follows the screen, so its
    cells end on the first screen, and the caption goes under it."""
    if frames and not fitted:
        st.caption(drag)
    show_figure(fig, key=key, frames=frames or None,
                on_slider=partial(set_widget_from_named_slider, key, controls) if frames else None,
                fit=one_map.fit(fig) if fitted else None)
    if frames and fitted:
        st.caption(drag)


def size_slider(control: str, label: str, n: int, on_chart: bool) -> int:
    """A size of 1..max(n, 2) (the prefill of ``n`` tokens, the keys per tile of ``n`` keys),
    first 2 (at most ``n``): slider ``control`` above the chart, or the value its chart's own
    drag slider set when ``on_chart`` (one control per value)."""
    start_at(control, min(2, n), 1, max(n, 2))  # also set by a drag slider
    if on_chart:
        return st.session_state[control]
    return st.slider(label, 1, max(n, 2), key=control, disabled=n < 2)


def step_slider(control: str, label: str, n: int, on_chart: bool, clamped: str) -> int:
    """The 0-based step of ``n`` (a model call, a tile) the page shows, first the last: slider
    ``control`` above the chart, or the value its chart's own drag slider set when
    ``on_chart``; with one step, step 0 and the caption ``clamped`` saying why."""
    if n == 1:
        st.caption(clamped)
        return 0
    start_at(control, n, 1, n)
    if on_chart:
        return st.session_state[control] - 1
    return st.slider(label, 1, n, key=control) - 1


def kv_views(scenario, result, call: int, prefill: int) -> None:
    """Call ``call`` of the KV-cache decoding of ``result``: its weights (drag: every call,
    every prefill), the cache's keys, the weights assembled so far and the cache's size."""
    att, labels, t = result.attention, result.q_labels, scenario.t
    calls = len(att.steps)
    step = att.steps[call]
    rows = step.queries
    st.markdown(f"**{text.CALL_WEIGHTS}**")
    fig = heatmap(step.weights, labels[:step.cache_len], [labels[i] for i in rows],
                  kind="weights", title=call_title(att, call), x_title=common.AXIS_KEY,
                  y_title=common.AXIS_QUERY)
    show_dragged(fig, "inference_fig_call_weights",
                 call_frames(fig, scenario, att, call, labels, prefill), text.CALL_DRAG,
                 {"call": ("inference_call", range(1, calls + 1), int),
                  "prefill": ("inference_prefill", range(1, max(t, 2) + 1), int)},
                 fitted=state.presenter())
    left, right = st.columns(layout.NARROW_LEFT, gap="large")
    with left:
        st.markdown(f"**{text.CACHE_K}**")
        show_figure(heatmap(np.asarray(att.k)[:step.cache_len],
                            controls.dims("d", np.shape(att.k)[1]), labels[:step.cache_len]),
                    key="inference_fig_cache_k")
    with right:
        st.markdown(f"**{text.ASSEMBLED}**")
        done = np.full(np.shape(att.weights), np.nan)
        done[:rows.stop] = np.asarray(att.weights)[:rows.stop]
        show_figure(heatmap(done, labels, labels, kind="weights", highlight=list(rows)),
                    key="inference_fig_assembled")
    st.caption(text.ALIGN_NOTE)
    st.markdown(text.DIFFERENCE.format(value=f"{att.difference:.1e}"))
    entries = 2 * step.cache_len * int(np.shape(att.k)[1])
    llama = cache_bytes(step.cache_len, n_layers=32, n_kv_heads=8, d_head=128)
    st.caption(text.CACHE_SIZE.format(entries=entries, kib=f"{entries * 8 / 1024:.2f}",
                                      llama=text.KIB.format(kib=f"{llama / 1024:.0f}")))


def online_views(scenario, result, j: int, tile: int) -> None:
    """Tile ``j`` of the online softmax of ``result``: the scores it reads, the running
    statistics after it (drag: every tile, every tile size), the partial output and the memory
    traffic against the naive softmax."""
    att = result.attention
    q_lab, k_lab = result.q_labels, result.k_labels
    n, t_k = len(att.tiles), len(k_lab)
    state_j = att.tiles[j]
    cells = [(i, c) for i in range(len(q_lab)) for c in range(state_j.start, state_j.stop)]
    st.markdown(f"**{text.SCORES}**")
    show_figure(heatmap(att.masked, k_lab, q_lab, x_title=common.AXIS_KEY,
                        y_title=common.AXIS_QUERY, highlight=cells),
                key="inference_fig_scores")
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(f"**{text.RUNNING}**")
        fig = heatmap(running_stats(state_j), list(text.RUNNING_COLUMNS), q_lab,
                      kind="sequential", title=tile_title(att, k_lab, j))
        show_dragged(fig, "inference_fig_running", tile_frames(fig, scenario, att, j, k_lab, tile),
                     text.TILE_DRAG,
                     {"step": ("inference_tile_step", range(1, n + 1), int),
                      "size": ("inference_tile", range(1, max(t_k, 2) + 1), int)})
        st.caption(text.RUNNING_NOTE)
    with right:
        st.markdown(f"**{text.PARTIAL}**")
        partial_o = np.divide(state_j.o, state_j.l[:, None], out=np.zeros_like(state_j.o),
                              where=state_j.l[:, None] > 0)
        show_figure(heatmap(partial_o, controls.dims("o", partial_o.shape[1]), q_lab),
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


def sink_views(sinks, result, *, window: int, n_sink: int, logit: float | None) -> None:
    """The sliding window with sink tokens of ``result`` (scenario ``sinks``): its mask, its
    weights (drag: every window, number of sinks and logit) and each row's shares."""
    att, labels, t = result.attention, result.q_labels, sinks.t
    left, mid, right = st.columns(layout.SINK_COLUMNS, gap="medium")
    with left:
        st.markdown(f"**{text.SINK_MASK}**")
        show_figure(heatmap(np.asarray(att.mask, dtype=float), labels, labels, kind="mask"),
                    key="inference_fig_sink_mask")
    with mid:
        st.markdown(f"**{text.SINK_WEIGHTS}**")
        fig = heatmap(att.weights, labels, labels, kind="weights")
        show_dragged(fig, "inference_fig_sink_weights",
                     sink_frames(fig, sinks, window=window, n_sink=n_sink, logit=logit),
                     text.SINK_DRAG,
                     {"window": ("inference_window", range(1, max(t, 2) + 1), int),
                      "n_sink": ("inference_n_sink", range(0, t + 1), int),
                      "": ("inference_logit", LOGITS, float)})
    with right:
        st.markdown(f"**{text.SINK_SHARES}**")
        shares = np.column_stack([np.asarray(att.weights).sum(axis=1), att.sink_weight])
        # a row sum may round to 1 + 2e-16: the scale reaches it rather than clip it
        show_figure(heatmap(shares, list(text.SINK_COLUMNS), labels, kind="weights",
                            values=Values(zmax=max(1.0, float(shares.max())))),
                    key="inference_fig_sink_shares")
    st.caption(text.SINKS_WHY)
