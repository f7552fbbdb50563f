"""AppTest: the Playground's menu of steps for a scenario of composed steps (a multiselect in
the sidebar): a step chosen joins the list with its defaults and the charts follow, one dropped
leaves, a step's own settings stay through an edit, and an edit that makes no list is refused in
a sentence with the list kept; any other variant has no menu."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import chart_z_by_key, open_page

from attnviz.core import steps as S
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario, with_variant
from attnviz.scenarios.variants import steps as listed
from attnviz.teach.text import common as text

MENU = "playground_steps_menu_v0"


def menu(at):
    return [w for w in at.multiselect if w.key == MENU]


def on_steps(at, steps=()):
    """The Playground with the current scenario switched to composed steps holding ``steps``."""
    at.selectbox(key="playground_variant_v0").set_value("steps").run()
    assert at.session_state["scenario"].variant == "steps"
    if steps:
        at.session_state["scenario"] = replace(at.session_state["scenario"],
                                               params={"steps": tuple(steps)})
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def names(at):
    return [s.name for s in at.session_state["scenario"].param("steps")]


def test_a_step_chosen_joins_the_list_and_the_charts_follow():
    at = open_page("playground")
    assert menu(at) == []  # another variant has no menu
    at = on_steps(at)
    [widget] = menu(at)
    assert widget.value == []
    assert "Prefix-LM mask" in widget.options  # a step module of its own is offered
    assert "Scale and temperature" not in widget.options  # the scale mode and τ
    assert "Bias" not in widget.options  # a table of its own: not from defaults
    widget.set_value(["causal", "softcap"]).run()
    assert not at.exception, [e.message for e in at.exception]
    assert names(at) == ["softcap", "causal"]  # the score step before the mask part
    scenario = at.session_state["scenario"]
    weights = run_scenario(scenario).attention.weights
    assert np.all(np.triu(weights, 1) == 0)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_weights"), weights, atol=0)
    menu(at)[0].set_value(["softcap"]).run()  # dropped
    assert names(at) == ["softcap"]


def test_a_step_keeps_its_settings_when_another_joins():
    at = on_steps(open_page("playground"), (S.Window(2), S.SoftCap(3.0)))
    assert menu(at)[0].value == ["window", "softcap"]
    menu(at)[0].set_value(["window", "softcap", "rope"]).run()
    steps = at.session_state["scenario"].param("steps")
    assert [s.name for s in steps] == ["rope", "window", "softcap"]  # the rest keep their place
    assert steps[1].width == 2 and steps[2].cap == 3.0


def test_a_list_that_cannot_be_is_refused_in_a_sentence():
    at = on_steps(open_page("playground"), (S.SinkSoftmax(),))
    menu(at)[0].set_value(["sink_softmax", "softmax"]).run()
    assert not at.exception, [e.message for e in at.exception]
    assert names(at) == ["sink_softmax"]  # the list stays
    assert menu(at)[0].value == ["sink_softmax"]  # and so does the menu
    said = [w.value for w in at.warning]
    assert text.STEPS_MENU_REFUSED.format(
        reason="a list of steps has at most one normaliser step") in said


def test_every_step_the_menu_offers_runs_alone():
    base = with_variant(PRESETS["seed_000"].build(), "steps")
    for name in listed.menu():
        weights = run_scenario(replace(base, params={"steps": listed.with_names((), [name])})
                               ).attention.weights
        assert weights.shape == (4, 4) and np.isfinite(weights).all(), name


def test_the_menu_model_refuses_unknown_steps_in_a_sentence():
    with pytest.raises(ValueError, match="the menu has no step scale; it offers"):
        listed.with_names((), ["scale"])
    kept = (S.Causal(), S.Window(3))
    assert listed.with_names(kept, ["causal", "window"])[1] is kept[1]
