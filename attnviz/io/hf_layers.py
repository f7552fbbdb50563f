"""One attention layer of a Hugging Face transformers model, as attnviz's core sees it.

:func:`layer_inputs` runs the model once (eager attention, no gradients) and takes, for one
layer, everything its attention computes from: the hidden states entering the attention
block (after the layer's input norm, caught by a forward pre-hook on the attention module),
the projection weights and biases in attnviz's row-vector convention (``q = x @ w_q + b_q``),
the heads (n_heads, n_kv_heads, head_dim), the scale, the rotary embedding (its ``inv_freq``
and ``attention_scaling``, its pair layout), the sliding window, the soft-cap, QK-norm, sinks,
ALiBi, causality and the padding — and, beside them, the model's own probabilities and the attention
block's output (before the residual) to compare with. :func:`recompute` computes the layer
again with attnviz's core only, in float64.

Each architecture's conventions, in one table (:data:`ARCHITECTURES`, one small function per
architecture naming where its projections, positions and masks live):

* weights: ``nn.Linear`` stores (out, in), transposed here; GPT-2's ``Conv1D`` is already
  (in, out), and its fused ``c_attn`` is split into w_q, w_k, w_v; BERT's (RoBERTa's,
  XLM-RoBERTa's, ELECTRA's) ``query``, ``key``, ``value`` and ``attention.output.dense``;
  DistilBERT's ``q_lin`` ... ``out_lin``; OPT's and GPT-Neo's ``out_proj``, Phi's ``dense``;
* fused projections, cut into q, k and v by their columns: per head, (n_heads, 3, head_dim)
  (GPT-NeoX, BLOOM, Falcon's classic layout); stacked, [q | k | v] (Phi-3's ``qkv_proj``,
  ModernBERT's ``Wqkv``, multi-query Falcon); in key/value groups, each group's queries then
  its key and value (Falcon's new decoder architecture);
* shared layers: ALBERT's layers of a group run one attention module, so layer l is that
  module's call number l within its group in the forward pass;
* grouped-query attention: query head h reads key/value head h // (n_heads / n_kv_heads)
  (``repeat_kv``, i.e. repeat_interleave);
* RoPE with the model's ``inv_freq`` (any ``rope_type``) and ``attention_scaling``, positions
  0..t−1 of the padded batch, on the first 2·len(inv_freq) dimensions of each head (partial
  rotary: GPT-NeoX, Phi, StableLM); pairs split in halves (``rotate_half``) or interleaved
  (GPT-J's ``rotate_every_two``, base 10000, on ``rotary_dim``); ModernBERT's base per layer
  type;
* ALiBi: BLOOM adds m_h times the key's position to the scaled scores; Falcon's ALiBi models
  add bf16(m_h)/√head_dim times it (:attr:`LayerInputs.alibi` holds the slope on the scaled
  scores either way); BLOOM is causal though its attention module does not say so;
* the scale: 1/sqrt(head_dim), or ``query_pre_attn_scalar``^−½ (Gemma 2), or GPT-2's
  ``scale_attn_weights`` / ``scale_attn_by_inverse_layer_idx``, or none (GPT-Neo);
* the sliding window: Hugging Face's ``sliding_window=W`` (W keys, itself included:
  :func:`attnviz.core.masks.sliding_window_mask`), on every layer (Mistral, Mixtral,
  StarCoder2, Phi-3), on GPT-Neo's local layers (``window_size``) or on the layers whose
  ``layer_types`` entry is ``"sliding_attention"`` (Gemma 2, Qwen 2, Qwen 3); bidirectional,
  |i − j| <= ``sliding_window`` = local_attention / 2, on ModernBERT's local layers;
* soft-capping: ``attn_logit_softcapping`` (Gemma 2), c·tanh(s / c) after the scale;
* QK-norm: RMSNorm of each head's q and k before RoPE (Qwen 3); a LayerNorm of them before
  partial RoPE (Phi's ``qk_layernorm``: one for every head; StableLM's: one per head); one
  RMSNorm over all heads' q (and one over all key/value heads' k) together, before the split
  into heads (OLMo 2: :class:`attnviz.core.steps.QKNormAcross`, the other heads' share held
  fixed);
* a learned relative position bias: MPNet adds its encoder's ``relative_attention_bias`` at
  the bucket of each distance j − i to the scaled scores of every layer
  (:func:`attnviz.core.relative_bias.relative_position_bias`, :attr:`LayerInputs.position_bias`);
* attention sinks: one learned logit per head joins each row's softmax and is dropped
  (gpt-oss, :func:`attnviz.core.sinks.attend_heads_with_sinks`);
* disentangled attention: DeBERTa and DeBERTa-v2 add to the scaled scores each query dotted
  with the projected relative position embedding of its distance to the key, and each key
  with that of the query's distance to it (:class:`attnviz.core.steps.Disentangled`,
  :attr:`LayerInputs.relative`).

Architectures whose attention none of these express are refused in one sentence each
(:data:`REFUSED`: Gemma 3 with its vision tower). Encoder–decoder models
(T5, BART, mBART, MarianMT) are read by
:func:`seq2seq_layer_inputs`, a layer of their encoder, decoder or cross-attention at a time:
T5 adds a learned relative position bias to its self-attention scores
(:attr:`LayerInputs.position_bias`) and scales by 1, BART by 1/√head_dim with projection
biases.

torch and transformers (``pip install 'attnviz[models]'``) are imported inside the functions
that need them: importing this module loads numpy only.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import MultiHeadResult, multi_head_attention
from attnviz.core.relative_bias import relative_position_bias
from attnviz.core.steps import attend_steps
from attnviz.io.capture import capture
from attnviz.scenarios.from_model import CrossInputs, LayerInputs, Rope, layer_steps
from attnviz.scenarios.variants.steps import full_steps

Array = NDArray[np.float64]
__all__ = ["LayerInputs", "Rope", "layer_inputs", "recompute"]  # the first two: from_model's


# ---------------------------------------------------------------------------------------------
# Each architecture's modules and conventions
# ---------------------------------------------------------------------------------------------

def _linear(module) -> tuple[Array, Array | None]:
    """An ``nn.Linear``'s weight (out, in) as (in, out) and its bias, float64."""
    return _np(module.weight).T.copy(), _np_or_none(module.bias)


