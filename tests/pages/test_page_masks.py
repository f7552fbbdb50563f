"""AppTests of the Masks page: every mask kind, its figures, fully masked rows, the custom grid."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import (
    chart_keys,
    chart_specs,
    chart_z_by_key,
    decode,
    edit_cells,
    open_page,
)

from attnviz import (
    PRESETS,
    causal_mask,
    padding_mask,
    run_scenario,
    scaled_dot_product_attention,
    softmax,
    window_mask,
)
from attnviz.teach.text import common
from attnviz.teach.text import masks as text

CHARTS = ["masks_fig_mask", "masks_fig_masked", "masks_fig_weights", "masks_fig_nomask"]
SEED_000 = PRESETS["seed_000"].build()
SEED_000_RES = run_scenario(SEED_000).attention  # no mask


def vkey(at, name: str) -> str:
    return f"{name}_v{at.session_state['editor_version']}"


def pick_kind(at, kind: str):
    at.radio(key="masks_kind").set_value(kind).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def mask_z(at) -> np.ndarray:
    return chart_z_by_key(at, "masks_fig_mask")


def weights_z(at) -> np.ndarray:
    return chart_z_by_key(at, "masks_fig_weights")


def expected(mask) -> object:
    """The core's result for seed 000's q, k, v under ``mask``."""
    r = SEED_000_RES
    return scaled_dot_product_attention(r.q, r.k, r.v, mask=mask)


def load_preset(at, key: str):
    at.selectbox(key="sidebar_preset").set_value(key)
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.fixture
def at():
    return open_page("masks")


def test_smoke_no_mask(at):
    assert chart_keys(at) == CHARTS
    assert not at.warning and not at.error
    np.testing.assert_array_equal(mask_z(at), np.ones((4, 4)))
    np.testing.assert_array_equal(weights_z(at), SEED_000_RES.weights)
    np.testing.assert_array_equal(chart_z_by_key(at, "masks_fig_nomask"), SEED_000_RES.weights)
    assert any(common.FULLY_MASKED_ROW in m.value for m in at.markdown)


def test_causal_mask(at):
    pick_kind(at, "causal")
    assert at.session_state["scenario"].mask_kind == "causal"
    np.testing.assert_array_equal(mask_z(at), causal_mask(4))
    w = weights_z(at)
    np.testing.assert_array_equal(w, expected(causal_mask(4)).weights)
    assert np.all(np.triu(w, 1) == 0) and w[0, 0] == 1
    np.testing.assert_allclose(w.sum(axis=1), 1, rtol=1e-15)
    # masked scores: NaN (drawn grey "−∞" by an overlay trace) exactly where the mask forbids
    masked = chart_z_by_key(at, "masks_fig_masked")
    np.testing.assert_array_equal(np.isnan(masked), ~causal_mask(4))
    overlay = chart_specs(at)[1]["data"][1]
    assert overlay["name"] == "masked"
    # the comparison stays unmasked
    np.testing.assert_array_equal(chart_z_by_key(at, "masks_fig_nomask"), SEED_000_RES.weights)


def test_padding_valid_length(at):
    pick_kind(at, "padding")
    at.slider(key="masks_valid_len").set_value(2).run()
    assert at.session_state["scenario"].valid_len == 2
    np.testing.assert_array_equal(mask_z(at), padding_mask(2, 4, 4))
    w = weights_z(at)
    np.testing.assert_array_equal(w, expected(padding_mask(2, 4, 4)).weights)
    assert np.all(w[:, 2:] == 0)


def test_padding_zero_masks_everything_and_still_draws(at):
    pick_kind(at, "padding")
    at.slider(key="masks_valid_len").set_value(0).run()
    assert not at.exception
    assert [w.value for w in at.warning] == [common.MASKS_ALL_BLOCKED]
    assert chart_keys(at) == CHARTS
    np.testing.assert_array_equal(mask_z(at), np.zeros((4, 4)))
    np.testing.assert_array_equal(weights_z(at), np.zeros((4, 4)))
    rows = at.dataframe[-1].value  # the fully masked rows: weights and outputs all 0
    assert rows.shape == (4, 4 + 3) and (rows.to_numpy() == 0).all()


def test_window(at):
    """The width's one control is the weights chart's own slider (its release
    is checked in the browser, tests/browser/test_drag_window.py): no width slider above."""
    from attnviz.ui import state

    pick_kind(at, "window")
    assert "masks_window" not in [s.key for s in at.slider]
    assert text.WINDOW_ON_CHART in [c.value for c in at.caption]
    at.session_state[state.SCENARIO] = replace(at.session_state[state.SCENARIO], window=0)
    at.run()
    np.testing.assert_array_equal(mask_z(at), np.eye(4))
    np.testing.assert_array_equal(weights_z(at), np.eye(4))
    at.session_state[state.SCENARIO] = replace(at.session_state[state.SCENARIO], window=1)
    at.run()
    np.testing.assert_array_equal(mask_z(at), window_mask(4, width=1))
    np.testing.assert_array_equal(weights_z(at), expected(window_mask(4, width=1)).weights)


def test_window_weights_carry_a_frame_for_every_width(at):
    pick_kind(at, "window")
    spec = chart_specs(at)[chart_keys(at).index("masks_fig_weights")]
    frames = spec["frames"]
    assert [f["name"] for f in frames] == ["0", "1", "2", "3"]
    for width, frame in enumerate(frames):
        np.testing.assert_allclose(decode(frame["data"][0]["z"]),
                                   expected(window_mask(4, width=width)).weights, rtol=1e-12)
    assert spec["sliderEvents"]  # releasing the slider reports the width


def test_custom_grid_starts_from_the_previous_mask_and_takes_edits(at):
    pick_kind(at, "causal")
    pick_kind(at, "custom")
    sc = at.session_state["scenario"]
    np.testing.assert_array_equal(sc.custom_mask, causal_mask(4))
    edit_cells(at, vkey(at, "masks_custom"), {0: {"3:word_4": True}})
    assert not at.exception
    grid = causal_mask(4)
    grid[0, 3] = True
    np.testing.assert_array_equal(at.session_state["scenario"].custom_mask, grid)
    np.testing.assert_array_equal(mask_z(at), grid)
    np.testing.assert_array_equal(weights_z(at), expected(grid).weights)


def test_custom_row_fully_masked_warns_and_shows_zero_row(at):
    pick_kind(at, "custom")
    names = ["0:word_1", "1:word_2", "2:word_3", "3:word_4"]
    edit_cells(at, vkey(at, "masks_custom"), {2: {n: False for n in names}})
    assert not at.exception
    assert [w.value for w in at.warning] == [text.BLOCKED_ROWS.format(rows="2")]
    grid = np.ones((4, 4), bool)
    grid[2] = False
    np.testing.assert_array_equal(mask_z(at), grid)
    w = weights_z(at)
    np.testing.assert_array_equal(w, expected(grid).weights)
    assert (w[2] == 0).all() and np.allclose(w[[0, 1, 3]].sum(axis=1), 1)
    rows = at.dataframe[-1].value
    assert list(rows.index) == ["2:word_3"] and (rows.to_numpy() == 0).all()
    shapes = chart_specs(at)[2]["layout"]["shapes"]  # the zero row is outlined
    assert [(s["y0"], s["y1"]) for s in shapes] == [(1.5, 2.5)]


def test_custom_fill_all_blocked(at):
    pick_kind(at, "custom")
    at.button(key="masks_fill_blocked").click().run()
    assert not at.exception
    assert common.MASKS_ALL_BLOCKED in [w.value for w in at.warning]
    assert chart_keys(at) == CHARTS
    np.testing.assert_array_equal(weights_z(at), np.zeros((4, 4)))
    at.button(key="masks_fill_attend").click().run()
    assert not at.warning
    np.testing.assert_array_equal(weights_z(at), SEED_000_RES.weights)


def test_custom_edit_survives_a_page_switch(at):
    pick_kind(at, "custom")
    edit_cells(at, vkey(at, "masks_custom"), {1: {"0:word_1": False}})
    at.switch_page("pages/step_by_step.py").run()
    assert not at.exception
    chain = next(d.value for d in at.dataframe if "may attend" in d.value.columns)
    assert chain["may attend"].tolist() == [True] * 4  # query 0 is untouched
    at.selectbox(key="step_by_step_query").set_value(1).run()
    chain = next(d.value for d in at.dataframe if "may attend" in d.value.columns)
    assert chain["may attend"].tolist() == [False, True, True, True]
    at.switch_page("pages/masks.py").run()
    assert not at.exception
    assert at.radio(key="masks_kind").value == "custom"
    assert mask_z(at)[1, 0] == 0 and mask_z(at).sum() == 15
    editor = next(d for d in at.dataframe if d.proto.id.endswith(vkey(at, "masks_custom")))
    assert editor.value.to_numpy().sum() == 15 and not editor.value.iloc[1, 0]  # shows the edit
    # a second edit on top of the first keeps both
    edit_cells(at, vkey(at, "masks_custom"), {3: {"2:word_3": False}})
    grid = np.ones((4, 4), bool)
    grid[1, 0] = grid[3, 2] = False
    np.testing.assert_array_equal(at.session_state["scenario"].custom_mask, grid)


def test_causal_variant_adds_its_own_mask(at):
    load_preset(at, "cat_sat")
    assert any(m.value == text.CAUSAL_VARIANT for m in at.info)
    np.testing.assert_array_equal(mask_z(at), causal_mask(6))  # user mask "none"
    pick_kind(at, "padding")
    at.slider(key="masks_valid_len").set_value(3).run()
    both = causal_mask(6) & padding_mask(3, 6, 6)
    np.testing.assert_array_equal(mask_z(at), both)
    res = run_scenario(at.session_state["scenario"]).attention
    np.testing.assert_array_equal(weights_z(at), res.weights)
    assert (weights_z(at)[:, 3:] == 0).all()
    # without any mask: the plain softmax of the scaled scores (no causal either)
    np.testing.assert_array_equal(chart_z_by_key(at, "masks_fig_nomask"), softmax(res.scaled))
    assert (chart_z_by_key(at, "masks_fig_nomask")[0, 1:] > 0).all()


def test_direct_preset_and_multi_head(at):
    load_preset(at, "seed_001_causal")  # 2 queries x 2 keys, causal variant
    np.testing.assert_array_equal(mask_z(at), causal_mask(2))
    pick_kind(at, "padding")
    at.slider(key="masks_valid_len").set_value(1).run()
    np.testing.assert_array_equal(weights_z(at), [[1, 0], [1, 0]])
    load_preset(at, "seed_004_two_heads")
    res = run_scenario(PRESETS["seed_004_two_heads"].build()).attention
    at.selectbox(key="masks_head").set_value(1).run()
    np.testing.assert_array_equal(weights_z(at), res.weights[1])


def test_a_custom_grid_of_the_wrong_shape_is_reset_with_a_message(at):
    at.session_state["scenario"] = replace(at.session_state["scenario"], mask_kind="custom",
                                           custom_mask=np.zeros((2, 3), bool))
    at.run()
    assert not at.exception and not at.error
    assert [m.value for m in at.info] == [text.CUSTOM_RESET]
    np.testing.assert_array_equal(at.session_state["scenario"].custom_mask, np.ones((4, 4)))
    np.testing.assert_array_equal(weights_z(at), SEED_000_RES.weights)


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_draws_four_charts_with_the_core_mask(at, key):
    load_preset(at, key)
    assert not at.error and chart_keys(at) == CHARTS
    res = run_scenario(PRESETS[key].build())
    np.testing.assert_array_equal(mask_z(at), res.mask)
    weights = res.attention.weights
    np.testing.assert_array_equal(weights_z(at), weights[0] if weights.ndim == 3 else weights)
