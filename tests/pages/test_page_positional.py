"""AppTest: the Positional encoding page — the PE matrix and its sliders, the curves, PE·PEᵀ,
attention without/with PE, and the permutation demo."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_specs, chart_z_by_key, decode, open_page

import attnviz
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import positional_encoding as text

PAGE = "positional_encoding"


def load_preset(at, key: str):
    """Load a preset through the shared sidebar, as a user would."""
    at.selectbox(key="sidebar_preset").set_value(key).run()
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metric(at, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, [m.label for m in at.metric]
    return found[0]


def line_traces(at, key: str = "positional_encoding_fig_lines") -> dict[str, np.ndarray]:
    spec = chart_specs(at)[chart_keys(at).index(key)]
    return {tr["name"]: decode(tr["y"]).astype(float) for tr in spec["data"]}


def test_default_pe_matrix_lines_and_similarity():
    at = open_page(PAGE)
    pe = attnviz.sinusoidal_positional_encoding(50, 32, base=10000)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_pe"), pe, atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_pe")[1, :2],
                               [np.sin(1.0), np.cos(1.0)])  # golden: position 1, pair 0
    traces = line_traces(at)
    assert list(traces) == ["d0", "d1", "d6", "d14"]
    for name, y in traces.items():
        np.testing.assert_allclose(y, pe[:, int(name[1:])], atol=1e-15)
    sim = chart_z_by_key(at, "positional_encoding_fig_similarity")
    np.testing.assert_allclose(sim, pe @ pe.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(sim), 16.0)  # d_model / 2
    rows = line_traces(at, "positional_encoding_fig_similarity_rows")
    np.testing.assert_allclose(rows["PE_0 · PE_t"], sim[0], atol=1e-12)
    np.testing.assert_allclose(rows["PE_25 · PE_t"], sim[25], atol=1e-12)


def above(at) -> set[str]:
    """The keys of the explorer's sliders drawn above the PE matrix."""
    return {w.key for w in [*at.slider, *at.select_slider]} & {
        "positional_encoding_base", "positional_encoding_d_model"}


def test_base_on_the_chart_changes_the_pe_heatmap_and_flags_seed_002s_typo():
    """The base's one control is the PE matrix's own slider (its release is
    checked in the browser, tests/browser/test_drag_window.py): none above, a caption says so."""
    at = open_page(PAGE)
    assert not at.warning
    assert not above(at)
    assert text.BOTH_ON_CHART in [c.value for c in at.caption]
    at.session_state["positional_encoding_base"] = 1000  # as the release of "base:1000" does
    at.run()
    assert not at.exception
    expected = attnviz.sinusoidal_positional_encoding(50, 32, base=1000)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_pe"), expected,
                               atol=1e-15)
    assert not np.allclose(expected, attnviz.sinusoidal_positional_encoding(50, 32))
    assert [w.value for w in at.warning] == [text.BASE_TYPO]


def test_d_model_and_positions_sliders_and_dimension_choice():
    at = open_page(PAGE)
    at.session_state["positional_encoding_d_model"] = 8  # as the release of "d_model:8" does
    at.slider(key="positional_encoding_positions").set_value(10).run()
    assert not at.exception
    assert not above(at)
    pe = attnviz.sinusoidal_positional_encoding(10, 8)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_pe"), pe, atol=1e-15)
    assert list(line_traces(at)) == ["d0", "d1", "d6"]  # d14 no longer exists
    at.multiselect(key="positional_encoding_dims").set_value([3, 7]).run()
    traces = line_traces(at)
    assert list(traces) == ["d3", "d7"]
    np.testing.assert_allclose(traces["d7"], pe[:, 7], atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_similarity"), pe @ pe.T,
                               atol=1e-12)


