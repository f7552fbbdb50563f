"""One attention layer of a Hugging Face transformers model, as attnviz's core sees it.

:func:`layer_inputs` runs the model once (eager attention, no gradients) and takes, for one
layer, everything its attention computes from: the hidden states entering the attention
block (after the layer's input norm, caught by a forward pre-hook on the attention module),
the projection weights and biases in attnviz's row-vector convention (``q = x @ w_q + b_q``),
the heads (n_heads, n_kv_heads, head_dim), the scale, the rotary embedding (its ``inv_freq``
and ``attention_scaling``, split-half layout), the sliding window, the soft-cap, QK-norm,
causality and the padding — and, beside them, the model's own probabilities and the attention
block's output (before the residual) to compare with. :func:`recompute` computes the layer
again with attnviz's core only, in float64.

Each architecture's conventions, in one table (:data:`ARCHITECTURES`):

* weights: ``nn.Linear`` stores (out, in), transposed here; GPT-2's ``Conv1D`` is already
  (in, out), and its fused ``c_attn`` is split into w_q, w_k, w_v; BERT's ``query``, ``key``,
  ``value`` and ``attention.output.dense``;
* grouped-query attention: query head h reads key/value head h // (n_heads / n_kv_heads)
  (``repeat_kv``, i.e. repeat_interleave);
* RoPE: ``rotate_half``, i.e. the split-half layout, with the model's ``inv_freq`` (any
  ``rope_type``) and ``attention_scaling``, positions 0..t−1 of the padded batch;
* the scale: 1/sqrt(head_dim), or ``query_pre_attn_scalar``^−½ (Gemma 2), or GPT-2's
  ``scale_attn_weights`` / ``scale_attn_by_inverse_layer_idx``;
* the sliding window: Hugging Face's ``sliding_window=W`` (W keys, itself included:
  :func:`attnviz.core.masks.sliding_window_mask`), on every layer (Mistral) or on the layers
  whose ``layer_types`` entry is ``"sliding_attention"`` (Gemma 2, Qwen 2, Qwen 3);
* soft-capping: ``attn_logit_softcapping`` (Gemma 2), c·tanh(s / c) after the scale;
* QK-norm: RMSNorm of each head's q and k before RoPE (Qwen 3);
* attention sinks: one learned logit per head joins each row's softmax and is dropped
  (gpt-oss, :func:`attnviz.core.sinks.attend_heads_with_sinks`).

torch and transformers (``pip install 'attnviz[models]'``) are imported inside the functions
that need them: importing this module loads numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import MultiHeadResult, attend_heads, multi_head_attention
from attnviz.core.qk_norm import rms_norm
from attnviz.core.rope import apply_rope
from attnviz.core.sinks import attend_heads_with_sinks
from attnviz.io.capture import capture
from attnviz.scenarios.from_model import LayerInputs, Rope

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


def _bert(base, layer: int) -> dict[str, Any]:
    block = base.encoder.layer[layer].attention
    att = block.self
    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (_linear(m) for m in (att.query, att.key, att.value))
    w_o, b_o = _linear(block.output.dense)
    n = att.num_attention_heads
    return dict(attention=att, output=block.output.dense, w=(w_q, w_k, w_v, w_o),
                b=(b_q, b_k, b_v, b_o), n_heads=n, n_kv_heads=n,
                head_dim=att.attention_head_size,
                scale=float(att.attention_head_size) ** -0.5, window=None)


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


def _rotary(base, layer: int) -> dict[str, Any]:
    """Llama and its descendants: q_proj, k_proj, v_proj, o_proj, RoPE, GQA."""
    att = base.layers[layer].self_attn
    config = base.config
    (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (
        _linear(m) for m in (att.q_proj, att.k_proj, att.v_proj, att.o_proj))
    model_type = config.model_type
    if model_type == "gemma2":
        scale = float(config.query_pre_attn_scalar) ** -0.5
    else:
        scale = float(att.head_dim) ** -0.5
    if model_type == "mistral":
        window = getattr(config, "sliding_window", None)
    else:  # Gemma 2, Qwen 2, Qwen 3, gpt-oss: the layers whose layer_types entry slides
        window = getattr(att, "sliding_window", None)
    spec = dict(attention=att, output=att, w=(w_q, w_k, w_v, w_o), b=(b_q, b_k, b_v, b_o),
                n_heads=config.num_attention_heads, n_kv_heads=config.num_key_value_heads,
                head_dim=att.head_dim, scale=scale, window=window, rotary=base.rotary_emb)
    if model_type == "gemma2":
        spec["softcap"] = getattr(config, "attn_logit_softcapping", None)
    if hasattr(att, "sinks"):  # gpt-oss
        spec["sinks"] = _np(att.sinks).copy()
    if hasattr(att, "q_norm"):  # Qwen 3
        spec["q_norm"] = _np(att.q_norm.weight).copy()
        spec["k_norm"] = _np(att.k_norm.weight).copy()
        spec["norm_eps"] = float(att.q_norm.variance_epsilon)
    return spec


#: model_type -> the function reading a layer's modules and conventions.
ARCHITECTURES = {"bert": _bert, "gpt2": _gpt2, "llama": _rotary, "mistral": _rotary,
                 "gemma2": _rotary, "qwen2": _rotary, "qwen3": _rotary, "gpt_oss": _rotary}
#: The architectures (``config.model_type``) whose layers :func:`layer_inputs` reads.
SUPPORTED_MODEL_TYPES = tuple(ARCHITECTURES)


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
        An architecture not in :data:`SUPPORTED_MODEL_TYPES` (the message names them), a layer
        or sequence that does not exist, a bidirectional sliding window, or what
        :func:`~attnviz.io.capture.capture` refuses.
    """
    config = model.config
    model_type = str(getattr(config, "model_type", ""))
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
    if spec["window"] is not None and not bool(getattr(spec["attention"], "is_causal", True)):
        raise ValueError("this layer has a bidirectional sliding window; attnviz reads causal "
                         "sliding windows only")
    # 1) run once, catching the attention's input and the block's output
    seen: dict[str, Any] = {}

    def before(module, args, kwargs):
        seen["x"] = args[0] if args else kwargs["hidden_states"]

    def after(module, args, output):
        seen["out"] = output[0] if isinstance(output, tuple) else output

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
    # 2) the padded sequence: where its real tokens sat
    t = int(seen["x"].shape[1])
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
    rope = None if rotary is None else Rope(
        _np(rotary.inv_freq).copy(), float(rotary.attention_scaling),
        rope_type=str(getattr(rotary, "rope_type", "default")), base=_rope_base(config))
    w_q, w_k, w_v, w_o = spec["w"]
    b_q, b_k, b_v, b_o = spec["b"]
    return LayerInputs(
        model_type=model_type, layer=layer, tokens=tuple(str(tok) for tok in tokens),
        x=_hidden(seen["x"][b], padding), w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o,
        b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o,
        n_heads=int(spec["n_heads"]), n_kv_heads=int(spec["n_kv_heads"]),
        head_dim=int(spec["head_dim"]), scale=float(spec["scale"]),
        causal=bool(getattr(spec["attention"], "is_causal", False)),
        sliding_window=None if spec["window"] is None else int(spec["window"]),
        softcap=None if spec.get("softcap") is None else float(spec["softcap"]),
        rope=rope, positions=np.arange(t, dtype=np.float64),
        q_norm=spec.get("q_norm"), k_norm=spec.get("k_norm"), norm_eps=spec.get("norm_eps"),
        sinks=spec.get("sinks"), padding=padding, model_weights=weights,
        model_output=_np(seen["out"][b]).copy(),
    )