def _conv1d(module) -> tuple[Array, Array | None]:
    """GPT-2's ``Conv1D``: the weight is (in, out) already."""
    return _np(module.weight).copy(), _np_or_none(module.bias)


def _split_columns(w: Array, b: Array | None, blocks) -> tuple[list[Array], list[Array | None]]:
    """A fused projection's (in, out) weight and bias cut into blocks of output columns.

    ``blocks`` lists, for each of q, k, v, the column indices of its heads in the fused output,
    in head order."""
    ws = [w[:, idx] for idx in blocks]
    bs = [None if b is None else b[idx] for idx in blocks]
    return ws, bs


def _per_head_fused(n: int, d: int) -> list[np.ndarray]:
    """Columns of q, k, v in a projection fused per head, (n, 3, d): each head's q, k, v
    side by side (GPT-NeoX, BLOOM, Falcon's classic layout)."""
    cols = np.arange(3 * n * d).reshape(n, 3, d)
    return [cols[:, i].reshape(-1) for i in range(3)]


def _stacked_fused(sizes) -> list[np.ndarray]:
    """Columns of q, k, v in a projection fused as [q | k | v] (Phi-3, ModernBERT, MQA Falcon)."""
    edges = np.cumsum([0, *sizes])
    return [np.arange(edges[i], edges[i + 1]) for i in range(3)]


def _grouped_fused(n: int, n_kv: int, d: int) -> list[np.ndarray]:
    """Columns of q, k, v in Falcon's new decoder architecture, (n_kv, n / n_kv + 2, d): each
    key/value group's queries, then its key, then its value."""
    cols = np.arange((n + 2 * n_kv) * d).reshape(n_kv, n // n_kv + 2, d)
    return [cols[:, :-2].reshape(-1), cols[:, -2].reshape(-1), cols[:, -1].reshape(-1)]


def _bert(base, layer: int) -> dict[str, Any]:
    """BERT and the encoders built like it (RoBERTa, XLM-RoBERTa, ELECTRA)."""
    block = base.encoder.layer[layer].attention
    att = block.self
    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (_linear(m) for m in (att.query, att.key, att.value))
    w_o, b_o = _linear(block.output.dense)
    n = att.num_attention_heads
    return dict(attention=att, output=block.output.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n,
                head_dim=att.attention_head_size,
                scale=float(att.attention_head_size) ** -0.5, window=None)


def _distilbert(base, layer: int) -> dict[str, Any]:
    att = base.transformer.layer[layer].attention
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_lin, att.k_lin, att.v_lin, att.out_lin))
    d = att.attention_head_size
    return dict(attention=att, output=att.out_lin, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=att.n_heads, n_kv_heads=att.n_heads,
                head_dim=d, scale=float(d) ** -0.5, window=None)


def _albert(base, layer: int) -> dict[str, Any]:
    """ALBERT shares one attention module between the layers of a group: layer ``layer`` is
    that module's call number ``call`` of the forward pass."""
    config = base.config
    if config.inner_group_num != 1:
        raise ValueError(f"this albert model runs {config.inner_group_num} layers inside each "
                         f"shared group (inner_group_num); attnviz reads ALBERT layers with one "
                         f"layer per group, as every released ALBERT has")
    per_group = config.num_hidden_layers / config.num_hidden_groups
    group = int(layer / per_group)
    call = sum(int(i / per_group) == group for i in range(layer))
    att = base.encoder.albert_layer_groups[group].albert_layers[0].attention
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.query, att.key, att.value, att.dense))
    n, d = att.num_attention_heads, att.attention_head_size
    return dict(attention=att, output=att.dense, call=call, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d,
                scale=float(d) ** -0.5, window=None)


def _gpt2(base, layer: int) -> dict[str, Any]:
    att = base.h[layer].attn
    w, b = _conv1d(att.c_attn)  # (d_model, 3·d_model): [q | k | v]
    d = att.embed_dim
    w_q, w_k, w_v = w[:, :d], w[:, d:2 * d], w[:, 2 * d:]
    b_q, b_k, b_v = (None, None, None) if b is None else (b[:d], b[d:2 * d], b[2 * d:])
    w_o, b_o = _conv1d(att.c_proj)
    config = base.config
    scale = float(att.head_dim) ** -0.5 if config.scale_attn_weights else 1.0
    if config.scale_attn_by_inverse_layer_idx:
        scale /= float(layer + 1)
    return dict(attention=att, output=att, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=att.num_heads, n_kv_heads=att.num_heads, head_dim=att.head_dim,
                scale=scale, window=None)


def _gpt_neo(base, layer: int) -> dict[str, Any]:
    """GPT-Neo: no 1/√d_k (its scores are q·k), and its local layers see the last
    ``window_size`` keys (the query's own included)."""
    att = base.h[layer].attn.attention
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj, att.out_proj))
    local = att.attention_type == "local"
    return dict(attention=att, output=att.out_proj, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=att.num_heads, n_kv_heads=att.num_heads,
                head_dim=att.head_dim, scale=1.0,
                window=int(base.config.window_size) if local else None)


