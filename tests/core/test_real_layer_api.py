"""The core's API for real layers: projection biases, n_kv_heads in multi-head
attention, RoPE from inv_freq or cos/sin tables with an attention scaling, Hugging Face's
sliding-window convention, per-head sink logits, and their exports.

Each feature is checked three ways where it applies: golden numbers (tiny hand-checkable
cases), an independent reference (the explicit loops of ``tests/reference.py``, or the
formula written out here), and properties (None = bit for bit the old result, the old API as
a special case). Where transformers is installed, RoPE scalings and the window are also
checked against its own code (``ROPE_INIT_FUNCTIONS``, ``LlamaRotaryEmbedding``,
``masking_utils``); those tests skip without it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference
from hypothesis import given
from hypothesis import strategies as st

import attnviz
from attnviz import (
    apply_rope,
    attend_heads,
    attend_heads_with_sinks,
    attention_with_sink,
    cross_attention,
    multi_head_attention,
    self_attention,
    sliding_window_mask,
    window_mask,
)
from attnviz.core.rope import layout_permutation, rope_angles
from attnviz.core.sinks import sink_window_mask

TOL = {"rtol": 1e-12, "atol": 1e-12}


def rng_arrays(seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


# ---------------------------------------------------------------------------------------------
# Projection biases
# ---------------------------------------------------------------------------------------------

def test_biases_golden_one_token():
    # x = [1, 2]; q = x w_q + b_q = [1+0.5, 2-1] ... one token attends to itself: weight 1
    x = np.array([[1.0, 2.0]])
    eye = np.eye(2)
    r = self_attention(x, eye, eye, eye, b_q=[0.5, -1.0], b_k=[0.0, 1.0], b_v=[10.0, 20.0])
    np.testing.assert_array_equal(r.q, [[1.5, 1.0]])
    np.testing.assert_array_equal(r.k, [[1.0, 3.0]])
    np.testing.assert_array_equal(r.v, [[11.0, 22.0]])
    assert r.scores[0, 0] == 1.5 * 1.0 + 1.0 * 3.0
    np.testing.assert_array_equal(r.output, [[11.0, 22.0]])


def test_biases_equal_the_explicit_loop():
    x, xs, w_q, w_k, w_v, b_q, b_k, b_v = rng_arrays(1, (5, 4), (3, 4), (4, 3), (4, 3), (4, 2),
                                                    (3,), (3,), (2,))
    r = self_attention(x, w_q, w_k, w_v, b_q=b_q, b_k=b_k, b_v=b_v, causal=True)
    ref = reference.sdpa(x @ w_q + b_q, x @ w_k + b_k, x @ w_v + b_v,
                         mask=reference.causal(5, 5))
    np.testing.assert_allclose(r.weights, ref["weights"], **TOL)
    np.testing.assert_allclose(r.output, ref["output"], **TOL)
    c = cross_attention(xs, x, w_q, w_k, w_v, b_q=b_q, b_k=b_k, b_v=b_v)
    ref = reference.sdpa(xs @ w_q + b_q, x @ w_k + b_k, x @ w_v + b_v)
    np.testing.assert_allclose(c.output, ref["output"], **TOL)


def test_no_bias_is_bit_for_bit_the_old_result():
    x, w_q, w_k, w_v, w_o = rng_arrays(2, (6, 8), (8, 8), (8, 8), (8, 8), (8, 5))
    for a, b in ((self_attention(x, w_q, w_k, w_v, causal=True),
                  self_attention(x, w_q, w_k, w_v, causal=True, b_q=None, b_k=None, b_v=None)),
                 (multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=2),
                  multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=2, b_q=None,
                                       b_k=None, b_v=None, b_o=None, n_kv_heads=None))):
        for name in ("q", "k", "v", "scores", "weights", "output"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    zero = multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=2, b_q=np.zeros(8),
                                b_o=np.zeros(5))
    np.testing.assert_array_equal(zero.output, multi_head_attention(
        x, None, w_q, w_k, w_v, w_o, n_heads=2).output)  # + 0 changes no bit


def test_multi_head_biases_and_output_bias_equal_the_loop():
    x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o = rng_arrays(
        3, (4, 6), (6, 6), (6, 6), (6, 6), (6, 3), (6,), (6,), (6,), (3,))
    r = multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=3, b_q=b_q, b_k=b_k, b_v=b_v,
                             b_o=b_o, causal=True)
    q, k, v = x @ w_q + b_q, x @ w_k + b_k, x @ w_v + b_v
    heads = [reference.sdpa(q[:, 2 * h:2 * h + 2], k[:, 2 * h:2 * h + 2],
                            v[:, 2 * h:2 * h + 2], mask=reference.causal(4, 4))
             for h in range(3)]
    np.testing.assert_allclose(r.weights, np.stack([h["weights"] for h in heads]), **TOL)
    concat = np.hstack([h["output"] for h in heads])
    np.testing.assert_allclose(r.output, concat @ w_o + b_o, **TOL)
    np.testing.assert_array_equal(r.b_o, b_o)
    assert r.b_o is not b_o and not r.b_o.flags.writeable


@given(st.integers(1, 5), st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 2)]),
       st.integers(0, 10**6))
def test_a_bias_is_a_row_of_ones_appended_to_x(t, heads, seed):
    """x @ w + b == [x, 1] @ [w; b]: biases are the augmented projection (a property)."""
    n_heads, n_kv = heads
    x, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o = rng_arrays(
        seed, (t, 3), (3, 2 * n_heads), (3, 2 * n_kv), (3, 2 * n_kv), (2 * n_heads, 4),
        (2 * n_heads,), (2 * n_kv,), (2 * n_kv,), (4,))
    r = multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=n_heads, n_kv_heads=n_kv,
                             b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, causal=True)
    ones = np.hstack([x, np.ones((t, 1))])
    aug = multi_head_attention(ones, None, np.vstack([w_q, b_q]), np.vstack([w_k, b_k]),
                               np.vstack([w_v, b_v]), w_o, n_heads=n_heads, n_kv_heads=n_kv,
                               causal=True)
    np.testing.assert_allclose(r.weights, aug.weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.output, aug.output + b_o, rtol=1e-9, atol=1e-12)


def test_bias_errors_name_the_field_and_the_size():
    x, w = np.ones((3, 4)), np.ones((4, 2))
    with pytest.raises(ValueError, match=r"b_k must have one value per column of w_k \(2\), "
                                         r"got 3"):
        self_attention(x, w, w, w, b_k=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="b_v must be 1-D"):
        cross_attention(x, x, w, w, w, b_v=np.ones((2, 2)))
    with pytest.raises(ValueError, match="b_q must contain only finite numbers|b_q"):
        self_attention(x, w, w, w, b_q=[np.nan, 1.0])
    with pytest.raises(ValueError, match="b_o is the bias of the output projection w_o; give "
                                         "w_o with it"):
        multi_head_attention(x, None, w, w, w, n_heads=1, b_o=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"b_o must have one value per column of w_o \(5\)"):
        multi_head_attention(x, None, w, w, w, np.ones((2, 5)), n_heads=1, b_o=[1.0])


# ---------------------------------------------------------------------------------------------
# n_kv_heads in multi_head_attention (GQA / MQA)
# ---------------------------------------------------------------------------------------------

def gqa_loop(x, w_q, w_k, w_v, n_heads, n_kv, mask=None):
    """Query head h reads key/value head h // (n_heads / n_kv), one head at a time."""
    d_k, d_v = w_q.shape[1] // n_heads, w_v.shape[1] // n_kv
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    out = []
    for h in range(n_heads):
        g = h // (n_heads // n_kv)
        out.append(reference.sdpa(q[:, h * d_k:(h + 1) * d_k], k[:, g * d_k:(g + 1) * d_k],
                                  v[:, g * d_v:(g + 1) * d_v], mask=mask))
    return out


