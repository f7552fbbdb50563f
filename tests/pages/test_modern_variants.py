"""AppTest: the modern variants (RoPE, GQA/MQA, ALiBi, soft-capping, QK-norm) are drawn by the
Playground when picked in the existing variant picker (with their default settings) and from
their presets."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_z_by_key, open_page

from attnviz import PRESETS, MultiHeadResult, run_scenario
from attnviz.scenarios.scenario import with_variant

NEW = ("rope", "gqa", "alibi", "softcap", "qk_norm")
TOL = {"rtol": 1e-12, "atol": 1e-15}


def assert_drawn(at, expected):
    """The Playground's charts hold the expected weights and output: one weights chart for a
    single head, one per head (and the output after W_O) for a multi-head result."""
    if isinstance(expected, MultiHeadResult):
        for h in range(expected.n_heads):
            np.testing.assert_allclose(chart_z_by_key(at, f"playground_fig_head_{h}"),
                                       expected.weights[h], **TOL)
        np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_multi_head_output"),
                                   expected.output, **TOL)
    else:
        np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_weights"), expected.weights,
                                   **TOL)
        np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_output"), expected.output,
                                   **TOL)


@pytest.mark.parametrize("key", NEW)
def test_the_playground_draws_each_new_variant_picked_with_its_defaults(key):
    at = open_page("playground")
    at.selectbox(key="playground_variant_v0").set_value(key).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["scenario"].variant == key
    assert_drawn(at, run_scenario(with_variant(PRESETS["seed_000"].build(), key)).attention)


@pytest.mark.parametrize("preset", ["rope_shift", "gqa_8_2", "alibi_local", "softcap_2",
                                    "qk_norm_tamed"])
def test_each_new_preset_loads_from_home_and_draws(preset):
    at = open_page()
    at.button(key=f"home_load_{preset}").click().run()
    assert not at.exception, [e.message for e in at.exception]
    scenario = at.session_state["scenario"]
    assert scenario.variant == PRESETS[preset].build().variant
    assert_drawn(at, run_scenario(scenario).attention)
