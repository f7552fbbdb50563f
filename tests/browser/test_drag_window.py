"""Real browser: a chart's own drag slider moves what the chart draws in the browser (no script
run while the steps change), and releasing it sets the value it stands for: the Masks page's
window width, Positional encoding's base and d_model, Why √d_k's example d_k, the Playground's
custom scale, the Inference page's call, prefill, tile, keys per tile, sink window and logit,
and the Modern page's shift, RoPE base, gain, ALiBi length and heads, GQA's heads.

Each drag is a step (``_dragging_…``) on the page as the step before left it: the tests at the
end are sessions that run steps which do not touch each other's values (a step on a value
another step's expected numbers assume runs in a session of its own), so a page is loaded
once for several drags."""

from __future__ import annotations

import numpy as np
from helpers import (
    _finished_runs,
    assert_no_exception,
    expect_rerun,
    goto_page,
    rerun_pending,
    slider_step,
    wait_for_app_run,
    wait_for_chart,
    wait_for_plots,
    wait_for_slider,
    wheel_into_view,
)

from attnviz.core.attention import scaled_dot_product_attention
from attnviz.core.masks import window_mask
from attnviz.scenarios.presets import default_scenario
from attnviz.scenarios.scenario import run_scenario

KEY = "masks_fig_weights"


def plotted(page, key: str) -> np.ndarray:
    """The matrix chart ``key`` draws now (its first trace's z)."""
    return np.array(page.evaluate(
        """k => Array.from(document.querySelector(`.st-key-${k} .js-plotly-plot`)._fullData[0].z,
                          r => Array.from(r))""", key), dtype=float)


def x_title(page, key: str) -> str:
    """The x axis title chart ``key`` draws now (it follows a drag)."""
    return page.evaluate(
        "k => document.querySelector(`.st-key-${k} .js-plotly-plot`)._fullLayout.xaxis.title.text",
        key)


def show_tab(page, tab: str) -> None:
    """Show the open page's tab ``tab``."""
    page.get_by_role("tab", name=tab).click()


def nav_to(page, title: str) -> None:
    """Open the page ``title`` by the sidebar's navigation, in this session."""
    with expect_rerun(page):
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()


def _dragging_the_window_width_moves_the_weights_and_release_sets_it(page):
    with expect_rerun(page):
        page.get_by_test_id("stRadio").first.get_by_text("sliding window").click()
    wait_for_plots(page, 4)
    wait_for_app_run(page)
    base = run_scenario(default_scenario()).attention
    drag_to_left_end(page, KEY)  # to width 0 while the button is held
    np.testing.assert_allclose(plotted(page, KEY), np.eye(4), atol=1e-12)  # width 0: itself only
    with expect_rerun(page):
        page.mouse.up()
    wait_for_app_run(page)
    width = page.locator(f".st-key-{KEY} g.slider-group[role=slider]")  # the one control
    assert width.get_attribute("aria-valuetext") == "0"
    mask = window_mask(4, width=0)
    expected = scaled_dot_product_attention(base.q, base.k, base.v, mask=mask).weights
    np.testing.assert_allclose(plotted(page, KEY), expected, atol=1e-12)
    assert_no_exception(page)


def release(page, control: str, chart: str | None = None, nth: int = 0) -> str:
    """Let go of the mouse, wait for the run the release starts (the drag slider sets the
    widget ``control``) and return the value that slider then shows; with ``chart``, the
    chart's own slider is the value's one control: the step its ``nth`` slider says it is on."""
    with expect_rerun(page):
        page.mouse.up()
    wait_for_app_run(page)
    if chart is not None:
        assert page.locator(f".st-key-{control}").count() == 0  # no second control above
        return page.evaluate(  # the step the chart's nth slider stands on, as the run sent it
            """([k, n]) => { const s = document.querySelector(`.st-key-${k} .js-plotly-plot`)
                               ._fullLayout.sliders[n]; return s.steps[s.active].label; }""",
            [chart, nth])
    return page.locator(f".st-key-{control} [data-testid=stSliderThumbValue]").inner_text()


