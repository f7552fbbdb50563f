"""AppTest: the Encoder–decoder & additive page — cross-attention between two edited sequences,
Bahdanau's additive attention and seed 004's attention pooling, with the core's numbers."""

from __future__ import annotations

import numpy as np
from apptest_helpers import chart_keys, chart_z_by_key, edit_cells, editor_keys, grids, open_page

import attnviz
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import with_parts
from attnviz.teach.text import encoder_decoder as text

PAGE = "encoder_decoder"


def load_preset(at, key: str):
    """Load a preset through the shared sidebar, as a user would."""
    at.selectbox(key="sidebar_preset").set_value(key).run()
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def cross_of(sc, source_x=None):
    return attnviz.cross_attention(sc.x, sc.source_x if source_x is None else source_x,
                                   sc.w_q, sc.w_k, sc.w_v)


def additive_of(sc, **changes):
    p = dict(w_q=sc.w_a_q, w_k=sc.w_a_k, v_a=sc.v_a) | changes
    return attnviz.additive_attention(sc.x, sc.source_x, sc.source_x, p["w_q"], p["w_k"],
                                      p["v_a"])


def test_default_scenario_smoke():
    at = open_page(PAGE)
    assert at.header[0].value == text.TITLE
    assert {"encoder_decoder_fig_cross_weights", "encoder_decoder_fig_cross_output",
            "encoder_decoder_fig_add_scores", "encoder_decoder_fig_add_weights",
            "encoder_decoder_fig_add_context", "encoder_decoder_fig_pool_scores",
            "encoder_decoder_fig_pool_weights",
            "encoder_decoder_fig_pool_context"} == set(chart_keys(at))
    sc = PRESETS["seed_000"].build()  # source = a copy of the tokens: cross = self-attention
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_cross_weights"),
                               attnviz.self_attention(sc.x, sc.w_q, sc.w_k, sc.w_v).weights,
                               atol=1e-15)


def test_translation_cross_attention_matches_the_core_and_aligns_words():
    at = load_preset(open_page(PAGE), "translation")
    sc = PRESETS["translation"].build()
    expected = cross_of(sc)
    weights = chart_z_by_key(at, "encoder_decoder_fig_cross_weights")
    assert weights.shape == (3, 3)  # rows: le chat noir; columns: the black cat
    np.testing.assert_allclose(weights, expected.weights, atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_cross_output"),
                               expected.output,
                               atol=1e-15)
    # le -> the, chat -> cat, noir -> black although the word order differs
    np.testing.assert_array_equal(weights.argmax(axis=1), [0, 2, 1])


def test_editing_a_source_embedding_changes_cross_attention_to_the_core_values():
    at = load_preset(open_page(PAGE), "translation")
    before = chart_z_by_key(at, "encoder_decoder_fig_cross_weights")
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"encoder_decoder_src_x_v{version}", {2: {"d1": 1.5}})
    assert not at.exception
    sc = PRESETS["translation"].build()
    source_x = sc.source_x.copy()
    source_x[2, 1] = 1.5
    expected = cross_of(sc, source_x)
    after = chart_z_by_key(at, "encoder_decoder_fig_cross_weights")
    np.testing.assert_allclose(after, expected.weights, atol=1e-15)
    assert not np.allclose(before, after)
    np.testing.assert_array_equal(at.session_state["scenario"].source_x, source_x)
    np.testing.assert_array_equal(at.session_state["scenario"].x, sc.x)  # target untouched


def test_source_tokens_resize_the_key_axis():
    at = load_preset(open_page(PAGE), "translation")
    at.text_input(key="encoder_decoder_src_tokens").input("the black cat sat").run()
    assert not at.exception
    sc = at.session_state["scenario"]
    assert sc.source_tokens == ("the", "black", "cat", "sat") and sc.tokens[0] == "le"
    assert chart_z_by_key(at, "encoder_decoder_fig_cross_weights").shape == (3, 4)
    assert chart_z_by_key(at, "encoder_decoder_fig_add_weights").shape == (3, 4)


def test_bahdanau_preset_scores_weights_context():
    at = load_preset(open_page(PAGE), "bahdanau")
    sc = PRESETS["bahdanau"].build()
    expected = additive_of(sc)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_add_scores"),
                               expected.scores,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_add_weights"),
                               expected.weights,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_add_context"),
                               expected.output,
                               atol=1e-15)
    # independent check of one score: e_00 = v_a · tanh(x_0 W_q + s_0 W_k)
    e00 = sc.v_a @ np.tanh(sc.x[0] @ sc.w_a_q + sc.source_x[0] @ sc.w_a_k)
    assert abs(chart_z_by_key(at, "encoder_decoder_fig_add_scores")[0, 0] - e00) < 1e-14


def test_editing_v_a_and_w_q_changes_additive_attention():
    at = load_preset(open_page(PAGE), "bahdanau")
    version = at.session_state["editor_version"]
    # W_q, W_k and v_a are lazy tabs: W_q is shown first, v_a after a click on its tab
    assert f"encoder_decoder_w_a_q_v{version}" in editor_keys(at)
    assert f"encoder_decoder_v_a_v{version}" not in editor_keys(at)
    at.session_state["encoder_decoder_additive_weights"] = "v_a"
    at = edit_cells(at.run(), f"encoder_decoder_v_a_v{version}", {0: {"a0": 3.0}})
    at.session_state["encoder_decoder_additive_weights"] = "W_q"
    at = edit_cells(at.run(), f"encoder_decoder_w_a_q_v{version}", {1: {"a2": -1.0}})
    assert not at.exception and f"encoder_decoder_v_a_v{version}" not in editor_keys(at)
    sc = PRESETS["bahdanau"].build()
    v_a = sc.v_a.copy()
    v_a[0] = 3.0
    w_q = sc.w_a_q.copy()
    w_q[1, 2] = -1.0
    expected = additive_of(sc, v_a=v_a, w_q=w_q)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_add_scores"),
                               expected.scores,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_add_context"),
                               expected.output,
                               atol=1e-15)