@pytest.mark.parametrize("n_heads, n_kv", [(4, 2), (4, 1), (6, 3), (4, 4)])
def test_n_kv_heads_equals_the_explicit_loop(n_heads, n_kv):
    d_k = 3
    x, w_q, w_k, w_v, w_o = rng_arrays(4, (5, 7), (7, n_heads * d_k), (7, n_kv * d_k),
                                       (7, n_kv * 2), (n_heads * 2, 4))
    r = multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=n_heads, n_kv_heads=n_kv,
                             causal=True)
    heads = gqa_loop(x, w_q, w_k, w_v, n_heads, n_kv, mask=reference.causal(5, 5))
    np.testing.assert_allclose(r.weights, np.stack([h["weights"] for h in heads]), **TOL)
    concat = np.hstack([h["output"] for h in heads])
    np.testing.assert_allclose(r.output, concat @ w_o, **TOL)
    assert r.k.shape == (5, n_kv * d_k) and r.v.shape == (5, n_kv * 2)


def test_n_kv_heads_is_multi_head_attention_on_repeated_key_value_blocks():
    # repeat_interleave of the kv column blocks (0,0,1,1), not tile (0,1,0,1)
    x, w_q, w_k, w_v = rng_arrays(5, (6, 8), (8, 8), (8, 4), (8, 4))
    gqa = multi_head_attention(x, None, w_q, w_k, w_v, n_heads=4, n_kv_heads=2)
    blocks = lambda w, order: np.hstack([w[:, 2 * g:2 * g + 2] for g in order])  # noqa: E731
    inter = multi_head_attention(x, None, w_q, blocks(w_k, [0, 0, 1, 1]),
                                 blocks(w_v, [0, 0, 1, 1]), n_heads=4)
    tiled = multi_head_attention(x, None, w_q, blocks(w_k, [0, 1, 0, 1]),
                                 blocks(w_v, [0, 1, 0, 1]), n_heads=4)
    np.testing.assert_allclose(gqa.weights, inter.weights, **TOL)
    np.testing.assert_allclose(gqa.output, inter.output, **TOL)
    assert np.abs(gqa.weights - tiled.weights).max() > 1e-3


