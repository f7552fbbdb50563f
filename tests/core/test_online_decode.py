"""Online softmax (FlashAttention tiles) and KV-cache decoding against the one-pass softmax,
an explicit per-query loop, torch (causal_lower_right) and hypothesis properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.core.attention import scaled_dot_product_attention
from attnviz.core.decode import cache_bytes, cached_decoding
from attnviz.core.masks import causal_mask
from attnviz.core.online import memory_traffic, online_softmax_attention

TOL = dict(rtol=1e-12, atol=1e-12)


def loop_online(q, k, v, mask, tile, factor):
    """Milakov & Gimelshein's algorithm written one query and one key at a time."""
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(q.shape[0]):
        m, l_sum, o = -np.inf, 0.0, np.zeros(v.shape[1])
        for start in range(0, k.shape[0], tile):
            for j in range(start, min(start + tile, k.shape[0])):
                if not mask[i, j]:
                    continue
                s = float(q[i] @ k[j]) * factor
                m_new = max(m, s)
                l_sum = l_sum * np.exp(m - m_new) + np.exp(s - m_new)
                o = o * np.exp(m - m_new) + np.exp(s - m_new) * v[j]
                m = m_new
        out[i] = o / l_sum if l_sum > 0 else 0
    return out


@pytest.mark.parametrize("tile", [1, 2, 3, 5, 7, 100])
def test_online_softmax_equals_the_one_pass_softmax_and_the_loop(tile):
    rng = np.random.default_rng(tile)
    q, k, v = rng.normal(size=(5, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 3))
    mask = rng.random((5, 7)) < 0.6
    mask[1] = False  # a fully masked query
    r = online_softmax_attention(q, k, v, tile=tile, mask=mask, scale=0.8, temperature=1.5)
    full = scaled_dot_product_attention(q, k, v, mask=mask, scale=0.8, temperature=1.5)
    np.testing.assert_allclose(r.output, full.output, **TOL)
    np.testing.assert_allclose(r.weights, full.weights, **TOL)
    np.testing.assert_allclose(r.output, loop_online(q, k, v, mask, tile, 0.8 / 1.5), **TOL)
    assert r.difference <= 1e-12
    assert len(r.tiles) == -(-7 // tile) and r.tiles[-1].stop == 7
    assert (r.output[1] == 0).all() and np.isneginf(r.lse[1])
    np.testing.assert_allclose(r.tiles[-1].o / np.where(r.tiles[-1].l > 0, r.tiles[-1].l, 1)
                               [:, None], r.output, **TOL)


def test_the_running_max_and_rescaling_follow_the_tiles():
    q, k, v = np.array([[1.0]]), np.array([[0.0], [1.0], [3.0]]), np.eye(3)
    r = online_softmax_attention(q, k, v, tile=1, scale=1.0)
    assert [float(t.m[0]) for t in r.tiles] == [0.0, 1.0, 3.0]
    # the first tile rescales nothing (exp(−inf) = 0 times the empty sums)
    np.testing.assert_allclose([t.alpha[0] for t in r.tiles], [0.0, np.exp(-1), np.exp(-2)])
    np.testing.assert_allclose(r.lse, [np.log(1 + np.e + np.e ** 3)], **TOL)


def test_bad_tile_sizes_are_refused():
    with pytest.raises(ValueError, match="tile"):
        online_softmax_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), tile=0)


def test_memory_traffic_counts():
    m = memory_traffic(4, 6, 3, 2, tile=2)
    assert m["naive"] == 4 * 3 + 6 * 3 + 4 * 4 * 6 + 6 * 2 + 4 * 2
    assert m["tiled"] == 4 * 3 + 6 * 3 + 6 * 2 + 4 * 2 + 2 * 4 * 3
    assert m["scores_kept_tiled"] == 8 and m["scores_kept_naive"] == 24


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 9), st.integers(1, 10), st.integers(0, 2**31))
def test_online_softmax_equals_softmax_for_every_tile_size(t_q, t_k, tile, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(t_q, 3)) * 4, rng.normal(size=(t_k, 3)), rng.normal(size=(t_k, 2))
    mask = rng.random((t_q, t_k)) < 0.7
    r = online_softmax_attention(q, k, v, tile=tile, mask=mask)
    full = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(r.output, full.output, **TOL)


@pytest.mark.parametrize("prefill", [1, 2, 4, 6])
def test_cached_decoding_equals_full_causal_attention_row_for_row(prefill):
    rng = np.random.default_rng(prefill)
    q, k, v = rng.normal(size=(6, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    r = cached_decoding(q, k, v, prefill=prefill, temperature=0.7)
    full = scaled_dot_product_attention(q, k, v, mask=causal_mask(6), temperature=0.7)
    np.testing.assert_allclose(r.weights, full.weights, **TOL)
    np.testing.assert_allclose(r.output, full.output, **TOL)
    assert [s.cache_len for s in r.steps] == list(range(prefill, 7))
    assert r.steps[0].queries == range(0, prefill)
    for step in r.steps[1:]:  # one query row against the whole cache
        assert len(step.queries) == 1 and step.weights.shape == (1, step.cache_len)
        np.testing.assert_allclose(step.weights[0], full.weights[step.queries[0], :step.cache_len],
                                   **TOL)


def test_a_window_mask_combines_with_cached_decoding():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(5, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    window = np.abs(np.subtract.outer(np.arange(5), np.arange(5))) <= 1
    r = cached_decoding(q, k, v, prefill=1, mask=window)
    full = scaled_dot_product_attention(q, k, v, mask=window & causal_mask(5))
    np.testing.assert_allclose(r.output, full.output, **TOL)


def test_bottom_right_alignment_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention.bias import causal_lower_right
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    ours = scaled_dot_product_attention(q, k, v, mask=causal_mask(2, 5, align="bottom_right"))
    bias = causal_lower_right(2, 5)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q)[None], torch.tensor(k)[None], torch.tensor(v)[None], attn_mask=bias)
    np.testing.assert_allclose(ours.output, theirs[0].numpy(), **TOL)
    np.testing.assert_array_equal(causal_mask(2, 5, align="bottom_right"),
                                  bias._materialize().numpy())


def test_top_left_alignment_during_decoding_sees_only_the_first_key():
    assert causal_mask(1, 5).tolist() == [[True, False, False, False, False]]
    assert causal_mask(1, 5, align="bottom_right").all()
    with pytest.raises(ValueError, match="align"):
        causal_mask(2, 3, align="middle")


def test_prefill_out_of_range_and_cache_size():
    q = np.ones((3, 2))
    with pytest.raises(ValueError, match="prefill must be between 1"):
        cached_decoding(q, q, q, prefill=4)
    with pytest.raises(ValueError, match="prefill"):
        cached_decoding(q, q, q, prefill=0)
    assert cache_bytes(1, n_layers=32, n_kv_heads=8, d_head=128) == 131072  # Llama-3-8B: 128 KiB


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 8), st.data())
def test_cached_decoding_equals_causal_attention_for_every_prefill(t, data):
    prefill = data.draw(st.integers(1, t))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    q, k, v = rng.normal(size=(t, 3)) * 2, rng.normal(size=(t, 3)), rng.normal(size=(t, 2))
    r = cached_decoding(q, k, v, prefill=prefill)
    full = scaled_dot_product_attention(q, k, v, mask=causal_mask(t))
    np.testing.assert_allclose(r.output, full.output, **TOL)
    assert len(r.steps) == t - prefill + 1
