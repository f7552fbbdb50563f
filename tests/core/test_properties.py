"""Properties of attention that hold for every input, checked with Hypothesis.

Rows of weights are a probability distribution (or all zero for a fully masked query); the
causal upper triangle is exactly zero; keys and values may be permuted together; self-attention
without a mask is permutation-equivariant; one head is single-head attention; softmax ignores
a constant added to a row; huge finite inputs give finite weights or a ValueError, never NaN,
inf or a RuntimeWarning; float32 stays float32.

The result protocol (``n_heads``, ``head(h)``) holds for every head count; softmax refuses
NaN and +inf wherever they are.

Examples are small (t, d <= 5) and few (40 per test) so the whole file runs in about 10 s.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz import (
    additive_attention,
    attention_pooling,
    causal_mask,
    cross_attention,
    mix_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    self_attention,
    softmax,
)

# Settings: tests/conftest.py's profile (derandomised, no example database, 50 examples, a 5 s
# deadline, no timing health check). A profile loaded here changed it for every module
# collected after this one.

MODERATE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
SIZES = st.integers(1, 5)


def matrices(rows, cols, elements=MODERATE, dtype=np.float64):
    return hnp.arrays(dtype, (rows, cols), elements=elements)


@st.composite
def qkv(draw, elements=MODERATE, dtype=np.float64):
    """q (t_q, d_k), k (t_k, d_k), v (t_k, d_v) with small random sizes."""
    t_q, t_k, d_k, d_v = (draw(SIZES) for _ in range(4))
    return (draw(matrices(t_q, d_k, elements, dtype)), draw(matrices(t_k, d_k, elements, dtype)),
            draw(matrices(t_k, d_v, elements, dtype)))


@st.composite
def self_inputs(draw, elements=MODERATE, dtype=np.float64):
    """x (t, d_model) and w_q, w_k (d_model, d_k), w_v (d_model, d_v)."""
    t, d_model, d_k, d_v = (draw(SIZES) for _ in range(4))
    return (draw(matrices(t, d_model, elements, dtype)),
            draw(matrices(d_model, d_k, elements, dtype)),
            draw(matrices(d_model, d_k, elements, dtype)),
            draw(matrices(d_model, d_v, elements, dtype)))


SCALES = st.one_of(st.none(), st.floats(0, 4))
TEMPERATURES = st.floats(0.1, 10)


def assert_distribution_rows(weights, mask):
    """Each row >= 0, summing to 1 where the query may attend somewhere, all 0 otherwise."""
    weights = np.asarray(weights)
    assert np.all(np.isfinite(weights))
    assert np.all(weights >= 0)
    assert np.all(weights[..., ~mask] == 0)
    attends = np.asarray(mask).any(axis=-1)
    sums = weights.sum(axis=-1)
    np.testing.assert_allclose(sums, np.broadcast_to(attends, sums.shape).astype(float),
                               rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Weights are distributions over the keys
# ---------------------------------------------------------------------------------------------


@given(qkv(), st.data(), SCALES, TEMPERATURES)
def test_rows_of_weights_are_distributions(inputs, data, scale, temperature):
    q, k, v = inputs
    mask = data.draw(hnp.arrays(np.bool_, (q.shape[0], k.shape[0])))
    result = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale,
                                          temperature=temperature)
    assert_distribution_rows(result.weights, mask)
    # so each output row is a convex combination of the values
    lo, hi = v.min(axis=0), v.max(axis=0)
    visible = mask.any(axis=1)
    tol = 1e-9 * (1 + np.abs(v).max())
    assert np.all(result.output[visible] >= lo - tol)
    assert np.all(result.output[visible] <= hi + tol)


@given(self_inputs(), st.data())
def test_causal_upper_triangle_is_exactly_zero(inputs, data):
    result = self_attention(*inputs, causal=True)
    t = inputs[0].shape[0]
    assert np.all(result.weights[np.triu_indices(t, 1)] == 0)
    assert_distribution_rows(result.weights, np.tri(t, dtype=bool))
    np.testing.assert_allclose(result.output[0], result.v[0], rtol=1e-12, atol=1e-12)
    # and for a rectangular causal mask
    q, k, v = data.draw(qkv())
    mask = causal_mask(q.shape[0], k.shape[0])
    weights = scaled_dot_product_attention(q, k, v, mask=mask).weights
    assert np.all(weights[~mask] == 0)


@given(qkv(), st.data(), SCALES)
def test_permuting_keys_and_values_together_leaves_the_output_unchanged(inputs, data, scale):
    q, k, v = inputs
    t_k = k.shape[0]
    mask = data.draw(hnp.arrays(np.bool_, (q.shape[0], t_k)))
    perm = np.array(data.draw(st.permutations(range(t_k))))
    before = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    after = scaled_dot_product_attention(q, k[perm], v[perm], mask=mask[:, perm], scale=scale)
    np.testing.assert_allclose(after.output, before.output, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(after.weights, before.weights[:, perm], rtol=1e-9, atol=1e-12)


@given(self_inputs(), st.data(), TEMPERATURES)
def test_bidirectional_self_attention_is_permutation_equivariant(inputs, data, temperature):
    x, w_q, w_k, w_v = inputs
    perm = np.array(data.draw(st.permutations(range(x.shape[0]))))
    before = self_attention(x, w_q, w_k, w_v, temperature=temperature)
    after = self_attention(x[perm], w_q, w_k, w_v, temperature=temperature)
    np.testing.assert_allclose(after.output, before.output[perm], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(after.weights, before.weights[np.ix_(perm, perm)], rtol=1e-9,
                               atol=1e-12)


@settings(max_examples=25)  # many arrays per example
@given(self_inputs(), st.data(), SCALES, TEMPERATURES, st.booleans())
def test_one_head_is_single_head_attention(inputs, data, scale, temperature, causal):
    x = inputs[0]
    mask = data.draw(hnp.arrays(np.bool_, (x.shape[0], x.shape[0])))
    single = self_attention(*inputs, mask=mask, causal=causal, scale=scale,
                            temperature=temperature)
    multi = multi_head_attention(x, None, *inputs[1:], n_heads=1, mask=mask, causal=causal,
                                 scale=scale, temperature=temperature)
    for name in ("scores", "weights"):
        np.testing.assert_allclose(getattr(multi, name)[0], getattr(single, name), rtol=1e-10,
                                   atol=1e-12)
    np.testing.assert_allclose(multi.output, single.output, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(multi.mask, single.mask)
    assert multi.scale == single.scale


@given(hnp.arrays(np.float64, st.tuples(SIZES, SIZES), elements=st.floats(-50, 50)),
       st.data())
def test_softmax_ignores_a_constant_added_to_a_row(scores, data):
    shift = data.draw(hnp.arrays(np.float64, (scores.shape[0], 1),
                                 elements=st.floats(-1e3, 1e3)))
    np.testing.assert_allclose(softmax(scores + shift), softmax(scores), rtol=1e-9, atol=1e-12)


@given(hnp.arrays(np.float64, st.tuples(SIZES, SIZES), elements=st.floats(-50, 50)),
       st.data(), st.sampled_from([np.nan, np.inf]))
def test_softmax_refuses_nan_and_plus_inf_anywhere(scores, data, bad):
    """−inf is a masked score; NaN and +inf raise instead of giving unnormalised rows."""
    i = data.draw(st.integers(0, scores.shape[0] - 1))
    j = data.draw(st.integers(0, scores.shape[1] - 1))
    scores[i, j] = bad
    with pytest.raises(ValueError, match=re.escape(f"got {bad} at index ({i}, {j})")):
        softmax(scores)
    scores[i, j] = -np.inf
    assert np.all(np.isfinite(softmax(scores)))


@settings(max_examples=25)  # many arrays per example
@given(self_inputs(), st.data(), st.booleans())
def test_head_h_of_a_multi_head_result_is_its_slice_h(inputs, data, causal):
    x, w_q, w_k, w_v = inputs
    n_heads = data.draw(st.integers(1, 3))
    w_q, w_k, w_v = (np.tile(w, n_heads) for w in (w_q, w_k, w_v))
    result = multi_head_attention(x, None, w_q, w_k, w_v, n_heads=n_heads, causal=causal)
    assert result.n_heads == n_heads == len(result.heads)
    for h in range(n_heads):
        head = result.head(h)
        assert head.n_heads == 1 and head.head(0) is head
        for name in ("scores", "scaled", "masked", "weights"):
            np.testing.assert_array_equal(getattr(head, name), getattr(result, name)[h])
        np.testing.assert_array_equal(head.output, result.head_outputs[h])
    with pytest.raises(ValueError, match=f"there is no head {n_heads}"):
        result.head(n_heads)


@given(self_inputs(), st.data())
def test_heads_of_multi_head_attention_attend_on_their_own_column_blocks(inputs, data):
    x, w_q, w_k, w_v = inputs
    n_heads = data.draw(st.integers(1, 3))
    w_q, w_k, w_v = (np.tile(w, n_heads) for w in (w_q, w_k, w_v))  # n_heads equal blocks
    result = multi_head_attention(x, None, w_q, w_k, w_v, n_heads=n_heads)
    single = self_attention(*inputs)
    for head in result.heads:  # equal blocks: every head is the single-head computation
        np.testing.assert_allclose(head.weights, single.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.concat, np.tile(single.output, n_heads), rtol=1e-10,
                               atol=1e-10)


# ---------------------------------------------------------------------------------------------
# Extreme values: finite weights, or a ValueError; never NaN, inf or a RuntimeWarning
# ---------------------------------------------------------------------------------------------

UP_TO_1E150 = st.floats(-1e150, 1e150, allow_nan=False, allow_infinity=False)
ANY_FINITE = st.floats(allow_nan=False, allow_infinity=False)
HUGE = st.one_of(ANY_FINITE, st.sampled_from([1.7976931348623157e308, -1.7976931348623157e308,
                                              1e200, -1e200, 1e154, -1e154, 0.0]))


@given(qkv(elements=UP_TO_1E150), st.data())
def test_inputs_up_to_1e150_give_finite_weights(inputs, data):
    q, k, v = inputs
    mask = data.draw(hnp.arrays(np.bool_, (q.shape[0], k.shape[0])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = scaled_dot_product_attention(q, k, v, mask=mask)
    assert_distribution_rows(result.weights, mask)
    assert np.all(np.isfinite(result.output))


@settings(max_examples=25)  # many arrays per example
@given(st.data())
def test_additive_and_pooling_inputs_up_to_1e150_give_finite_weights(data):
    t_q, t_k, d, d_a = (data.draw(SIZES) for _ in range(4))
    draw = lambda *shape: data.draw(hnp.arrays(np.float64, shape, elements=UP_TO_1E150))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        additive = additive_attention(draw(t_q, d), draw(t_k, d), draw(t_k, 2), draw(d, d_a),
                                      draw(d, d_a), draw(d_a), bias=draw(d_a))
        pooled = attention_pooling(draw(t_k, d), draw(d), draw(t_k))
    assert_distribution_rows(additive.weights, np.ones((t_q, t_k), dtype=bool))
    assert_distribution_rows(pooled.weights, np.ones(t_k, dtype=bool))


def _result_or_value_error(call):
    """Run ``call`` with warnings as errors; return its result, or None for a ValueError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return call()
        except ValueError as exc:
            assert "overflow" in str(exc)
            return None