def wait_for_frames(page, key: str, n: int) -> None:
    """Wait until chart ``key`` holds ``n`` frames (its drag sliders are ready)."""
    page.wait_for_function(
        """([k, n]) => document.querySelector(`.st-key-${k} .js-plotly-plot`)?._transitionData
           ?._frames?.length === n""", arg=[key, n], timeout=30_000)


def drag_to_left_end(page, key: str, nth: int = 0, start: float = 1.0) -> None:
    """Press the nth slider of chart ``key`` at its right end (``start``: that fraction of its
    width) and move it to its left end (button still held), and check that dragging ran no
    script (the frames are in the browser)."""
    rail = page.locator(f".st-key-{key} .slider-rail-rect").nth(nth)
    wheel_into_view(page, rail)  # as a person scrolls (a script's scroll can be undone)
    # a chart in a tab just opened is redrawn at its column's width 150 ms after it stops
    # moving: wait for that, as a person's hand does, before pressing its slider
    wait_for_chart(page, key)
    chart = f".st-key-{key} .js-plotly-plot"
    before = slider_step(page, chart, nth)
    box = rail.bounding_box()
    runs = len(_finished_runs[page])
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + min(box["width"] * start, box["width"] - 2), y)
    page.mouse.down()
    page.mouse.move(box["x"] + 2, y, steps=4)
    assert wait_for_slider(page, chart, nth, moved_from=before) == 0  # its frame drawn
    assert len(_finished_runs[page]) == runs, "dragging must not run the script"
    assert not rerun_pending(page), "dragging must not ask for a script run"


def _dragging_the_pe_base_redraws_the_matrix_and_release_sets_the_base(page):
    from attnviz.core.positional import sinusoidal_positional_encoding
    key = "positional_encoding_fig_pe"
    wait_for_plots(page, 3)
    drag_to_left_end(page, key)  # to base 10
    np.testing.assert_allclose(plotted(page, key),
                               sinusoidal_positional_encoding(50, 32, base=10.0), atol=1e-12)
    assert "(50 × 32), base 10 (" in x_title(page, key)  # the title follows the drag
    assert release(page, "positional_encoding_base", key) == "10"
    assert_no_exception(page)


def _dragging_the_pe_width_redraws_the_matrix_and_release_sets_d_model(page):
    from attnviz.core.positional import sinusoidal_positional_encoding
    key = "positional_encoding_fig_pe"
    wait_for_plots(page, 3)
    drag_to_left_end(page, key, nth=1)  # the second slider: to d_model 2
    plot = f".st-key-{key} .js-plotly-plot"
    np.testing.assert_allclose(plotted(page, key), sinusoidal_positional_encoding(50, 2),
                               atol=1e-12)
    columns = page.evaluate("s => document.querySelector(s)._fullLayout.xaxis._categories", plot)
    assert columns == ["0", "1"]  # two columns drawn, not 32 with gaps
    span = page.evaluate("s => document.querySelector(s)._fullLayout.xaxis.range", plot)
    np.testing.assert_allclose(span, [-0.5, 1.5])  # filling the plot, not its first 2/32
    assert release(page, "positional_encoding_d_model", key, nth=1) == "2"
    np.testing.assert_allclose(plotted(page, key), sinusoidal_positional_encoding(50, 2),
                               atol=1e-12)
    assert_no_exception(page)