def _gptj(base, layer: int) -> dict[str, Any]:
    """GPT-J: RoPE on the first ``rotary_dim`` dimensions of each head, pairs interleaved
    (``rotate_every_two``), base 10000, from a sin/cos table built once."""
    att = base.h[layer].attn
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj, att.out_proj))
    d = att.head_dim
    d_rot = int(att.rotary_dim or d)
    base_theta = 10000.0  # GPT-J's create_sinusoidal_positions
    inv_freq = base_theta ** (-np.arange(0, d_rot, 2) / d_rot)
    rope = Rope(inv_freq, 1.0, layout="interleaved", base=base_theta)
    n = att.num_attention_heads
    return dict(attention=att, output=att.out_proj, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d,
                scale=float(att.scaling), window=None, rope=lambda: rope)


def _gpt_neox(base, layer: int) -> dict[str, Any]:
    """GPT-NeoX (Pythia): ``query_key_value`` fused per head, partial rotary (split half)."""
    att = base.layers[layer].attention
    config = base.config
    n, d = config.num_attention_heads, att.head_size
    w, b = _linear(att.query_key_value)
    (w_q, w_k, w_v), (b_q, b_k, b_v) = _split_columns(w, b, _per_head_fused(n, d))
    w_o, b_o = _linear(att.dense)
    return dict(attention=att, output=att.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d,
                scale=float(att.scaling), window=None, rotary=base.rotary_emb)


def _opt(base, layer: int) -> dict[str, Any]:
    """OPT: q is multiplied by 1/√d_k before the product (the same scores)."""
    att = base.decoder.layers[layer].self_attn
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj, att.out_proj))
    n, d = att.num_heads, att.head_dim
    return dict(attention=att, output=att.out_proj, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d,
                scale=float(att.scaling), window=None)


def _falcon(base, layer: int) -> dict[str, Any]:
    """Falcon's three fused layouts (per head; multi-query [q | k | v]; the new decoder
    architecture's groups), RoPE, or ALiBi added to the scaled scores as bf16(m_h)/√d_k
    times the key's position."""
    att = base.h[layer].self_attention
    config = base.config
    n, n_kv, d = att.num_heads, att.num_kv_heads, att.head_dim
    w, b = _linear(att.query_key_value)
    if att.new_decoder_architecture:
        blocks = _grouped_fused(n, n_kv, d)
    elif att.multi_query:
        blocks = _stacked_fused((n * d, d, d))
    else:
        blocks = _per_head_fused(n, d)
    (w_q, w_k, w_v), (b_q, b_k, b_v) = _split_columns(w, b, blocks)
    w_o, b_o = _linear(att.dense)
    spec = dict(attention=att, output=att.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n_kv, head_dim=d,
                scale=float(att.scaling), window=None)
    if config.alibi:
        import torch
        from transformers.models.falcon.modeling_falcon import build_alibi_tensor

        table = build_alibi_tensor(torch.ones((1, 2), dtype=torch.long), n, torch.float32)
        spec["alibi"] = _np(table[:, 0, 1]) / np.sqrt(d)  # bf16(m_h) · position 1, over √d_k
    else:
        spec["rotary"] = base.rotary_emb
    return spec


def _bloom(base, layer: int) -> dict[str, Any]:
    """BLOOM: ``query_key_value`` fused per head, ALiBi (m_h times the key's position added
    to the scaled scores), causal (its attention module carries no ``is_causal``)."""
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    att = base.h[layer].self_attention
    n, d = att.num_heads, att.head_dim
    w, b = _linear(att.query_key_value)
    (w_q, w_k, w_v), (b_q, b_k, b_v) = _split_columns(w, b, _per_head_fused(n, d))
    w_o, b_o = _linear(att.dense)
    return dict(attention=att, output=att.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d,
                scale=float(att.inv_norm_factor), window=None, causal=True,
                alibi=_np(_get_alibi_slopes(n, "cpu")))


def _modernbert(base, layer: int) -> dict[str, Any]:
    """ModernBERT: ``Wqkv`` fused as [q | k | v], RoPE with a base per layer type,
    bidirectional, its local layers seeing |i − j| <= local_attention / 2."""
    att = base.layers[layer].attn
    config = base.config
    n, d = config.num_attention_heads, att.head_dim
    w, b = _linear(att.Wqkv)
    (w_q, w_k, w_v), (b_q, b_k, b_v) = _split_columns(w, b, _stacked_fused((n * d,) * 3))
    w_o, b_o = _linear(att.Wo)
    kind = config.layer_types[layer]
    rope = partial(_read_rope, base.rotary_emb, config, kind)  # read as the layer ran
    return dict(attention=att, output=att.Wo, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=n, n_kv_heads=n, head_dim=d, scale=float(d) ** -0.5,
                window=int(config.sliding_window) if kind == "sliding_attention" else None,
                rope=rope)


def _mpnet(base, layer: int) -> dict[str, Any]:
    """MPNet: BERT's projections (q, k, v, o) and scale, and a learned relative position bias
    per head added to the scaled scores of every layer: the encoder's
    ``relative_attention_bias`` table read at the bucket of each distance j − i (32 buckets,
    distances up to 128, as its encoder computes it whatever the config's number of buckets)."""
    att = base.encoder.layer[layer].attention.attn
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q, att.k, att.v, att.o))
    n, d = att.num_attention_heads, att.attention_head_size
    table = _np(base.encoder.relative_attention_bias.weight).copy()  # (buckets, n_heads)
    return dict(attention=att, output=att.o, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=n, n_kv_heads=n, head_dim=d, scale=float(d) ** -0.5, window=None,
                position_bias=lambda t: relative_position_bias(table, t))