@given(st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (6, 2)]),
       st.integers(1, 4), st.integers(1, 3), st.integers(0, 10**6))
def test_n_kv_heads_agrees_with_attend_heads(heads, t, d_k, seed):
    n_heads, n_kv = heads
    x, w_q, w_k, w_v = rng_arrays(seed, (t, 5), (5, n_heads * d_k), (5, n_kv * d_k),
                                  (5, n_kv * 2))
    r = multi_head_attention(x, None, w_q, w_k, w_v, n_heads=n_heads, n_kv_heads=n_kv)
    split = lambda a, n: a.reshape(t, n, -1).transpose(1, 0, 2)  # noqa: E731
    s = attend_heads(split(x @ w_q, n_heads), split(x @ w_k, n_kv), split(x @ w_v, n_kv))
    np.testing.assert_array_equal(r.weights, s.weights)
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0, rtol=1e-12)


def test_n_kv_heads_errors():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"n_kv_heads \(3\) must divide n_heads \(4\); valid "
                                         r"choices: 1, 2, 4"):
        multi_head_attention(x, None, np.ones((4, 8)), np.ones((4, 6)), np.ones((4, 6)),
                             n_heads=4, n_kv_heads=3)
    with pytest.raises(ValueError, match=r"w_k must have n_kv_heads·d_k = 2 × 2 = 4 columns "
                                         r"\(d_k from w_q's 8 columns over 4 heads\), got 6"):
        multi_head_attention(x, None, np.ones((4, 8)), np.ones((4, 6)), np.ones((4, 6)),
                             n_heads=4, n_kv_heads=2)
    with pytest.raises(ValueError, match=r"n_kv_heads \(2\) must divide the number of columns "
                                         r"of w_v \(5\)"):
        multi_head_attention(x, None, np.ones((4, 8)), np.ones((4, 4)), np.ones((4, 5)),
                             n_heads=4, n_kv_heads=2)
    with pytest.raises(ValueError, match="n_kv_heads must be a whole number"):
        multi_head_attention(x, None, np.ones((4, 8)), np.ones((4, 4)), np.ones((4, 4)),
                             n_heads=4, n_kv_heads=0)


# ---------------------------------------------------------------------------------------------
# RoPE from inv_freq, cos/sin tables and an attention scaling
# ---------------------------------------------------------------------------------------------

