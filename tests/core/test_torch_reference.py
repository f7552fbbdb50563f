"""The core against PyTorch, an independent implementation (a test-only dependency).

Three references, all in float64 and compared to 1e-12:

* ``torch.nn.functional.scaled_dot_product_attention`` for the outputs (its ``scale`` is our
  ``scale / temperature``; its boolean ``attn_mask`` has our convention, True = may attend;
  a fully masked query gets a zero output row, as here);
* explicit torch code (``q @ kᵀ``, ``masked_fill`` with −inf, ``torch.softmax``) for the
  scores and weights, which ``F.scaled_dot_product_attention`` does not return;
* ``torch.nn.MultiheadAttention(need_weights=True, average_attn_weights=False)`` with our
  weight matrices loaded (torch multiplies by ``W.T``: ``in_proj_weight`` holds w_qᵀ, w_kᵀ,
  w_vᵀ stacked) for multi-head attention with the default scale.

Skipped where torch is not installed (the core's own environment is numpy-only); the loop
reference of ``tests/reference.py`` covers the same ground there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference

torch = pytest.importorskip("torch")
F = torch.nn.functional

from attnviz import (  # noqa: E402 - after the importorskip
    multi_head_attention,
    scaled_dot_product_attention,
    self_attention,
)

TOL = {"rtol": 1e-12, "atol": 1e-12}
SCALES = (None, 1.0, 0.37, 0.0)
TEMPERATURES = (1.0, 0.5, 2.5)


def close(ours, theirs) -> None:
    """Same shape and values (to 1e-12); ``theirs`` is a torch tensor."""
    theirs = theirs.detach().numpy()
    assert np.shape(ours) == theirs.shape
    np.testing.assert_allclose(ours, theirs, **TOL)


def t64(a) -> torch.Tensor:
    """A float64 (or bool) tensor holding a copy of ``a``."""
    a = np.asarray(a)
    return torch.from_numpy(a.copy() if a.dtype == bool else a.astype(np.float64))


random_mask = reference.random_mask


def torch_weights(q, k, mask, factor):
    """softmax(q kᵀ · factor, masked) written in torch; a fully masked row is all zeros.

    ``q``, ``k`` are tensors of shape (..., t, d); ``mask`` broadcasts to (..., t_q, t_k).
    """
    scores = q @ k.transpose(-1, -2)
    masked = (scores * factor).masked_fill(~mask, float("-inf"))
    return scores, torch.softmax(masked, dim=-1).nan_to_num(0.0)  # all −inf row: NaN → 0


@pytest.mark.parametrize("case", range(40))
def test_scaled_dot_product_attention_matches_torch(case):
    rng = np.random.default_rng(9000 + case)
    t_q, t_k, d_k, d_v = (int(n) for n in rng.integers(1, 9, size=4))
    q, k, v = (rng.normal(size=s) * 2 for s in ((t_q, d_k), (t_k, d_k), (t_k, d_v)))
    mask = None if case % 4 == 0 else random_mask(rng, t_q, t_k)
    causal = case % 5 == 1 and t_q == t_k
    if causal:
        mask = np.tri(t_q, dtype=bool) & (True if mask is None else mask)
    scale, temperature = SCALES[case % 4], TEMPERATURES[case % 3]
    result = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale,
                                          temperature=temperature)

    factor = (1 / math.sqrt(d_k) if scale is None else scale) / temperature
    attn_mask = None if mask is None else t64(mask)
    close(result.output, F.scaled_dot_product_attention(t64(q), t64(k), t64(v),
                                                        attn_mask=attn_mask, scale=factor))
    scores, weights = torch_weights(t64(q), t64(k), t64(result.mask), factor)
    close(result.scores, scores)
    close(result.scaled, scores * factor)
    close(result.weights, weights)
    close(result.output, weights @ t64(v))


@pytest.mark.parametrize("n_heads", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("case", range(8))
def test_multi_head_attention_matches_explicit_torch(n_heads, case):
    rng = np.random.default_rng(9500 + 10 * n_heads + case)
    c = reference.random_multi_head_case(rng, n_heads, case, high=7)
    x_q, x_kv, w_q, w_k, w_v, w_o, mask = (c[k] for k in ("x_q", "x_kv", "w_q", "w_k", "w_v",
                                                          "w_o", "mask"))
    t_q, t_k, d_k, d_v = c["t_q"], c["t_k"], c["d_k"], c["d_v"]
    causal = case % 4 == 2
    scale, temperature = SCALES[case % 4], TEMPERATURES[case % 3]
    result = multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=n_heads, mask=mask,
                                  causal=causal, scale=scale, temperature=temperature)

    # torch: project, split into heads, attend (F.sdpa and explicit), concatenate, project
    xq = t64(x_q)
    xkv = xq if x_kv is None else t64(x_kv)
    q = (xq @ t64(w_q)).view(t_q, n_heads, d_k).transpose(0, 1)  # (n_heads, t_q, d_k)
    k = (xkv @ t64(w_k)).view(t_k, n_heads, d_k).transpose(0, 1)  # (n_heads, t_k, d_k)
    v = (xkv @ t64(w_v)).view(t_k, n_heads, d_v).transpose(0, 1)  # (n_heads, t_k, d_v)
    allowed = torch.ones(t_q, t_k, dtype=torch.bool) if mask is None else t64(mask)
    if causal:
        allowed = allowed & torch.ones(t_q, t_k, dtype=torch.bool).tril()
    factor = (1 / math.sqrt(d_k) if scale is None else scale) / temperature
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=factor)
    scores, weights = torch_weights(q, k, allowed, factor)
    concat = heads.transpose(0, 1).reshape(t_q, n_heads * d_v)  # (t_q, n_heads·d_v)
    output = concat if w_o is None else concat @ t64(w_o)

    close(result.mask, allowed)
    close(result.scores, scores)
    close(result.weights, weights)
    close(result.head_outputs, heads)
    close(result.concat, concat)
    close(result.output, output)
    for h in range(n_heads):
        close(result.head(h).weights, weights[h])
        close(result.head(h).output, heads[h])


@pytest.mark.parametrize(("n_heads", "d_model", "t_q", "t_k", "causal"), [
    (1, 4, 5, 5, False), (1, 4, 5, 5, True), (2, 4, 3, 6, False), (4, 8, 7, 7, False),
    (4, 8, 7, 7, True), (8, 16, 6, 4, False), (3, 6, 1, 9, False), (8, 16, 9, 9, True),
])  # causal cases are self-attention (t_q = t_k)
def test_multi_head_attention_matches_torch_multihead_attention(n_heads, d_model, t_q, t_k,
                                                                causal):
    rng = np.random.default_rng(n_heads * 100 + d_model + t_q + 7 * t_k)
    x_q = rng.normal(size=(t_q, d_model))
    x_kv = x_q if t_q == t_k else rng.normal(size=(t_k, d_model))
    w_q, w_k, w_v, w_o = (rng.normal(size=(d_model, d_model)) / math.sqrt(d_model)
                          for _ in range(4))
    mask = rng.random((t_q, t_k)) < 0.8
    mask[:, 0] = True  # every query sees a key: torch's module gives NaN for none
    result = multi_head_attention(x_q, None if x_kv is x_q else x_kv, w_q, w_k, w_v, w_o,
                                  n_heads=n_heads, mask=mask, causal=causal)

    module = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True,
                                         dtype=torch.float64)
    with torch.no_grad():  # torch computes x @ W.T: load the transposes
        module.in_proj_weight.copy_(t64(np.concatenate([w_q.T, w_k.T, w_v.T])))
        module.out_proj.weight.copy_(t64(w_o.T))
    forbidden = ~t64(result.mask)  # torch's module: True = may NOT attend
    output, weights = module(t64(x_q)[None], t64(x_kv)[None], t64(x_kv)[None],
                             attn_mask=forbidden, need_weights=True,
                             average_attn_weights=False)
    close(result.output, output[0])
    close(result.weights, weights[0])
    assert result.scale == pytest.approx(1 / math.sqrt(d_model // n_heads))


def test_self_attention_causal_matches_torch_is_causal():
    rng = np.random.default_rng(77)
    x = rng.normal(size=(6, 5))
    w_q, w_k, w_v = (rng.normal(size=(5, d)) for d in (3, 3, 4))
    result = self_attention(x, w_q, w_k, w_v, causal=True, temperature=0.8)
    factor = 1 / math.sqrt(3) / 0.8
    theirs = F.scaled_dot_product_attention(t64(x) @ t64(w_q), t64(x) @ t64(w_k),
                                            t64(x) @ t64(w_v), is_causal=True, scale=factor)
    close(result.output, theirs)
    close(result.q, t64(x) @ t64(w_q))


# ---------------------------------------------------------------------------------------------
# Modern attention: attend_heads with a bias (ALiBi) and shared key/value heads (GQA), RoPE
# ---------------------------------------------------------------------------------------------

from attnviz.core.alibi import alibi_bias  # noqa: E402 - after the importorskip
from attnviz.core.attention import attend_heads  # noqa: E402
from attnviz.core.rope import apply_rope  # noqa: E402


def mask_with_a_key_per_query(rng, t_q, t_k):
    """A random mask where every query may attend to at least one key (torch's float
    ``attn_mask`` gives NaN for a row of −inf)."""
    mask = rng.random((t_q, t_k)) < 0.6
    mask[np.arange(t_q), rng.integers(t_k, size=t_q)] = True
    return mask


@pytest.mark.parametrize(("n_heads", "n_kv"), [(1, 1), (2, 1), (4, 2), (6, 3), (8, 2), (8, 8),
                                                (3, 3), (6, 1)])
@pytest.mark.parametrize("case", range(6))
def test_attend_heads_matches_torch_sdpa_with_gqa_and_a_float_bias(n_heads, n_kv, case):
    rng = np.random.default_rng(12000 + 100 * n_heads + 10 * n_kv + case)
    t_q, t_k, d_k, d_v = (int(n) for n in rng.integers(1, 8, size=4))
    q_h = rng.normal(size=(n_heads, t_q, d_k))
    k_h, v_h = rng.normal(size=(n_kv, t_k, d_k)), rng.normal(size=(n_kv, t_k, d_v))
    mask = None if case % 3 == 0 else mask_with_a_key_per_query(rng, t_q, t_k)
    bias = None if case % 2 == 0 else rng.normal(size=(n_heads, t_q, t_k))
    scale, temperature = SCALES[case % 4], TEMPERATURES[case % 3]
    result = attend_heads(q_h, k_h, v_h, mask=mask, scale=scale, temperature=temperature,
                          bias=bias)

    factor = (1 / math.sqrt(d_k) if scale is None else scale) / temperature
    attn_mask = torch.zeros(n_heads, t_q, t_k, dtype=torch.float64)
    if bias is not None:
        attn_mask = attn_mask + t64(bias)
    if mask is not None:
        attn_mask = attn_mask.masked_fill(~t64(mask), float("-inf"))
    heads = F.scaled_dot_product_attention(t64(q_h), t64(k_h), t64(v_h), attn_mask=attn_mask,
                                           scale=factor, enable_gqa=True)
    close(result.head_outputs, heads)
    close(result.concat, heads.transpose(0, 1).reshape(t_q, n_heads * d_v))
    # the weights, written out: repeat_kv (Hugging Face) then softmax(q kᵀ·factor + bias)
    k_rep = t64(k_h).repeat_interleave(n_heads // n_kv, dim=0)
    logits = t64(q_h) @ k_rep.transpose(-1, -2) * factor + attn_mask
    close(result.weights, torch.softmax(logits, dim=-1))


@pytest.mark.parametrize("n_heads", [1, 2, 3, 5, 8, 12])
def test_alibi_as_a_float_attn_mask_matches_torch(n_heads):
    rng = np.random.default_rng(12500 + n_heads)
    t, d = 7, 3
    q_h, k_h, v_h = (rng.normal(size=(n_heads, t, d)) for _ in range(3))
    bias = alibi_bias(n_heads, t)
    result = attend_heads(q_h, k_h, v_h, mask=np.tri(t, dtype=bool), bias=bias)
    attn_mask = t64(bias).masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(),
                                      float("-inf"))
    heads = F.scaled_dot_product_attention(t64(q_h), t64(k_h), t64(v_h), attn_mask=attn_mask)
    close(result.head_outputs, heads)


def rope_neox(x, positions, base, d_rot):
    """Hugging Face / GPT-NeoX: cat(freqs, freqs), x·cos + rotate_half(x)·sin on d_rot dims."""
    inv_freq = 1.0 / (base ** (torch.arange(0, d_rot, 2, dtype=torch.float64) / d_rot))
    freqs = positions[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    rot, rest = x[..., :d_rot], x[..., d_rot:]
    half = d_rot // 2
    rotated_half = torch.cat((-rot[..., half:], rot[..., :half]), dim=-1)
    return torch.cat((rot * cos + rotated_half * sin, rest), dim=-1)


def rope_meta(x, positions, base, d_rot):
    """Meta's apply_rotary_emb: adjacent pairs as complex numbers times e^{i·m·θ}."""
    freqs = 1.0 / (base ** (torch.arange(0, d_rot, 2, dtype=torch.float64) / d_rot))
    freqs_cis = torch.polar(torch.ones(len(positions), d_rot // 2, dtype=torch.float64),
                            torch.outer(positions, freqs))
    rot, rest = x[..., :d_rot], x[..., d_rot:]
    pairs = torch.view_as_complex(rot.reshape(*rot.shape[:-1], -1, 2).contiguous())
    out = torch.view_as_real(pairs * freqs_cis).flatten(-2)
    return torch.cat((out, rest), dim=-1)


@pytest.mark.parametrize("layout", ["split_half", "interleaved"])
@pytest.mark.parametrize("case", range(12))
def test_rope_matches_the_hugging_face_and_meta_formulas(layout, case):
    rng = np.random.default_rng(13000 + case)
    n_heads, t = int(rng.integers(1, 4)), int(rng.integers(1, 10))
    d = int(rng.integers(1, 5)) * 2
    d_rot = int(rng.choice(np.arange(2, d + 1, 2)))
    base, offset = float(rng.choice([10000.0, 500000.0, 10.0, 2.5])), int(rng.integers(0, 50))
    x = rng.normal(size=(n_heads, t, d))
    ours = apply_rope(x, base=base, layout=layout, offset=offset, d_rot=d_rot)
    positions = torch.arange(t, dtype=torch.float64) + offset
    reference = (rope_neox if layout == "split_half" else rope_meta)(t64(x), positions, base,
                                                                      d_rot)
    close(ours, reference)


@pytest.mark.parametrize("case", range(8))
def test_qk_norm_and_softcap_match_torch(case):
    """rms_norm against torch.nn.functional.rms_norm; softcap as Gemma 2 writes it in torch
    (logits / c, tanh, · c, then the mask), through F.scaled_dot_product_attention."""
    from attnviz.core.qk_norm import rms_norm

    rng = np.random.default_rng(14000 + case)
    n, t, d = int(rng.integers(1, 4)), int(rng.integers(1, 7)), int(rng.integers(1, 6))
    q_h, k_h, v_h = (rng.normal(size=(n, t, d)) * 3 for _ in range(3))
    gain, eps = rng.normal(size=d), 1e-6
    close(rms_norm(q_h, gain, eps=eps), F.rms_norm(t64(q_h), (d,), weight=t64(gain), eps=eps))

    cap = float(rng.uniform(0.5, 20))
    result = attend_heads(q_h, k_h, v_h, mask=np.tri(t, dtype=bool), softcap=cap)
    logits = t64(q_h) @ t64(k_h).transpose(-1, -2) / math.sqrt(d)
    logits = torch.tanh(logits / cap) * cap
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    close(result.weights, torch.softmax(logits.masked_fill(~causal, float("-inf")), dim=-1))
    heads = F.scaled_dot_product_attention(
        torch.eye(t, dtype=torch.float64).expand(n, t, t), torch.eye(t, dtype=torch.float64)
        .expand(n, t, t), t64(v_h), attn_mask=logits.masked_fill(~causal, float("-inf")),
        scale=0.0)
    close(result.head_outputs, heads)
