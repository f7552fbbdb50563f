"""AppTest: the Multi-head page — one chart per head with the core's numbers, the head-count
control and its messages, W_O and the head mix, direct mode."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_z_by_key, edit_cells, grids, open_page, spec_by_key

import attnviz
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import multi_head as text
from attnviz.ui import multi_head_view

PAGE = "multi_head"


def load_preset(at, key: str):
    """Load a preset through the shared sidebar, as a user would."""
    at.selectbox(key="sidebar_preset").set_value(key).run()
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def head_keys(at) -> list[str]:
    return [k for k in chart_keys(at) if k.startswith("multi_head_fig_head_")]


def expected_mha(key: str, n_heads: int | None = None, **changes):
    """Multi-head attention computed directly by the core on a preset's data."""
    sc = PRESETS[key].build()
    x = sc.x + (attnviz.sinusoidal_positional_encoding(sc.t, sc.d_model) if sc.use_pe else 0)
    kw = dict(causal=sc.variant == "causal")
    kw.update(changes)
    w_o = kw.pop("w_o", sc.w_o)
    return attnviz.multi_head_attention(x, None, sc.w_q, sc.w_k, sc.w_v, w_o,
                                        n_heads=n_heads or sc.n_heads, **kw)


def test_a_one_head_scenario_opens_with_several_heads_that_differ_and_stays_one_head():
    at = open_page(PAGE)
    assert at.number_input(key="multi_head_n_heads").value == 3  # seed 000: widths 3
    assert head_keys(at) == [f"multi_head_fig_head_{h}" for h in range(3)]
    expected = expected_mha("seed_000", 3)
    weights = [chart_z_by_key(at, f"multi_head_fig_head_{h}") for h in range(3)]
    for h in range(3):
        np.testing.assert_allclose(weights[h], expected.weights[h], atol=1e-15)
    for a in range(3):  # patterns that differ: the page has something to compare
        for b in range(a):
            assert np.abs(weights[a] - weights[b]).max() > 0.2
    assert at.session_state["scenario"].n_heads == 1  # shown, not stored
    assert text.OPENING_HEADS.format(heads="3 heads", stored="1 head") in [
        c.value for c in at.caption]


def test_default_scenario_one_head_equals_single_head_attention():
    at = open_page(PAGE)
    at.number_input(key="multi_head_n_heads").set_value(1).run()
    assert at.header[0].value == text.HEADER
    assert [t.value for t in at.text if t.value.startswith("Q/K width")] == [
        "Q/K width 3 = 1 head × d_k 3;  V width 3 = 1 head × d_v 3.  Valid head counts: 1, 3"]
    assert head_keys(at) == ["multi_head_fig_head_0"]
    sc = PRESETS["seed_000"].build()
    single = attnviz.self_attention(sc.x, sc.w_q, sc.w_k, sc.w_v)
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_head_0"), single.weights,
                               atol=1e-15)
    # W_O is the identity in this preset: the output is the concatenation = the single head
    for key in ("multi_head_fig_output", "multi_head_fig_concat"):
        np.testing.assert_allclose(chart_z_by_key(at, key), single.output, atol=1e-15)


def test_seed_004_two_heads_preset_heads_concat_and_mix():
    at = load_preset(open_page(PAGE), "seed_004_two_heads")
    assert at.number_input(key="multi_head_n_heads").value == 2
    assert head_keys(at) == ["multi_head_fig_head_0", "multi_head_fig_head_1"]
    expected = expected_mha("seed_004_two_heads")
    for h in range(2):
        np.testing.assert_allclose(chart_z_by_key(at, f"multi_head_fig_head_{h}"),
                                   expected.weights[h], atol=1e-15)
        np.testing.assert_allclose(chart_z_by_key(at, f"multi_head_fig_out_{h}"),
                                   expected.head_outputs[h], atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_concat"),
                               np.hstack(expected.head_outputs), atol=1e-15)
    mixed = 0.7 * expected.head_outputs[0] - 0.4 * expected.head_outputs[1]  # seed 004's w_h
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_mixed"), mixed, atol=1e-14)
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_head_0").sum(axis=1), 1.0)