def _rope_base(config) -> float | None:
    """The config's ``rope_theta`` (transformers 5 keeps it in ``rope_parameters``; one
    dictionary, not one per layer type), or None."""
    params = getattr(config, "rope_parameters", None)
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

    Without RoPE, QK-norm or a cap (BERT, GPT-2) this is one
    :func:`~attnviz.core.attention.multi_head_attention` call with the biases; otherwise the
    projections are split into heads, normalised (QK-norm), rotated (RoPE) and attended by
    :func:`~attnviz.core.attention.attend_heads` (GQA, the cap, W_O and its bias), or by
    :func:`~attnviz.core.sinks.attend_heads_with_sinks` when the heads have sink logits.

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
    if li.rope is None and li.q_norm is None and li.softcap is None and li.sinks is None:
        return multi_head_attention(li.x, None, li.w_q, li.w_k, li.w_v, li.w_o,
                                    n_heads=li.n_heads, n_kv_heads=li.n_kv_heads, mask=mask,
                                    scale=li.scale, b_q=li.b_q, b_k=li.b_k, b_v=li.b_v,
                                    b_o=li.b_o)
    t = li.x.shape[0]

    def heads(w, b, n):  # 1) project and split: (n, t, head_dim)
        p = li.x @ w if b is None else li.x @ w + b
        return p.reshape(t, n, li.head_dim).transpose(1, 0, 2)

    q_h = heads(li.w_q, li.b_q, li.n_heads)
    k_h = heads(li.w_k, li.b_k, li.n_kv_heads)
    v_h = heads(li.w_v, li.b_v, li.n_kv_heads)
    if li.q_norm is not None:  # 2) QK-norm of every head's rows
        q_h = rms_norm(q_h, li.q_norm, eps=li.norm_eps)
        k_h = rms_norm(k_h, li.k_norm, eps=li.norm_eps)
    if li.rope is not None:  # 3) rotate by position
        kw = dict(inv_freq=li.rope.inv_freq, attention_scaling=li.rope.attention_scaling,
                  layout=li.rope.layout)
        q_h = apply_rope(q_h, li.positions, **kw)
        k_h = apply_rope(k_h, li.positions, **kw)
    # 4) attend (GQA, scale, cap or sinks, mask), concatenate, project
    if li.sinks is not None:
        if li.softcap is not None:
            raise ValueError("a layer with both sink logits and a soft-cap is not supported")
        return attend_heads_with_sinks(q_h, k_h, v_h, sink_logits=li.sinks, mask=mask,
                                       scale=li.scale, w_o=li.w_o, b_o=li.b_o)
    return attend_heads(q_h, k_h, v_h, mask=mask, scale=li.scale, softcap=li.softcap,
                        w_o=li.w_o, b_o=li.b_o)
