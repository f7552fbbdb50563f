"""Attention sinks (attnviz.core.sinks): the window-with-sinks mask by its definition, the
sink softmax against an explicit extra column, and its properties with hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.core.attention import scaled_dot_product_attention
from attnviz.core.sinks import attention_with_sink, sink_window_mask


def test_the_mask_keeps_the_window_and_the_first_tokens():
    m = sink_window_mask(6, window=2, n_sink=1)
    for i in range(6):
        for j in range(6):
            assert m[i, j] == (j <= i and (i - j < 2 or j < 1))
    assert m.sum(axis=1).tolist() == [1, 2, 3, 3, 3, 3]
    assert sink_window_mask(4, window=1).tolist() == np.eye(4, dtype=bool).tolist()


@pytest.mark.parametrize("window, n_sink", [(0, 0), (2, -1), (2, 1.5)])
def test_bad_windows_are_refused(window, n_sink):
    with pytest.raises(ValueError, match="window|n_sink"):
        sink_window_mask(4, window=window, n_sink=n_sink)


def test_the_sink_is_an_extra_softmax_column_dropped_afterwards():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = sink_window_mask(4, window=2, n_sink=1)
    r = attention_with_sink(q, k, v, mask=mask, sink_logit=0.7, temperature=1.3)
    s = q @ k.T / np.sqrt(3) / 1.3
    for i in range(4):  # an explicit row: [allowed scores..., sink] → softmax → drop the sink
        logits = np.append(np.where(mask[i], s[i], -np.inf), 0.7)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        np.testing.assert_allclose(r.weights[i], p[:-1], rtol=1e-12, atol=1e-15)
        assert r.sink_weight[i] == pytest.approx(p[-1], rel=1e-12)
    np.testing.assert_allclose(r.output, r.weights @ v, rtol=1e-12)


def test_without_a_sink_logit_it_is_scaled_dot_product_attention():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(5, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    mask = sink_window_mask(5, window=3, n_sink=1)
    r = attention_with_sink(q, k, v, mask=mask)
    np.testing.assert_array_equal(r.weights, scaled_dot_product_attention(q, k, v,
                                                                          mask=mask).weights)
    assert (r.sink_weight == 0).all()
    with pytest.raises(ValueError, match="sink_logit"):
        attention_with_sink(q, k, v, sink_logit=float("inf"))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 3),
       st.floats(-10, 10, allow_nan=False), st.integers(0, 2**31))
def test_rows_sum_to_one_minus_the_sinks_share(t, window, n_sink, logit, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(t, 3)) * 2, rng.normal(size=(t, 3)), rng.normal(size=(t, 2))
    r = attention_with_sink(q, k, v, mask=sink_window_mask(t, window=window, n_sink=n_sink),
                            sink_logit=logit)
    np.testing.assert_allclose(r.weights.sum(axis=1) + r.sink_weight, 1.0, rtol=1e-12)
    assert (r.sink_weight > 0).all() and (r.weights[~r.mask] == 0).all()


def test_the_traced_row_includes_the_sink_in_its_sum():
    from attnviz.core.explain import explain_row
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    r = attention_with_sink(q, k, v, mask=sink_window_mask(4, window=2, n_sink=1),
                            sink_logit=0.4)
    for i in range(4):
        row = explain_row(r, i)
        np.testing.assert_allclose(row.weights, r.weights[i], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(row.output, r.output[i], rtol=1e-12, atol=1e-15)
        assert row.sink_exp == pytest.approx(r.sink_weight[i] * row.row_sum, rel=1e-12)