def _relative_tables(n: int, d: int, rel: Array, project, span: int, rel_pos: np.ndarray,
                     scale: float, terms) -> dict[str, Any]:
    """DeBERTa's disentangled terms for a sequence: the relative position embeddings ``rel``
    (2·span, hidden) projected per head (``project(kind)``: the (in, out) weight and bias of
    the key's or the query's projection of positions), K^r and Q^r of shape (n, 2·span, d),
    and the rows each query i and key j read: δ_c(i, j) = clamp(rel_pos[i, j] + span) and
    δ_p(i, j) = clamp(−rel_pos[j, i] + span), within 0 .. 2·span − 1 (Hugging Face's gathers;
    ``rel_pos[i, j]`` is the bucket of i − j)."""
    def per_head(kind):
        w, b = project(kind)
        out = rel @ w if b is None else rel @ w + b  # (2·span, n·d)
        return out.reshape(out.shape[0], n, d).transpose(1, 0, 2)  # (n, 2·span, d)

    top = 2 * span - 1
    return dict(pos_key=per_head("key") if "c2p" in terms else None,
                pos_query=per_head("query") if "p2c" in terms else None,
                c2p=np.clip(rel_pos + span, 0, top), p2c=np.clip(-rel_pos.T + span, 0, top),
                scale=scale)


def _deberta_v2(base, layer: int) -> dict[str, Any]:
    """DeBERTa-v2 (and v3): BERT's shape with query_proj, key_proj, value_proj, the scale
    1/√(d·(1 + number of relative terms)), and the disentangled terms: the encoder's relative
    position embeddings (after its LayerNorm when ``norm_rel_ebd`` says so), the first
    2·span rows (span: ``position_buckets``, else ``max_relative_positions``), projected by
    the layer's own key and query projections (``share_att_key``) or by ``pos_key_proj`` and
    ``pos_query_proj``; distances i − j in log buckets when ``position_buckets`` > 0."""
    import torch
    from transformers.models.deberta_v2.modeling_deberta_v2 import build_relative_position

    block = base.encoder.layer[layer].attention
    att = block.self
    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (
        _linear(m) for m in (att.query_proj, att.key_proj, att.value_proj))
    w_o, b_o = _linear(block.output.dense)
    n, d = att.num_attention_heads, att.attention_head_size
    terms = [kind for kind in ("c2p", "p2c") if kind in att.pos_att_type]
    scale = float(d * (1 + len(terms))) ** -0.5
    spec = dict(attention=att, output=block.output.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d, scale=scale,
                window=None)
    if not att.relative_attention or not terms:
        return spec
    span = int(att.pos_ebd_size)
    with torch.no_grad():
        rel = _np(base.encoder.get_rel_embedding())[:2 * span]

    def project(kind):
        if att.share_att_key:
            return (w_k, b_k) if kind == "key" else (w_q, b_q)
        return _linear(att.pos_key_proj if kind == "key" else att.pos_query_proj)

    def relative(t: int) -> dict[str, Any]:
        ids = torch.zeros(t, 1)
        rel_pos = build_relative_position(ids, ids, bucket_size=att.position_buckets,
                                          max_position=att.max_relative_positions)
        return _relative_tables(n, d, rel, project, span, rel_pos[0].long().numpy(), scale,
                                terms)

    spec["relative"] = relative
    return spec


def _deberta(base, layer: int) -> dict[str, Any]:
    """DeBERTa: ``in_proj`` fused per head (n, 3, d) without bias, ``q_bias`` and ``v_bias``
    apart, the scale 1/√(d·(1 + number of relative terms)), and the disentangled terms from
    the encoder's relative position embeddings: rows max_relative_positions ± span (span =
    min(t, max_relative_positions)), projected by ``pos_proj`` (keys, no bias) and
    ``pos_q_proj`` (queries); distances i − j, not bucketed."""
    block = base.encoder.layer[layer].attention
    att = block.self
    if att.talking_head:
        raise ValueError("this deberta model mixes its heads' scores and weights (talking_head); "
                         "attnviz opens heads that attend on their own, as every released "
                         "DeBERTa does")
    n, d = att.num_attention_heads, att.attention_head_size
    w, _ = _linear(att.in_proj)
    (w_q, w_k, w_v), _ = _split_columns(w, None, _per_head_fused(n, d))
    b_q, b_v = _np(att.q_bias).copy(), _np(att.v_bias).copy()
    w_o, b_o = _linear(block.output.dense)
    terms = [kind for kind in ("c2p", "p2c") if kind in att.pos_att_type]
    scale = float(d * (1 + len(att.pos_att_type))) ** -0.5
    spec = dict(attention=att, output=block.output.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, None, b_v, b_o), n_heads=n, n_kv_heads=n, head_dim=d, scale=scale,
                window=None)
    if not att.relative_attention or not terms:
        return spec
    top = int(att.max_relative_positions)
    table = _np(base.encoder.rel_embeddings.weight).copy()  # (2·max_relative_positions, hidden)

    def project(kind):
        return _linear(att.pos_proj if kind == "key" else att.pos_q_proj)

    def relative(t: int) -> dict[str, Any]:
        span = min(t, top)
        rel_pos = np.arange(t)[:, None] - np.arange(t)[None, :]  # i − j
        return _relative_tables(n, d, table[top - span:top + span], project, span, rel_pos,
                                scale, terms)

    spec["relative"] = relative
    return spec


#: Model types whose window is the config's ``sliding_window``, on every layer.
_WINDOW_EVERY_LAYER = ("mistral", "mixtral", "starcoder2", "phi3")


