"""The Playground's menu of steps (scenarios/variants/steps.menu): every step it offers, added
with its defaults to a scenario of composed steps, leaves every query a key to attend to (a
default that masks every key would draw an empty map of zeros)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.core import steps as S
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario, with_variant
from attnviz.scenarios.variants import steps as listed


@pytest.mark.parametrize("name", sorted(listed.menu()))
def test_every_step_the_menu_offers_keeps_every_row_of_weights(name):
    scenario = with_variant(PRESETS["seed_000"].build(), "steps")
    steps = listed.with_names(scenario.param("steps"), [name])
    scenario = replace(scenario, params={**scenario.params, "steps": steps})
    weights = run_scenario(scenario).attention.weights
    assert np.all((weights > 0).any(axis=-1)), weights


def test_a_step_the_menu_does_not_offer_stays_through_a_menu_edit():
    kept = (S.Padding(valid_len=3), S.CustomMask(allowed_pairs=((True, True), (True, True))))
    listed_now = listed.with_names(kept, [])
    assert [type(s) for s in listed_now] == [S.Padding, S.CustomMask]
    listed_now = listed.with_names(kept, ["causal"])
    assert sorted(s.name for s in listed_now) == ["causal", "custom_mask", "padding"]
    assert next(s for s in listed_now if s.name == "padding").valid_len == 3
