"""Additive (Bahdanau) attention and seed 004's attention pooling, against the loop reference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import reference

from attnviz import AdditiveResult, PoolingResult, additive_attention, attention_pooling, softmax

TOL = {"rtol": 1e-12, "atol": 1e-12}


def assert_close(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, **TOL)


def _case(rng, t_q, t_k, d_q, d_key, d_v, d_a):
    """Random inputs for additive attention (query is 1-D when t_q is None)."""
    query = rng.normal(size=d_q if t_q is None else (t_q, d_q))
    return (query, rng.normal(size=(t_k, d_key)), rng.normal(size=(t_k, d_v)),
            rng.normal(size=(d_q, d_a)), rng.normal(size=(d_key, d_a)), rng.normal(size=d_a))


def test_one_query_by_hand():
    """d_a = 1, w_q = w_k = v_a = 1: e_j = tanh(q + k_j)."""
    result = additive_attention([0.5], [[0.0], [1.0]], [[2.0], [4.0]], [[1.0]], [[1.0]], [1.0])
    e = [math.tanh(0.5), math.tanh(1.5)]
    alpha = [math.exp(e[0]) / (math.exp(e[0]) + math.exp(e[1])),
             math.exp(e[1]) / (math.exp(e[0]) + math.exp(e[1]))]
    assert isinstance(result, AdditiveResult)
    assert_close(result.features, [[e[0]], [e[1]]])
    assert_close(result.scores, e)
    assert_close(result.weights, alpha)
    assert_close(result.output, [2 * alpha[0] + 4 * alpha[1]])


@pytest.mark.parametrize("case", range(15))
def test_one_query_matches_the_loop_reference(case):
    rng = np.random.default_rng(6000 + case)
    t_k, d_q, d_key, d_v, d_a = (int(n) for n in rng.integers(1, 6, size=5))
    args = _case(rng, None, t_k, d_q, d_key, d_v, d_a)
    bias = None if case % 2 else rng.normal(size=d_a)
    mask = None if case % 3 == 0 else rng.random(t_k) < 0.6
    result = additive_attention(*args, bias=bias, mask=mask)
    ref = reference.additive(*args, bias=bias, mask=mask)
    assert result.scores.shape == (t_k,)  # the query axis is dropped for one query
    for name in ("features", "scores", "masked", "weights", "output", "mask"):
        assert_close(getattr(result, name), ref[name])
    assert_close(result.scaled, ref["scores"])  # no scale in additive attention


@pytest.mark.parametrize("case", range(20))
def test_several_queries_match_the_loop_reference(case):
    rng = np.random.default_rng(7000 + case)
    t_q, t_k, d_q, d_key, d_v, d_a = (int(n) for n in rng.integers(1, 6, size=6))
    args = _case(rng, t_q, t_k, d_q, d_key, d_v, d_a)
    bias = None if case % 2 else rng.normal(size=d_a)
    mask = None
    if case % 3:
        mask = rng.random((t_q, t_k)) < 0.6
        mask[rng.integers(t_q)] = case % 2 == 0  # sometimes a fully masked query
    result = additive_attention(*args, bias=bias, mask=mask)
    ref = reference.additive(*args, bias=bias, mask=mask)
    assert result.weights.shape == (t_q, t_k)
    for name in ("features", "scores", "masked", "weights", "output", "mask"):
        assert_close(getattr(result, name), ref[name])
    assert_close(result.scaled, ref["scores"])  # no scale in additive attention


def test_fully_masked_query_gives_zero_weights_and_context_without_warnings():
    rng = np.random.default_rng(1)
    args = _case(rng, 2, 3, 2, 2, 2, 4)
    mask = np.array([[True, False, True], [False, False, False]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = additive_attention(*args, mask=mask)
    assert np.all(result.weights[1] == 0) and np.all(result.output[1] == 0)
    assert result.weights[0, 1] == 0 and result.weights[0].sum() == pytest.approx(1)


def test_additive_result_arrays_are_read_only():
    rng = np.random.default_rng(2)
    mask = np.array([[True, False, True]] * 2)
    result = additive_attention(*_case(rng, 2, 3, 2, 2, 2, 4), mask=mask)
    for name in ("features", "scores", "scaled", "masked", "weights", "output"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(result, name).flat[0] = 1.0


def test_additive_float32_stays_float32_with_the_default_bias():
    """Regression: the default bias used to be float64 and promoted float32 inputs."""
    rng = np.random.default_rng(3)
    args = [a.astype(np.float32) for a in _case(rng, 2, 3, 2, 2, 2, 4)]
    result = additive_attention(*args)
    for name in ("features", "scores", "weights", "output"):
        assert getattr(result, name).dtype == np.float32
    assert additive_attention(*args, bias=np.zeros(4)).weights.dtype == np.float64


# ---------------------------------------------------------------------------------------------
# Seed 004's attention pooling
# ---------------------------------------------------------------------------------------------


def keras_attention_layer(x, w, b):
    """Seed 004's ``Attention(Layer).call`` for one sequence, in NumPy.

    e = squeeze(tanh(x·W + b)), a = softmax(e) over time, output = Σ_t x_t · a_t.
    """
    e = np.tanh(x @ w + b)[:, 0]  # (t,)
    a = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
    return np.sum(x * a[:, None], axis=0)


def test_pooling_equals_the_notebooks_keras_layer():
    rng = np.random.default_rng(40)
    x = rng.normal(size=(30, 8))
    w = rng.normal(size=(8, 1))  # the layer's W: (num_dim_perword, 1)
    b = rng.normal(size=(30, 1))  # the layer's b: one bias per word
    result = attention_pooling(x, w, b)
    assert isinstance(result, PoolingResult)
    assert_close(result.output, keras_attention_layer(x, w, b))
    assert result.weights.sum() == pytest.approx(1)


def test_pooling_softmax_over_an_axis_of_length_one_is_all_ones():
    """Seed 004's "in one catch" cell: ``K.softmax(score)`` on a (batch, t, 1) score.

    The softmax runs over the last axis, of length one, so every "weight" is exactly 1 and
    the context is the plain sum over time, not a weighted average (the ChatGPT layer in
    the same notebook does the same with ``axis=-1``). The weights must run over time.
    """
    rng = np.random.default_rng(41)
    x, w = rng.normal(size=(6, 3)), rng.normal(size=(3, 1))
    score = x @ w  # (t, 1)
    wrong = softmax(score, axis=-1)
    assert np.all(wrong == 1)
    assert_close(np.sum(x * wrong, axis=0), x.sum(axis=0))
    right = attention_pooling(x, w)
    assert right.weights.sum() == pytest.approx(1)
    assert not np.allclose(right.output, x.sum(axis=0))


@pytest.mark.parametrize("case", range(10))
def test_pooling_matches_the_loop_reference(case):
    rng = np.random.default_rng(8000 + case)
    t, d = (int(n) for n in rng.integers(1, 7, size=2))
    x = rng.normal(size=(t, d))
    w = rng.normal(size=d) if case % 2 else rng.normal(size=(d, 1))
    b = [0.0, float(rng.normal()), rng.normal(size=t), rng.normal(size=(t, 1))][case % 4]
    result = attention_pooling(x, w, b)
    ref = reference.pooling(x, w, b)
    for name in ("scores", "weights", "output"):
        assert_close(getattr(result, name), ref[name])


def test_pooling_of_identical_scores_is_the_mean():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 0.0]])
    result = attention_pooling(x, np.zeros(2))
    assert_close(result.weights, [1 / 3] * 3)
    assert_close(result.output, x.mean(axis=0))


def test_pooling_keeps_float32_with_a_scalar_bias():
    """Regression: the default scalar bias 0.0 used to promote float32 inputs to float64."""
    x, w = np.ones((3, 2), dtype=np.float32), np.ones(2, dtype=np.float32)
    result = attention_pooling(x, w)
    assert result.scores.dtype == result.weights.dtype == result.output.dtype == np.float32
    assert attention_pooling(x, w, np.zeros(3)).output.dtype == np.float64


def test_pooling_results_are_read_only():
    result = attention_pooling(np.ones((2, 2)), np.ones(2))
    for name in ("scores", "weights", "output"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(result, name)[0] = 1.0