def _rotary(base, layer: int) -> dict[str, Any]:
    """Llama and its descendants: q_proj, k_proj, v_proj (or Phi-3's fused qkv_proj),
    o_proj (Phi's dense), RoPE (partial where the model rotates a fraction), GQA."""
    att = base.layers[layer].self_attn
    config = base.config
    model_type = config.model_type
    n, n_kv, d = config.num_attention_heads, config.num_key_value_heads, att.head_dim
    if hasattr(att, "qkv_proj"):  # Phi-3: [q | k | v]
        w, b = _linear(att.qkv_proj)
        (w_q, w_k, w_v), (b_q, b_k, b_v) = _split_columns(
            w, b, _stacked_fused((n * d, n_kv * d, n_kv * d)))
    else:
        (w_q, b_q), (w_k, b_k), (w_v, b_v) = (
            _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj))
    out = att.o_proj if hasattr(att, "o_proj") else att.dense
    w_o, b_o = _linear(out)
    if model_type == "gemma2":
        scale = float(config.query_pre_attn_scalar) ** -0.5
    else:
        scale = float(d) ** -0.5
    if model_type in _WINDOW_EVERY_LAYER:
        window = getattr(config, "sliding_window", None)
    else:  # Gemma 2, Qwen 2, Qwen 3, gpt-oss: the layers whose layer_types entry slides
        window = getattr(att, "sliding_window", None)
    spec = dict(attention=att, output=out, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=n, n_kv_heads=n_kv, head_dim=d, scale=scale, window=window,
                rotary=base.rotary_emb)
    if model_type == "gemma2":
        spec["softcap"] = getattr(config, "attn_logit_softcapping", None)
    if hasattr(att, "sinks"):  # gpt-oss
        spec["sinks"] = _np(att.sinks).copy()
    if getattr(att, "qk_layernorm", False):  # Phi: one LayerNorm; StableLM: one per head
        spec["layer_norm"] = _qk_layernorm(att.q_layernorm, att.k_layernorm)
    if hasattr(att, "q_norm"):  # Qwen 3: per head; OLMo 2: all heads together
        spec["q_norm"] = _np(att.q_norm.weight).copy()
        spec["k_norm"] = _np(att.k_norm.weight).copy()
        spec["norm_eps"] = float(att.q_norm.variance_epsilon)
        spec["norm_across"] = spec["q_norm"].shape[0] != d
    return spec


def _qk_layernorm(q_norm, k_norm) -> dict[str, Any]:
    """The gains and biases of a LayerNorm of q and one of k (Phi's ``nn.LayerNorm``, one row
    for every head) or of one per head (StableLM's ``StableLmLayerNormPerHead``: a row per
    head, no bias), as tables (rows, head_dim), and their eps."""
    def table(norm, what):
        norms = list(getattr(norm, "norms", [norm]))
        return np.stack([np.zeros(m.normalized_shape[0]) if getattr(m, what) is None
                         else _np(getattr(m, what)) for m in norms])

    eps = float(getattr(q_norm, "eps", None) or q_norm.norms[0].eps)
    return dict(q_gain=table(q_norm, "weight"), k_gain=table(k_norm, "weight"),
                q_bias=table(q_norm, "bias"), k_bias=table(k_norm, "bias"), eps=eps)


def _gemma3(base, layer: int) -> dict[str, Any]:
    """Gemma 3: Llama's projections, QK-norm whose gain is 1 + w per dimension (its RMSNorm),
    before RoPE with the inverse frequencies of the layer's type (local or global), the scale
    ``query_pre_attn_scalar``^−½, the window on its sliding layers. No soft-cap: its config
    may name ``attn_logit_softcapping``, but its attention does not apply it."""
    att = base.layers[layer].self_attn
    config = base.config
    n, n_kv, d = config.num_attention_heads, config.num_key_value_heads, att.head_dim
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj, att.o_proj))
    kind = config.layer_types[layer]
    rope = partial(_read_rope, base.rotary_emb, config, kind)  # read as the layer ran
    return dict(attention=att, output=att.o_proj, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=n, n_kv_heads=n_kv, head_dim=d,
                scale=float(config.query_pre_attn_scalar) ** -0.5, window=att.sliding_window,
                rope=rope, q_norm=1.0 + _np(att.q_norm.weight), k_norm=1.0 + _np(att.k_norm.weight),
                norm_eps=float(att.q_norm.eps))


#: model_type -> the function reading a layer's modules and conventions.
ARCHITECTURES = {
    "bert": _bert, "gpt2": _gpt2, "llama": _rotary, "mistral": _rotary, "gemma2": _rotary,
    "qwen2": _rotary, "qwen3": _rotary, "gpt_oss": _rotary,
    "roberta": _bert, "xlm-roberta": _bert, "electra": _bert, "distilbert": _distilbert,
    "albert": _albert, "modernbert": _modernbert,
    "gpt_neo": _gpt_neo, "gptj": _gptj, "gpt_neox": _gpt_neox, "opt": _opt,
    "falcon": _falcon, "bloom": _bloom,
    "mixtral": _rotary, "gemma": _rotary, "phi": _rotary, "phi3": _rotary,
    "stablelm": _rotary, "starcoder2": _rotary, "gemma3_text": _gemma3, "mpnet": _mpnet,
    "olmo2": _rotary, "deberta-v2": _deberta_v2, "deberta": _deberta,
}
#: The architectures (``config.model_type``) whose layers :func:`layer_inputs` reads.
SUPPORTED_MODEL_TYPES = tuple(ARCHITECTURES)

#: model_type -> why attnviz does not read its layers (one sentence each).
REFUSED = {
    "gemma3": "gemma3 is Gemma 3 with its vision tower; attnviz reads the layers of its text "
              "model (load it as Gemma3ForCausalLM, model_type gemma3_text)",
} | {name: f"{name} is an encoder–decoder model: read a layer of its encoder, its decoder or "
          f"its cross-attention with seq2seq_layer_inputs(model, tokenizer, source, target, "
          f"layer, kind)" for name in ("t5", "bart", "mbart", "marian")}


def _np(tensor) -> Array:
    return tensor.detach().to(device="cpu").double().numpy()


def _np_or_none(tensor) -> Array | None:
    return None if tensor is None else _np(tensor).copy()


# ---------------------------------------------------------------------------------------------
# Reading a layer
# ---------------------------------------------------------------------------------------------

