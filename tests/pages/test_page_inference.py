"""AppTest: the KV cache & online softmax page — the calls and tiles it steps through, the numbers
it draws against the core, and the sizes it states."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import decode, open_page, spec_by_key, switch_to

from attnviz.core.decode import cached_decoding
from attnviz.core.online import memory_traffic, online_softmax_attention
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import common
from attnviz.teach.text import inference as text
from attnviz.ui import state


def ok(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def z(at, key: str) -> np.ndarray:
    return decode(spec_by_key(at, key)["data"][0]["z"]).astype(float)


def qkv(sc):
    x = np.asarray(sc.x, dtype=float)
    return x @ sc.w_q, x @ sc.w_k, x @ sc.w_v


def on_chart(at, key: str, value):
    """Set ``key`` as the release of its chart's own slider does: that slider is the value's
    one control (issue 28 item 4; the release is checked in tests/browser/test_drag_window.py),
    so there is no slider above with this key."""
    assert key not in {w.key for w in at.slider}, key
    at.session_state[key] = value
    return at.run()


def on_page(preset: str | None = None):
    at = open_page("home")
    if preset:
        at.selectbox(key="sidebar_preset").set_value(preset)
        at.button(key="sidebar_load_preset").click().run()
    return ok(switch_to(at, "inference"))


def test_decoding_steps_through_the_calls_of_a_decoder():
    at = on_page("kv_decoding")
    sc = at.session_state[state.SCENARIO]
    q, k, v = qkv(sc)  # positional encoding is on in the preset: x + PE
    on_chart(at, "inference_prefill", 2)
    on_chart(at, "inference_call", 3)  # the prefill, then tokens 2 and 3
    ok(at)
    from attnviz.scenarios.scenario import run_scenario
    att = run_scenario(sc).attention
    step = att.steps[2]
    assert step.queries == range(3, 4) and step.cache_len == 4
    np.testing.assert_allclose(z(at, "inference_fig_call_weights"), step.weights, rtol=1e-12)
    spec = spec_by_key(at, "inference_fig_call_weights")
    assert spec["layout"]["xaxis"]["title"]["text"].startswith(
        text.CALL.format(call=3, calls=5, rows="1 row", cache="4 keys"))
    # one frame per call, each of its own shape, for the figure's slider
    frames = [f for f in spec["frames"] if f["name"].startswith("call:")]
    assert [f["name"] for f in frames] == ["call:1", "call:2", "call:3", "call:4", "call:5"]
    for frame, s_c in zip(frames, att.steps, strict=True):
        np.testing.assert_allclose(decode(frame["data"][0]["z"]), s_c.weights, rtol=1e-12)
        assert len(frame["data"][0]["x"]) == s_c.cache_len
        assert len(frame["data"][0]["y"]) == len(s_c.queries)
    assert spec["layout"]["sliders"][0]["active"] == 2
    # and one per prefill, each at the call the page keeps after it (call 3, or the last of
    # fewer calls), for the second slider
    frames = [f for f in spec["frames"] if f["name"].startswith("prefill:")]
    assert [f["name"] for f in frames] == [f"prefill:{p}" for p in range(1, 7)]
    qp, kp, vp = att.q, att.k, att.v  # x + PE, projected
    for p_, frame in enumerate(frames, start=1):
        a = cached_decoding(qp, kp, vp, prefill=p_)
        c = min(3, len(a.steps)) - 1
        np.testing.assert_allclose(decode(frame["data"][0]["z"]), a.steps[c].weights, rtol=1e-12)
        assert frame["layout"]["xaxis"]["title"]["text"].startswith(text.CALL.format(
            call=c + 1, calls=len(a.steps), rows=common.count(len(a.steps[c].queries), "row"),
            cache=common.count(a.steps[c].cache_len, "key")))
    assert spec["layout"]["sliders"][1]["active"] == 1
    on_chart(at, "inference_prefill", 5)  # as the release of prefill:5 does
    a = cached_decoding(qp, kp, vp, prefill=5)
    np.testing.assert_allclose(z(at, "inference_fig_call_weights"), a.steps[1].weights,
                               rtol=1e-12)  # 2 calls: the page keeps the last
    np.testing.assert_allclose(decode(frames[4]["data"][0]["z"]), a.steps[1].weights)
    on_chart(at, "inference_prefill", 2)
    on_chart(at, "inference_call", 3)
    assembled = z(at, "inference_fig_assembled")
    assert np.isnan(assembled[4:]).all() and not np.isnan(assembled[:4]).any()
    assert z(at, "inference_fig_cache_k").shape == (4, 4)
    assert any(text.DIFFERENCE.split("{")[0] in m.value for m in at.markdown)
    assert q.shape == (6, 4) and k.shape == v.shape


def test_the_tiles_of_the_online_softmax():
    at = on_page("online_tiles")
    sc = at.session_state[state.SCENARIO]
    on_chart(at, "inference_tile", 4)
    on_chart(at, "inference_tile_step", 1)
    ok(at)
    q, k, v = qkv(sc)
    r = online_softmax_attention(q, k, v, tile=4)
    running = z(at, "inference_fig_running")
    np.testing.assert_allclose(running[:, 0], r.tiles[0].m, rtol=1e-12)
    np.testing.assert_allclose(running[:, 1], r.tiles[0].l, rtol=1e-12)
    np.testing.assert_allclose(running[:, 2], r.tiles[0].alpha, rtol=1e-12)
    traffic = memory_traffic(6, 6, 4, 4, 4)
    (table,) = [d.value for d in at.dataframe]
    assert list(table.iloc[:, 1]) == [traffic["naive"], traffic["tiled"]]
    spec = spec_by_key(at, "inference_fig_running")
    assert spec["layout"]["xaxis"]["title"]["text"] == text.TILE.format(
        tile=1, tiles=2, start="0:we", stop="3:whole")
    # a frame per tile for the figure's own slider, each with its own title
    steps = [f for f in spec["frames"] if f["name"].startswith("step:")]
    assert [f["name"] for f in steps] == ["step:1", "step:2"]
    for frame, tile_state in zip(steps, r.tiles, strict=True):
        np.testing.assert_allclose(decode(frame["data"][0]["z"])[:, :3],
                                   np.column_stack([tile_state.m, tile_state.l,
                                                    tile_state.alpha]), rtol=1e-12)
    assert steps[1]["layout"]["xaxis"]["title"]["text"].startswith("After tile 2 of 2")
    assert spec["layout"]["sliders"][0]["active"] == 0
    # a frame per tile size for the second slider, each after the tile the page keeps (tile 1)
    sizes = [f for f in spec["frames"] if f["name"].startswith("size:")]
    assert [f["name"] for f in sizes] == [f"size:{b}" for b in range(1, 7)]
    for b, frame in enumerate(sizes, start=1):
        first = online_softmax_attention(q, k, v, tile=b).tiles[0]
        np.testing.assert_allclose(decode(frame["data"][0]["z"])[:, :3],
                                   np.column_stack([first.m, first.l, first.alpha]), rtol=1e-12)
    assert spec["layout"]["sliders"][1]["active"] == 3
    on_chart(at, "inference_tile_step", 2)  # the last tile: the log-sum-exp
    np.testing.assert_allclose(z(at, "inference_fig_running")[:, 3], r.lse, rtol=1e-12)


@pytest.mark.parametrize("preset", ["seed_000", "seed_001_causal", "gqa_8_2", "translation"])
def test_other_scenarios_draw_or_explain(preset):
    at = open_page("home")
    at.selectbox(key="sidebar_preset").set_value(preset)
    at.button(key="sidebar_load_preset").click().run()
    switch_to(at, "inference")
    assert not at.exception, [e.message for e in at.exception]
    if PRESETS[preset].build().direct:  # Q, K, V given: KV decoding needs embeddings
        assert at.error
    else:
        assert not at.error, [e.value for e in at.error]


def test_cached_decoding_on_the_default_scenario_matches_the_core():
    at = on_page()
    sc = at.session_state[state.SCENARIO]
    q, k, v = qkv(sc)
    r = cached_decoding(q, k, v, prefill=2)
    np.testing.assert_allclose(z(at, "inference_fig_call_weights"), r.steps[-1].weights,
                               rtol=1e-12)


def test_the_sinks_tab_shows_the_mask_the_weights_and_the_sinks_share():
    at = on_page("sinks_streaming")
    sc = at.session_state[state.SCENARIO]
    on_chart(at, "inference_window", 2)
    at.toggle(key="inference_learned").set_value(True).run()
    on_chart(at, "inference_logit", 1.0)
    ok(at)
    from attnviz.core.sinks import attention_with_sink, sink_window_mask
    from attnviz.scenarios.scenario import with_positions
    x, _ = with_positions(np.asarray(sc.x, dtype=float), sc)
    r = attention_with_sink(x @ sc.w_q, x @ sc.w_k, x @ sc.w_v,
                            mask=sink_window_mask(8, window=2, n_sink=1), sink_logit=1.0)
    np.testing.assert_allclose(z(at, "inference_fig_sink_weights"), r.weights, rtol=1e-12)
    every = spec_by_key(at, "inference_fig_sink_weights")["frames"]
    # a slider for the window (1..8), one for the sink tokens (0..8), one for the logit
    assert [f["name"] for f in every[:17]] == [f"window:{w}" for w in range(1, 9)] + [
        f"n_sink:{n}" for n in range(9)]
    for w in (1, 5):
        np.testing.assert_allclose(decode(every[w - 1]["data"][0]["z"]), attention_with_sink(
            x @ sc.w_q, x @ sc.w_k, x @ sc.w_v, mask=sink_window_mask(8, window=w, n_sink=1),
            sink_logit=1.0).weights, rtol=1e-12)
    np.testing.assert_allclose(decode(every[8 + 3]["data"][0]["z"]), attention_with_sink(
        x @ sc.w_q, x @ sc.w_k, x @ sc.w_v, mask=sink_window_mask(8, window=2, n_sink=3),
        sink_logit=1.0).weights, rtol=1e-12)
    frames = every[17:]  # every logit -10..10
    assert len(frames) == 41 and frames[0]["name"] == "-10" and frames[22]["name"] == "1"
    np.testing.assert_allclose(decode(frames[22]["data"][0]["z"]), r.weights, rtol=1e-12)
    low = attention_with_sink(x @ sc.w_q, x @ sc.w_k, x @ sc.w_v,
                              mask=sink_window_mask(8, window=2, n_sink=1), sink_logit=-10.0)
    np.testing.assert_allclose(decode(frames[0]["data"][0]["z"]), low.weights, rtol=1e-12)
    shares = z(at, "inference_fig_sink_shares")
    np.testing.assert_allclose(shares.sum(axis=1), 1.0, rtol=1e-12)
    assert (shares[:, 1] > 0).all()
    np.testing.assert_array_equal(z(at, "inference_fig_sink_mask"),
                                  sink_window_mask(8, window=2, n_sink=1).astype(float))


def test_sliders_above_only_where_the_charts_have_no_frames_and_captions_say_where():
    """6 tokens: every setting is set under its chart, a caption per tab says so; 30 tokens:
    too many frames for the prefill, the keys per tile and the sink settings, so their sliders
    are above (the calls and tiles of one setting still fit), and the values set under the
    charts are kept."""
    from attnviz.scenarios.scenario import resize
    at = on_page("online_tiles")
    assert not {w.key for w in at.slider} & {
        "inference_prefill", "inference_call", "inference_tile", "inference_tile_step",
        "inference_window", "inference_n_sink", "inference_logit"}
    captions = [c.value for c in at.caption]
    assert text.ON_CHART.format(settings="the model call and the prefill",
                                chart=text.CALL_CHART) in captions
    assert text.ON_CHART.format(settings="the tile and the keys per tile",
                                chart=text.RUNNING_CHART) in captions
    assert text.ON_CHART.format(settings="the window and the sink tokens",
                                chart=text.SINK_CHART) in captions
    on_chart(at, "inference_window", 2)
    at.toggle(key="inference_learned").set_value(True).run()
    assert text.ON_CHART.format(settings="the window, the sink tokens and the sink logit",
                                chart=text.SINK_CHART) in [c.value for c in at.caption]
    on_chart(at, "inference_prefill", 3)
    at.session_state[state.SCENARIO] = resize(at.session_state[state.SCENARIO], t=30)
    ok(at.run())
    above = {w.key for w in at.slider}
    assert {"inference_prefill", "inference_tile", "inference_window", "inference_n_sink",
            "inference_logit"} <= above
    assert at.slider(key="inference_prefill").value == 3  # set under the chart, kept
    assert at.slider(key="inference_window").value == 2
    assert "inference_call" not in above  # 28 calls of 3 prefilled tokens: frames still fit
    assert text.ON_CHART_ONE.format(settings="the model call", chart=text.CALL_CHART) in [
        c.value for c in at.caption]
    spec = spec_by_key(at, "inference_fig_call_weights")
    assert {f["name"].split(":")[0] for f in spec["frames"]} == {"call"}
    assert not spec_by_key(at, "inference_fig_sink_weights").get("frames")