def test_the_sliders_above_appear_only_where_the_matrix_has_no_frames_and_keep_the_values():
    at = open_page(PAGE)
    at.session_state["positional_encoding_d_model"] = 8  # set on the chart
    at.session_state["positional_encoding_base"] = 100
    at.run()
    at.slider(key="positional_encoding_positions").set_value(256).run()  # 256 × 8 × 5 bases fit
    assert above(at) == {"positional_encoding_d_model"}  # 256 × (the widths' sum) do not
    assert at.slider(key="positional_encoding_d_model").value == 8
    assert text.BASE_ON_CHART in [c.value for c in at.caption]
    at.slider(key="positional_encoding_d_model").set_value(128).run()
    assert above(at) == {"positional_encoding_d_model", "positional_encoding_base"}
    assert at.select_slider(key="positional_encoding_base").value == 100
    assert not {text.BASE_ON_CHART, text.D_MODEL_ON_CHART, text.BOTH_ON_CHART} & {
        c.value for c in at.caption}
    at.slider(key="positional_encoding_positions").set_value(20).run()  # the chart's again
    at.run()  # (a key whose widget a run did not draw is dropped after that run)
    assert not above(at)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_pe"),
                               attnviz.sinusoidal_positional_encoding(20, 128, base=100),
                               atol=1e-15)  # the values set above are kept


def test_attention_without_and_with_pe_match_the_core():
    at = load_preset(open_page(PAGE), "cat_sat")
    sc = PRESETS["cat_sat"].build()
    plain = attnviz.run_scenario(replace(sc, use_pe=False)).attention.weights
    with_pe = attnviz.run_scenario(sc).attention.weights
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_weights_plain"), plain,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_weights_pe"), with_pe,
                               atol=1e-15)
    # 'the' at positions 0 and 4 has the same embedding; only PE tells the two apart
    assert not np.allclose(plain, with_pe)


def test_permutation_demo_difference_is_zero_without_pe_and_not_with_pe():
    at = open_page(PAGE)
    assert float(metric(at, text.DIFF_WITHOUT_PE)) < 1e-12  # the true value: 0 or rounding
    sc = PRESETS["seed_000"].build()
    perm = np.arange(4)[::-1]  # "reverse" is the default
    check = attnviz.scenarios.scenario.permutation_check(sc, perm, with_pe=True)
    assert metric(at, text.DIFF_WITH_PE) == f"{check.max_diff:.3g}"
    assert check.max_diff > 0.1
    order = "0:word_4  1:word_3  2:word_2  3:word_1"
    assert any(t.value == text.SHUFFLED_ORDER.format(order=order) for t in at.text)
    out = attnviz.self_attention(sc.x, sc.w_q, sc.w_k, sc.w_v).output
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_perm_orig"), out,
                               atol=1e-15)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_perm_shuffled"),
                               out[perm],
                               atol=1e-14)
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_perm_unpermuted"), out,
                               atol=1e-14)
    at.radio(key="positional_encoding_perm_case").set_value(True).run()
    shown = chart_z_by_key(at, "positional_encoding_fig_perm_unpermuted")
    assert np.max(np.abs(shown - chart_z_by_key(at, "positional_encoding_fig_perm_orig"))) > 0.1


def test_random_permutation_with_a_seed():
    at = load_preset(open_page(PAGE), "seed_003_glorot")
    at.radio(key="positional_encoding_perm_kind").set_value("random").run()
    at.number_input(key="positional_encoding_perm_seed").set_value(7).run()
    assert not at.exception
    perm = np.random.default_rng(7).permutation(5)
    sc = PRESETS["seed_003_glorot"].build()
    order = "  ".join(f"{i}:{sc.tokens[p]}" for i, p in enumerate(perm))
    assert any(t.value == text.SHUFFLED_ORDER.format(order=order) for t in at.text)
    assert float(metric(at, text.DIFF_WITHOUT_PE)) < 1e-12  # the true value: 0 or rounding
    out = attnviz.self_attention(sc.x, sc.w_q, sc.w_k, sc.w_v).output
    np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_perm_shuffled"),
                               out[perm],
                               atol=1e-14)


def test_direct_mode_keeps_the_exploration_and_explains_the_rest():
    at = load_preset(open_page(PAGE), "seed_004_sleepy")
    assert any("directly" in i.value for i in at.info)
    assert chart_keys(at) == ["positional_encoding_fig_pe", "positional_encoding_fig_lines",
                              "positional_encoding_fig_similarity",
                              "positional_encoding_fig_similarity_rows"]


