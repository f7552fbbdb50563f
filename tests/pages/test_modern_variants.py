"""AppTest: the modern variants (RoPE, GQA/MQA, ALiBi, soft-capping, QK-norm) are drawn by the
Playground when picked in the existing variant picker (with their default settings) and from
their presets."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_z_by_key, open_page, set_focus

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


@pytest.mark.parametrize("preset", ["rope_shift", "gqa_8_2", "alibi_local", "capped_at_2",
                                    "qk_norm_tamed"])
def test_each_new_preset_loads_from_home_and_draws(preset):
    at = open_page()
    set_focus(at, "all")  # the full view: every head's chart
    at.button(key=f"home_load_{preset}").click().run()
    assert not at.exception, [e.message for e in at.exception]
    scenario = at.session_state["scenario"]
    assert scenario.variant == PRESETS[preset].build().variant
    assert_drawn(at, run_scenario(scenario).attention)


def _param_widget(at, name: str):
    """The Playground's widget of the variant's setting ``name`` (key prefix_param_name_vN)."""
    version = at.session_state["editor_version"]
    key = f"playground_param_{name}_v{version}"
    for kind in ("number_input", "selectbox", "toggle"):
        found = [w for w in at.get(kind) if getattr(w, "key", None) == key]
        if found:
            return found[0]
    raise AssertionError(f"no widget {key}")


def _rope_shift_on_playground():
    at = open_page()
    set_focus(at, "all")  # the full view
    at.button(key="home_load_rope_shift").click().run()
    at.switch_page("pages/playground.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_the_variants_own_settings_have_controls_on_the_playground():
    """Every Param of the variant gets a widget showing the scenario's value."""
    at = _rope_shift_on_playground()
    sc = at.session_state["scenario"]
    for p in sc.spec.params:
        if isinstance(p.default, tuple):  # a vector: shown, not edited (test_rope_scaled_pages)
            continue
        assert _param_widget(at, p.name).value == sc.param(p.name)
    assert _param_widget(at, "rope_base").value == 4.0  # the preset's own, not the default


def test_a_position_offset_changes_nothing_and_the_base_changes_the_weights():
    """RoPE's lesson on screen: shifting every position keeps the weights; the base does not."""
    at = _rope_shift_on_playground()
    before = chart_z_by_key(at, "playground_fig_weights")
    _param_widget(at, "rope_offset").set_value(7).run()
    sc = at.session_state["scenario"]
    assert sc.params["rope_offset"] == 7 and not at.exception
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_weights"), before,
                               rtol=0, atol=1e-12)
    _param_widget(at, "rope_base").set_value(10000.0).run()
    after = chart_z_by_key(at, "playground_fig_weights")
    assert at.session_state["scenario"].params["rope_base"] == 10000.0
    assert np.max(np.abs(after - before)) > 1e-3
    np.testing.assert_allclose(after, run_scenario(at.session_state["scenario"]).attention.weights,
                               **TOL)


def test_a_choice_setting_is_a_select_box():
    at = _rope_shift_on_playground()
    _param_widget(at, "rope_layout").set_value("interleaved").run()
    assert at.session_state["scenario"].params["rope_layout"] == "interleaved"
    assert not at.exception