def rope_loop(x, angles, scaling=1.0, layout="split_half"):
    """Rotate pair i of row m by angles[m, i], one pair at a time, times ``scaling``."""
    x = np.asarray(x, dtype=float)
    out = x.copy()
    half = angles.shape[1]
    for m in range(x.shape[0]):
        for i in range(half):
            a_i, b_i = (i, i + half) if layout == "split_half" else (2 * i, 2 * i + 1)
            c, s = math.cos(angles[m, i]) * scaling, math.sin(angles[m, i]) * scaling
            out[m, a_i] = x[m, a_i] * c - x[m, b_i] * s
            out[m, b_i] = x[m, a_i] * s + x[m, b_i] * c
    return out


def test_rope_golden_quarter_turn():
    # one pair, θ = π/2: position 1 turns (1, 0) into (0, 1); scaling 2 doubles it
    x = np.array([[1.0, 0.0], [1.0, 0.0]])
    out = apply_rope(x, inv_freq=[math.pi / 2], attention_scaling=2.0)
    np.testing.assert_allclose(out, [[2.0, 0.0], [0.0, 2.0]], atol=1e-15)


def test_inv_freq_of_the_default_base_is_bit_for_bit_the_base():
    (x,) = rng_arrays(6, (3, 7, 8))
    inv = 10000.0 ** (-np.arange(0, 8, 2, dtype=float) / 8)
    for layout in ("split_half", "interleaved"):
        np.testing.assert_array_equal(apply_rope(x, inv_freq=inv, layout=layout),
                                      apply_rope(x, layout=layout))
        np.testing.assert_array_equal(apply_rope(x, layout=layout, base=10000.0),
                                      apply_rope(x, layout=layout))
    angles = rope_angles(np.arange(7.0), 8)
    np.testing.assert_array_equal(apply_rope(x, cos=np.cos(angles), sin=np.sin(angles)),
                                  apply_rope(x))


@pytest.mark.parametrize("layout", ["split_half", "interleaved"])
def test_inv_freq_and_scaling_equal_the_explicit_loop(layout):
    (x,) = rng_arrays(7, (6, 10))
    inv = np.array([1.0, 0.3, 0.05, 0.002])  # 4 pairs of 10 dims: 2 pass through
    positions = np.array([0.0, 1.0, 2.0, 5.0, 9.0, 40.0])
    out = apply_rope(x, positions, inv_freq=inv, attention_scaling=1.3, layout=layout,
                     offset=2.0)
    expected = rope_loop(x, (positions + 2.0)[:, None] * inv[None, :], 1.3, layout)
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_array_equal(out[:, 8:], x[:, 8:])
    table = apply_rope(x, cos=np.cos(positions[:, None] * inv), sin=np.sin(positions[:, None]
                                                                           * inv),
                       attention_scaling=1.3, layout=layout)
    np.testing.assert_allclose(table, rope_loop(x, positions[:, None] * inv, 1.3, layout), **TOL)


