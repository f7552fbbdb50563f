"""AppTest: the Gradients page — every loss on every kind of variant, the numbers it sends to
the charts against the backward pass computed here, the trace of one dS̃_ij, the √d_k sweep,
and bad targets explained in words."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import chart_keys, decode, grid_state, open_page, spec_by_key, switch_to

from attnviz.scenarios.gradients import (
    Loss,
    gradients,
    norm_sweep,
    self_output,
    target_pattern,
)
from attnviz.scenarios.scenario import position_labels
from attnviz.teach.text import gradients as text
from attnviz.ui import state

LOSSES = ["output_mse", "pattern_ce", "given"]


def z(at, key: str) -> np.ndarray:
    return decode(spec_by_key(at, key)["data"][0]["z"]).astype(float)


def on_gradients(preset: str | None = None):
    at = open_page("home")
    if preset:
        at.selectbox(key="sidebar_preset").set_value(preset)
        at.button(key="sidebar_load_preset").click().run()
    switch_to(at, "gradients")
    assert not at.exception, [e.message for e in at.exception]
    return at


def edit_grid(at, key: str, edits: dict) -> None:
    """Type ``edits`` ({row: {column: text}}) into the grid editor ``key`` and run."""
    widget = f"{key}_v{at.session_state[state.EDITOR_VERSION]}"
    at.session_state[widget] = grid_state(edits)
    at.run()
    assert not at.exception, [e.message for e in at.exception]


def test_the_default_page_shows_each_gradient_beside_its_matrix():
    at = on_gradients()
    sc = at.session_state[state.SCENARIO]
    g = gradients(sc, Loss("output_mse", self_output(sc)))
    keys = chart_keys(at)
    for name in ("output", "weights", "scaled", "q", "k", "v", "param_w_q", "param_w_k",
                 "param_w_v", "param_x"):
        assert f"gradients_{name}_fwd" in keys and f"gradients_{name}_grad" in keys, name
    np.testing.assert_allclose(z(at, "gradients_scaled_grad"), g.attention.d_scaled[0],
                               rtol=1e-6)
    np.testing.assert_allclose(z(at, "gradients_param_w_q_grad"), g.params["w_q"], rtol=1e-6)
    spec = spec_by_key(at, "gradients_weights_grad")["data"][0]
    assert spec["zmid"] == 0 and spec["zmin"] == -spec["zmax"]  # diverging, centred at 0
    assert any(text.LOSS_VALUE.format(value=f"{g.loss:.6g}") in m.value for m in at.markdown)


@pytest.mark.parametrize("preset", ["gqa_8_2", "bahdanau", "rope_shift", "seed_001_causal",
                                    "alibi_local", "capped_at_2", "qk_norm_tamed", "translation"])
def test_every_loss_on_every_kind_of_variant(preset):
    at = on_gradients(preset)
    for kind in LOSSES:
        at.selectbox(key="gradients_loss").set_value(kind).run()
        assert not at.exception, (kind, [e.message for e in at.exception])
        assert not at.error, (kind, [e.value for e in at.error])
        assert "gradients_weights_grad" in chart_keys(at)


def test_gqa_shows_the_shared_key_value_head_of_the_chosen_head():
    at = on_gradients("gqa_8_2")
    at.selectbox(key="gradients_head").set_value(5).run()
    sc = at.session_state[state.SCENARIO]
    g = gradients(sc, Loss("output_mse", self_output(sc)))
    np.testing.assert_allclose(z(at, "gradients_k_grad"), g.attention.d_k[1], rtol=1e-6)
    np.testing.assert_allclose(z(at, "gradients_q_grad"), g.attention.d_q[5], rtol=1e-6)
    assert any("key/value head 1" in c.value for c in at.caption)


def test_a_target_pattern_on_a_masked_key_is_explained_not_raised():
    at = on_gradients("seed_001_causal")
    at.selectbox(key="gradients_loss").set_value("pattern_ce").run()
    at.selectbox(key="gradients_pattern").set_value("first").run()
    assert not at.error  # the first key is visible to every causal query
    at.selectbox(key="gradients_pattern").set_value("custom").run()
    sc = at.session_state[state.SCENARIO]
    key = position_labels(sc.key_tokens)[1]
    edit_grid(at, "gradients_edit_pattern_ce", {0: {key: "1"}})  # query 0 → key 1, masked
    assert not at.exception
    assert any("wants weight on key 1 of query 0" in e.value for e in at.error), at.error


def test_the_loss_follows_an_edited_target():
    at = on_gradients()
    edit_grid(at, "gradients_edit_output_mse", {1: {"o2": "0.5"}, 3: {"o0": "-1e-3"}})
    sc = at.session_state[state.SCENARIO]
    target = self_output(sc)  # the page's starting target, with the two cells typed
    target[1, 2], target[3, 0] = 0.5, -1e-3
    g = gradients(sc, Loss("output_mse", target))
    assert any(text.LOSS_VALUE.format(value=f"{g.loss:.6g}") in m.value for m in at.markdown)
    np.testing.assert_allclose(z(at, "gradients_output_grad"), g.attention.d_output,
                               rtol=1e-6)
    switch_to(at, "home")
    switch_to(at, "gradients")  # the edited target survives a page switch
    assert any(text.LOSS_VALUE.format(value=f"{g.loss:.6g}") in m.value for m in at.markdown)


def test_trace_writes_one_d_s_with_its_numbers():
    at = on_gradients()
    at.selectbox(key="gradients_trace_i_4").set_value(2).run()
    at.selectbox(key="gradients_trace_j_4").set_value(1).run()
    sc = at.session_state[state.SCENARIO]
    g = gradients(sc, Loss("output_mse", self_output(sc)))
    want = f"{g.attention.d_scaled[0, 2, 1]:.5g}".replace("e", r"\mathrm{e}")
    assert any(r"d\tilde S_{ij}" in m.value and f"= {want} \\end" in m.value for m in at.latex)


def test_the_sweep_shows_the_norm_and_the_gradient_at_the_chosen_scale():
    at = on_gradients()
    sc = at.session_state[state.SCENARIO]
    loss = Loss("output_mse", self_output(sc))
    spec = spec_by_key(at, "gradients_fig_sweep")
    base = 1 / np.sqrt(3)
    scales = [m * base for m in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32)]
    np.testing.assert_allclose(decode(spec["data"][0]["y"]), norm_sweep(sc, loss, "scale",
                                                                         scales), rtol=1e-9)
    at.select_slider(key="gradients_sweep_pick").set_value(8.0).run()
    sharp = gradients(replace(sc, scale_mode="custom", custom_scale=8 * base), loss)
    np.testing.assert_allclose(z(at, "gradients_fig_sweep_heatmap"),
                               sharp.attention.d_scaled[0], rtol=1e-6, atol=1e-12)


def test_patterns_offered_are_the_ones_drawn():
    at = on_gradients()
    at.selectbox(key="gradients_loss").set_value("pattern_ce").run()
    sc = at.session_state[state.SCENARIO]
    at.selectbox(key="gradients_pattern").set_value("uniform").run()
    g = gradients(sc, Loss("pattern_ce", target_pattern("uniform", np.ones((4, 4), bool))))
    np.testing.assert_allclose(z(at, "gradients_weights_grad"), g.attention.d_weights[0],
                               rtol=1e-6)
    # uniform target over 4 keys: L = −Σ_i Σ_j ¼ log P_ij
    assert g.loss == pytest.approx(-np.sum(np.log(g.forward.attention.weights)) / 4, rel=1e-12)