def test_presets_run_without_errors():
    at = open_page(PAGE)
    for key in ("seed_004_two_heads", "translation", "bahdanau"):
        at = load_preset(at, key)
        assert not at.error, (key, [e.value for e in at.error])
        assert float(metric(at, text.DIFF_WITHOUT_PE)) < 1e-12  # the true value: 0 or rounding
        weights = attnviz.run_scenario(replace(PRESETS[key].build(), use_pe=True)).attention
        z = weights.weights if weights.weights.ndim == 2 else weights.weights[0]
        np.testing.assert_allclose(chart_z_by_key(at, "positional_encoding_fig_weights_pe"), z,
                                   atol=1e-15)


def test_permutation_check_core_properties():
    rng = np.random.default_rng(0)
    sc = replace(PRESETS["seed_003_glorot"].build(), x=rng.normal(size=(5, 4)))
    perm = np.array([2, 0, 4, 1, 3])
    plain = attnviz.scenarios.scenario.permutation_check(sc, perm, with_pe=False)
    assert plain.max_diff < 1e-12  # equivariance (up to the order of the softmax sums)
    np.testing.assert_allclose(plain.shuffled_output, plain.output[perm], atol=1e-12)
    assert attnviz.scenarios.scenario.permutation_check(sc, perm, with_pe=True).max_diff > 1e-3
    same = attnviz.scenarios.scenario.permutation_check(sc, np.arange(5), with_pe=True)
    assert same.max_diff == 0.0  # no shuffle: nothing changes, PE or not
    with pytest.raises(ValueError, match="permutation of 0..4"):
        attnviz.scenarios.scenario.permutation_check(sc, [0, 0, 1, 2, 3], with_pe=False)


def test_the_pe_heatmap_carries_a_frame_for_every_base_and_a_grid_of_widths():
    from apptest_helpers import chart_keys, chart_specs, decode, open_page

    from attnviz.core.positional import sinusoidal_positional_encoding
    at = open_page("positional_encoding")
    spec = chart_specs(at)[chart_keys(at).index("positional_encoding_fig_pe")]
    names = [f["name"] for f in spec["frames"]]
    assert names[:5] == ["base:10", "base:100", "base:1000", "base:10000", "base:100000"]
    assert names[5:] == [f"d_model:{d}" for d in (2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)]
    for frame in spec["frames"]:
        setting, value = frame["name"].split(":")
        d, base = (32, float(value)) if setting == "base" else (int(value), 10000.0)
        np.testing.assert_allclose(decode(frame["data"][0]["z"]),
                                   sinusoidal_positional_encoding(50, d, base=base),
                                   rtol=1e-12, atol=1e-15)
        assert len(decode(frame["data"][0]["z"])[0]) == d
        title = frame["layout"]["xaxis"]["title"]["text"]  # the title follows the slider
        assert f"(50 × {d}), base {int(base)} (" in title
    sliders = spec["layout"]["sliders"]
    assert [s["active"] for s in sliders] == [3, 7]  # base 10000, d_model 32
    assert [s["steps"][s["active"]]["label"] for s in sliders] == ["10000", "32"]
    assert spec["sliderEvents"]
    at.session_state["positional_encoding_d_model"] = 34  # set above with more positions
    at.run()
    spec = chart_specs(at)[chart_keys(at).index("positional_encoding_fig_pe")]
    widths = [int(f["name"].split(":")[1]) for f in spec["frames"] if f["name"].startswith("d_")]
    assert 34 in widths and spec["layout"]["sliders"][1]["steps"][8]["label"] == "34"
    at.slider(key="positional_encoding_positions").set_value(256).run()
    at.slider(key="positional_encoding_d_model").set_value(128).run()  # now a slider above
    spec = chart_specs(at)[chart_keys(at).index("positional_encoding_fig_pe")]
    assert not spec["frames"]  # too many values for either drag slider
