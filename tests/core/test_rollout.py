"""Head aggregation and attention rollout (attnviz.core.rollout): golden numbers, an explicit
loop written from the paper's formulas, and properties (rows sum to 1, causal stays causal)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnviz.core.rollout import aggregate_heads, attention_rollout


def random_weights(layers, heads, t, seed=0, causal=False):
    x = np.random.default_rng(seed).normal(size=(layers, heads, t, t)) * 2
    if causal:
        x = np.where(np.tril(np.ones((t, t), dtype=bool)), x, -np.inf)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def loop_rollout(weights, residual, how):
    """Abnar & Zuidema's recipe, one cell at a time."""
    layers, heads, t, _ = weights.shape
    result = np.eye(t)
    out = []
    for layer in range(layers):
        a = np.zeros((t, t))
        for i in range(t):
            for j in range(t):
                vals = [weights[layer, h, i, j] for h in range(heads)]
                a[i, j] = sum(vals) / heads if how == "mean" else max(vals)
                a[i, j] = (1 - residual) * a[i, j] + (residual if i == j else 0.0)
        for i in range(t):
            a[i] /= sum(a[i])
        nxt = np.zeros((t, t))
        for i in range(t):
            for j in range(t):
                nxt[i, j] = sum(a[i, k] * result[k, j] for k in range(t))
        result = nxt
        out.append(result)
    return np.array(out)


def test_golden_two_tokens():
    # one layer, one head: token 1 attends fully to token 0
    w = np.array([[[[1.0, 0.0], [1.0, 0.0]]]])
    r = attention_rollout(w, residual=0.5)
    np.testing.assert_allclose(r.rollout, [[1.0, 0.0], [0.5, 0.5]])
    # two identical layers: row 1 = 0.5·[1, 0] + 0.5·[0.5, 0.5]
    r2 = attention_rollout(np.concatenate([w, w]), residual=0.5)
    np.testing.assert_allclose(r2.rollout, [[1.0, 0.0], [0.75, 0.25]])
    np.testing.assert_allclose(r2.cumulative[0], r.rollout)


def test_residual_zero_is_the_plain_product():
    w = random_weights(3, 2, 5, seed=1)
    mean = w.mean(axis=1)
    r = attention_rollout(w, residual=0.0)
    np.testing.assert_allclose(r.rollout, mean[2] @ mean[1] @ mean[0], atol=1e-14)


@pytest.mark.parametrize("how", ["mean", "max"])
@pytest.mark.parametrize("residual", [0.0, 0.5, 0.8])
def test_matches_an_explicit_loop(how, residual):
    w = random_weights(3, 4, 5, seed=2)
    r = attention_rollout(w, residual=residual, how=how)
    np.testing.assert_allclose(r.cumulative, loop_rollout(w, residual, how), atol=1e-13)


def test_aggregation_mean_and_max():
    w = random_weights(2, 3, 4, seed=3)
    np.testing.assert_allclose(aggregate_heads(w, "mean"), w.mean(axis=1))
    np.testing.assert_array_equal(aggregate_heads(w, "max"), w.max(axis=1))
    np.testing.assert_allclose(aggregate_heads(w, "mean").sum(axis=-1), 1.0)
    # one head: every fusion is that head
    np.testing.assert_array_equal(aggregate_heads(w[:, :1], "max"), w[:, 0])


sizes = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 7), st.integers(0, 10**6))


@given(sizes, st.sampled_from(["mean", "max"]), st.floats(0.0, 1.0))
def test_rows_sum_to_one_and_causal_stays_causal(size, how, residual):
    layers, heads, t, seed = size
    for causal in (False, True):
        w = random_weights(layers, heads, t, seed=seed, causal=causal)
        r = attention_rollout(w, residual=residual, how=how)
        np.testing.assert_allclose(r.cumulative.sum(axis=-1), 1.0, atol=1e-12)
        assert (r.cumulative >= 0).all()
        if causal:
            upper = np.triu(np.ones((t, t), dtype=bool), k=1)
            assert (r.cumulative[:, upper] == 0).all()


def test_a_fully_masked_row_stays_zero_without_residual():
    w = np.array([[[[1.0, 0.0], [0.0, 0.0]]]])
    r = attention_rollout(w, residual=0.0)
    np.testing.assert_array_equal(r.rollout, [[1.0, 0.0], [0.0, 0.0]])


@pytest.mark.parametrize("bad, match", [
    (np.ones((2, 3, 3)), "shape"), (np.ones((1, 1, 2, 3)), "shape"),
    (np.full((1, 1, 2, 2), np.nan), "NaN"),
])
def test_refuses_bad_weights(bad, match):
    with pytest.raises(ValueError, match=match):
        attention_rollout(bad)


@pytest.mark.parametrize("residual", [-0.1, 1.5, True, "0.5"])
def test_refuses_a_bad_residual(residual):
    with pytest.raises(ValueError, match="residual"):
        attention_rollout(random_weights(1, 1, 2), residual=residual)


def test_refuses_an_unknown_fusion():
    with pytest.raises(ValueError, match="how"):
        aggregate_heads(random_weights(1, 1, 2), "median")
