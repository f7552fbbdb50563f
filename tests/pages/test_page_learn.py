"""AppTest: the Learn page — train, the recorded playback figure, the classroom experiments,
loading the trained weights into the scenario, and settings that cannot train."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
import streamlit as st
from apptest_helpers import chart_keys, chart_z_by_key, decode, open_page, spec_by_key, switch_to

from attnviz.scenarios import limits
from attnviz.scenarios.budget import BUDGET, STOP
from attnviz.scenarios.gradients import Loss, previous_token_pattern, target_pattern
from attnviz.scenarios.learn import MAX_STEPS, TRAINABLE, train
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import learn as text
from attnviz.ui import state


def ok(at):
    assert not at.exception, [e.message for e in at.exception]
    return at


def last_run(at):
    """The page's last training run, as recorded so far."""
    return at.session_state["learn_run"]["training"].result()


def on_learn(preset: str | None = None):
    at = open_page("home")
    if preset:
        at.selectbox(key="sidebar_preset").set_value(preset)
        at.button(key="sidebar_load_preset").click().run()
    return ok(switch_to(at, "learn"))


def test_the_page_opens_on_a_learnable_task_with_the_target_and_the_weights_shown():
    at = on_learn()
    assert at.selectbox(key="learn_task").value == "self"
    assert any(text.NO_RUN in c.value for c in at.caption)
    assert not [i for i in at.info if text.POSITIONS_HINT in i.value]  # no warning first
    sc = at.session_state[state.SCENARIO]
    np.testing.assert_array_equal(chart_z_by_key(at, "learn_fig_target"), np.eye(4))
    np.testing.assert_allclose(chart_z_by_key(at, "learn_fig_now"),
                               run_scenario(sc).attention.weights, rtol=1e-12)
    ok(at.button(key="learn_train").click().run())
    run = last_run(at)
    assert run.losses[0] > 10 and run.losses[-1] < 0.05  # learned within the default steps
    assert "learn_fig_target" not in chart_keys(at)  # the run's playback replaces them


def test_training_records_the_run_the_figure_plays_back():
    at = on_learn()
    ok(at.button(key="learn_train").click().run())
    sc = at.session_state[state.SCENARIO]
    run = train(sc, Loss("pattern_ce", target_pattern("self", np.ones((4, 4), bool))),
                steps=200, lr=0.05)
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
    run = last_run(at)
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
    run = last_run(at)
    assert np.isfinite(run.final.w_v).all() and len(run.losses) < 101


def test_the_saturated_experiment_barely_learns():
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("saturated").run())
    ok(at.button(key="learn_train").click().run())
    run = last_run(at)
    assert abs(run.losses[-1] - run.losses[0]) < 1e-6 * run.losses[0]


def test_w_v_alone_cannot_change_where_the_head_looks():
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("w_v_only").run())
    assert any(text.W_V_ONLY in i.value for i in at.info)
    ok(at.button(key="learn_train").click().run())
    run = last_run(at)
    assert (run.losses == run.losses[0]).all()


def test_a_changed_scenario_marks_the_run_stale_and_cannot_be_loaded():
    at = on_learn()
    ok(at.button(key="learn_train").click().run())
    at.session_state[state.SCENARIO] = replace(at.session_state[state.SCENARIO],
                                               temperature=2.0)
    ok(at.run())
    assert any(text.STALE in i.value for i in at.info)
    assert at.button(key="learn_load").disabled


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_trains_or_says_why_it_cannot(preset):
    """Every preset (the browser test trains one preset per variant): Train draws a run, or
    the page says there are no projections to train."""
    at = on_learn(preset)
    if any(text.NO_PROJECTIONS in i.value for i in at.info):
        assert "learn_train" not in [b.key for b in at.button]  # nothing to train: said
        return
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


# ------------------------------------------------------------ the compute budget of one click

def limits_scenario():
    """The editing limits (issue 26): 256 tokens, 16 heads, widths 128, positions on."""
    t, d, w = limits.MAX_TOKENS, limits.MAX_D_MODEL, limits.MAX_WIDTH
    rng = np.random.default_rng(0)
    sc = replace(default_scenario(), variant="multi_head", n_heads=limits.MAX_HEADS,
                 use_pe=True)
    return replace(sc, tokens=tuple(f"t{i}" for i in range(t)), x=rng.normal(size=(t, d)),
                   w_q=rng.normal(size=(d, w)) / 8, w_k=rng.normal(size=(d, w)) / 8,
                   w_v=rng.normal(size=(d, w)) / 8, w_o=rng.normal(size=(w, d)) / 8)


