"""The grouped-query variant: MHA and MQA at the two ends, the 8-on-2 preset, the settings."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, multi_head_attention, run_scenario
from attnviz.core.attention import MultiHeadResult
from attnviz.scenarios.scenario import with_variant

TOL = {"rtol": 1e-12, "atol": 1e-12}


def with_kv(sc, n_kv):
    return replace(sc, params={**sc.params, "n_kv_heads": n_kv})


def test_the_preset_has_8_query_heads_on_2_kv_heads():
    sc = PRESETS["gqa_8_2"].build()
    result = run_scenario(sc).attention
    assert isinstance(result, MultiHeadResult)
    assert result.n_heads == 8 and sc.param("n_kv_heads") == 2
    assert result.k.shape == (7, 2 * 2)  # two key heads of width 2
    for h in range(8):  # heads 0-3 share key head 0, heads 4-7 key head 1
        np.testing.assert_array_equal(result.head(h).k, result.head(4 * (h // 4)).k)
    assert not np.allclose(result.head(0).k, result.head(4).k)


@pytest.mark.parametrize("n_kv", [1, 2, 4, 8])
def test_each_kv_setting_is_multi_head_attention_with_shared_blocks(n_kv):
    sc = with_kv(PRESETS["gqa_8_2"].build(), n_kv)
    group, d = 8 // n_kv, 2
    w_k = np.hstack([sc.w_k[:, (h // group) * d:(h // group + 1) * d] for h in range(8)])
    w_v = np.hstack([sc.w_v[:, (h // group) * d:(h // group + 1) * d] for h in range(8)])
    expected = multi_head_attention(sc.x, None, sc.w_q, w_k, w_v, sc.w_o, n_heads=8)
    result = run_scenario(sc).attention
    np.testing.assert_allclose(result.weights, expected.weights, **TOL)
    np.testing.assert_allclose(result.output, expected.output, **TOL)


def test_n_kv_heads_equal_to_n_heads_is_the_multi_head_variant():
    sc = with_kv(PRESETS["gqa_8_2"].build(), 8)
    mha = run_scenario(replace(sc, variant="multi_head", params={})).attention
    gqa = run_scenario(sc).attention
    for name in ("scores", "weights", "head_outputs", "output"):
        np.testing.assert_allclose(getattr(gqa, name), getattr(mha, name), **TOL)


def test_the_default_is_multi_query_and_computes_from_any_scenario():
    sc = with_variant(PRESETS["seed_004_two_heads"].build(), "gqa")
    assert sc.param("n_kv_heads") == 1
    result = run_scenario(sc).attention
    np.testing.assert_array_equal(result.head(0).k, result.head(1).k)


@pytest.mark.parametrize(("n_kv", "message"), [
    (3, r"n_kv_heads \(3\) must divide n_heads \(8\); valid choices: 1, 2, 4, 8"),
    (0, r"n_kv_heads must be between 1 and 16, got 0"),
    (2.0, r"n_kv_heads must be a whole number"),
])
def test_bad_kv_head_counts_are_refused(n_kv, message):
    with pytest.raises(ValueError, match=message):
        run_scenario(with_kv(PRESETS["gqa_8_2"].build(), n_kv))