@given(qkv(elements=HUGE), st.data(), st.sampled_from([None, 1.0, 1e-300, 1e300]),
       st.sampled_from([1.0, 1e-300, 1e300]))
def test_larger_inputs_give_finite_weights_or_a_value_error(inputs, data, scale, temperature):
    q, k, v = inputs
    mask = data.draw(hnp.arrays(np.bool_, (q.shape[0], k.shape[0])))
    result = _result_or_value_error(lambda: scaled_dot_product_attention(
        q, k, v, mask=mask, scale=scale, temperature=temperature))
    if result is not None:
        assert_distribution_rows(result.weights, mask)
        assert not np.any(np.isnan(result.output))


@settings(max_examples=25)  # many arrays per example
@given(self_inputs(elements=HUGE), st.data())
def test_larger_inputs_to_the_projecting_functions(inputs, data):
    x, w_q, w_k, w_v = inputs
    t = x.shape[0]
    w_o = data.draw(matrices(w_v.shape[1], 2, HUGE))
    for call in (lambda: self_attention(x, w_q, w_k, w_v, causal=True),
                 lambda: cross_attention(x[:1], x, w_q, w_k, w_v),
                 lambda: multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=1)):
        result = _result_or_value_error(call)
        if result is not None:
            assert np.all(np.isfinite(result.weights))
            assert np.all(result.weights >= 0)
            sums = result.weights.sum(axis=-1)
            np.testing.assert_allclose(sums, np.ones_like(sums), rtol=0, atol=1e-12)
            assert result.output.shape[-2] in (1, t)