def _dragging_the_example_d_k_moves_the_bars_and_release_sets_it(page):
    from attnviz.teach.sqrt_dk import sqrt_dk_experiment
    key = "why_sqrt_dk_fig_example"
    wait_for_plots(page, 4)
    drag_to_left_end(page, key)  # to d_k = 1
    bars = page.evaluate(
        "k => Array.from(document.querySelector(`.st-key-${k} .js-plotly-plot`)._fullData[0].y)",
        key)
    res = sqrt_dk_experiment((1, 2, 4, 8, 16, 32, 64, 128, 256, 512), t_k=16, n_queries=400,
                             seed=0)
    np.testing.assert_allclose(bars, res.example_unscaled[0], atol=1e-12)
    assert release(page, "why_sqrt_dk_example_dk", key) == "1"
    # one control: no d_k slider above the chart, and the slider's value clear of the keys'
    # labels (issue 28 item 4: "drag d_k: 512" overlapped them)
    assert page.locator(".st-key-why_sqrt_dk_example_dk").count() == 0
    ticks = page.locator(f".st-key-{key} .xtick text").evaluate_all(
        "ts => ts.map(t => t.getBoundingClientRect().bottom)")
    label = page.locator(f".st-key-{key} g.slider-container text",
                         has_text="drag d_k").first.bounding_box()
    assert ticks and label["y"] >= max(ticks), (ticks, label)
    assert_no_exception(page)


def _dragging_the_custom_scale_moves_the_scaled_scores_and_release_sets_it(page):
    from helpers import playground_focus
    key = "playground_fig_scores_slot_1"
    wait_for_plots(page, 3)
    playground_focus(page, "Scores")
    wait_for_plots(page, 3)
    drag_to_left_end(page, key, start=0.5)  # from the middle to scale 0.05
    scores = run_scenario(default_scenario()).attention.scores
    np.testing.assert_allclose(plotted(page, key), scores * 0.05, atol=1e-12)
    with expect_rerun(page):
        page.mouse.up()
    wait_for_app_run(page)
    box = page.get_by_test_id("stNumberInput").filter(has_text="Custom").first
    assert box.locator("input").input_value() == "0.05"
    assert_no_exception(page)


# --- the Inference page: the calls, the tiles and the sink logit -------------------------------

def inference_result(variant: str, **params):
    from dataclasses import replace

    from attnviz.scenarios.scenario import with_variant
    return run_scenario(replace(with_variant(default_scenario(), variant),
                                params=params)).attention


def _dragging_the_model_call_steps_through_the_calls_and_release_sets_it(page):
    from attnviz.teach.text import inference as text
    key = "inference_fig_call_weights"
    wait_for_plots(page, 3)
    att = inference_result("kv_cache", prefill=2)
    np.testing.assert_allclose(plotted(page, key), att.steps[-1].weights, atol=1e-12)
    drag_to_left_end(page, key)  # to call 1: the prompt's two rows
    np.testing.assert_allclose(plotted(page, key), att.steps[0].weights, atol=1e-12)
    assert x_title(page, key).startswith(text.CALL.format(call=1, calls=3, rows="2 rows",
                                                          cache="2 keys"))
    assert release(page, "inference_call", key) == "1"
    np.testing.assert_allclose(plotted(page, key), att.steps[0].weights, atol=1e-12)
    assert_no_exception(page)


def _dragging_the_tile_steps_the_running_statistics_and_release_sets_it(page):
    from attnviz.teach.text import inference as text
    key = "inference_fig_running"
    show_tab(page, text.ONLINE_TAB)
    wait_for_plots(page, 4)
    first = inference_result("online_softmax", tile=2).tiles[0]
    drag_to_left_end(page, key)  # to tile 1
    np.testing.assert_allclose(plotted(page, key)[:, :3],
                               np.column_stack([first.m, first.l, first.alpha]), atol=1e-12)
    assert release(page, "inference_tile_step", key) == "1"
    assert_no_exception(page)


def _dragging_the_sink_logit_moves_the_weights_and_release_sets_it(page):
    from attnviz.teach.text import inference as text
    key = "inference_fig_sink_weights"
    show_tab(page, text.SINKS_TAB)
    with expect_rerun(page):
        page.get_by_text(text.LEARNED_LABEL, exact=True).click()
    wait_for_app_run(page)
    wait_for_frames(page, key, 4 + 5 + 41)  # window 1..4, sink tokens 0..4, logit -10..10
    drag_to_left_end(page, key, nth=2)  # the third slider, to logit -10
    low = inference_result("sinks", window=3, n_sink=1, learned_sink=True, sink_logit=-10.0)
    np.testing.assert_allclose(plotted(page, key), low.weights, atol=1e-12)
    assert release(page, "inference_logit", key, nth=2) == "-10"
    assert_no_exception(page)


