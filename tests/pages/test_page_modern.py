"""AppTest: the RoPE, ALiBi & GQA page draws what the core computes for the current scenario."""

from __future__ import annotations

import numpy as np
from apptest_helpers import chart_z_by_key, decode, open_page, spec_by_key

from attnviz.core.alibi import alibi_bias
from attnviz.teach.modern import shift_check
from attnviz.teach.text import common
from attnviz.teach.text import modern as text
from attnviz.ui import state


def z(at, key):
    return decode(spec_by_key(at, key)["data"][0]["z"]).astype(float)


def test_each_tab_draws_the_cores_numbers():
    at = open_page("modern")
    assert not at.error, [e.value for e in at.error]
    sc = at.session_state[state.SCENARIO]
    # Δ and the base: one control each, the charts' own sliders (their release sets these)
    assert not {"modern_delta", "modern_base"} & {w.key for w in [*at.slider, *at.select_slider]}
    at.session_state["modern_delta"] = 9
    at.run()
    check = shift_check(sc, 9)
    np.testing.assert_allclose(z(at, "modern_fig_rope_scores"), check.rope_shifted, rtol=1e-12)
    np.testing.assert_allclose(z(at, "modern_fig_pe_scores"), check.pe_shifted, rtol=1e-12)
    assert any(text.SHIFT_RESULT.split("{")[0] in m.value for m in at.markdown)
    at.select_slider(key="modern_alibi_heads").set_value(12).run()
    at.select_slider(key="modern_alibi_length").set_value(20).run()
    drawn = z(at, "modern_fig_alibi_11")
    want = alibi_bias(12, 20)[11]
    np.testing.assert_allclose(drawn[np.tri(20, dtype=bool)], want[np.tri(20, dtype=bool)])
    assert np.isnan(drawn[~np.tri(20, dtype=bool)]).all()  # −inf: drawn as a gap
    at.select_slider(key="modern_gqa_heads").set_value(8).run()
    at.select_slider(key="modern_gqa_kv").set_value(2).run()
    sharing = z(at, "modern_fig_sharing")
    assert sharing.argmax(axis=1).tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    (table,) = [d.value for d in at.dataframe]
    assert list(table.iloc[:, 2]) == [2048, 512, 256]
    at.select_slider(key="modern_gqa_heads").set_value(4).run()  # 2 still divides 4
    assert not at.exception


def test_the_qk_norm_tab_shows_both_logits():
    from attnviz.teach.modern import qk_norm_effect
    at = open_page("home")
    at.selectbox(key="sidebar_preset").set_value("qk_norm_tamed")
    at.button(key="sidebar_load_preset").click().run()
    from apptest_helpers import switch_to
    switch_to(at, "modern")
    at.select_slider(key="modern_qk_gain").set_value(2.0).run()
    assert not at.exception and not at.error
    effect = qk_norm_effect(at.session_state[state.SCENARIO], 2.0)
    np.testing.assert_allclose(z(at, "modern_fig_normed_logits"), effect.normed, rtol=1e-12)
    np.testing.assert_allclose(z(at, "modern_fig_plain_logits"), effect.plain, rtol=1e-12)
    assert any(f"{effect.bound:.3g}" in m.value for m in at.markdown)


def test_the_pe_scores_carry_a_frame_for_every_shift_with_one_colour_range():
    at = open_page("modern")
    sc = at.session_state[state.SCENARIO]
    spec = spec_by_key(at, "modern_fig_pe_scores")
    frames = spec["frames"]
    assert [f["name"] for f in frames] == [str(d) for d in range(51)]
    for d in (0, 5, 37, 50):
        check = shift_check(sc, d)
        np.testing.assert_allclose(decode(frames[d]["data"][0]["z"]), check.pe_shifted,
                                   rtol=1e-12)
        assert frames[d]["layout"]["xaxis"]["title"]["text"] == text.PE_SHIFT_TITLE.format(
            delta=d, pe=f"{check.pe_change:.3g}")
    bound = max(np.abs(shift_check(sc, d).pe_shifted).max() for d in range(51))
    trace = spec["data"][0]
    assert trace["zmin"] == -bound and trace["zmax"] == bound  # no frame's colours clipped
    assert spec["layout"]["sliders"][0]["active"] == 5