def layer_inputs(model, tokenizer=None, text=None, layer: int = 0, *, input_ids=None,
                 attention_mask=None, sequence: int = 0) -> LayerInputs:
    """Run the model once and read one layer's attention inputs, weights and conventions.

    The forward pass is :func:`attnviz.io.capture.capture`'s (eager attention, eval mode, no
    gradients, the model's settings given back; the same text checks and limits), with a
    forward pre-hook on the layer's attention module for its input and a forward hook for the
    block's output.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A model of one of :data:`SUPPORTED_MODEL_TYPES` (the base model or one with a task
        head).
    tokenizer : transformers tokenizer, optional
        Needed with ``text``.
    text : str, (str, str) or list of either, optional
        As in :func:`~attnviz.io.capture.capture`; a batch is padded on the right.
    layer : int
        Which layer (0-based).
    input_ids, attention_mask : array-like, optional
        Instead of ``text``.
    sequence : int
        Which sequence of the batch.

    Returns
    -------
    LayerInputs
        Every array float64, whatever the model's dtype; ``model_weights`` holds NaN where a
        query or key is padding (capture keeps the real tokens' weights only).

    Raises
    ------
    ValueError
        An architecture of :data:`REFUSED` (the sentence says why), one not in
        :data:`SUPPORTED_MODEL_TYPES` (the message names them), a convention an adapter cannot
        read (Phi's or StableLM's qk_layernorm, ALBERT with several layers per group), a layer
        or sequence that does not exist, or what
        :func:`~attnviz.io.capture.capture` refuses.
    """
    config = model.config
    model_type = str(getattr(config, "model_type", ""))
    if model_type in REFUSED:
        raise ValueError(REFUSED[model_type])
    if model_type not in ARCHITECTURES:
        raise ValueError(f"model_type {model_type[:60]!r} is not an architecture whose layers "
                         f"attnviz reads; it reads {', '.join(SUPPORTED_MODEL_TYPES)}")
    base = getattr(model, "base_model", model)
    n_layers = int(config.num_hidden_layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) \
            or not 0 <= layer < n_layers:
        raise ValueError(f"layer must be a whole number from 0 to {n_layers - 1} (the model "
                         f"has {n_layers} layers), got {layer!r:.40}")
    layer = int(layer)
    spec = ARCHITECTURES[model_type](base, layer)
    # 1) run once, catching the attention's input and the block's output (a module shared by
    #    several layers, as ALBERT's, runs once per layer: the layer's call is kept)
    seen: dict[str, list] = {"x": [], "out": []}

    def before(module, args, kwargs):
        seen["x"].append(args[0] if args else kwargs["hidden_states"])

    def after(module, args, output):
        seen["out"].append(output[0] if isinstance(output, tuple) else output)

    hooks = [spec["attention"].register_forward_pre_hook(before, with_kwargs=True),
             spec["output"].register_forward_hook(after)]
    try:
        cap = capture(model, tokenizer, text=text, input_ids=input_ids,
                      attention_mask=attention_mask)
    finally:
        for hook in hooks:
            hook.remove()
    if isinstance(sequence, bool) or not isinstance(sequence, (int, np.integer)) \
            or not 0 <= sequence < len(cap):
        raise ValueError(f"sequence must be a whole number from 0 to {len(cap) - 1} (the batch "
                         f"holds {len(cap)}), got {sequence!r:.40}")
    b = int(sequence)
    call = int(spec.get("call", 0))
    x_in, out = seen["x"][call], seen["out"][call]
    # 2) the padded sequence: where its real tokens sat
    t = int(x_in.shape[1])
    kept = cap.positions[b]
    padding = np.zeros(t, dtype=bool)
    padding[kept] = True
    pad_label = str(getattr(tokenizer, "pad_token", None) or "<pad>")
    tokens = np.full(t, pad_label, dtype=object)
    tokens[kept] = cap.tokens[b]
    weights = np.full((spec["n_heads"], t, t), np.nan)
    weights[:, kept[:, None], kept[None, :]] = cap.attentions[b][layer]
    # 3) the rotary embedding as it ran (a dynamic RoPE updates inv_freq in the forward)
    rotary = spec.get("rotary")
    if "rope" in spec:
        rope = spec["rope"]()
    else:
        rope = None if rotary is None else _read_rope(rotary, config)
    causal = spec.get("causal", getattr(spec["attention"], "is_causal", False))
    w_q, w_k, w_v, w_o = spec["w"]
    b_q, b_k, b_v, b_o = spec["b"]
    return LayerInputs(
        model_type=model_type, layer=layer, tokens=tuple(str(tok) for tok in tokens),
        x=_hidden(x_in[b], padding), w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o,
        b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o,
        n_heads=int(spec["n_heads"]), n_kv_heads=int(spec["n_kv_heads"]),
        head_dim=int(spec["head_dim"]), scale=float(spec["scale"]),
        causal=bool(causal),
        sliding_window=None if spec["window"] is None else int(spec["window"]),
        softcap=None if spec.get("softcap") is None else float(spec["softcap"]),
        rope=rope, positions=np.arange(t, dtype=np.float64),
        q_norm=spec.get("q_norm"), k_norm=spec.get("k_norm"), norm_eps=spec.get("norm_eps"),
        sinks=spec.get("sinks"), padding=padding, model_weights=weights,
        model_output=_np(out[b]).copy(), alibi=spec.get("alibi"),
        layer_norm=spec.get("layer_norm"), norm_across=bool(spec.get("norm_across", False)),
        position_bias=spec["position_bias"](t) if "position_bias" in spec else None,
        relative=spec["relative"](t) if "relative" in spec else None,
    )


