"""AppTest: Trace a cell, Compare, Pitfalls, Why √d_k, Line view, Quiz, presenter mode and the
diagnostics panel — smoke and interaction, reading the numbers the pages send to the charts."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import (
    chart_keys,
    chart_z_by_key,
    charts,
    decode,
    open_page,
    spec_by_key,
)

from attnviz.scenarios.compare import compare
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.pitfalls import PITFALLS
from attnviz.teach.quiz import practice_question
from attnviz.teach.text import common
from attnviz.teach.text import compare as compare_text
from attnviz.teach.text import pitfalls as pitfalls_text
from attnviz.teach.text import trace as trace_text
from attnviz.ui import trace_view
from attnviz.ui.diagnostics import panel_key

EFFECTIVE = common.DIAGNOSTICS_COLUMNS["effective"]  # a column of the diagnostics table

PAGES = ["trace", "compare", "pitfalls", "why_sqrt_dk", "line_view", "quiz"]


def load(at, preset: str):
    """Load a preset from the sidebar, as a teacher would."""
    at.selectbox(key="sidebar_preset").set_value(preset)
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["scenario"].title == PRESETS[preset].build().title
    return at


def texts(at) -> str:
    return "\n".join(t.value for t in at.text)


def latex(at) -> str:
    return "\n".join(m.value for m in at.latex)


def checked(at) -> tuple[float, float]:
    """(recomputed, core) α_ij of the trace's check lines."""
    pattern = re.escape(trace_text.CHECK_LINES).replace(re.escape("{recomputed}"), r"(\S+)")
    found = re.search(pattern.replace(re.escape("{core}"), r"(\S+)"), texts(at))
    return float(found.group(1)), float(found.group(2))


def box(at, label: str):
    """The select box with this label (the trace page's keys carry a label fingerprint)."""
    found = [s for s in at.selectbox if s.label == label]
    assert len(found) == 1, [s.label for s in at.selectbox]
    return found[0]


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_without_errors(page):
    at = open_page(page)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert charts(at), f"{page} shows no chart"


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("preset", ["seed_001_causal", "seed_004_two_heads", "bahdanau",
                                    "seed_004_sleepy", "pattern_same_word"])
def test_page_survives_every_kind_of_scenario(page, preset):
    at = load(open_page(page), preset)
    assert not at.exception, [e.message for e in at.exception]


# Trace a cell ------------------------------------------------------------------------------

def test_trace_default_cell_is_seed000s_first_weight():
    at = open_page("trace")
    assert checked(at)[0] == pytest.approx(0.23608986, abs=5e-9)
    assert r"s_{0,0} = (2)(2) + (0)(2) + (2)(2) = 8" in latex(at)
    spec = spec_by_key(at, "trace_fig_weights")
    rects = [(s["x0"], s["y0"]) for s in spec["layout"]["shapes"]]
    assert (-0.5, -0.5) in rects  # cell (0, 0) outlined


def test_trace_pick_query_and_key():
    at = open_page("trace")
    box(at, trace_text.QUERY_LABEL).set_value(2).run()
    box(at, trace_text.KEY_LABEL).set_value(1).run()
    weights = chart_z_by_key(at, "trace_fig_weights")
    recomputed, core = checked(at)
    assert recomputed == pytest.approx(weights[2, 1], rel=1e-12)
    assert core == weights[2, 1]
    assert trace_text.CHOSEN.format(query="2:word_3", key="1:word_2") in texts(at)
    shapes = spec_by_key(at, "trace_fig_weights")["layout"]["shapes"]
    assert any(s["x0"] == 0.5 and s["y0"] == 1.5 and s["x1"] == 1.5 for s in shapes)
    q_shapes = spec_by_key(at, "trace_fig_Q")["layout"]["shapes"]
    assert q_shapes[0]["y0"] == 1.5  # row 2 of Q outlined
    k_shapes = spec_by_key(at, "trace_fig_K")["layout"]["shapes"]
    assert k_shapes[0]["y0"] == 0.5  # row 1 of K outlined