def test_attention_pooling_of_seed_004_and_editing_its_bias():
    at = load_preset(open_page(PAGE), "seed_004_two_heads")
    x = attnviz.scenarios.presets.SLEEPY_EMBEDDINGS
    w = np.array([0.5, -0.3, 0.8])
    e = np.tanh(x @ w)  # independent: e_t = tanh(x_t · w + 0)
    alpha = np.exp(e) / np.exp(e).sum()
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_scores"), [e],
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_weights"), [alpha],
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_context"), [alpha @ x],
                               atol=1e-15)
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"encoder_decoder_pool_b_v{version}", {0: {"3:reads": -2.0}})
    assert not at.exception
    b = np.zeros(6)
    b[3] = -2.0
    expected = attnviz.attention_pooling(x, w, b)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_scores"),
                               [expected.scores],
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_context"),
                               [expected.output],
                               atol=1e-15)
    np.testing.assert_array_equal(at.session_state["scenario"].pool_b, b)


def test_positional_encoding_is_added_to_both_sequences():
    at = load_preset(open_page(PAGE), "cat_sat")  # use_pe on; source = copy of the tokens
    sc = with_parts(PRESETS["cat_sat"].build(), ["pooling"])  # the page fills the pooling part
    x = sc.x + attnviz.sinusoidal_positional_encoding(sc.t, sc.d_model)
    expected = attnviz.cross_attention(x, x, sc.w_q, sc.w_k, sc.w_v)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_cross_weights"),
                               expected.weights,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "encoder_decoder_fig_pool_context"),
                               [attnviz.attention_pooling(x, sc.pool_w, sc.pool_b).output],
                               atol=1e-15)


def test_direct_mode_explains_and_offers_a_preset():
    at = load_preset(open_page(PAGE), "seed_004_sleepy")
    assert not chart_keys(at)
    assert any("directly" in i.value for i in at.info)
    at.button(key="encoder_decoder_load_preset").click().run()
    assert not at.exception
    assert at.session_state["scenario"].variant == "cross"
    assert "encoder_decoder_fig_cross_weights" in chart_keys(at)


def test_cross_attention_weights_expander_runs_its_editors_only_while_open():
    at = open_page("encoder_decoder", lazy_open=False)
    closed = len(grids(at))
    version = at.session_state["editor_version"]
    assert at.session_state["encoder_decoder_cross_weights"] is False
    assert f"encoder_decoder_w_q_v{version}" not in at.session_state
    at.session_state["encoder_decoder_cross_weights"] = True
    at.run()
    # the selected weight tab's editor (W_Q): the weight tabs are lazy too
    assert len(grids(at)) == closed + 1 and not at.exception
    at = edit_cells(at, f"encoder_decoder_w_q_v{version}", {0: {"q0": 4.0}})
    assert at.session_state["scenario"].w_q[0, 0] == 4.0
    at.session_state["encoder_decoder_cross_weights"] = False
    at.run()
    assert len(grids(at)) == closed and not at.exception
    assert at.session_state["scenario"].w_q[0, 0] == 4.0


def test_sequences_expander_runs_its_editors_only_while_open():
    """Closed (the default, as on Multi-head) it costs no editor; edits survive closing it."""
    at = open_page("encoder_decoder", lazy_open=False)
    version = at.session_state["editor_version"]
    assert at.session_state["encoder_decoder_inputs"] is False
    assert not {f"encoder_decoder_x_v{version}",
                f"encoder_decoder_src_x_v{version}"} & editor_keys(at)
    assert chart_keys(at) and not at.exception  # the three mechanisms are drawn anyway
    at.session_state["encoder_decoder_inputs"] = True
    at.run()
    assert {f"encoder_decoder_x_v{version}", f"encoder_decoder_src_x_v{version}"} <= editor_keys(at)
    at = edit_cells(at, f"encoder_decoder_src_x_v{version}", {0: {"d0": 5.0}})
    assert at.session_state["scenario"].source_x[0, 0] == 5.0
    at.session_state["encoder_decoder_inputs"] = False
    at.run()
    assert f"encoder_decoder_src_x_v{version}" not in editor_keys(at) and not at.exception
    assert at.session_state["scenario"].source_x[0, 0] == 5.0


def test_only_the_pooling_editors_run_while_the_input_expanders_are_closed():
    """Every input expander starts collapsed and lazy; the pooling's w and b stay on the page."""
    at = open_page("encoder_decoder", lazy_open=False)
    version = at.session_state["editor_version"]
    assert editor_keys(at) == {f"encoder_decoder_pool_w_v{version}",
                               f"encoder_decoder_pool_b_v{version}"}
    assert at.session_state["encoder_decoder_additive_inputs"] is False and len(chart_keys(at)) == 8
    at.session_state["encoder_decoder_additive_inputs"] = True
    at.run()
    assert f"encoder_decoder_w_a_q_v{version}" in editor_keys(at) and not at.exception



def test_a_sentence_typed_on_the_playground_leaves_the_page_computing():
    """Typing a sentence on the Playground resized the default scenario's missing source into
    an empty "filled" one, and this page then showed only "needs a source sequence"."""
    at = open_page("playground")
    words = "The quick brown fox jumps over the lazy dog"
    at.text_input(key="playground_tokens").set_value(words).run()
    assert not at.exception
    at.switch_page(f"pages/{PAGE}.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    weights = chart_z_by_key(at, "encoder_decoder_fig_cross_weights")
    assert weights.shape == (9, 9)  # the source: a copy of the typed sentence
