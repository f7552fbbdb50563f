"""AppTest: the Home and Playground pages — smoke, and every control changes the right numbers."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import (
    chart_keys,
    chart_z_by_key,
    edit_cells,
    editor_keys,
    grid_cells,
    grids,
    open_page,
    session_entries,
    set_focus,
    spec_by_key,
    switch_to,
)

import attnviz
from attnviz.scenarios.presets import PRESETS

SEED_000 = PRESETS["seed_000"].build()


def weights_of(at) -> np.ndarray:
    return chart_z_by_key(at, "playground_fig_weights")


def test_home_lists_pages_and_presets():
    at = open_page()
    assert at.title[0].value.startswith("attnviz")
    buttons = {b.key for b in at.button}
    assert {f"home_load_{k}" for k in PRESETS} <= buttons


def test_home_load_button_loads_preset_and_opens_playground():
    at = open_page()
    at.button(key="home_load_translation").click().run()
    assert not at.exception
    assert at.session_state["scenario"].variant == "cross"
    assert at.session_state["playground_focus"] == "Weights"  # the Playground's lecture view


def test_playground_default_matches_seed_000():
    at = open_page("playground")
    expected = attnviz.self_attention(SEED_000.x, SEED_000.w_q, SEED_000.w_k, SEED_000.w_v)
    np.testing.assert_allclose(weights_of(at), expected.weights, atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_output"), expected.output,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_scores")[0], [8, 2, 10, 2])
    assert {f"playground_fig_{name}" for name in ("x", "q", "k", "v", "mask", "masked", "scaled")
            } <= set(chart_keys(at))


def test_variant_causal_zeroes_upper_triangle():
    at = open_page("playground")
    at.selectbox(key="playground_variant_v0").set_value("causal").run()
    w = weights_of(at)
    assert np.all(w[np.triu_indices(4, 1)] == 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    mask = chart_z_by_key(at, "playground_fig_mask")
    np.testing.assert_array_equal(mask, attnviz.causal_mask(4).astype(float))


def test_editing_an_embedding_cell_changes_weights_and_survives_page_switch():
    at = open_page("playground")
    before = weights_of(at)
    at = edit_cells(at, "playground_x_v0", {0: {"d1": 2.5}})
    x = SEED_000.x.copy()
    x[0, 1] = 2.5
    expected = attnviz.self_attention(x, SEED_000.w_q, SEED_000.w_k, SEED_000.w_v).weights
    np.testing.assert_allclose(weights_of(at), expected, atol=1e-15)
    assert not np.allclose(before, expected)
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/playground.py").run()
    assert not at.exception
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_x")[0], [1, 2.5, 0])
    np.testing.assert_allclose(weights_of(at), expected, atol=1e-15)


def test_empty_cell_warns_and_keeps_previous_value_and_other_edits():
    at = open_page("playground")
    at = edit_cells(at, "playground_x_v0", {0: {"d0": None, "d1": 3.0}})
    assert not at.exception
    assert any("empty or not a finite number" in w.value for w in at.warning)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_x")[0], [1, 3.0, 0])


def test_temperature_slider_divides_scaled_scores():
    at = open_page("playground")
    at.slider(key="playground_temperature_v0").set_value(2.0).run()
    scores = chart_z_by_key(at, "playground_fig_scores")
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_scaled"),
                               scores / np.sqrt(3) / 2.0)


def test_scale_mode_none_and_custom():
    at = open_page("playground")
    at.radio(key="playground_scale_mode_v0").set_value("none").run()
    scores = chart_z_by_key(at, "playground_fig_scores")
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_scaled"), scores)
    at.radio(key="playground_scale_mode_v0").set_value("custom").run()
    at.number_input(key="playground_custom_scale_v0").set_value(0.25).run()
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_scaled"), scores * 0.25)


def test_positional_encoding_toggle_adds_pe():
    at = open_page("playground")
    at.toggle(key="playground_use_pe_v0").set_value(True).run()
    pe = attnviz.sinusoidal_positional_encoding(4, 3)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_x_pe"), SEED_000.x + pe)


def test_tokens_text_resizes_and_keeps_values():
    at = open_page("playground")
    at.text_input(key="playground_tokens").input("a b c d e").run()
    assert not at.exception
    sc = at.session_state["scenario"]
    assert sc.tokens == ("a", "b", "c", "d", "e")
    np.testing.assert_array_equal(sc.x[:4], SEED_000.x)  # renamed rows keep their vectors
    from attnviz.scenarios.tokens import spread, word_vector
    np.testing.assert_array_equal(sc.x[4], word_vector("e", 3, spread(SEED_000.x)))  # not 0
    assert weights_of(at).shape == (5, 5)


def test_empty_tokens_give_message_and_keep_scenario():
    at = open_page("playground")
    at.text_input(key="playground_tokens").input("   ").run()
    assert not at.exception
    assert any("at least one token" in e.value for e in at.error)
    assert at.session_state["scenario"].tokens == SEED_000.tokens


def test_d_model_resize_keeps_values():
    at = open_page("playground")
    at.number_input(key="playground_d_model_v0").set_value(5).run()
    sc = at.session_state["scenario"]
    assert sc.x.shape == (4, 5) and sc.w_q.shape == (5, 3)
    np.testing.assert_array_equal(sc.x[:, :3], SEED_000.x)
    assert not at.exception


def test_regenerate_identity_weights():
    at = open_page("playground")
    at.selectbox(key="playground_init_kind").set_value("identity").run()
    at.button(key="playground_regenerate").click().run()
    sc = at.session_state["scenario"]
    np.testing.assert_array_equal(sc.w_q, np.eye(3))
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_q"), SEED_000.x)


def multi_head_playground(n_heads: int):
    """The Playground with Q/K and V widths 4, switched to multi-head with ``n_heads``."""
    at = open_page("playground")
    at.number_input(key="playground_d_k_v0").set_value(4).run()
    at.number_input(key="playground_d_v_v1").set_value(4).run()
    at.selectbox(key="playground_variant_v2").set_value("multi_head").run()
    return at.select_slider(key="playground_n_heads_v2").set_value(n_heads).run()


def test_multi_head_variant_shows_one_chart_per_head():
    at = multi_head_playground(2)
    keys = chart_keys(at)
    assert "playground_fig_head_0" in keys and "playground_fig_head_1" in keys
    sc = at.session_state["scenario"]
    expected = attnviz.multi_head_attention(sc.x, None, sc.w_q, sc.w_k, sc.w_v, sc.w_o,
                                            n_heads=2)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_head_1"), expected.weights[1])
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_multi_head_output"),
                               expected.output)


def test_huge_values_give_a_message_not_a_traceback():
    at = open_page("playground")
    at = edit_cells(at, "playground_x_v0", {0: {"d0": 1e308}})
    assert not at.exception
    assert any("overflow" in e.value or "finite" in e.value for e in at.error)


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_loads_on_playground(key):
    at = open_page("playground")
    at.selectbox(key="sidebar_preset").set_value(key).run()
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    result = attnviz.run_scenario(PRESETS[key].build())
    if not isinstance(result.attention, attnviz.MultiHeadResult):
        np.testing.assert_allclose(weights_of(at), np.atleast_2d(result.attention.weights))


def test_sidebar_preset_box_follows_a_preset_loaded_from_home():
    at = open_page()
    at.button(key="home_load_seed_002").click().run()
    assert at.selectbox(key="sidebar_preset").value == "seed_002"


def test_downloads_are_prepared_only_while_their_expander_is_open():
    at = open_page("playground", lazy_open=False)
    assert at.session_state["playground_downloads"] is False
    assert not at.download_button  # nothing built for a closed expander
    at.session_state["playground_downloads"] = True
    at.run()
    labels = [b.proto.label for b in at.download_button]
    assert any("HTML report" in label for label in labels), labels
    assert not at.exception


def test_weight_tabs_run_only_the_selected_editor_and_keep_edits_across_tabs():
    """W_Q, W_K, W_V are lazy tabs: one editor runs; an edit survives switching tabs."""
    at = open_page("playground")
    version = at.session_state["editor_version"]

    assert f"playground_w_q_v{version}" in editor_keys(at)
    assert not {f"playground_w_k_v{version}", f"playground_w_v_v{version}"} & editor_keys(at)
    at = edit_cells(at, f"playground_w_q_v{version}", {0: {"q0": 3.5}})
    assert at.session_state["scenario"].w_q[0, 0] == 3.5
    at.session_state["playground_weights"] = "W_K"
    at.run()
    assert f"playground_w_k_v{version}" in editor_keys(at)
    assert f"playground_w_q_v{version}" not in editor_keys(at)
    at = edit_cells(at, f"playground_w_k_v{version}", {1: {"k1": -2.0}})
    sc = at.session_state["scenario"]
    assert sc.w_q[0, 0] == 3.5 and sc.w_k[1, 1] == -2.0 and not at.exception
    at.session_state["playground_weights"] = "W_Q"
    at.run()  # back on W_Q: the editor starts from the scenario, with the edit in it
    element = next(e for e in grids(at) if e.proto.id.endswith(f"playground_w_q_v{version}"))
    # cells are shown as text (what a person types is parsed in Python)
    assert float(grid_cells(element)[0][0]) == 3.5
    assert at.session_state["scenario"].w_k[1, 1] == -2.0


def test_long_sequences_pool_the_head_thumbnails_and_say_so():
    """t = 130 > THUMBNAIL_T: each head is drawn as 3×3-token blocks (rows still sum to 1);
    the large heatmaps (X, output) stay exact."""
    from dataclasses import replace

    from attnviz.core.downsample import downsample
    from attnviz.scenarios import limits
    from attnviz.scenarios.scenario import resize, run_scenario

    rng = np.random.default_rng(3)
    sc = resize(PRESETS["seed_004_two_heads"].build(), t=130)
    sc = replace(sc, x=rng.normal(size=sc.x.shape), tokens=tuple(f"w{i}" for i in range(130)))
    at = open_page("home")
    at.session_state["scenario"] = sc
    at.session_state["editor_version"] = at.session_state["editor_version"] + 1
    set_focus(at, "all")
    at.switch_page("pages/playground.py").run()
    assert not at.exception
    att = run_scenario(sc).attention
    for h in range(att.n_heads):
        z = chart_z_by_key(at, f"playground_fig_head_{h}")
        assert z.shape == (44, 44)  # ceil(130 / 3) blocks of 3 tokens
        np.testing.assert_allclose(z, downsample(att.weights[h], limits.THUMBNAIL_T),
                                   rtol=0, atol=1e-15)
        np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-12)
    assert any("each head is shown as 44×44 blocks of 3×3 tokens" in c.value for c in at.caption)
    np.testing.assert_allclose(chart_z_by_key(at, "playground_fig_multi_head_output"), att.output,
                               atol=1e-13)


def test_head_thumbnails_share_one_colour_bar_beyond_two_heads():
    at = multi_head_playground(4)
    bars = [spec_by_key(at, f"playground_fig_head_{h}")["data"][0].get("showscale", True)
            for h in range(4)]
    assert bars == [False, False, False, True] and not at.exception
    at.select_slider(key="playground_n_heads_v2").set_value(2).run()  # two heads: a bar each
    assert all(spec_by_key(at, f"playground_fig_head_{h}")["data"][0].get("showscale", True)
               for h in range(2))


# --- Issue 14: typed cell text, labels kept as given, memory per session ---------------------

def _x_edit(at, text: str):
    version = at.session_state["editor_version"]
    return edit_cells(at, f"playground_x_v{version}", {1: {"d1": text}})


@pytest.mark.parametrize("typed, value", [("1e-3", 1e-3), ("2.5e2", 250.0), ("-0", -0.0),
                                          ("\u22121.5", -1.5)])
def test_typed_cell_text_means_what_was_typed(typed, value):
    at = _x_edit(open_page("playground"), typed)
    got = at.session_state["scenario"].x[1, 1]
    assert got == value and np.signbit(got) == np.signbit(value) and not at.warning


@pytest.mark.parametrize("typed", ["1,5", "1.2.3", "1e400", "inf", "abc"])
def test_typed_cell_text_that_is_not_one_finite_number_is_refused_by_name(typed):
    at = open_page("playground")
    before = at.session_state["scenario"].x.copy()
    at = _x_edit(at, typed)
    np.testing.assert_array_equal(at.session_state["scenario"].x, before)
    found = [w.value for w in at.warning if "not a finite number" in w.value]
    assert found and "(1\\:word\\_2, d1)" in found[0] and "not 1,5" in found[0], found


@pytest.mark.parametrize("page", ["playground", "multi_head", "encoder_decoder"])
@pytest.mark.parametrize("tokens", [("New York", "is", "big", "city"),
                                    ("", "  ", "a", "b"), ("a  b", "\tc", "d", "e")])
def test_labels_from_a_file_or_link_are_kept_exactly_on_open(page, tokens):
    from dataclasses import replace

    sc = replace(PRESETS["seed_004_two_heads" if page == "multi_head" else "translation"
                         if page == "encoder_decoder" else "seed_000"].build())
    sc = replace(sc, tokens=tokens[: len(sc.tokens)] + tuple(
        f"w{i}" for i in range(len(sc.tokens) - len(tokens))))
    at = open_page("home")
    at.session_state["scenario"] = sc
    at.session_state["editor_version"] = at.session_state["editor_version"] + 1
    switch_to(at, page)  # with its expanders open (the token box may sit in one)
    assert any("_tokens" in t.key for t in at.text_input), page
    at.run()  # and a second run (any widget change)
    assert not at.exception and not at.error, [e.value for e in at.error]
    after = at.session_state["scenario"]
    assert after.tokens == sc.tokens and after.x.shape == sc.x.shape
    np.testing.assert_array_equal(after.x, sc.x)


def test_editing_the_token_box_still_splits_it():
    at = open_page("playground")
    at.text_input(key="playground_tokens").input("New York is big").run()
    assert at.session_state["scenario"].tokens == ("New", "York", "is", "big")


def test_a_second_token_list_sent_before_the_first_rerun_ends_is_kept():
    """The token box keeps one key across editor generations: a list typed while the first
    one's rerun runs reaches a box that still exists (issue 14, item 6)."""
    at = open_page("playground")
    at.text_input(key="playground_tokens").input("a b c d e").run()
    assert at.session_state["editor_version"] >= 1
    at.text_input(key="playground_tokens").input("p q r").run()
    assert at.session_state["scenario"].tokens == ("p", "q", "r")
    assert at.text_input(key="playground_tokens").value == "p q r"