def test_trace_weights_chart_has_a_click_picker():
    at = open_page("trace")
    spec = spec_by_key(at, "trace_fig_weights")
    picker = [t for t in spec["data"] if t.get("name") == "cells"]
    assert len(picker) == 1 and len(picker[0]["x"]) == 16
    assert spec["layout"]["hoverdistance"] == -1


def test_trace_click_handler_sets_query_and_key(monkeypatch):
    fake = {"chart": {"selection": {"points": [{"curve_number": 1, "point_index": 7}]}}}
    monkeypatch.setattr(trace_view.st, "session_state", fake)
    trace_view.click_handler("chart", 1, 4, "q", "k")()
    assert (fake["q"], fake["k"]) == (1, 3)


def test_trace_multi_head_goes_through_w_o():
    at = load(open_page("trace"), "seed_004_two_heads")
    at.selectbox(key="trace_head").set_value(1).run()
    assert r"W_O[\text{head 1}]" in latex(at)
    assert "head 1" in at.markdown[1].value or any("head 1" in m.value for m in at.markdown)
    att = run_scenario(PRESETS["seed_004_two_heads"].build()).attention
    np.testing.assert_allclose(chart_z_by_key(at, "trace_fig_weights"), att.weights[1])


def test_trace_masked_cell_says_so():
    at = load(open_page("trace"), "seed_001_causal")
    box(at, trace_text.KEY_LABEL).set_value(1).run()
    assert r"M_{0,1} = \text{False}" in latex(at)
    assert any(trace_text.MASKED == c.value for c in at.caption)


def test_trace_additive():
    at = load(open_page("trace"), "bahdanau")
    assert r"f_{0,0}" in latex(at) and checked(at)
    assert r"e''" not in latex(at) and "M_" not in latex(at)  # nothing is masked: no mask step
    at.session_state["scenario"] = replace(at.session_state["scenario"], mask_kind="causal")
    at.run()
    assert r"e''_{0,0}" in latex(at) and r"M_{0,0} = \text{True}" in latex(at)


def test_trace_steps_follow_the_settings():
    """The default (1/√d_k, τ = 1, no mask) shows no temperature and no mask step; scale
    "none" with τ = 2 and a causal mask shows no scale step and no √d_k."""
    def titles(at):
        return [m.value.strip("*").split(". ", 1)[-1] for m in at.markdown
                if m.value.startswith("**") and ". " in m.value]

    at = open_page("trace")
    shown = titles(at)
    assert trace_text.TITLES["scale"] in shown and trace_text.TITLES["mask"] not in shown
    assert trace_text.TITLES["temperature"] not in shown and r"	au" not in latex(at)
    at.session_state["scenario"] = replace(at.session_state["scenario"], scale_mode="none",
                                           temperature=2.0, mask_kind="causal")
    at.run()
    shown = titles(at)
    assert trace_text.TITLES["scale"] not in shown and r"\sqrt" not in latex(at)
    assert trace_text.TITLES["temperature"] in shown and trace_text.TITLES["mask"] in shown
    assert r"s'_{ij} = s_{ij} \div \tau" in latex(at)


def test_trace_select_boxes_restart_with_new_tokens():
    at = open_page("trace")
    box(at, trace_text.QUERY_LABEL).set_value(3).run()
    at = load(at, "translation")
    assert box(at, trace_text.QUERY_LABEL).value == 0
    assert box(at, trace_text.QUERY_LABEL).options[0] == "0:le"
    assert trace_text.CHOSEN.format(query="0:le", key="0:the") in texts(at)


# Compare -----------------------------------------------------------------------------------

def test_compare_scaled_vs_unscaled_numbers():
    at = open_page("compare")
    expected = compare(PRESETS["seed_000"].build(), "scale")
    np.testing.assert_allclose(chart_z_by_key(at, "compare_fig_weights_a"), expected.a.weights)
    np.testing.assert_allclose(chart_z_by_key(at, "compare_fig_weights_b"), expected.b.weights)
    diff = chart_z_by_key(at, "compare_fig_weights_diff")
    np.testing.assert_allclose(diff, expected.a.weights - expected.b.weights)
    diff_trace = spec_by_key(at, "compare_fig_weights_diff")["data"][0]
    assert diff_trace["zmid"] == 0
    # short numbers in the narrow third column: decimals, the colour bar below the cells
    assert diff_trace["text"][0][2] == f"{diff[0, 2]:.3f}".replace("-", "−")
    assert diff_trace["colorbar"]["orientation"] == "h"
    np.testing.assert_allclose(chart_z_by_key(at, "compare_fig_output_diff"),
                               expected.a.output - expected.b.output)