def test_scaled_rope_keeps_relative_positions_and_scales_scores_by_its_square():
    q, k = rng_arrays(8, (5, 8), (5, 8))
    inv = np.array([0.9, 0.2, 0.04, 0.001])
    scores = lambda off, a: (apply_rope(q, inv_freq=inv, offset=off, attention_scaling=a)  # noqa: E731
                             @ apply_rope(k, inv_freq=inv, offset=off, attention_scaling=a).T)
    np.testing.assert_allclose(scores(0.0, 1.0), scores(17.0, 1.0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores(0.0, 1.7), 1.7 ** 2 * scores(0.0, 1.0), rtol=1e-12,
                               atol=1e-12)
    perm = layout_permutation(8)  # the layouts still agree up to the permutation
    np.testing.assert_allclose(apply_rope(q[:, perm], inv_freq=inv),
                               apply_rope(q, inv_freq=inv, layout="interleaved")[:, perm],
                               **TOL)


def test_rope_source_errors():
    x = np.ones((3, 8))
    with pytest.raises(ValueError, match="give one source of the angles, not base and "
                                         "inv_freq"):
        apply_rope(x, base=500.0, inv_freq=[1.0])
    with pytest.raises(ValueError, match="not inv_freq and cos and sin"):
        apply_rope(x, inv_freq=[1.0], cos=np.ones((3, 1)), sin=np.ones((3, 1)))
    with pytest.raises(ValueError, match="cos and sin are given together"):
        apply_rope(x, cos=np.ones((3, 4)))
    with pytest.raises(ValueError, match="the cos and sin tables already hold the positions"):
        apply_rope(x, [0, 1, 2], cos=np.ones((3, 4)), sin=np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"cos and sin must both have one row per row of x "
                                         r"\(3\)"):
        apply_rope(x, cos=np.ones((4, 4)), sin=np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"inv_freq has 5 pairs; a head of d = 8 dimensions "
                                         r"has at most 4"):
        apply_rope(x, inv_freq=np.ones(5))
    with pytest.raises(ValueError, match=r"d_rot \(8\) must be twice the pairs inv_freq "
                                         r"\(2\)"):
        apply_rope(x, inv_freq=np.ones(2), d_rot=8)
    with pytest.raises(ValueError, match="attention_scaling must be"):
        apply_rope(x, attention_scaling=0.0)


# The scaled RoPEs written from their papers, as functions of the default inv_freq

def linear_inv_freq(inv, factor):
    """Position interpolation (Chen et al. 2023): positions / factor = θ_i / factor."""
    return inv / factor


def llama3_inv_freq(inv, factor, low, high, original):
    """Llama 3.1: long wavelengths divided by factor, short kept, a smooth ramp between."""
    wavelen = 2 * math.pi / inv
    smooth = (original / wavelen - low) / (high - low)
    mid = (1 - smooth) * inv / factor + smooth * inv
    return np.where(wavelen > original / low, inv / factor,
                    np.where(wavelen < original / high, inv, mid))


def dynamic_base(base, factor, t, original, dim):
    """Dynamic NTK: the base raised once the sequence outgrows the original context."""
    return base * ((factor * t / original) - (factor - 1)) ** (dim / (dim - 2))


@pytest.fixture(scope="module")
def hf():
    pytest.importorskip("torch")
    return pytest.importorskip("transformers")


def hf_rotary(hf, dim, rope_parameters, max_positions=32):
    import torch
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = hf.LlamaConfig(hidden_size=dim * 2, num_attention_heads=2, head_dim=dim,
                            max_position_embeddings=max_positions,
                            rope_parameters=rope_parameters)
    return LlamaRotaryEmbedding(config), torch


@pytest.mark.parametrize("params", [
    {"rope_type": "default", "rope_theta": 10000.0},
    {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
    {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
     "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
    {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
     "original_max_position_embeddings": 16},
    {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
], ids=lambda p: p["rope_type"])
def test_every_hugging_face_rope_type_is_expressed_by_inv_freq_and_scaling(hf, params):
    """transformers' own rotary embedding, applied by its own apply_rotary_pos_emb, against
    apply_rope with the module's inv_freq and attention_scaling (and its cos/sin table)."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    dim, t = 16, 48 if params["rope_type"] == "dynamic" else 24
    rot, torch = hf_rotary(hf, dim, params)
    (q,) = rng_arrays(9, (1, 2, t, dim))
    qt = torch.tensor(q)
    positions = torch.arange(t)[None]
    cos, sin = rot(qt, positions)  # (1, t, dim), float64 from float32 angles
    theirs = apply_rotary_pos_emb(qt, qt, cos, sin)[0][0].numpy()  # (2, t, dim)
    inv = rot.inv_freq.double().numpy()  # after the forward: dynamic NTK has updated it
    a = float(rot.attention_scaling)
    # 1) the cos/sin table reproduces transformers' rotation to rounding
    half = dim // 2
    ours = apply_rope(q[0], cos=cos[0, :, :half].numpy() / a, sin=sin[0, :, :half].numpy() / a,
                      attention_scaling=a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    # 2) inv_freq + attention_scaling: float64 angles against transformers' float32 ones
    ours = apply_rope(q[0], inv_freq=inv, attention_scaling=a)
    np.testing.assert_allclose(ours, theirs, atol=5e-5)
    # 3) the inv_freq transformers computed is the paper's formula
    base = params["rope_theta"]
    default = base ** (-np.arange(0, dim, 2, dtype=float) / dim)
    kind = params["rope_type"]
    if kind == "default":
        expected, scaling = default, 1.0
    elif kind == "linear":
        expected, scaling = linear_inv_freq(default, 4.0), 1.0
    elif kind == "llama3":
        expected, scaling = llama3_inv_freq(default, 8.0, 1.0, 4.0, 16), 1.0
    elif kind == "dynamic":  # t = 48 > 32 positions: the base grows
        expected = dynamic_base(base, 2.0, t, 32, dim) ** (-np.arange(0, dim, 2) / dim)
        scaling = 1.0
        assert not np.allclose(expected, default, rtol=1e-3)
    else:  # YaRN: mscale = 0.1 ln(factor) + 1; frequencies checked by their two ends
        expected, scaling = None, 0.1 * math.log(4.0) + 1.0
        assert inv[0] == pytest.approx(default[0], rel=1e-6)  # high frequency: kept
        assert inv[-1] == pytest.approx(default[-1] / 4.0, rel=1e-6)  # low: interpolated
    assert a == pytest.approx(scaling, rel=1e-12)
    if expected is not None:
        np.testing.assert_allclose(inv, expected, rtol=1e-6)
    if kind != "default":
        plain = apply_rope(q[0], inv_freq=default)
        assert np.abs(plain - theirs).max() > 1e-3  # the scaling matters


# ---------------------------------------------------------------------------------------------
# One sliding-window convention: Hugging Face's
# ---------------------------------------------------------------------------------------------

def test_sliding_window_mask_golden():
    expected = np.array([[1, 0, 0, 0, 0],
                         [1, 1, 0, 0, 0],
                         [1, 1, 1, 0, 0],
                         [0, 1, 1, 1, 0],
                         [0, 0, 1, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(sliding_window_mask(5, 3), expected)
    np.testing.assert_array_equal(sliding_window_mask(3, 1), np.eye(3, dtype=bool))


@given(st.integers(1, 12), st.integers(1, 14))
def test_sliding_window_mask_is_the_hugging_face_inequality(t, window):
    m = sliding_window_mask(t, window)
    for i in range(t):
        for j in range(t):
            assert m[i, j] == (i - window < j <= i)
    assert m.sum(axis=1).tolist() == [min(i + 1, window) for i in range(t)]  # W keys at most
    np.testing.assert_array_equal(m, sink_window_mask(t, window=window))
    np.testing.assert_array_equal(m, window_mask(t, width=window - 1, causal=True))


def test_sliding_window_mask_errors():
    with pytest.raises(ValueError, match="window must be a whole number >= 1, got 0"):
        sliding_window_mask(4, 0)
    with pytest.raises(ValueError, match="t must be a whole number >= 1"):
        sliding_window_mask(0, 2)
    with pytest.raises(ValueError, match="the sliding window mask"):
        sliding_window_mask(2**13, 2)


def test_sliding_window_mask_equals_transformers_masking_utils(hf):
    import torch
    from transformers import masking_utils

    t = 7
    i, j = torch.meshgrid(torch.arange(t), torch.arange(t), indexing="ij")
    zero = torch.tensor(0)

    def grid(fn):
        return np.array([[bool(fn(zero, zero, i[a, b], j[a, b])) for b in range(t)]
                         for a in range(t)])

    theirs = grid(masking_utils.sliding_window_causal_mask_function(3))
    np.testing.assert_array_equal(sliding_window_mask(t, 3), theirs)
    theirs = grid(masking_utils.sliding_window_bidirectional_mask_function(2))
    np.testing.assert_array_equal(window_mask(t, width=2), theirs)  # |i − j| <= W


# ---------------------------------------------------------------------------------------------
# Per-head sink logits (gpt-oss)
# ---------------------------------------------------------------------------------------------

def test_sinks_golden_two_equal_keys():
    # scores all 0, sink logit 0: three equal columns, each key 1/3, sink 1/3
    q = np.zeros((2, 1, 2))
    k = np.zeros((1, 2, 2))
    v = np.array([[[1.0], [3.0]]])
    r = attend_heads_with_sinks(q, k, v, sink_logits=[0.0, math.log(2.0)])
    np.testing.assert_allclose(r.weights[0], [[1 / 3, 1 / 3]], rtol=1e-15)
    np.testing.assert_allclose(r.weights[1], [[1 / 4, 1 / 4]], rtol=1e-15)  # exp(s) = 2
    np.testing.assert_allclose(r.sink_weight, [[1 / 3], [1 / 2]], rtol=1e-15)
    np.testing.assert_allclose(r.head_outputs[:, 0, 0], [4 / 3, 1.0], rtol=1e-15)


def test_per_head_sinks_equal_one_call_per_head_and_the_gpt_oss_formula():
    q_h, k_h, v_h, w_o, b_o = rng_arrays(10, (4, 5, 3), (2, 5, 3), (2, 5, 2), (8, 3), (3,))
    sinks = np.array([0.5, -1.0, 2.0, 0.0])
    mask = np.tri(5, dtype=bool)
    r = attend_heads_with_sinks(q_h, k_h, v_h, sink_logits=sinks, mask=mask, w_o=w_o, b_o=b_o)
    outs = []
    for h in range(4):
        one = attention_with_sink(q_h[h], k_h[h // 2], v_h[h // 2], mask=mask,
                                  sink_logit=sinks[h])
        np.testing.assert_allclose(r.weights[h], one.weights, **TOL)
        np.testing.assert_allclose(r.sink_weight[h], one.sink_weight, **TOL)
        assert r.head(h).sink_logit == sinks[h]
        np.testing.assert_array_equal(r.head(h).weights, r.weights[h])
        # gpt-oss eager: cat([scores, sink]), subtract the max, softmax, drop the sink column
        scores = np.where(mask, q_h[h] @ k_h[h // 2].T / math.sqrt(3), -np.inf)
        combined = np.concatenate([scores, np.full((5, 1), sinks[h])], axis=1)
        combined = np.exp(combined - combined.max(axis=1, keepdims=True))
        probs = combined / combined.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(r.weights[h], probs[:, :-1], **TOL)
        outs.append(one.output)
    np.testing.assert_allclose(r.output, np.hstack(outs) @ w_o + b_o, **TOL)
    np.testing.assert_allclose(r.weights.sum(axis=-1) + r.sink_weight, 1.0, rtol=1e-12)
    assert isinstance(r, attnviz.MultiHeadResult) and isinstance(r.head(0), attnviz.SinkResult)
    assert not r.weights.flags.writeable and not r.sink_logits.flags.writeable


def test_a_very_low_sink_is_ordinary_attention():
    q_h, k_h, v_h = rng_arrays(11, (2, 4, 3), (2, 4, 3), (2, 4, 3))
    plain = attend_heads(q_h, k_h, v_h)
    r = attend_heads_with_sinks(q_h, k_h, v_h, sink_logits=[-1e4, -1e4])
    np.testing.assert_allclose(r.weights, plain.weights, **TOL)
    np.testing.assert_array_equal(r.sink_weight, 0.0)


def test_sink_errors():
    q = np.ones((2, 3, 2))
    with pytest.raises(ValueError, match=r"sink_logits must have one logit per head \(2\), "
                                         r"got 3"):
        attend_heads_with_sinks(q, q, q, sink_logits=[0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="sink_logits must"):
        attend_heads_with_sinks(q, q, q, sink_logits=[np.inf, 0.0])
    with pytest.raises(ValueError, match="b_o is the bias of the output projection w_o"):
        attend_heads_with_sinks(q, q, q, sink_logits=[0.0, 0.0], b_o=[1.0])
    with pytest.raises(ValueError, match=r"w_o must have n_heads·d_v = 4 rows"):
        attend_heads_with_sinks(q, q, q, sink_logits=[0.0, 0.0], w_o=np.ones((3, 2)))


# ---------------------------------------------------------------------------------------------
# Exports
# ---------------------------------------------------------------------------------------------

def test_the_real_layer_api_is_exported():
    for name in ("attend_heads", "apply_rope", "sliding_window_mask", "attention_with_sink",
                 "attend_heads_with_sinks", "SinkResult", "MultiHeadSinkResult"):
        assert name in attnviz.__all__ and hasattr(attnviz, name), name