def _dragging_the_shift_moves_the_pe_scores_and_release_sets_it(page):
    from attnviz.teach.modern import shift_check
    key = "modern_fig_pe_scores"
    wait_for_plots(page, 3)
    drag_to_left_end(page, key)  # to Δ = 0: the scores as they are
    np.testing.assert_allclose(plotted(page, key), shift_check(default_scenario(), 0).pe_shifted,
                               atol=1e-12)
    assert release(page, "modern_delta", key) == "0"
    assert_no_exception(page)


def _dragging_the_gain_moves_the_normed_logits_and_release_sets_it(page):
    from attnviz.teach.modern import qk_norm_effect
    from attnviz.teach.text import modern as text
    key = "modern_fig_normed_logits"
    show_tab(page, text.NORM_TAB)
    wait_for_frames(page, key, 7)
    drag_to_left_end(page, key)  # to g = 0.25
    low = qk_norm_effect(default_scenario(), 0.25)
    np.testing.assert_allclose(plotted(page, key), low.normed, atol=1e-12)
    assert release(page, "modern_qk_gain") == "0.25"
    assert_no_exception(page)


def _dragging_the_window_moves_the_sink_weights_and_release_sets_it(page):
    from attnviz.teach.text import inference as text
    key = "inference_fig_sink_weights"
    show_tab(page, text.SINKS_TAB)
    wait_for_frames(page, key, 4 + 5)  # window 1..4, sink tokens 0..4 (the default's 4 tokens)
    drag_to_left_end(page, key)  # the first slider, to window 1
    narrow = inference_result("sinks", window=1, n_sink=1)
    np.testing.assert_allclose(plotted(page, key), narrow.weights, atol=1e-12)
    assert release(page, "inference_window", key) == "1"
    np.testing.assert_allclose(plotted(page, key), narrow.weights, atol=1e-12)
    assert_no_exception(page)


def _dragging_the_rope_base_turns_the_angles_and_release_sets_it(page):
    from attnviz.teach.modern import angles
    key = "modern_fig_angles"
    wait_for_plots(page, 3)
    drag_to_left_end(page, key)  # to base 4
    sc = default_scenario()
    np.testing.assert_allclose(plotted(page, key), angles(sc.t + 5, 8, base=4.0)[5:],
                               atol=1e-12)  # the chart opens with a head of width 8
    assert release(page, "modern_base", key) == "4"
    assert_no_exception(page)


def _dragging_the_key_value_heads_regroups_the_query_heads_and_release_sets_it(page):
    from attnviz.teach.modern import kv_sharing
    from attnviz.teach.text import modern as text
    key = "modern_fig_sharing"
    show_tab(page, text.GQA_TAB)
    wait_for_frames(page, key, 4 + 6)  # 1, 2, 4, 8 key/value heads; 1 … 32 query heads
    drag_to_left_end(page, key)  # to 1 key/value head: MQA
    np.testing.assert_array_equal(plotted(page, key), kv_sharing(8, 1))
    assert release(page, "modern_gqa_kv") == "1"
    assert_no_exception(page)


def _dragging_the_query_heads_regroups_them_and_release_sets_them(page):
    from attnviz.teach.modern import kv_sharing
    from attnviz.teach.text import modern as text
    key = "modern_fig_sharing"
    show_tab(page, text.GQA_TAB)
    wait_for_frames(page, key, 4 + 6)  # 1, 2, 4, 8 key/value heads; 1 … 32 query heads
    drag_to_left_end(page, key, nth=1)  # to 1 query head: 4 key/value heads no longer divide it
    np.testing.assert_array_equal(plotted(page, key), kv_sharing(1, 1))
    assert release(page, "modern_gqa_heads") == "1"
    np.testing.assert_array_equal(plotted(page, key), kv_sharing(1, 1))
    kv = page.locator(".st-key-modern_gqa_kv [data-testid=stSliderThumbValue]")
    assert kv.inner_text() == "1"
    assert_no_exception(page)