@pytest.mark.parametrize("n_heads", [4, 2, 1])
def test_changing_heads_draws_one_chart_per_head_with_the_core_weights(n_heads):
    at = load_preset(open_page(PAGE), "cat_sat")  # widths 4 and 4, causal, PE on
    at.number_input(key="multi_head_n_heads").set_value(n_heads).run()
    assert not at.exception and not at.error
    assert head_keys(at) == [f"multi_head_fig_head_{h}" for h in range(n_heads)]
    assert len([k for k in chart_keys(at) if k.startswith("multi_head_fig_out_")]) == n_heads
    expected = expected_mha("cat_sat", n_heads)
    for h in range(n_heads):
        z = chart_z_by_key(at, f"multi_head_fig_head_{h}")
        np.testing.assert_allclose(z, expected.weights[h], atol=1e-15)
        assert np.all(z[np.triu_indices(6, 1)] == 0)  # the preset's causal mask
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_output"), expected.output,
                               atol=1e-14)
    # cat_sat has one head and opens with 4 (shown, not stored): a count typed is stored
    assert at.session_state["scenario"].n_heads == (1 if n_heads == 4 else n_heads)


def test_invalid_head_count_shows_valid_choices_and_keeps_last_valid():
    at = load_preset(open_page(PAGE), "cat_sat")
    at.number_input(key="multi_head_n_heads").set_value(2).run()
    at.number_input(key="multi_head_n_heads").set_value(3).run()
    assert not at.exception
    assert [e.value for e in at.error] == [text.BAD_HEADS.format(
        n=3, dk=4, dv=4, choices="1, 2, 4", nearest=text.NEAREST_OR.join(["2", "4"]),
        shown="2 heads")]
    assert len(head_keys(at)) == 2  # still drawn with the last valid count
    assert at.session_state["scenario"].n_heads == 2
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_head_1"),
                               expected_mha("cat_sat", 2).weights[1], atol=1e-15)


def test_an_invalid_count_first_keeps_the_heads_the_page_opened_with():
    at = load_preset(open_page(PAGE), "cat_sat")  # one head, opens with 4
    at.number_input(key="multi_head_n_heads").set_value(3).run()
    assert [e.value for e in at.error] == [text.BAD_HEADS.format(
        n=3, dk=4, dv=4, choices="1, 2, 4", nearest=text.NEAREST_OR.join(["2", "4"]),
        shown="4 heads")]
    assert len(head_keys(at)) == 4 and at.session_state["scenario"].n_heads == 1


def test_zero_heads_is_an_error_too():
    at = load_preset(open_page(PAGE), "seed_004_two_heads")  # widths 6 and 4
    at.number_input(key="multi_head_n_heads").set_value(0).run()
    assert not at.exception
    assert [e.value for e in at.error] == [text.ZERO_HEADS.format(
        dk=6, dv=4, choices="1, 2", nearest="1", shown="2 heads")]
    assert len(head_keys(at)) == 2


def test_loading_a_preset_resets_the_head_count_widget():
    at = load_preset(open_page(PAGE), "seed_004_two_heads")
    at.number_input(key="multi_head_n_heads").set_value(1).run()
    assert head_keys(at) == ["multi_head_fig_head_0"]
    at = load_preset(at, "seed_004_two_heads")
    assert at.number_input(key="multi_head_n_heads").value == 2
    assert len(head_keys(at)) == 2


def test_editing_w_o_changes_the_output():
    at = load_preset(open_page(PAGE), "seed_004_two_heads")
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"multi_head_w_o_v{version}", {0: {"o1": 2.0}})
    assert not at.exception
    w_o = np.eye(4)
    w_o[0, 1] = 2.0
    expected = expected_mha("seed_004_two_heads", w_o=w_o)
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_output"), expected.output,
                               atol=1e-14)
    np.testing.assert_array_equal(at.session_state["scenario"].w_o, w_o)