def test_session_state_does_not_grow_over_50_edits():
    """Old editor generations' base copies are released (issue 14, item 8)."""
    at = open_page("playground")
    counts, bases = [], []
    for i in range(50):
        at.text_input(key="playground_tokens").input(f"t{i} b c d" if i % 2 else f"t{i} b c").run()
        version = at.session_state["editor_version"]
        at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": str(i)}})
        assert at.session_state["scenario"].x[0, 0] == i
        keys = [str(k) for k in at.session_state.keys()]
        counts.append(session_entries(at))  # every key and widget id
        bases.append(sum(k.startswith("_base_") for k in keys))
    assert counts[-1] <= counts[4] and max(bases) <= 4, (counts, bases)


def test_the_initialiser_says_how_the_current_weights_were_made():
    """The initialiser widgets show a choice for the next Regenerate; the caption under them
    says where W_Q, W_K, W_V really come from (issue 15 item 4)."""
    from attnviz.teach.text import common
    from attnviz.ui.safe import md_escape

    def origin(at) -> list[str]:
        return [c.value for c in at.caption if c.value.startswith("W_Q, W_K, W_V now")]

    at = open_page("playground")
    version = at.session_state["editor_version"]
    assert origin(at) == [common.WEIGHTS_FROM_PRESET.format(title=md_escape(SEED_000.title))]
    at.selectbox(key="playground_init_kind").set_value("glorot_uniform").run()
    at.number_input(key="playground_init_seed").set_value(7).run()
    assert origin(at) == [common.WEIGHTS_FROM_PRESET.format(  # choosing makes no weights
        title=md_escape(SEED_000.title))]
    at.button(key="playground_regenerate").click().run()
    assert origin(at) == [common.WEIGHTS_FROM_INIT.format(
        kind=common.INIT_KINDS["glorot_uniform"], seed=7)]
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_w_q_v{version}", {0: {"q0": 3.5}})
    assert at.session_state["scenario"].w_q[0, 0] == 3.5
    assert origin(at) == [common.WEIGHTS_OTHER]
    at.selectbox(key="sidebar_preset").set_value("cat_sat").run()
    at.button(key="sidebar_load_preset").click().run()
    assert origin(at) == [common.WEIGHTS_FROM_PRESET.format(
        title=md_escape(PRESETS["cat_sat"].build().title))]
    assert not at.exception


