"""Compare: two scenarios that differ in one setting, and A − B."""

import numpy as np
import pytest

from attnviz.scenarios.compare import compare, comparison_pair, head_choices
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario


def scen(key):
    return PRESETS[key].build()


def test_scale_comparison_matches_two_runs():
    sc = scen("seed_000")
    c = compare(sc, "scale")
    a, b = comparison_pair(sc, "scale")[:2]
    np.testing.assert_array_equal(c.a.weights, run_scenario(a).attention.weights)
    np.testing.assert_array_equal(c.b.weights, run_scenario(b).attention.weights)
    np.testing.assert_allclose(c.weights_diff, c.a.weights - c.b.weights)
    assert run_scenario(b).attention.scale == 1.0
    assert c.a.label == "scaled by 1/√d_k" and not c.a.error


def test_causal_vs_bidirectional():
    c = compare(scen("seed_000"), "causal")
    assert np.all(np.triu(c.a.weights, 1) == 0)
    assert np.all(c.b.weights > 0)
    np.testing.assert_allclose(c.a.weights[-1], c.b.weights[-1])  # the last row sees all


def test_heads_compare_outputs_and_mean_weights():
    sc = scen("seed_004_two_heads")
    assert head_choices(sc) == [2]
    c = compare(sc, "heads")
    assert c.b.head_weights.shape[0] == 2 and c.a.head_weights.shape[0] == 1
    np.testing.assert_allclose(c.b.weights, c.b.head_weights.mean(axis=0))
    np.testing.assert_allclose(c.b.weights.sum(axis=1), 1.0)
    assert c.output_diff.shape == c.a.output.shape


def test_pe_and_temperature_and_variants():
    sc = scen("cat_sat")
    c = compare(sc, "pe")
    assert c.a.scenario.use_pe and not c.b.scenario.use_pe
    assert np.abs(c.weights_diff).max() > 0
    c = compare(sc, "temperature", temperature=0.25)
    assert c.b.scenario.temperature == 0.25
    c = compare(sc, "variants", variant_a="causal", variant_b="dot_product")
    assert c.a.label == "Causal self-attention"


def test_shapes_that_differ_give_no_difference():
    sc = scen("translation")  # 3 target tokens attend to 3 source tokens
    from dataclasses import replace
    sc = replace(sc, source_tokens=("a", "b"), source_x=sc.source_x[:2])
    c = compare(sc, "variants", variant_a="cross", variant_b="scaled_dot_product")
    assert c.a.weights.shape == (3, 2) and c.b.weights.shape == (3, 3)
    assert c.weights_diff is None


def test_a_failing_side_reports_its_error():
    sc = scen("seed_001_causal")  # direct Q, K, V: multi-head cannot run
    c = compare(sc, "variants", variant_a="causal", variant_b="multi_head")
    assert not c.a.error and c.b.error and c.b.weights is None
    assert c.weights_diff is None


@pytest.mark.parametrize("key, kind", [("seed_001_causal", "pe"), ("seed_001_causal", "heads"),
                                       ("bahdanau", "scale"), ("translation", "causal"),
                                       ("seed_000", "nonsense")])
def test_comparisons_that_do_not_apply_explain_why(key, kind):
    with pytest.raises(ValueError):
        comparison_pair(scen(key), kind)


def test_no_head_count_divides_the_widths():
    from attnviz.scenarios.scenario import resize
    sc = resize(scen("seed_000"), d_k=3, d_v=2)  # 3 and 2 have no common divisor above 1
    assert head_choices(sc) == []
    with pytest.raises(ValueError, match="no head count above 1"):
        comparison_pair(sc, "heads")
    assert comparison_pair(scen("seed_000"), "heads")[3] == "3 heads"