def _dragging_the_alibi_length_grows_the_bias_and_release_sets_it(page):
    from attnviz.core.alibi import alibi_bias
    from attnviz.teach.text import modern as text
    key = "modern_fig_alibi_0"
    show_tab(page, text.ALIBI_TAB)
    wait_for_plots(page, 3)
    drag_to_left_end(page, key)  # to length 2
    drawn_bias = plotted(page, key)
    np.testing.assert_allclose(drawn_bias[1, 0], alibi_bias(4, 2)[0][1, 0], rtol=1e-15)
    assert drawn_bias[0, 0] == 0 and np.isnan(drawn_bias[0, 1])  # j > i: masked
    grey = np.array(page.evaluate(  # the grey −∞ cell follows the drag: (0, 1) only
        """k => Array.from(document.querySelector(`.st-key-${k} .js-plotly-plot`)._fullData[1].z,
                          r => Array.from(r))""", key), dtype=float)
    assert grey.shape == (2, 2) and grey[0, 1] == 0 and np.isnan(grey[[0, 1, 1], [0, 0, 1]]).all()
    assert release(page, "modern_alibi_length") == "2"
    assert plotted(page, "modern_fig_alibi_3").shape == (2, 2)  # every head follows the release
    assert_no_exception(page)


def _dragging_the_alibi_heads_spreads_the_slopes_and_release_sets_them(page):
    from attnviz.core.alibi import alibi_slopes
    from attnviz.teach.text import modern as text
    key = "modern_fig_alibi_slopes"
    show_tab(page, text.ALIBI_TAB)
    wait_for_frames(page, key, 6)
    drag_to_left_end(page, key)  # to 1 head
    np.testing.assert_allclose(plotted(page, key), [alibi_slopes(1)], rtol=1e-15)
    assert release(page, "modern_alibi_heads") == "1"
    assert page.locator(".st-key-modern_fig_alibi_0").count() == 1
    assert page.locator(".st-key-modern_fig_alibi_1").count() == 0  # one head, one bias
    assert_no_exception(page)


def _dragging_the_prefill_changes_the_calls_and_release_sets_it(page):
    from attnviz.teach.text import inference as text
    key = "inference_fig_call_weights"
    wait_for_plots(page, 3)
    wait_for_frames(page, key, 3 + 4)  # calls 1..3 (prefill 2 of 4 tokens); prefill 1..4
    drag_to_left_end(page, key, nth=1)  # to prefill 1: four calls, the page keeps call 3
    one = inference_result("kv_cache", prefill=1)
    np.testing.assert_allclose(plotted(page, key), one.steps[2].weights, atol=1e-12)
    assert x_title(page, key).startswith(text.CALL.format(call=3, calls=4, rows="1 row",
                                                          cache="3 keys"))
    assert release(page, "inference_prefill", key, nth=1) == "1"
    np.testing.assert_allclose(plotted(page, key), one.steps[2].weights, atol=1e-12)
    assert_no_exception(page)


def _dragging_the_keys_per_tile_redraws_the_statistics_and_release_sets_it(page):
    from attnviz.teach.text import inference as text
    key = "inference_fig_running"
    show_tab(page, text.ONLINE_TAB)
    wait_for_frames(page, key, 2 + 4)  # tiles 1..2 (2 keys each of 4); 1..4 keys per tile
    drag_to_left_end(page, key, nth=1)  # to 1 key per tile: four tiles, the page keeps tile 2
    second = inference_result("online_softmax", tile=1).tiles[1]
    np.testing.assert_allclose(plotted(page, key)[:, :3],
                               np.column_stack([second.m, second.l, second.alpha]), atol=1e-12)
    assert release(page, "inference_tile", key, nth=1) == "1"
    np.testing.assert_allclose(plotted(page, key)[:, :3],
                               np.column_stack([second.m, second.l, second.alpha]), atol=1e-12)
    assert_no_exception(page)