def _read_rope(rotary, config, layer_type: str | None = None) -> Rope:
    """A rotary embedding module's inverse frequencies, attention scaling, type and base as
    they stand; with ``layer_type``, those of that type of layer (ModernBERT and Gemma 3 keep
    one set per type)."""
    if layer_type is None:
        inv_freq, scaling = rotary.inv_freq, rotary.attention_scaling
        rope_type = getattr(rotary, "rope_type", "default")
    else:
        inv_freq = getattr(rotary, f"{layer_type}_inv_freq")
        scaling = getattr(rotary, f"{layer_type}_attention_scaling")
        rope_type = rotary.rope_type.get(layer_type, "default")
    return Rope(_np(inv_freq).copy(), float(scaling), rope_type=str(rope_type),
                base=_rope_base(config, layer_type))


def _rope_base(config, layer_type: str | None = None) -> float | None:
    """The config's ``rope_theta`` (transformers 5 keeps it in ``rope_parameters``: one
    dictionary, or one per layer type, ``layer_type``'s), or None."""
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and layer_type is not None:
        params = params.get(layer_type)
    theta = params.get("rope_theta") if isinstance(params, dict) else None
    theta = getattr(config, "rope_theta", None) if theta is None else theta
    return None if isinstance(theta, bool) or not isinstance(theta, (int, float)) \
        else float(theta)


def _hidden(tensor, padding: NDArray[np.bool_]) -> Array:
    """The hidden states of one sequence as float64, padded rows that are not finite zeroed.

    A padded query whose window holds only padding has every key masked; Hugging Face's
    softmax then gives it NaN in some settings (a float64 model whose mask is cast to float32),
    which reaches that padded row of the next layers' hidden states. Padding is masked as a
    key and never compared, so its rows are set to 0; a real token's row is never changed.
    """
    x = _np(tensor).copy()  # (t, d_model)
    bad = ~np.isfinite(x).all(axis=1)
    if (bad & padding).any():
        raise ValueError("the model's hidden states entering this layer are not finite for a "
                         "real token; the model overflows on this text")
    x[bad] = 0.0
    return x


# ---------------------------------------------------------------------------------------------
# Recomputing it with the core
# ---------------------------------------------------------------------------------------------

def recompute(inputs: LayerInputs) -> MultiHeadResult:
    """The layer's attention computed again by attnviz's core alone, in float64.

    Without RoPE, QK-norm, a cap, sinks or ALiBi (BERT, GPT-2) this is one
    :func:`~attnviz.core.attention.multi_head_attention` call with the biases; otherwise the
    projections are split into heads and every head runs the layer's list of steps
    (:func:`attnviz.scenarios.from_model.layer_steps`, the list an opened head runs too)
    through :func:`~attnviz.core.steps.attend_steps`: QK-norm, RoPE, the scale, ALiBi's
    m_h·p_j, the cap, the mask's parts, softmax or the sink logits, then W_O and its bias.

    Parameters
    ----------
    inputs : LayerInputs

    Returns
    -------
    MultiHeadResult
        ``weights`` compare with ``inputs.model_weights`` and ``output`` with
        ``inputs.model_output``.
    """
    li = inputs
    mask = li.mask
    if li.rope is None and li.q_norm is None and li.softcap is None and li.sinks is None \
            and li.alibi is None and li.position_bias is None and li.layer_norm is None \
            and li.relative is None:
        return multi_head_attention(li.x, None, li.w_q, li.w_k, li.w_v, li.w_o,
                                    n_heads=li.n_heads, n_kv_heads=li.n_kv_heads, mask=mask,
                                    scale=li.scale, b_q=li.b_q, b_k=li.b_k, b_v=li.b_v,
                                    b_o=li.b_o)
    t = li.x.shape[0]

    def heads(w, b, n):  # 1) project and split: (n, t, head_dim)
        p = li.x @ w if b is None else li.x @ w + b
        return p.reshape(t, n, li.head_dim).transpose(1, 0, 2)

    # 2) every head through the layer's list of steps: QK-norm, RoPE, the scale, ALiBi's
    #    m_h·p_j, the cap, the causal mask, window and padding, softmax or sinks; then W_O
    steps = full_steps(layer_steps(li), li.scale, 1.0)
    return attend_steps(steps, heads(li.w_q, li.b_q, li.n_heads),
                        heads(li.w_k, li.b_k, li.n_kv_heads), heads(li.w_v, li.b_v, li.n_kv_heads),
                        w_o=li.w_o, b_o=li.b_o)


# ---------------------------------------------------------------------------------------------
# Encoder–decoder models: a layer of the encoder, of the decoder, or of the cross-attention
# ---------------------------------------------------------------------------------------------

def _t5_stack(model, kind: str, layer: int) -> dict[str, Any]:
    """T5: q, k, v, o without biases, no scaling (scale 1), a learned relative position bias
    per head added to the scores of the self-attention (computed by layer 0 of each stack,
    from bucketed distances; none in the cross-attention)."""
    stack = model.get_decoder() if kind in ("decoder", "cross") else model.get_encoder()
    block = stack.block[layer]
    att = block.layer[1].EncDecAttention if kind == "cross" else block.layer[0].SelfAttention
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q, att.k, att.v, att.o))
    return dict(attention=att, output=att, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=att.n_heads, head_dim=att.key_value_proj_dim, scale=float(att.scaling),
                position_bias=kind != "cross")


def _bart_stack(model, kind: str, layer: int) -> dict[str, Any]:
    """BART and its relatives (mBART, MarianMT): q_proj ... out_proj with biases, scale
    1/√head_dim; the decoder layer's ``encoder_attn`` is its cross-attention."""
    stack = model.get_decoder() if kind in ("decoder", "cross") else model.get_encoder()
    block = stack.layers[layer]
    att = block.encoder_attn if kind == "cross" else block.self_attn
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj, att.out_proj))
    return dict(attention=att, output=att.out_proj, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=att.num_heads, head_dim=att.head_dim,
                scale=float(att.scaling), position_bias=False)