def test_the_normed_logits_carry_a_frame_for_every_gain_and_release_sets_it():
    from attnviz.teach.modern import qk_norm_effect
    at = open_page("modern")
    sc = at.session_state[state.SCENARIO]
    spec = spec_by_key(at, "modern_fig_normed_logits")
    gains = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0]
    assert [f["name"] for f in spec["frames"]] == [f"{g:g}" for g in gains]
    effects = [qk_norm_effect(sc, g) for g in gains]
    for frame, g, e in zip(spec["frames"], gains, effects, strict=True):
        np.testing.assert_allclose(decode(frame["data"][0]["z"]), e.normed, rtol=1e-12)
        assert frame["layout"]["xaxis"]["title"]["text"] == text.GAIN_TITLE.format(
            gain=f"{g:g}", bound=f"{e.bound:.3g}")
        finite = e.normed[np.isfinite(e.normed)]
        assert np.abs(finite).max() <= e.bound * (1 + 1e-12)  # QK-norm's promise, every g
    assert spec["layout"]["sliders"][0]["active"] == gains.index(1.0)
    # releasing the drag slider on g = 3 sets the gain control (what the chart sends)
    at.session_state["modern_fig_normed_logits"] = {"slider": "3"}
    at.session_state["modern_qk_gain"] = 3.0  # as the chart's callback set_widget_from_slider does
    at.run()
    assert at.select_slider(key="modern_qk_gain").value == 3.0
    np.testing.assert_allclose(chart_z_by_key(at, "modern_fig_normed_logits"), effects[5].normed,
                               rtol=1e-12)
    assert not at.exception


def test_the_angles_carry_a_frame_for_every_base():
    from attnviz.teach.modern import angles
    at = open_page("modern")
    sc = at.session_state[state.SCENARIO]
    spec = spec_by_key(at, "modern_fig_angles")
    bases = [4.0, 10.0, 100.0, 1000.0, 10000.0, 500000.0]
    assert [f["name"] for f in spec["frames"]] == [f"{b:g}" for b in bases]
    d = at.select_slider(key="modern_angle_width").value  # the angle chart's head width
    for frame, b in zip(spec["frames"], bases, strict=True):  # Δ = 5 by default
        np.testing.assert_allclose(decode(frame["data"][0]["z"]),
                                   angles(sc.t + 5, d, base=b)[5:], rtol=1e-12)
    assert spec["layout"]["sliders"][0]["active"] == bases.index(10000.0)
    assert spec["data"][0]["zmax"] == max(angles(sc.t + 5, d, base=b)[5:].max() for b in bases)


def test_the_angle_chart_opens_with_several_pairs_and_follows_its_width():
    from attnviz.teach.modern import angles
    at = open_page("modern")
    sc = at.session_state[state.SCENARIO]
    assert sc.w_q.shape[1] == 3  # the four-word scenario's head: one pair
    assert at.select_slider(key="modern_angle_width").value == 8
    z = chart_z_by_key(at, "modern_fig_angles")
    assert z.shape == (sc.t, 4)  # four pairs, from fast to slow
    np.testing.assert_allclose(z, angles(sc.t + 5, 8)[5:], rtol=1e-12)
    assert text.ANGLE_WIDTH_NOTE.format(d=8, pairs=4, d_k=3) in [c.value for c in at.caption]
    at.select_slider(key="modern_angle_width").set_value(2).run()
    assert chart_z_by_key(at, "modern_fig_angles").shape == (sc.t, 1)
    assert at.session_state[state.SCENARIO].w_q.shape == (3, 3)  # the scenario's head as it was


def test_the_sharing_grid_carries_a_frame_for_every_key_value_head_count():
    from attnviz.teach.modern import kv_sharing
    at = open_page("modern")
    spec = spec_by_key(at, "modern_fig_sharing")  # 8 query heads by default, 4 key/value heads
    kv_frames = [f for f in spec["frames"] if f["name"].startswith("kv:")]
    assert [f["name"] for f in kv_frames] == ["kv:1", "kv:2", "kv:4", "kv:8"]
    for frame, kv in zip(kv_frames, (1, 2, 4, 8), strict=True):
        np.testing.assert_array_equal(decode(frame["data"][0]["z"]), kv_sharing(8, kv))
        names = [text.KV_NAME.format(g=g) for g in range(kv)]
        assert frame["data"][0]["x"] == names
        assert frame["layout"]["xaxis"]["ticktext"] == names  # the ticks follow the shape
        assert frame["layout"]["xaxis"]["title"]["text"] == text.SHARING_TITLE.format(
            q="8 query heads", kv=common.count(kv, "key/value head"))
        assert set(np.ravel(frame["data"][0]["text"])) <= {"✓", "✕"}
    assert spec["layout"]["sliders"][0]["active"] == 2
    assert [s["label"] for s in spec["layout"]["sliders"][0]["steps"]] == ["1", "2", "4", "8"]