def _the_keyboard_steps_a_charts_second_slider_too(page):
    """d_model's only control is the PE matrix's second slider: it takes the focus and the
    arrow keys as the first does (the keyboard once reached a chart's first slider only)."""
    key = "positional_encoding_fig_pe"
    wait_for_plots(page, 3)
    group = page.locator(f".st-key-{key} g.slider-group").nth(1)
    group.scroll_into_view_if_needed()
    assert group.get_attribute("role") == "slider"
    assert group.get_attribute("aria-valuetext") == "32"
    group.focus()
    with expect_rerun(page):
        page.keyboard.press("ArrowLeft")  # one step down: d_model 24, sent after the key is up
    wait_for_app_run(page)
    plot = f".st-key-{key} .js-plotly-plot"
    assert page.evaluate(
        """s => { const l = document.querySelector(s)._fullLayout.sliders[1];
                  return l.steps[l.active].label; }""", plot) == "24"
    columns = page.evaluate("s => document.querySelector(s)._fullLayout.xaxis._categories", plot)
    assert len(columns) == 24
    assert_no_exception(page)


# --- the sessions: each step's page as the step before left it ----------------------------------

def test_modern_rope_base_gain_alibi_length_and_heads_and_key_value_heads(app_server, page):
    goto_page(page, app_server, "modern")  # the RoPE tab open
    _dragging_the_rope_base_turns_the_angles_and_release_sets_it(page)
    _dragging_the_gain_moves_the_normed_logits_and_release_sets_it(page)
    _dragging_the_alibi_length_grows_the_bias_and_release_sets_it(page)
    _dragging_the_alibi_heads_spreads_the_slopes_and_release_sets_them(page)
    _dragging_the_key_value_heads_regroups_the_query_heads_and_release_sets_it(page)


def test_modern_shift_and_query_heads_then_positional_encodings_d_model(app_server, page):
    """The shift (its scores assume the default RoPE base) and the query heads (they move the
    key/value heads too), then d_model stepped by the keyboard and dragged."""
    goto_page(page, app_server, "modern")
    _dragging_the_shift_moves_the_pe_scores_and_release_sets_it(page)
    _dragging_the_query_heads_regroups_them_and_release_sets_them(page)
    nav_to(page, "Positional encoding")
    _the_keyboard_steps_a_charts_second_slider_too(page)  # d_model 32 -> 24
    _dragging_the_pe_width_redraws_the_matrix_and_release_sets_d_model(page)  # 24 -> 2


def test_inference_call_tile_and_sink_window(app_server, page):
    goto_page(page, app_server, "inference")  # the KV cache tab open
    _dragging_the_model_call_steps_through_the_calls_and_release_sets_it(page)
    _dragging_the_tile_steps_the_running_statistics_and_release_sets_it(page)
    _dragging_the_window_moves_the_sink_weights_and_release_sets_it(page)


def test_inference_prefill_keys_per_tile_and_sink_logit(app_server, page):
    """The settings the other inference session's expected numbers assume as they open."""
    goto_page(page, app_server, "inference")
    _dragging_the_prefill_changes_the_calls_and_release_sets_it(page)
    _dragging_the_keys_per_tile_redraws_the_statistics_and_release_sets_it(page)
    _dragging_the_sink_logit_moves_the_weights_and_release_sets_it(page)


def test_pe_base_masks_window_example_d_k_and_custom_scale(app_server, page):
    goto_page(page, app_server, "positional_encoding")
    _dragging_the_pe_base_redraws_the_matrix_and_release_sets_the_base(page)
    nav_to(page, "Masks")
    _dragging_the_window_width_moves_the_weights_and_release_sets_it(page)
    nav_to(page, "Why √d_k")
    _dragging_the_example_d_k_moves_the_bars_and_release_sets_it(page)
    nav_to(page, "Playground")
    _dragging_the_custom_scale_moves_the_scaled_scores_and_release_sets_it(page)
