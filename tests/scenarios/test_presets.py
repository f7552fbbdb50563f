"""Presets: every one runs, its weights are proper, and the seed presets give the right numbers.

Where a seed notebook prints a wrong number (seed 001's softmax over the queries), the preset
gives the right one; see tests/core/test_attention.py for the bugs themselves.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from attnviz import (
    PRESETS,
    VARIANTS,
    Preset,
    Scenario,
    default_scenario,
    run_scenario,
    scaled_dot_product_attention,
)

PRINTED = {"rtol": 0.0, "atol": 1e-8}


def run(key):
    return run_scenario(PRESETS[key].build())


SEED_PRESETS = ["seed_000", "seed_001_causal", "seed_002", "seed_003_glorot", "seed_004_sleepy",
                "seed_004_two_heads"]


def test_every_seed_example_and_the_classroom_demos_are_presets():
    """The seed presets come first (seed_000 is the default); more may follow them."""
    assert list(PRESETS)[:6] == SEED_PRESETS
    for key in SEED_PRESETS:
        assert PRESETS[key].source.startswith("seed 00")
    assert {"cat_sat", "translation", "bahdanau"} <= set(PRESETS)


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_runs_and_its_weights_rows_sum_to_one(key):
    preset = PRESETS[key]
    assert isinstance(preset, Preset) and preset.key == key and preset.title
    scenario = preset.build()
    assert isinstance(scenario, Scenario)
    assert scenario.variant in VARIANTS
    assert scenario.title and scenario.description
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run_scenario(scenario)
    weights = np.asarray(result.attention.weights)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(np.isfinite(result.attention.output))
    assert weights.shape[-2:] == (len(result.q_labels), len(result.k_labels))
    assert len(set(result.q_labels)) == len(result.q_labels)


def _arrays(scenario: Scenario) -> dict[str, np.ndarray]:
    return {name: value for name, value in vars(scenario).items()
            if isinstance(value, np.ndarray) and value.size}


@pytest.mark.parametrize("key", list(PRESETS))
def test_presets_build_fresh_unshared_arrays(key):
    """Regression: seed_004_two_heads used the module constant as x and translation one
    matrix for both w_q and w_k, so an in-place edit leaked into the other field or preset."""
    first, second = PRESETS[key].build(), PRESETS[key].build()
    assert first is not second
    a, b = _arrays(first), _arrays(second)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
        assert not np.shares_memory(a[name], b[name]), name
    names = list(a)
    for i, name in enumerate(names):
        for other in names[i + 1:]:
            assert not np.shares_memory(a[name], a[other]), (name, other)


def test_default_scenario_is_seed_000():
    np.testing.assert_array_equal(default_scenario().x, PRESETS["seed_000"].build().x)


def test_seed_000_preset():
    result = run("seed_000")
    attention = result.attention
    np.testing.assert_array_equal(attention.scores[0], [8, 2, 10, 2])
    np.testing.assert_allclose(attention.weights[0],
                               [0.23608986, 0.00738988, 0.74913039, 0.00738988], **PRINTED)
    np.testing.assert_allclose(attention.output, [[0.98522025, 1.74174051, 0.75652026],
                                                  [0.90965265, 1.40965265, 0.5],
                                                  [0.99851226, 1.75849334, 0.75998108],
                                                  [0.99560386, 1.90407309, 0.90846923]],
                               **PRINTED)


def test_seed_002_preset():
    attention = run("seed_002").attention
    np.testing.assert_array_equal(attention.scores[0], [23, 11, 18, 29])
    np.testing.assert_allclose(attention.weights[0], [3.02989149e-02, 2.96856554e-05,
                                                      1.68937823e-03, 9.67982021e-01], **PRINTED)
    np.testing.assert_allclose(attention.output, [[0.99997031, 1.96798202, 0.96801171],
                                                  [0.99972362, 1.89509373, 0.89537011],
                                                  [0.99307425, 1.70208093, 0.70900668],
                                                  [0.99999705, 1.9680079, 0.96801085]],
                               **PRINTED)


def test_seed_001_causal_preset_gives_the_right_answer_not_the_printed_one():
    attention = run("seed_001_causal").attention
    w1 = 1 / (1 + math.exp(math.sqrt(3)))  # softmax([2, 5]/√3)[0]
    np.testing.assert_allclose(attention.weights, [[1, 0], [w1, 1 - w1]], rtol=1e-12)
    np.testing.assert_allclose(attention.output, [[0, 1, 0], [1 - w1, w1, 1 - w1]], rtol=1e-12)
    np.testing.assert_allclose(attention.output, [[0, 1, 0], [0.8497, 0.1503, 0.8497]],
                               atol=1e-4)  # the numbers quoted in the preset's description
    assert not np.allclose(attention.output, [[0, 0.35954252, 0], [1, 0.64045748, 1]], atol=1e-3)


def test_seed_004_sleepy_preset():
    result = run("seed_004_sleepy")
    k = np.array([[0, 0, 0], [2, 0, 1], [1, -1, -2], [2, 3, 1], [-2, 0, 0], [0, 2, 1]])
    v = np.array([0, -0.2, 0.3, 0.4, 0, 0.1])
    q = np.array([0, 2, 1])
    e = np.exp(k @ q / math.sqrt(3))
    b = e / e.sum()
    np.testing.assert_allclose(result.attention.weights, [b], rtol=1e-12)
    np.testing.assert_allclose(result.attention.output, [[b @ v]], rtol=1e-12)
    assert result.k_labels == ["0:The", "1:sleepy", "2:child", "3:reads", "4:a", "5:book"]


def test_seed_003_glorot_preset():
    scenario = PRESETS["seed_003_glorot"].build()
    assert scenario.w_q.shape == scenario.w_k.shape == (4, 3) and scenario.w_v.shape == (4, 2)
    for w in (scenario.w_q, scenario.w_k, scenario.w_v):
        assert np.all(np.abs(w) <= math.sqrt(6 / sum(w.shape)))
    attention = run_scenario(scenario).attention
    assert attention.scale == pytest.approx(1 / math.sqrt(3))
    assert attention.output.shape == (5, 2)


def test_seed_004_two_heads_preset_mixes_heads_like_the_notebook():
    scenario = PRESETS["seed_004_two_heads"].build()
    result = run_scenario(scenario)
    heads = [head.output for head in result.attention.heads]
    assert result.attention.n_heads == 2 and heads[0].shape == (6, 2)
    np.testing.assert_allclose(result.mixed, np.stack(heads, -1) @ scenario.head_mix,
                               rtol=1e-12)
    # each head is seed 004's trainable_self_attention on its own column block
    for h, head in enumerate(heads):
        x = scenario.x
        q = x @ scenario.w_q[:, 3 * h:3 * h + 3]
        k = x @ scenario.w_k[:, 3 * h:3 * h + 3]
        v = x @ scenario.w_v[:, 2 * h:2 * h + 2]
        np.testing.assert_allclose(head, scaled_dot_product_attention(q, k, v).output,
                                   rtol=1e-12)


def test_cat_sat_preset_is_causal_with_positional_encoding():
    scenario = PRESETS["cat_sat"].build()
    result = run_scenario(scenario)
    assert scenario.variant == "causal" and scenario.use_pe and result.pe is not None
    assert np.all(np.triu(result.attention.weights, 1) == 0)


def test_translation_preset_aligns_the_words():
    result = run("translation")
    # le -> the, chat -> cat, noir -> black, although the word order differs
    assert result.attention.weights.argmax(axis=1).tolist() == [0, 2, 1]
    assert result.q_labels == ["0:le", "1:chat", "2:noir"]
    assert result.k_labels == ["0:the", "1:black", "2:cat"]


def test_bahdanau_preset_is_additive():
    result = run("bahdanau")
    assert result.attention.features.shape == (3, 3, 3)
    np.testing.assert_allclose(result.attention.weights.sum(axis=1), 1.0, rtol=1e-12)
