"""The backward pass (attnviz.core.backward) against central finite differences, and its
properties with hypothesis.

The loss of every check is L = Σ O ∘ D + Σ P ∘ E with random D (an upstream dO) and E (a loss's
own dP), so every path of the backward pass carries a gradient. Central differences in float64
with step 1e-6 agree with an exact gradient to ~1e-9 relative; the bound is the issue's 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.core.additive import additive_attention, attention_pooling
from attnviz.core.attention import attend_heads, scaled_dot_product_attention
from attnviz.core.backward import (
    additive_backward,
    attention_backward,
    linear_backward,
    pooling_backward,
    softmax_backward,
)
from attnviz.core.qk_norm import rms_norm, rms_norm_backward

EPS = 1e-6
REL = 1e-6


def numeric_gradient(f, a: np.ndarray) -> np.ndarray:
    """Central differences of the scalar f() with respect to every entry of ``a`` (in place)."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + EPS
        up = f()
        a[idx] = old - EPS
        down = f()
        a[idx] = old
        g[idx] = (up - down) / (2 * EPS)
    return g


def assert_gradient(exact, numeric) -> None:
    """Relative error (to the largest entry) ≤ 1e-6."""
    exact, numeric = np.asarray(exact), np.asarray(numeric)
    assert exact.shape == numeric.shape
    top = max(np.abs(numeric).max(), 1e-3)
    assert np.abs(exact - numeric).max() / top <= REL, (exact, numeric)


def random_mask(rng, t_q, t_k, *, full_row=False):
    mask = rng.random((t_q, t_k)) < 0.7
    mask[:, 0] |= ~mask.any(axis=1)  # every row keeps a key ...
    if full_row:
        mask[t_q // 2] = False  # ... except one, fully masked
    return mask


CASES = [  # (n_heads, n_kv, masked, full_row, w_o, softcap, bias)
    (1, 1, False, False, False, None, False),
    (1, 1, True, True, False, None, False),
    (2, 2, True, False, True, None, False),
    (4, 2, True, True, True, None, True),
    (4, 1, False, False, True, 1.5, False),
    (3, 3, True, False, False, 0.8, True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "h{}kv{}m{}f{}o{}c{}b{}".format(*c))
def test_attention_backward_matches_finite_differences(case):
    n, n_kv, masked, full_row, with_wo, softcap, with_bias = case
    rng = np.random.default_rng(sum(map(hash, map(str, case))) % 2**32)
    t_q, t_k, d_k, d_v = 4, 5, 3, 2
    q, k, v = rng.normal(size=(n, t_q, d_k)), rng.normal(size=(n_kv, t_k, d_k)), \
        rng.normal(size=(n_kv, t_k, d_v))
    w_o = rng.normal(size=(n * d_v, 3)) if with_wo else None
    mask = random_mask(rng, t_q, t_k, full_row=full_row) if masked else None
    bias = rng.normal(size=(n, t_q, t_k)) if with_bias else None
    kw = dict(mask=mask, scale=0.7, temperature=1.3, bias=bias, softcap=softcap)
    out_shape = (t_q, 3) if with_wo else (t_q, n * d_v)
    d_out, d_p = rng.normal(size=out_shape), rng.normal(size=(n, t_q, t_k))

    def loss():
        r = attend_heads(q, k, v, w_o=w_o, **kw)
        return np.sum(r.output * d_out) + np.sum(r.weights * d_p)

    result = attend_heads(q, k, v, w_o=w_o, **kw)
    g = attention_backward(result, d_out, d_weights=d_p)
    assert_gradient(g.d_q, numeric_gradient(loss, q))
    assert_gradient(g.d_k, numeric_gradient(loss, k))
    assert_gradient(g.d_v, numeric_gradient(loss, v))
    if with_wo:
        assert_gradient(g.d_w_o, numeric_gradient(loss, w_o))
    else:
        assert g.d_w_o is None
    if mask is not None:
        assert (g.d_scaled[:, ~mask] == 0).all()
        assert np.isfinite(g.d_q).all()


def test_single_head_result_has_a_head_axis_of_one():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 5))
    d_out = rng.normal(size=(3, 5))

    def loss():
        return np.sum(scaled_dot_product_attention(q, k, v, temperature=0.5).output * d_out)

    g = attention_backward(scaled_dot_product_attention(q, k, v, temperature=0.5), d_out)
    assert g.d_q.shape == (1, 3, 2) and g.n_heads == 1
    assert_gradient(g.d_q[0], numeric_gradient(loss, q))
    assert_gradient(g.d_k[0], numeric_gradient(loss, k))
    assert_gradient(g.d_v[0], numeric_gradient(loss, v))


def test_d_output_of_the_wrong_shape_is_refused():
    r = scaled_dot_product_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="d_output must have the output's shape"):
        attention_backward(r, np.ones((3, 2)))


def test_gradients_that_overflow_are_refused_in_words():
    r = scaled_dot_product_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 2)) * 1e300)
    with pytest.raises(ValueError, match="gradients overflow"):
        attention_backward(r, np.full((2, 2), 1e300))


