"""Tracing one cell: the scalar chain agrees with the vectorised core, cell by cell."""

import math
from dataclasses import replace

import numpy as np
import pytest

from attnviz.core.attention import multi_head_attention
from attnviz.core.trace import trace_additive_cell, trace_cell
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario


def result(key, **changes):
    return run_scenario(replace(PRESETS[key].build(), **changes))


def test_seed000_first_cell_by_hand():
    """Seed 000 prints scores [8, 2, 10, 2] and weight 0.23608986 for (word_1, word_1)."""
    att = result("seed_000").attention
    tr = trace_cell(att, 0, 0)
    np.testing.assert_array_equal(tr.products, tr.q_i * tr.k_j)
    assert tr.score == 8
    assert tr.scale == pytest.approx(1 / math.sqrt(3))
    assert tr.divided == pytest.approx(8 / math.sqrt(3))
    assert tr.softmax.row_max == pytest.approx(10 / math.sqrt(3))
    assert tr.softmax.alpha == pytest.approx(0.23608986, abs=1e-8)
    assert tr.softmax.alpha == pytest.approx(tr.softmax.stored_alpha, rel=1e-12)
    np.testing.assert_allclose(tr.contribution, tr.softmax.alpha * tr.v_j)


@pytest.mark.parametrize("key", ["seed_000", "seed_002", "seed_003_glorot", "cat_sat",
                                 "translation", "seed_001_causal", "seed_004_sleepy"])
def test_every_cell_agrees_with_the_core(key):
    att = result(key, temperature=0.7).attention
    t_q, t_k = att.weights.shape
    out = np.zeros_like(att.output)
    for i in range(t_q):
        for j in range(t_k):
            tr = trace_cell(att, i, j)
            assert tr.softmax.alpha == pytest.approx(att.weights[i, j], rel=1e-12, abs=1e-15)
            if tr.softmax.allowed:
                assert tr.divided == pytest.approx(att.scaled[i, j], rel=1e-12, abs=1e-12)
            else:
                assert tr.softmax.masked == -np.inf and tr.softmax.alpha == 0
            out[i] += tr.contribution
    np.testing.assert_allclose(out, att.output, rtol=1e-12, atol=1e-12)


def test_masked_cell_and_fully_masked_row():
    att = result("seed_001_causal").attention
    tr = trace_cell(att, 0, 1)  # query 0 may not see key 1
    assert not tr.softmax.allowed and tr.softmax.exp_shifted == 0 and tr.softmax.alpha == 0
    att = result("seed_000", mask_kind="padding", valid_len=0).attention
    tr = trace_cell(att, 2, 1)
    assert tr.softmax.row_sum == 0 and tr.softmax.alpha == 0 and tr.softmax.stored_alpha == 0


def test_multi_head_contribution_through_w_o_sums_to_the_output():
    sc = PRESETS["seed_004_two_heads"].build()
    w_o = np.arange(16, dtype=float).reshape(4, 4) / 10  # a non-identity W_O
    att = multi_head_attention(sc.x, None, sc.w_q, sc.w_k, sc.w_v, w_o, n_heads=2)
    i = 3
    total = np.zeros(4)
    for h in range(2):
        for j in range(att.weights.shape[-1]):
            tr = trace_cell(att, i, j, head=h, w_o=w_o)
            assert tr.head == h
            assert tr.softmax.alpha == pytest.approx(att.weights[h, i, j], rel=1e-12)
            total += tr.through_w_o
    np.testing.assert_allclose(total, att.output[i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tr.final_output_i, att.output[i])


def test_additive_cell():
    res = result("bahdanau")
    att = res.attention
    sc = PRESETS["bahdanau"].build()
    for i in range(att.weights.shape[0]):
        for j in range(att.weights.shape[1]):
            tr = trace_additive_cell(att, res.source_x, sc.v_a, i, j)
            assert tr.score == pytest.approx(att.scores[i, j], rel=1e-12)
            assert tr.softmax.alpha == pytest.approx(att.weights[i, j], rel=1e-12)
    np.testing.assert_allclose(tr.products.sum(), tr.score)


def test_out_of_range_cell_and_head():
    att = result("seed_000").attention
    with pytest.raises(ValueError, match="outside the 4×4"):
        trace_cell(att, 4, 0)
    mh = result("seed_004_two_heads").attention
    with pytest.raises(ValueError, match="head must be between 0 and 1"):
        trace_cell(mh, 0, 0, head=2)