def test_editing_a_head_weight_changes_the_mix():
    at = load_preset(open_page(PAGE), "seed_004_two_heads")
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"multi_head_head_mix_2_v{version}", {0: {"head 1": 0.5}})
    assert not at.exception
    expected = expected_mha("seed_004_two_heads")
    np.testing.assert_allclose(chart_z_by_key(at, "multi_head_fig_mixed"),
                               attnviz.mix_heads(expected.head_outputs, [0.7, 0.5]), atol=1e-14)
    np.testing.assert_array_equal(at.session_state["scenario"].head_mix, [0.7, 0.5])


def test_direct_mode_explains_and_offers_a_preset():
    at = load_preset(open_page(PAGE), "seed_001_causal")
    assert not chart_keys(at)
    assert any("needs token embeddings" in i.value for i in at.info)
    at.button(key="multi_head_load_preset").click().run()
    assert not at.exception
    assert at.session_state["scenario"].n_heads == 2
    assert len(head_keys(at)) == 2


@pytest.mark.parametrize("key", ["translation", "bahdanau", "seed_003_glorot"])
def test_other_presets_compute_self_attention_heads(key):
    at = load_preset(open_page(PAGE), key)
    assert not at.error, [e.value for e in at.error]
    n = at.number_input(key="multi_head_n_heads").value  # the heads the page opened with
    assert n == multi_head_view.opening_heads(PRESETS[key].build()) == (
        1 if key == "seed_003_glorot" else 4)
    for h in range(n):
        np.testing.assert_allclose(chart_z_by_key(at, f"multi_head_fig_head_{h}"),
                                   expected_mha(key, n).weights[h], atol=1e-15)


def test_run_scenario_with_heads_is_the_pages_computation():
    sc = PRESETS["cat_sat"].build()  # causal variant, PE on
    got = attnviz.scenarios.scenario.run_scenario(sc, heads=2).attention
    np.testing.assert_allclose(got.weights, expected_mha("cat_sat", 2).weights, atol=1e-15)
    with pytest.raises(ValueError, match="gives Q, K and V directly"):
        attnviz.scenarios.scenario.run_scenario(PRESETS["seed_001_causal"].build(), heads=1)
    with pytest.raises(ValueError, match="valid choices: 1, 2, 4"):
        attnviz.scenarios.scenario.run_scenario(sc, heads=3)


def test_inputs_expander_runs_its_editors_only_while_open():
    """Closed (the default) it costs no editor; opened it shows them; edits survive closing."""
    at = open_page(PAGE, lazy_open=False)
    editors_closed = len(grids(at))
    assert at.session_state["multi_head_inputs"] is False
    assert f"multi_head_x_v{at.session_state['editor_version']}" not in at.session_state
    at.session_state["multi_head_inputs"] = True
    at.run()
    # x and the selected weight tab's editor (W_Q): the weight tabs are lazy too
    assert len(grids(at)) == editors_closed + 2
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"multi_head_x_v{version}", {0: {"d0": 9.0}})
    assert at.session_state["scenario"].x[0, 0] == 9.0
    at.session_state["multi_head_inputs"] = False
    at.run()
    assert len(grids(at)) == editors_closed and not at.exception
    assert at.session_state["scenario"].x[0, 0] == 9.0  # the edit is in the scenario
    at.session_state["multi_head_inputs"] = True
    at.run()
    assert at.session_state["scenario"].x[0, 0] == 9.0 and not at.exception


def test_a_typed_sentence_still_writes_numbers_in_every_heads_cells():
    """Nine words, three heads: the numbers go to the browser, which sizes them to the drawn
    cells (they were left out for more than five tokens, whatever the screen: 50-pixel cells
    without a number at 1920×1080 in presenter mode)."""
    at = open_page(PAGE)
    at.text_input(key="multi_head_tokens").set_value(
        "The quick brown fox jumps over the lazy dog").run()
    assert not at.exception, [e.message for e in at.exception]
    for h in range(3):
        for kind in ("head", "out"):
            trace = spec_by_key(at, f"multi_head_fig_{kind}_{h}")["data"][0]
            assert trace.get("texttemplate") == "%{text}", (kind, h)
            assert len(trace["text"]) == 9
