"""The explanation engine (attnviz.core.explain): every step of a row, recomputed with explicit
arithmetic, agrees with the vectorised core and with an explicit loop written from the formulas,
for every kind of result (single head, cross, multi-head through W_O, additive, masked and fully
masked rows)."""

import math
from dataclasses import replace

import numpy as np
import pytest

from attnviz.core.additive import additive_attention
from attnviz.core.attention import (
    cross_attention,
    multi_head_attention,
    scaled_dot_product_attention,
)
from attnviz.core.explain import AdditiveInputs, explain_row
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import run_scenario

TOL = 1e-12
RNG = np.random.default_rng(13)


def result(key, **changes):
    return run_scenario(replace(PRESETS[key].build(), **changes))


def loop_row(q_i, k, v, mask_row, scale, temperature):
    """Row i written from the formulas with plain Python floats (the reference)."""
    s = [sum(a * b for a, b in zip(q_i, k_j, strict=True)) * scale / temperature for k_j in k]
    s2 = [x if ok else -math.inf for x, ok in zip(s, mask_row, strict=True)]
    finite = [x for x in s2 if x != -math.inf]
    if not finite:
        return s2, [0.0] * len(k), [0.0] * len(v[0])
    m = max(finite)
    e = [math.exp(x - m) if x != -math.inf else 0.0 for x in s2]
    alpha = [x / sum(e) for x in e]
    out = [sum(alpha[j] * v[j][d] for j in range(len(v))) for d in range(len(v[0]))]
    return s2, alpha, out


def assert_agrees(row):
    """Recomputed and core values agree to 1e-12 on every quantity the core stores."""
    diffs = row.differences()
    assert {"scores", "scaled", "masked", "weights", "output"} <= set(diffs)
    assert max(diffs.values()) <= TOL, diffs