@pytest.mark.parametrize("kind", ["causal", "heads", "pe", "temperature", "variants"])
def test_compare_every_kind(kind):
    at = open_page("compare")
    at.selectbox(key="compare_kind").set_value(kind).run()
    assert not at.exception
    a = chart_z_by_key(at, "compare_fig_weights_a")
    b = chart_z_by_key(at, "compare_fig_weights_b")
    np.testing.assert_allclose(chart_z_by_key(at, "compare_fig_weights_diff"), a - b)
    if kind == "causal":
        assert np.all(np.triu(a, 1) == 0)


def test_compare_heads_slider_and_direct_scenario_message():
    at = load(open_page("compare"), "seed_004_two_heads")
    at.selectbox(key="compare_kind").set_value("heads").run()
    assert any("2 heads" in m.value for m in at.markdown)
    expected = compare(PRESETS["seed_004_two_heads"].build(), "heads", n_heads=2)
    assert compare_text.SIDE_TITLE.format(side="B", label=expected.b.label) in [
        m.value for m in at.markdown]
    at = load(at, "seed_001_causal")
    at.selectbox(key="compare_kind").set_value("pe").run()
    assert any("does not apply" in i.value for i in at.info)
    with pytest.raises(ValueError) as refused:
        compare(PRESETS["seed_001_causal"].build(), "pe")
    assert [i.value for i in at.info] == [compare_text.NOT_APPLICABLE.format(
        reason=refused.value)]
    assert not charts(at)


def test_compare_names_the_side_that_cannot_be_computed():
    """Additive weights that do not fit: side A (the additive variant) says why, B still draws."""
    broken = replace(PRESETS["bahdanau"].build(), w_a_q=np.ones((2, 3)))
    with pytest.raises(ValueError) as refused:
        run_scenario(broken)
    at = open_page("compare")
    at.session_state["scenario"] = broken
    at.selectbox(key="compare_kind").set_value("variants").run()
    assert not at.exception
    assert compare_text.CANNOT_COMPUTE.format(side="A", reason=refused.value) in [
        e.value for e in at.error]
    assert "compare_fig_weights_b" in chart_keys(at)
    assert "compare_fig_weights_a" not in chart_keys(at)


# Pitfalls ----------------------------------------------------------------------------------

@pytest.mark.parametrize("key", list(PITFALLS))
def test_every_pitfall_shows_its_wrong_and_right_numbers(key):
    at = open_page("pitfalls")
    at.radio(key="pitfalls_choice").set_value(key).run()
    assert not at.exception
    case = PITFALLS[key]()
    for side in ("wrong", "right"):
        for panel in getattr(case, side):
            shown = chart_z_by_key(at, f"pitfalls_fig_{key}_{side}_{panel.name}")
            np.testing.assert_allclose(shown, np.atleast_2d(panel.z), equal_nan=True)
    assert any(c.language == "python" and "def wrong_" in c.value for c in at.code)
    assert any("Symptom" in w.value for w in at.warning)


def test_seed001_pitfall_on_screen():
    at = open_page("pitfalls")
    np.testing.assert_allclose(
        chart_z_by_key(at, "pitfalls_fig_softmax_over_queries_wrong_output"),
        [[0, 0.35954252, 0], [1, 0.64045748, 1]], atol=1e-8)
    np.testing.assert_allclose(
        chart_z_by_key(at, "pitfalls_fig_softmax_over_queries_right_output"),
        [[0, 1, 0], [0.8496745531, 0.1503254469, 0.8496745531]], atol=1e-9)