def test_the_sharing_grid_carries_a_frame_for_every_number_of_query_heads():
    """The query heads' frames keep the key/value heads while they divide the query heads,
    else take the middle divisor, as the page does when the query heads change."""
    from attnviz.teach.modern import kv_sharing
    at = open_page("modern")
    at.select_slider(key="modern_gqa_kv").set_value(2).run()
    spec = spec_by_key(at, "modern_fig_sharing")
    q_frames = [f for f in spec["frames"] if f["name"].startswith("q:")]
    assert [f["name"] for f in q_frames] == ["q:1", "q:2", "q:4", "q:8", "q:16", "q:32"]
    for frame, q, kv in zip(q_frames, (1, 2, 4, 8, 16, 32), (1, 2, 2, 2, 2, 2), strict=True):
        np.testing.assert_array_equal(decode(frame["data"][0]["z"]), kv_sharing(q, kv))
        assert frame["data"][0]["y"] == [common.HEAD_NAME.format(h=h) for h in range(q)]
    assert spec["layout"]["sliders"][1]["active"] == 3
    # releasing the query heads' slider on 1 sets the control (as the chart's callback
    # set_widget_from_named_slider does: tests/ui/test_set_widget_from_slider.py); 2 key/value
    # heads do not divide it, so they become 1 — what the frame showed
    at.session_state["modern_gqa_heads"] = 1
    at.run()
    assert at.select_slider(key="modern_gqa_kv").value == 1
    np.testing.assert_array_equal(z(at, "modern_fig_sharing"), kv_sharing(1, 1))
    assert len(spec_by_key(at, "modern_fig_sharing")["layout"]["sliders"]) == 1  # no kv choice
    at.session_state["modern_gqa_heads"] = 32
    at.run()
    at.session_state["modern_gqa_kv"] = 8
    at.run()
    np.testing.assert_array_equal(z(at, "modern_fig_sharing"), kv_sharing(32, 8))
    assert not at.exception


def test_the_alibi_slopes_carry_a_frame_for_every_number_of_heads():
    from attnviz.core.alibi import alibi_slopes
    at = open_page("modern")
    spec = spec_by_key(at, "modern_fig_alibi_slopes")
    heads = [1, 2, 4, 8, 12, 16]
    assert [f["name"] for f in spec["frames"]] == [str(n) for n in heads]
    for frame, n in zip(spec["frames"], heads, strict=True):
        np.testing.assert_allclose(decode(frame["data"][0]["z"]), [alibi_slopes(n)], rtol=1e-15)
        assert frame["data"][0]["x"] == [common.HEAD_NAME.format(h=h) for h in range(n)]
    assert spec["layout"]["sliders"][0]["active"] == heads.index(4)
    at.session_state["modern_alibi_heads"] = 12  # as the release does (set_widget_from_slider)
    at.run()
    np.testing.assert_allclose(z(at, "modern_fig_alibi_slopes"), [alibi_slopes(12)])
    np.testing.assert_allclose(z(at, "modern_fig_alibi_11")[-1, :1], -alibi_slopes(12)[11]
                               * (at.select_slider(key="modern_alibi_length").value - 1))
    assert not at.exception


def test_each_alibi_head_carries_a_frame_for_every_length_with_its_masked_cells():
    at = open_page("modern")
    n = at.select_slider(key="modern_alibi_heads").value
    lengths = list(at.select_slider(key="modern_alibi_length").options)
    assert [int(v) for v in lengths][:3] == [2, 3, 4] and int(lengths[-1]) == 64
    spec = spec_by_key(at, "modern_fig_alibi_0")
    assert [f["name"] for f in spec["frames"]] == [str(v) for v in lengths]
    assert spec["data"][1]["name"] == common.FIGURE_MASKED  # the grey −∞ cells
    for frame, length in zip(spec["frames"], map(int, lengths), strict=True):
        assert frame["traces"] == [0, 1]
        causal = np.tri(length, dtype=bool)
        main = decode(frame["data"][0]["z"]).astype(float)
        np.testing.assert_allclose(main[causal], alibi_bias(n, length)[0][causal], rtol=1e-15)
        assert np.isnan(main[~causal]).all()
        grey = decode(frame["data"][1]["z"]).astype(float)
        assert (grey[~causal] == 0).all() and np.isnan(grey[causal]).all()  # over j > i only
        if length <= 12:  # numbers in the cells, "−∞" over the masked ones
            assert set(np.ravel(frame["data"][1]["text"])) == {"", "−∞"}
            assert frame["data"][0]["texttemplate"] == "%{text}"
            assert len(frame["data"][0]["customdata"]) == length
        else:  # too many cells for numbers: none are sent, hover reads z
            assert "text" not in frame["data"][0] and "customdata" not in frame["data"][0]
            assert frame["data"][0]["texttemplate"] == frame["data"][1]["texttemplate"] == ""
            assert "%{z:.10g}" in frame["data"][0]["hovertemplate"]
        assert frame["layout"]["yaxis"]["range"] == [length - 0.5, -0.5]
    # one colour range for every head: the steepest head's at the length shown, centred at 0
    length = int(at.select_slider(key="modern_alibi_length").value)
    low = alibi_bias(n, length)[0][length - 1, 0]
    assert spec["data"][0]["zmin"] == low and spec["data"][0]["zmax"] == -low
    assert spec["data"][0]["zmid"] == 0
    assert not spec_by_key(at, "modern_fig_alibi_3")["frames"]  # one head has the slider
    at.session_state["modern_alibi_length"] = 48  # as the release does (set_widget_from_slider)
    at.run()
    assert z(at, "modern_fig_alibi_0").shape == (48, 48)
    assert not at.exception