def on_learn_at_the_limits(monkeypatch, seconds: float):
    monkeypatch.setattr(limits, "TRAIN_SECONDS", seconds)  # read by the page at each run
    at = on_learn()
    at.session_state[state.SCENARIO] = limits_scenario()
    ok(at.run())
    at.multiselect(key="learn_fields").set_value(list(TRAINABLE))
    return ok(at.number_input(key="learn_steps").set_value(MAX_STEPS).run())


def test_a_click_at_the_limits_stops_within_the_budget_and_keeps_the_steps(monkeypatch):
    budget = 2.0
    at = on_learn_at_the_limits(monkeypatch, budget)
    assert at.multiselect(key="learn_fields").value == list(TRAINABLE)
    assert f"{budget:g} s" in at.number_input(key="learn_steps").help
    began = time.monotonic()
    ok(at.button(key="learn_train").click().run())
    took = time.monotonic() - began
    run, seconds = last_run(at), at.session_state["learn_run"]["seconds"]
    assert run.paused == BUDGET and run.stopped == "" and run.steps == MAX_STEPS
    done = len(run.losses) - 1
    assert 0 < done < MAX_STEPS
    # the training ended within the budget (give or take one step's variation), when the
    # next step would not have ended in time; the click took little more
    assert 0.5 * budget < seconds < budget + 0.5, seconds
    assert took < budget + 6.0, took  # the page's own run and the figure's payload
    assert any(text.BUDGET_OUT.format(budget=f"{budget:g}", done=done, steps=MAX_STEPS)
               == w.value for w in at.warning), [w.value for w in at.warning]
    assert any(f"Trained {done} steps" in s.value for s in at.success)
    spec = spec_by_key(at, "learn_fig_training")  # the partial result is drawn
    np.testing.assert_allclose(decode(spec["data"][0]["y"]), run.losses, rtol=1e-12)
    assert spec["frames"][-1]["name"] == str(done)
    assert not at.button(key="learn_load").disabled  # and can be loaded
    # Continue goes on from the last step (same numbers), within another budget
    ok(at.button(key="learn_continue").click().run())
    more, total = last_run(at), at.session_state["learn_run"]["seconds"]
    assert len(more.losses) - 1 > done
    np.testing.assert_array_equal(more.losses[:done + 1], run.losses)
    assert 1.5 * budget < total < 2 * budget + 1.0, total
    assert more.paused == BUDGET


def test_without_the_budget_the_click_would_run_every_step(monkeypatch):
    """The budget is what stops the run above: with a budget far beyond the run, a short run
    at the limits takes all its steps and says nothing about a budget."""
    at = on_learn_at_the_limits(monkeypatch, 600.0)
    ok(at.number_input(key="learn_steps").set_value(5).run())
    ok(at.button(key="learn_train").click().run())
    run = last_run(at)
    assert run.paused == "" and len(run.losses) == 6
    assert not at.warning
    assert not [b for b in at.button if b.key == "learn_continue"]


def test_an_interrupted_run_shows_the_steps_taken_and_goes_on(monkeypatch):
    """A run ended inside a progress update (Streamlit raises there on Stop, another control
    or leaving the page; st.stop() raises the same way) keeps the steps taken; the page says so
    and offers Continue, which takes the run to its end with the numbers of one run."""
    at = on_learn()
    ok(at.selectbox(key="learn_experiment").set_value("learn_previous").run())
    original = st.delta_generator.DeltaGenerator.progress

    def progress(self, value, text=None):  # the bar's updates (st.progress itself is bound)
        if value > 0:
            st.stop()  # ends the script run here, as a rerun request does
        return original(self, value, text=text)

    monkeypatch.setattr(st.delta_generator.DeltaGenerator, "progress", progress)
    ok(at.button(key="learn_train").click().run())
    monkeypatch.undo()
    part = last_run(at)
    assert part.paused == STOP and len(part.losses) == 2  # one step, then the interruption
    ok(at.run())
    assert any(text.PAUSED.format(done=1, steps=200) == w.value for w in at.warning), [
        w.value for w in at.warning]
    ok(at.button(key="learn_continue").click().run())
    run = last_run(at)
    sc = at.session_state[state.SCENARIO]
    whole = train(sc, Loss("pattern_ce", previous_token_pattern(4, 4)), steps=200, lr=0.05)
    np.testing.assert_array_equal(run.losses, whole.losses)
    assert run.paused == ""
    assert not [b for b in at.button if b.key == "learn_continue"]