def test_overflow_pitfall_labels_nan():
    at = open_page("pitfalls")
    at.radio(key="pitfalls_choice").set_value("naive_overflow").run()
    spec = spec_by_key(at, "pitfalls_fig_naive_overflow_wrong_weights")
    assert spec["data"][-1]["name"] == pitfalls_text.NAN_NAME
    assert "NaN" in json.dumps(spec["data"][0]["text"])
    assert pitfalls_text.NAN in [c.value for c in at.caption]


# Why √d_k ----------------------------------------------------------------------------------

def test_sqrt_dk_charts_and_controls():
    at = open_page("why_sqrt_dk")
    spec = spec_by_key(at, "why_sqrt_dk_fig_variance")
    d_ks = decode(spec["data"][0]["x"])
    var = decode(spec["data"][0]["y"])
    np.testing.assert_array_equal(d_ks, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
    np.testing.assert_allclose(var / d_ks, 1.0, rtol=0.15)
    at.select_slider(key="why_sqrt_dk_max_dk").set_value(64).run()
    at.slider(key="why_sqrt_dk_t_k").set_value(8).run()
    spec = spec_by_key(at, "why_sqrt_dk_fig_entropy")
    assert len(decode(spec["data"][0]["x"])) == 7
    np.testing.assert_allclose(decode(spec["data"][2]["y"]), np.log(8))
    bars = spec_by_key(at, "why_sqrt_dk_fig_example")
    assert len(bars["data"][0]["x"]) == 8
    # one control for the example's d_k: the chart's own slider
    assert "why_sqrt_dk_example_dk" not in [s.key for s in at.select_slider]
    assert at.session_state["why_sqrt_dk_example_dk"] == 64
    (slider,) = bars["layout"]["sliders"]
    assert slider["steps"][slider["active"]]["label"] == "64"
    # a frame per d_k: the example's own slider moves the bars while it is dragged
    assert [f["name"] for f in bars["frames"]] == ["1", "2", "4", "8", "16", "32", "64"]
    from attnviz.teach.sqrt_dk import sqrt_dk_experiment
    res = sqrt_dk_experiment((1, 2, 4, 8, 16, 32, 64), t_k=8, n_queries=400, seed=0)
    np.testing.assert_allclose(decode(bars["frames"][2]["data"][0]["y"]),
                               res.example_unscaled[2], rtol=1e-12)
    np.testing.assert_allclose(decode(bars["frames"][2]["data"][1]["y"]),
                               res.example_scaled[2], rtol=1e-12)


# Line view ---------------------------------------------------------------------------------

def line_traces(spec):
    return [t for t in spec["data"] if (t.get("meta") or {}).get("level")]


def test_line_view_opacity_is_the_weight():
    at = open_page("line_view")
    spec = spec_by_key(at, "line_view_fig")
    weights = chart_z_by_key(at, "line_view_fig_weights")
    for t in line_traces(spec):
        ys = decode(t["y"]).astype(float)
        for i, j in zip(ys[0::3].astype(int), ys[1::3].astype(int), strict=True):
            assert abs(t["opacity"] - weights[i, j]) <= 1 / 80


def test_line_view_focus_a_token():
    at = open_page("line_view")
    at.selectbox(key="line_view_focus").set_value("query:2").run()
    spec = spec_by_key(at, "line_view_fig")
    starts = np.concatenate([decode(t["y"]).astype(float)[0::3] for t in line_traces(spec)])
    assert set(starts.astype(int)) == {2}
    shapes = spec_by_key(at, "line_view_fig_weights")["layout"]["shapes"]
    assert shapes[0]["y0"] == 1.5  # the focused query's row outlined in the heatmap


def test_line_view_heads():
    at = load(open_page("line_view"), "seed_004_two_heads")
    spec = spec_by_key(at, "line_view_fig")
    assert {t["meta"]["head"] for t in line_traces(spec)} == {0, 1}
    at.multiselect(key="line_view_heads").set_value([1]).run()
    spec = spec_by_key(at, "line_view_fig")
    assert {t["meta"]["head"] for t in line_traces(spec)} == {1}


# Quiz --------------------------------------------------------------------------------------

def test_quiz_hides_weights_until_reveal_and_scores():
    at = open_page("quiz")
    assert "quiz_fig_weights" not in chart_keys(at)
    question = practice_question(0, t=4, d_k=2)
    right = list(np.argmax(question.q @ question.k.T, axis=1))
    pred_keys = [s.key for s in at.selectbox if s.key.startswith("quiz_pred_")]
    assert len(pred_keys) == 4
    for key, j in zip(pred_keys, right, strict=True):
        at.selectbox(key=key).set_value(int(j))
    at.run()
    assert "quiz_fig_weights" not in chart_keys(at)
    at.button(key="quiz_reveal").click().run()
    assert at.metric[0].value == "4 / 4"
    np.testing.assert_allclose(chart_z_by_key(at, "quiz_fig_weights"), question.result.weights)
    # a wrong guess lowers the score, live
    at.selectbox(key=pred_keys[0]).set_value(int((right[0] + 1) % 4)).run()
    assert at.metric[0].value == "3 / 4"


def test_quiz_new_question_hides_again():
    at = open_page("quiz")
    at.button(key="quiz_reveal").click().run()
    assert "quiz_fig_weights" in chart_keys(at)
    assert at.metric[0].value == "0 / 4"
    at.button(key="quiz_new").click().run()
    assert at.session_state["quiz_round"] == 1
    assert "quiz_fig_weights" not in chart_keys(at)
    assert all(s.value is None for s in at.selectbox if s.key.startswith("quiz_pred_"))


def test_quiz_on_the_current_scenario():
    at = open_page("quiz")
    at.radio(key="quiz_source").set_value("scenario").run()
    np.testing.assert_allclose(chart_z_by_key(at, "quiz_fig_Q"),
                               run_scenario(PRESETS["seed_000"].build()).attention.q)
    keys = [s.key for s in at.selectbox if s.key.startswith("quiz_pred_")]
    for key in keys:
        at.selectbox(key=key).set_value(2)  # word_3 wins (or ties, row 1) every row of seed 000
    at.run()
    at.button(key="quiz_reveal").click().run()
    assert at.metric[0].value == "4 / 4"


# Presenter mode and the diagnostics panel --------------------------------------------------

def _styles(at) -> list[str]:
    """The CSS blocks the run injected (``st.html`` of a static <style> block)."""
    return [e.proto.body for e in at.get("html") if "<style>" in e.proto.body]


def test_presenter_mode_injects_css_only_when_on():
    at = open_page("pitfalls")
    assert not any("font-size" in css for css in _styles(at))
    at.toggle(key="presenter_mode").set_value(True).run()
    assert any("font-size" in css for css in _styles(at))
    # the chart component draws it in presenter mode's type (plotly_present.js presented)
    assert spec_by_key(at, "pitfalls_fig_softmax_over_queries_wrong_weights")["view"][
        "presenter"] is True


def test_playground_shows_diagnostics_under_the_weights():
    at = open_page("playground")
    frames = [d.value for d in at.dataframe if EFFECTIVE in d.value.columns]
    assert frames, "no diagnostics table on the Playground"
    frame = frames[0]
    np.testing.assert_allclose(frame["row sum"], 1.0)
    w = run_scenario(PRESETS["seed_000"].build()).attention.weights
    np.testing.assert_allclose(frame["max weight"], w.max(axis=1))
    # row 1 ties word_1 and word_3 (0.455 each): the first one is named
    assert list(frame["most-attended key"]) == ["2:word_3", "0:word_1", "2:word_3", "2:word_3"]


def test_diagnostics_are_computed_only_while_their_expander_is_open():
    """Closed (the default) the panel sends no table; opened it does, for the current weights."""
    at = open_page("trace", lazy_open=False)
    assert at.session_state[panel_key("trace_diag")] is False
    assert not [d for d in at.dataframe if EFFECTIVE in d.value.columns]
    at.session_state[panel_key("trace_diag")] = True
    at.run()
    frames = [d.value for d in at.dataframe if EFFECTIVE in d.value.columns]
    assert len(frames) == 1 and not at.exception
    np.testing.assert_allclose(frames[0]["row sum"], 1.0)