@settings(max_examples=25)  # many arrays per example
@given(st.data())
def test_larger_inputs_to_additive_attention_pooling_and_mixing(data):
    t_q, t_k, d, d_a = (data.draw(SIZES) for _ in range(4))
    draw = lambda *shape: data.draw(hnp.arrays(np.float64, shape, elements=HUGE))  # noqa: E731
    for call in (
        lambda: additive_attention(draw(t_q, d), draw(t_k, d), draw(t_k, 2), draw(d, d_a),
                                   draw(d, d_a), draw(d_a), bias=draw(d_a)),
        lambda: attention_pooling(draw(t_k, d), draw(d), draw(t_k)),
    ):
        result = _result_or_value_error(call)
        if result is not None:
            assert np.all(np.isfinite(result.weights)) and np.all(result.weights >= 0)
            np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    mixed = _result_or_value_error(lambda: mix_heads(draw(2, t_q, d), draw(2)))
    assert mixed is None or np.all(np.isfinite(mixed))


# ---------------------------------------------------------------------------------------------
# dtypes and fully masked queries
# ---------------------------------------------------------------------------------------------

FLOAT32 = st.floats(-10, 10, width=32)


@settings(max_examples=25)  # many arrays per example
@given(qkv(elements=FLOAT32, dtype=np.float32), self_inputs(elements=FLOAT32, dtype=np.float32))
def test_float32_in_float32_out(inputs, projected):
    q, k, v = inputs
    x, w_q, w_k, w_v = projected
    f32 = np.float32
    results = [scaled_dot_product_attention(q, k, v), self_attention(x, w_q, w_k, w_v),
               cross_attention(x, x, w_q, w_k, w_v),
               multi_head_attention(x, None, w_q, w_k, w_v, np.eye(w_v.shape[1], dtype=f32),
                                    n_heads=1)]
    for result in results:
        for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "output"):
            assert getattr(result, name).dtype == f32, name
    additive = additive_attention(q, k, v, np.eye(q.shape[1], 3, dtype=f32),
                                  np.eye(k.shape[1], 3, dtype=f32), np.ones(3, dtype=f32))
    for name in ("features", "scores", "weights", "output"):
        assert getattr(additive, name).dtype == f32, name
    pooled = attention_pooling(x, w_q[:, 0])
    assert pooled.scores.dtype == pooled.weights.dtype == pooled.output.dtype == f32
    assert mix_heads(results[3].head_outputs, np.ones(1, dtype=f32)).dtype == f32
    assert softmax(q).dtype == f32
    # float32 mixed with float64 computes in float64
    assert scaled_dot_product_attention(q, k, v.astype(np.float64)).weights.dtype == np.float64


@given(qkv(), st.data(), SCALES, TEMPERATURES)
def test_a_fully_masked_query_gives_zeros_and_no_runtime_warning(inputs, data, scale,
                                                                 temperature):
    q, k, v = inputs
    mask = data.draw(hnp.arrays(np.bool_, (q.shape[0], k.shape[0])))
    row = data.draw(st.integers(0, q.shape[0] - 1))
    mask[row] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale,
                                              temperature=temperature)
        additive = additive_attention(q, k, v, np.eye(q.shape[1]), np.eye(k.shape[1]),
                                      np.ones(q.shape[1]), mask=mask)
        multi = multi_head_attention(q, k, np.eye(q.shape[1]), np.eye(k.shape[1]),
                                     np.eye(k.shape[1]), n_heads=1, mask=mask)
    for res in (result, additive, multi):
        weights, output = np.asarray(res.weights), np.asarray(res.output)
        assert np.all(weights[..., row, :] == 0)
        assert np.all(output[..., row, :] == 0)
    assert np.all(result.masked[row] == -np.inf)