def test_the_formulas_on_screen_follow_the_settings():
    """The variant's formula and the scaled scores' formula name only the steps that happen:
    the default (1/√d_k, τ = 1, no mask) has neither τ nor the mask (issue 15 item 4)."""

    def formulas(at) -> str:
        return " ".join(e.value for e in at.latex) + " ".join(m.value for m in at.markdown)

    at = open_page("playground")
    top = at.latex[0].value
    assert r"\sqrt{d_k}" in top and r"\tau" not in top and "mask_M" not in top
    at.slider(key="playground_temperature_v0").set_value(2.0).run()
    assert r"\frac{QK^\top}{\sqrt{d_k}\,\tau}" in at.latex[0].value
    assert r"S' = \frac{S}{\sqrt{d_k}\,\tau}" in formulas(at)
    at.radio(key="playground_scale_mode_v0").set_value("none").run()
    assert r"\sqrt{d_k}" not in formulas(at) and r"\frac{QK^\top}{\tau}" in at.latex[0].value
    at.radio(key="playground_scale_mode_v0").set_value("custom").run()
    at.number_input(key="playground_custom_scale_v0").set_value(0.25).run()
    assert r"S' = \frac{0.25\,S}{\tau}" in formulas(at)
    at.selectbox(key="playground_variant_v0").set_value("causal").run()
    assert r"\mathrm{mask}_M" in at.latex[0].value and r"M_{ij} = (j \le i)" in at.latex[0].value
    assert not at.exception
