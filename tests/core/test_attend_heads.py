"""attend_heads: attention over split heads with a score bias and shared key/value heads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.core.attention import attend_heads, multi_head_attention

TOL = {"rtol": 1e-12, "atol": 1e-12}
QUICK = settings(max_examples=40, deadline=None, database=None)


def per_query_loop(q_h, k_h, v_h, mask, scale, temperature, bias):
    """Every head, every query, written out: the key/value head of query head h is
    h // (n_heads / n_kv_heads)."""
    n, t_q, _ = q_h.shape
    group = n // k_h.shape[0]
    out = np.zeros((n, t_q, v_h.shape[2]))
    weights = np.zeros((n, t_q, k_h.shape[1]))
    for h in range(n):
        k, v = k_h[h // group], v_h[h // group]
        for i in range(t_q):
            logits = [q_h[h, i] @ k[j] * scale / temperature + bias[h, i, j]
                      for j in range(k.shape[0])]
            allowed = [j for j in range(k.shape[0]) if mask[i, j]]
            if not allowed:
                continue
            top = max(logits[j] for j in allowed)
            e = {j: np.exp(logits[j] - top) for j in allowed}
            total = sum(e.values())
            for j in allowed:
                weights[h, i, j] = e[j] / total
                out[h, i] += weights[h, i, j] * v[j]
    return weights, out


@pytest.mark.parametrize(("n_heads", "n_kv"), [(1, 1), (4, 1), (4, 2), (6, 2), (5, 5)])
@pytest.mark.parametrize("case", range(5))
def test_matches_an_explicit_per_query_loop(n_heads, n_kv, case):
    rng = np.random.default_rng(100 * n_heads + 10 * n_kv + case)
    t_q, t_k, d_k, d_v = (int(n) for n in rng.integers(1, 6, size=4))
    q_h = rng.normal(size=(n_heads, t_q, d_k))
    k_h, v_h = rng.normal(size=(n_kv, t_k, d_k)), rng.normal(size=(n_kv, t_k, d_v))
    mask = rng.random((t_q, t_k)) < 0.7
    mask[0] = case % 2 == 0  # a fully masked query on odd cases
    bias = rng.normal(size=(n_heads, t_q, t_k))
    scale, temperature = [None, 0.5][case % 2], [1.0, 2.0, 0.7][case % 3]
    result = attend_heads(q_h, k_h, v_h, mask=mask, scale=scale, temperature=temperature,
                          bias=bias)
    weights, out = per_query_loop(q_h, k_h, v_h, mask, 1 / np.sqrt(d_k) if scale is None
                                  else scale, temperature, bias)
    np.testing.assert_allclose(result.weights, weights, **TOL)
    np.testing.assert_allclose(result.head_outputs, out, **TOL)
    assert result.k.shape == (t_k, n_kv * d_k) and result.q.shape == (t_q, n_heads * d_k)
    for h in range(n_heads):  # each head shows the key/value head it uses
        np.testing.assert_array_equal(result.head(h).k, k_h[h // (n_heads // n_kv)])


@st.composite
def gqa_case(draw):
    n_kv, group = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    t, d_model, d_k, d_v = (draw(st.integers(1, 4)) for _ in range(4))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return n_kv * group, n_kv, t, d_model, d_k, d_v, np.random.default_rng(seed)


@QUICK
@given(gqa_case())
def test_gqa_is_multi_head_with_each_kv_head_repeated_for_its_group(case):
    """n_kv_heads = n_heads is multi-head attention; fewer is multi-head attention with each
    key/value head's weights repeated (interleaved) for its group; 1 is multi-query."""
    n_heads, n_kv, t, d_model, d_k, d_v, rng = case
    x = rng.normal(size=(t, d_model))
    w_q = rng.normal(size=(d_model, n_heads * d_k))
    w_k, w_v = rng.normal(size=(d_model, n_kv * d_k)), rng.normal(size=(d_model, n_kv * d_v))
    w_o = rng.normal(size=(n_heads * d_v, 3))
    split = lambda a, d: a.reshape(t, -1, d).transpose(1, 0, 2)  # noqa: E731
    gqa = attend_heads(split(x @ w_q, d_k), split(x @ w_k, d_k), split(x @ w_v, d_v), w_o=w_o)
    group = n_heads // n_kv
    blocks = lambda w, d: np.hstack([w[:, (h // group) * d:(h // group + 1) * d]  # noqa: E731
                                     for h in range(n_heads)])
    mha = multi_head_attention(x, None, w_q, blocks(w_k, d_k), blocks(w_v, d_v), w_o,
                               n_heads=n_heads)
    np.testing.assert_allclose(gqa.output, mha.output, **TOL)
    np.testing.assert_allclose(gqa.weights, mha.weights, **TOL)
    if n_kv == n_heads:
        np.testing.assert_allclose(gqa.k, mha.k, **TOL)
    if n_kv == 1:  # multi-query: every head scores against the same keys
        for h in range(n_heads):
            np.testing.assert_array_equal(gqa.head(h).k, gqa.head(0).k)


def test_grouping_by_tiling_is_the_pitfall():
    """repeat (0,1,0,1) instead of repeat_interleave (0,0,1,1) pairs heads with other keys."""
    rng = np.random.default_rng(5)
    q_h, k_h, v_h = (rng.normal(size=(n, 3, 2)) for n in (4, 2, 2))
    right = attend_heads(q_h, k_h, v_h)
    tiled = attend_heads(q_h, np.tile(k_h, (2, 1, 1)), np.tile(v_h, (2, 1, 1)))
    interleaved = attend_heads(q_h, np.repeat(k_h, 2, axis=0), np.repeat(v_h, 2, axis=0))
    np.testing.assert_allclose(right.output, interleaved.output, **TOL)
    assert not np.allclose(right.output, tiled.output)


def test_multi_head_attention_goes_through_attend_heads():
    rng = np.random.default_rng(6)
    x, w = rng.normal(size=(4, 4)), rng.normal(size=(4, 6))
    mha = multi_head_attention(x, None, w, w, w, n_heads=3, causal=True)
    q_h = (x @ w).reshape(4, 3, 2).transpose(1, 0, 2)
    same = attend_heads(q_h, q_h, q_h, mask=np.tri(4, dtype=bool))
    for name in ("q", "k", "v", "scores", "scaled", "weights", "head_outputs", "output"):
        np.testing.assert_array_equal(getattr(mha, name), getattr(same, name))


def test_a_zero_bias_changes_nothing_and_the_inputs_are_not_frozen():
    rng = np.random.default_rng(7)
    q_h = rng.normal(size=(2, 3, 2))
    plain = attend_heads(q_h, q_h, q_h)
    biased = attend_heads(q_h, q_h, q_h, bias=np.zeros((3, 3)))
    np.testing.assert_array_equal(plain.weights, biased.weights)
    q_h[0, 0, 0] = 5.0  # still writable, and the result did not change with it
    assert plain.q[0, 0] != 5.0
    with pytest.raises(ValueError):
        plain.weights[0, 0, 0] = 1.0


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(k_h=np.ones((3, 2, 2)), v_h=np.ones((3, 2, 2))),
     r"n_kv_heads \(3, the heads of k_h and v_h\) must divide n_heads \(4, the heads of q_h\); "
     r"valid choices: 1, 2, 4"),
    (dict(k_h=np.ones((2, 2, 3))), r"q_h and k_h must have the same head width d_k"),
    (dict(v_h=np.ones((2, 3, 2))), r"v_h must have as many heads and rows as k_h"),
    (dict(bias=np.ones((3, 2, 2))), r"bias must be broadcastable to \(n_heads, t_q, t_k\) = "
                                    r"\(4, 2, 2\)"),
    (dict(bias=np.full((2, 2), np.nan)), r"bias must hold finite numbers"),
    (dict(w_o=np.ones((3, 2))), r"w_o must have n_heads·d_v = 8 rows"),
    (dict(q_h=np.ones((2, 2))), r"q_h must be 3-D"),
    (dict(temperature=0), r"temperature must be a finite number > 0"),
])
def test_validation_names_the_argument(kwargs, message):
    args = dict(q_h=np.ones((4, 2, 2)), k_h=np.ones((2, 2, 2)), v_h=np.ones((2, 2, 2)))
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        attend_heads(args.pop("q_h"), args.pop("k_h"), args.pop("v_h"), **args)
