"""AppTest: the Learn page — train, the recorded playback figure, the classroom experiments,
loading the trained weights into the scenario, and settings that cannot train."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import chart_keys, decode, open_page, spec_by_key, switch_to

from attnviz.scenarios.gradients import Loss, previous_token_pattern
from attnviz.scenarios.learn import MAX_STEPS, train
from attnviz.teach.text import learn as text
from attnviz.ui import state


def ok(at):
    assert not at.exception, [e.message for e in at.exception]
    return at


def on_learn(preset: str | None = None):
    at = open_page("home")
    if preset:
        at.selectbox(key="sidebar_preset").set_value(preset)
        at.button(key="sidebar_load_preset").click().run()
    return ok(switch_to(at, "learn"))


def test_training_records_the_run_the_figure_plays_back():
    at = on_learn()
    assert any(text.NO_RUN in c.value for c in at.caption)
    assert any(text.POSITIONS_HINT in i.value for i in at.info)  # seed 000 has no PE
    ok(at.button(key="learn_train").click().run())
    sc = at.session_state[state.SCENARIO]
    run = train(sc, Loss("pattern_ce", previous_token_pattern(4, 4)), steps=200, lr=0.05)
    spec = spec_by_key(at, "learn_fig_training")
    np.testing.assert_allclose(decode(spec["data"][0]["y"]), run.losses, rtol=1e-12)
    np.testing.assert_allclose(decode(spec["data"][1]["z"]), run.weights[-1], rtol=1e-12)
    frames = spec["frames"]
    assert [f["name"] for f in frames] == [str(s) for s in run.frames]
    np.testing.assert_allclose(decode(frames[0]["data"][0]["z"]), run.weights[0], rtol=1e-12)
    assert [b["label"] for b in spec["layout"]["updatemenus"][0]["buttons"]] == [text.PLAY,
                                                                                text.PAUSE]
    assert any("Trained 200 steps" in s.value for s in at.success)


def test_the_previous_token_experiment_learns_and_loads_into_the_scenario():
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("learn_previous").run())
    assert at.session_state[state.SCENARIO].use_pe
    ok(at.button(key="learn_train").click().run())
    run = at.session_state["learn_run"][1]
    assert run.losses[-1] < 0.3 < run.losses[0]  # the threshold the experiment states
    ok(at.button(key="learn_load").click().run())
    sc = at.session_state[state.SCENARIO]
    np.testing.assert_array_equal(sc.w_q, run.final.w_q)
    assert any(text.LOADED in s.value for s in at.success)
    switch_to(at, "playground")  # every page explores the trained weights
    ok(at)


def test_the_diverging_experiment_stops_with_a_message():
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("diverge").run())
    ok(at.button(key="learn_train").click().run())
    assert any("Training stopped early" in w.value for w in at.warning), at.warning
    run = at.session_state["learn_run"][1]
    assert np.isfinite(run.final.w_v).all() and len(run.losses) < 101


def test_the_saturated_experiment_barely_learns():
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("saturated").run())
    ok(at.button(key="learn_train").click().run())
    run = at.session_state["learn_run"][1]
    assert abs(run.losses[-1] - run.losses[0]) < 1e-6 * run.losses[0]


def test_w_v_alone_cannot_change_where_the_head_looks():
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("w_v_only").run())
    assert any(text.W_V_ONLY in i.value for i in at.info)
    ok(at.button(key="learn_train").click().run())
    run = at.session_state["learn_run"][1]
    assert (run.losses == run.losses[0]).all()


def test_a_changed_scenario_marks_the_run_stale_and_cannot_be_loaded():
    at = on_learn()
    ok(at.button(key="learn_train").click().run())
    at.session_state[state.SCENARIO] = replace(at.session_state[state.SCENARIO],
                                               temperature=2.0)
    ok(at.run())
    assert any(text.STALE in i.value for i in at.info)
    assert at.button(key="learn_load").disabled


@pytest.mark.parametrize("preset", ["gqa_8_2", "rope_shift", "alibi_local", "qk_norm_tamed",
                                    "softcap_2", "translation", "cat_sat"])
def test_training_works_on_the_modern_and_cross_variants(preset):
    at = on_learn(preset)
    ok(at.button(key="learn_train").click().run())
    assert not at.error, [e.value for e in at.error]
    assert "learn_fig_training" in chart_keys(at)


@pytest.mark.parametrize("preset", ["bahdanau", "seed_001_causal"])
def test_scenarios_without_projections_say_what_learn_trains(preset):
    at = on_learn(preset)
    assert any(text.NO_PROJECTIONS in i.value for i in at.info)


def test_the_step_limit_is_the_widgets_bound_and_stated():
    at = on_learn()
    steps = at.number_input(key="learn_steps")
    assert steps.max == MAX_STEPS and str(MAX_STEPS) in steps.help