def assert_matches_loop(row, q_i, k, v, mask_row, scale, temperature):
    masked, alpha, out = loop_row(q_i.tolist(), k.tolist(), v.tolist(), mask_row.tolist(),
                                  scale, temperature)
    np.testing.assert_allclose(row.masked, masked, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(row.weights, alpha, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(row.output, out, rtol=TOL, atol=TOL)


def test_seed000_first_row_by_hand():
    """Seed 000 prints scores [8, 2, 10, 2] and weight 0.23608986 for (word_1, word_1)."""
    att = result("seed_000").attention
    row = explain_row(att, 0)
    tr = row.cell(0)
    np.testing.assert_array_equal(tr.products, tr.row.q * tr.k_j)
    np.testing.assert_array_equal(row.scores, [8, 2, 10, 2])
    assert tr.score == 8
    assert row.scale == pytest.approx(1 / math.sqrt(3))
    assert tr.scaled == pytest.approx(8 / math.sqrt(3))
    assert row.row_max == pytest.approx(10 / math.sqrt(3))
    assert tr.alpha == pytest.approx(0.23608986, abs=1e-8)
    assert tr.alpha == pytest.approx(tr.core_alpha, rel=1e-12)
    np.testing.assert_allclose(tr.term, tr.alpha * tr.v_j)
    assert not row.any_masked and row.kind == "dot" and row.head is None


@pytest.mark.parametrize("key", ["seed_000", "seed_002", "seed_003_glorot", "cat_sat",
                                 "translation", "seed_001_causal", "seed_004_sleepy"])
def test_every_row_agrees_with_the_core_and_the_loop(key):
    """Single head, cross-attention (translation), causal: every row, every cell."""
    att = result(key, temperature=0.7).attention
    t_q, t_k = att.weights.shape
    out = np.zeros_like(att.output)
    for i in range(t_q):
        row = explain_row(att, i)
        assert_agrees(row)
        assert_matches_loop(row, att.q[i], att.k, att.v, att.mask[i], att.scale, 0.7)
        for j in range(t_k):
            tr = row.cell(j)
            assert tr.alpha == pytest.approx(att.weights[i, j], rel=1e-12, abs=1e-15)
            if tr.allowed:
                assert tr.scaled == pytest.approx(att.scaled[i, j], rel=1e-12, abs=1e-12)
            else:
                assert tr.masked == -np.inf and tr.alpha == 0 and tr.exp == 0
            out[i] += tr.term
    np.testing.assert_allclose(out, att.output, rtol=1e-12, atol=1e-12)


def test_random_cross_attention_with_a_custom_scale():
    x_q, x_kv = RNG.standard_normal((3, 5)), RNG.standard_normal((6, 5))
    w_q, w_k, w_v = (RNG.standard_normal((5, 4)) for _ in range(3))
    mask = RNG.random((3, 6)) < 0.7
    mask[:, 0] = True
    att = cross_attention(x_q, x_kv, w_q, w_k, w_v, mask=mask, scale=0.3, temperature=1.9)
    for i in range(3):
        row = explain_row(att, i)
        assert_agrees(row)
        assert_matches_loop(row, att.q[i], att.k, att.v, mask[i], 0.3, 1.9)
        assert row.any_masked and row.scale == 0.3 and row.temperature == 1.9


def test_softmax_steps_reproduce_the_core_including_a_fully_masked_row():
    q = np.array([[1.0, 2.0], [3.0, -1.0]])
    k = np.array([[0.5, 1.0], [2.0, 0.0], [-1.0, 1.0]])
    mask = np.array([[True, False, True], [False, False, False]])
    res = scaled_dot_product_attention(q, k, np.eye(3), mask=mask, temperature=0.7)
    s0 = explain_row(res, 0)
    np.testing.assert_allclose(s0.exp / s0.row_sum, res.weights[0], rtol=1e-15)
    assert s0.row_max == res.masked[0].max() and s0.exp[1] == 0
    np.testing.assert_allclose(s0.times_scale / 0.7, res.scaled[0], rtol=1e-15)
    np.testing.assert_allclose(s0.terms.sum(axis=0), res.output[0], rtol=1e-15)
    s1 = explain_row(res, 1)
    assert s1.fully_masked and s1.row_max is None and s1.row_sum == 0
    assert not s0.fully_masked and (s1.terms == 0).all()
    assert (s1.weights == 0).all() and (s1.output == 0).all() and np.isneginf(s1.masked).all()
    assert_agrees(s1)


def test_masked_cell_and_fully_masked_row():
    att = result("seed_001_causal").attention
    tr = explain_row(att, 0).cell(1)  # query 0 may not see key 1
    assert not tr.allowed and tr.exp == 0 and tr.alpha == 0
    att = result("seed_000", mask_kind="padding", valid_len=0).attention
    row = explain_row(att, 2)
    tr = row.cell(1)
    assert row.row_sum == 0 and tr.alpha == 0 and tr.core_alpha == 0
    assert row.fully_masked and row.any_masked
    assert_agrees(row)


def test_multi_head_path_through_w_o_sums_to_the_output():
    sc = PRESETS["seed_004_two_heads"].build()
    w_o = np.arange(16, dtype=float).reshape(4, 4) / 10  # a non-identity W_O
    att = multi_head_attention(sc.x, None, sc.w_q, sc.w_k, sc.w_v, w_o, n_heads=2,
                               temperature=1.3, causal=True)
    i = 3
    total = np.zeros(4)
    shares = np.zeros(4)
    for h in range(2):
        row = explain_row(att, i, head=h, w_o=w_o)
        assert row.head == h and row.n_heads == 2
        assert_agrees(row)
        assert set(row.differences()) >= {"concat", "final_output"}
        part = att.heads[h]
        assert_matches_loop(row, part.q[i], part.k, part.v, part.mask[i], part.scale, 1.3)
        np.testing.assert_allclose(row.concat[2 * h:2 * h + 2], row.output, rtol=TOL)
        shares += row.head_share
        for j in range(att.weights.shape[-1]):
            tr = row.cell(j)
            assert tr.alpha == pytest.approx(att.weights[h, i, j], rel=1e-12, abs=1e-15)
            total += tr.through_w_o
    np.testing.assert_allclose(total, att.output[i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(shares, att.output[i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(row.final_output, att.output[i], rtol=1e-12, atol=1e-12)


def test_multi_head_scenario_every_row_and_head():
    res = result("seed_004_two_heads", n_heads=2)
    sc = PRESETS["seed_004_two_heads"].build()
    att = res.attention
    for h in range(att.n_heads):
        for i in range(att.weights.shape[1]):
            assert_agrees(explain_row(att, i, head=h, w_o=sc.w_o))
    row = explain_row(att, 0)  # without W_O: the concatenation, no projection
    assert row.head == 0 and row.final_output is None and row.w_o_block is None
    assert row.cell(0).through_w_o is None
    np.testing.assert_allclose(row.concat, att.concat[0], rtol=TOL, atol=TOL)


def test_additive_rows_agree_with_the_core_and_the_formula():
    res = result("bahdanau")
    att = res.attention
    sc = PRESETS["bahdanau"].build()
    inputs = AdditiveInputs(res.x, res.source_x, res.source_x, sc.w_a_q, sc.w_a_k, sc.v_a)
    for i in range(att.weights.shape[0]):
        row = explain_row(att, i, additive=inputs)
        assert row.kind == "additive" and row.scale == 1 and row.temperature == 1
        assert_agrees(row)
        assert row.differences()["features"] <= TOL
        f = np.tanh(res.x[i] @ sc.w_a_q + res.source_x @ sc.w_a_k)  # (t_k, d_a)
        np.testing.assert_allclose(row.features, f, rtol=TOL, atol=TOL)
        np.testing.assert_allclose(row.scores, f @ sc.v_a, rtol=TOL, atol=TOL)
        for j in range(att.weights.shape[1]):
            tr = row.cell(j)
            assert tr.score == pytest.approx(att.scores[i, j], rel=1e-12)
            assert tr.alpha == pytest.approx(att.weights[i, j], rel=1e-12)
    np.testing.assert_allclose(tr.products.sum(), tr.score)


def test_additive_masked_with_a_bias_and_a_fully_masked_query():
    queries, keys = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 3))
    values = RNG.standard_normal((5, 2))
    w_q, w_k, v_a, bias = (RNG.standard_normal((4, 6)), RNG.standard_normal((3, 6)),
                           RNG.standard_normal(6), RNG.standard_normal(6))
    mask = np.array([[True, False, True, True, False], [False] * 5, [True] * 5])
    att = additive_attention(queries, keys, values, w_q, w_k, v_a, bias=bias, mask=mask)
    inputs = AdditiveInputs(queries, keys, values, w_q, w_k, v_a, bias=bias)
    for i in range(3):
        row = explain_row(att, i, additive=inputs)
        assert_agrees(row)
        assert row.fully_masked == (i == 1)
    with pytest.raises(ValueError, match="needs its inputs"):
        explain_row(att, 0)


def test_out_of_range_row_cell_and_head():
    att = result("seed_000").attention
    with pytest.raises(ValueError, match="query i must be between 0 and 3, got 4"):
        explain_row(att, 4)
    with pytest.raises(ValueError, match="key j must be between 0 and 3, got 4"):
        explain_row(att, 0).cell(4)
    mh = result("seed_004_two_heads").attention
    with pytest.raises(ValueError, match="head must be between 0 and 1, got 2"):
        explain_row(mh, 0, head=2)