#: model_type -> the function reading a layer of an encoder–decoder model's stacks.
SEQ2SEQ_ARCHITECTURES = {"t5": _t5_stack, "bart": _bart_stack, "mbart": _bart_stack,
                         "marian": _bart_stack}


def seq2seq_layer_inputs(model, tokenizer=None, source: str | None = None,
                         target: str | None = None, layer: int = 0, kind: str = "cross", *,
                         source_ids=None, target_ids=None):
    """Run an encoder–decoder model once and read one layer of one of its three kinds of
    attention (:data:`attnviz.io.capture.SEQ2SEQ_KINDS`).

    The forward pass is :func:`attnviz.io.capture.capture_seq2seq`'s (teacher forcing, eager,
    eval mode, no gradients), with a forward pre-hook on the layer's attention module for its
    inputs (the cross-attention's keys and values come from the encoder's output) and a
    forward hook for its output.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        An encoder–decoder model of :data:`SEQ2SEQ_ARCHITECTURES`.
    tokenizer, source, target, source_ids, target_ids
        As in :func:`~attnviz.io.capture.capture_seq2seq`.
    layer : int
        Which layer of the stack (the decoder's for "decoder" and "cross").
    kind : {"encoder", "decoder", "cross"}

    Returns
    -------
    LayerInputs or CrossInputs
        A :class:`LayerInputs` for the encoder's (bidirectional) or the decoder's (causal)
        self-attention — T5's with its ``position_bias`` —, a :class:`CrossInputs` for the
        cross-attention; every array float64.

    Raises
    ------
    ValueError
        A model that is not one of :data:`SEQ2SEQ_ARCHITECTURES`, an unknown kind, a layer
        that does not exist, or what :func:`~attnviz.io.capture.capture_seq2seq` refuses.
    """
    from attnviz.io.capture import SEQ2SEQ_KINDS, capture_seq2seq

    config = model.config
    model_type = str(getattr(config, "model_type", ""))
    if model_type not in SEQ2SEQ_ARCHITECTURES:
        raise ValueError(f"model_type {model_type[:60]!r} is not an encoder-decoder "
                         f"architecture whose layers attnviz reads; it reads "
                         f"{', '.join(SEQ2SEQ_ARCHITECTURES)}")
    if kind not in SEQ2SEQ_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SEQ2SEQ_KINDS)}, got "
                         f"{str(kind)[:40]!r}")
    stack = model.get_encoder() if kind == "encoder" else model.get_decoder()
    n_layers = len(getattr(stack, "block", None) or stack.layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) \
            or not 0 <= layer < n_layers:
        raise ValueError(f"layer must be a whole number from 0 to {n_layers - 1} (the "
                         f"{'encoder' if kind == 'encoder' else 'decoder'} has {n_layers} "
                         f"layers), got {layer!r:.40}")
    layer = int(layer)
    spec = SEQ2SEQ_ARCHITECTURES[model_type](model, kind, layer)
    # 1) run once, catching the attention's inputs and outputs
    seen: dict[str, Any] = {}

    def before(module, args, kwargs):
        seen["x"] = args[0] if args else kwargs["hidden_states"]
        seen["source"] = kwargs.get("key_value_states")

    def after(module, args, output):
        seen["out"] = output[0] if isinstance(output, tuple) else output
        if spec["position_bias"]:  # T5Attention returns (output, position_bias, weights)
            seen["bias"] = output[1]

    hooks = [spec["attention"].register_forward_pre_hook(before, with_kwargs=True),
             spec["output"].register_forward_hook(after)]
    try:
        cap = capture_seq2seq(model, tokenizer, source, target, source_ids=source_ids,
                              target_ids=target_ids)
    finally:
        for hook in hooks:
            hook.remove()
    w_q, w_k, w_v, w_o = spec["w"]
    b_q, b_k, b_v, b_o = spec["b"]
    n, d = int(spec["n_heads"]), int(spec["head_dim"])
    x = _np(seen["x"][0]).copy()
    common = dict(model_type=model_type, layer=layer, x=x, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o,
                  b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, n_heads=n, head_dim=d,
                  scale=float(spec["scale"]), model_output=_np(seen["out"][0]).copy())
    if kind == "cross":
        return CrossInputs(tokens=cap.target_tokens, source_tokens=cap.source_tokens,
                           source=_np(seen["source"][0]).copy(),
                           model_weights=cap.cross[layer], **common)
    tokens = cap.source_tokens if kind == "encoder" else cap.target_tokens
    t = x.shape[0]
    bias = _np(seen["bias"][0]).copy() if spec["position_bias"] else None  # (n, t, t)
    return LayerInputs(
        tokens=tuple(tokens), n_kv_heads=n, causal=kind == "decoder", sliding_window=None,
        softcap=None, rope=None, positions=np.arange(t, dtype=np.float64), q_norm=None,
        k_norm=None, norm_eps=None, sinks=None, padding=np.ones(t, dtype=bool),
        model_weights=cap.kind(kind)[layer], position_bias=bias, **common)


def recompute_cross(inputs: CrossInputs) -> MultiHeadResult:
    """A cross-attention layer computed again by attnviz's core alone, in float64: queries
    from the decoder's hidden states, keys and values from the encoder's output, the model's
    scale, its biases and W_O (:func:`~attnviz.core.attention.multi_head_attention`)."""
    ci = inputs
    return multi_head_attention(ci.x, ci.source, ci.w_q, ci.w_k, ci.w_v, ci.w_o,
                                n_heads=ci.n_heads, scale=ci.scale, b_q=ci.b_q, b_k=ci.b_k,
                                b_v=ci.b_v, b_o=ci.b_o)