def test_additive_backward_matches_finite_differences():
    rng = np.random.default_rng(7)
    xq, src = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    w_q, w_k, v_a = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=3)
    mask = random_mask(rng, 3, 5, full_row=True)
    d_out, d_p = rng.normal(size=(3, 4)), rng.normal(size=(3, 5))

    def loss():
        r = additive_attention(xq, src, src, w_q, w_k, v_a, mask=mask)
        return np.sum(r.output * d_out) + np.sum(r.weights * d_p)

    r = additive_attention(xq, src, src, w_q, w_k, v_a, mask=mask)
    g = additive_backward(r, xq, src, src, w_q, w_k, v_a, d_out, d_weights=d_p)
    assert_gradient(g.d_query, numeric_gradient(loss, xq))
    assert_gradient(g.d_keys + g.d_values, numeric_gradient(loss, src))
    assert_gradient(g.d_w_q, numeric_gradient(loss, w_q))
    assert_gradient(g.d_w_k, numeric_gradient(loss, w_k))
    assert_gradient(g.d_v_a, numeric_gradient(loss, v_a))
    assert (g.d_scores[0][~mask] == 0).all() and g.d_scores is g.d_scaled


def test_pooling_backward_matches_finite_differences():
    rng = np.random.default_rng(11)
    x, w, b = rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=6)
    d_out = rng.normal(size=3)

    def loss():
        return np.sum(attention_pooling(x, w, b).output * d_out)

    g = pooling_backward(attention_pooling(x, w, b), x, w, d_out)
    assert_gradient(g.d_x, numeric_gradient(loss, x))
    assert_gradient(g.d_w, numeric_gradient(loss, w))
    assert_gradient(g.d_b, numeric_gradient(loss, b))
    assert abs(g.d_scores.sum()) < 1e-12


def test_linear_and_rms_norm_backward_match_finite_differences():
    rng = np.random.default_rng(3)
    x, w, d_y = rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    d_x, d_w = linear_backward(x, w, d_y)
    assert_gradient(d_x, numeric_gradient(lambda: np.sum((x @ w) * d_y), x))
    assert_gradient(d_w, numeric_gradient(lambda: np.sum((x @ w) * d_y), w))
    z, d_z = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))
    assert_gradient(rms_norm_backward(z, d_z, 1.7),
                    numeric_gradient(lambda: np.sum(rms_norm(z, 1.7) * d_z), z))


finite = st.floats(-5, 5, allow_nan=False, width=64)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.data())
def test_softmax_backward_rows_sum_to_zero_and_masked_entries_are_exactly_zero(t_q, t_k, data):
    logits = np.array(data.draw(st.lists(finite, min_size=t_q * t_k, max_size=t_q * t_k)))
    logits = logits.reshape(t_q, t_k)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=t_q * t_k,
                                       max_size=t_q * t_k))).reshape(t_q, t_k)
    dp = np.array(data.draw(st.lists(finite, min_size=t_q * t_k,
                                     max_size=t_q * t_k))).reshape(t_q, t_k)
    p = np.where(mask, np.exp(logits - logits.max(axis=1, keepdims=True)), 0)
    p = np.divide(p, p.sum(axis=1, keepdims=True), out=np.zeros_like(p),
                  where=p.sum(axis=1, keepdims=True) > 0)
    ds = softmax_backward(p, dp)
    assert np.isfinite(ds).all()
    assert (ds[~mask] == 0).all()
    np.testing.assert_allclose(ds.sum(axis=1), 0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**31))
def test_a_loss_of_the_weights_alone_gives_exactly_zero_value_gradients(t_q, t_k, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(2, t_q, 3)), rng.normal(size=(1, t_k, 3)), \
        rng.normal(size=(1, t_k, 2))
    w_o = rng.normal(size=(4, 3))
    r = attend_heads(q, k, v, w_o=w_o, mask=random_mask(rng, t_q, t_k))
    g = attention_backward(r, None, d_weights=rng.normal(size=(2, t_q, t_k)))
    assert (g.d_v == 0).all() and (g.d_w_o == 0).all() and (g.d_output == 0).all()
    np.testing.assert_allclose(g.d_scaled.sum(axis=-1), 0, atol=1e-12)


def test_the_backward_pass_reads_what_the_forward_applied_and_takes_nothing_twice():
    # the cap, the bias, the scale and W_O come from the result: no argument can disagree
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2))
    w_o = rng.normal(size=(4, 4))  # square: a forgotten W_O would not fail on its shape
    r = attend_heads(q, k, v, softcap=0.9, bias=rng.normal(size=(2, 3, 3)), w_o=w_o)
    assert [m.key for m in r.score_mods] == ["scaled", "bias", "cap"]
    assert r.w_o is not None and np.array_equal(r.w_o, w_o)
    for stale in ({"w_o": w_o}, {"softcap": 0.9}):
        with pytest.raises(TypeError):
            attention_backward(r, np.ones((3, 4)), **stale)
    # a result cannot be made without saying what its scores went through
    with pytest.raises(TypeError):
        type(r.head(0))(*[getattr(r.head(0), f) for f in (
            "q", "k", "v", "scores", "scaled", "masked", "weights", "output", "mask", "scale",
            "temperature")])


def test_a_score_modifier_without_its_derivative_or_written_step_cannot_be_made():
    from dataclasses import dataclass

    from attnviz.core.score_mods import ScoreMod

    @dataclass(frozen=True, eq=False)
    class Half(ScoreMod):  # forward only: no derivative, written or traced step
        def forward(self, s, at):
            return s / 2

    with pytest.raises(TypeError, match="abstract"):
        Half()
