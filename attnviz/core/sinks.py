"""Attention sinks: a sliding window that keeps the first tokens (StreamingLLM), and a learned
sink logit that takes part in the softmax and is dropped afterwards (gpt-oss).

Xiao et al. (2024), "Efficient Streaming Language Models with Attention Sinks",
https://arxiv.org/abs/2309.17453: models put large weight on the first tokens whatever they
are — the softmax must put its weight somewhere, and the first token is visible to every
query — so a sliding window that drops them breaks the model; keeping ``n_sink`` first tokens
beside the window repairs it. OpenAI's gpt-oss (2025) instead learns one logit per head that
joins each row's softmax as an extra column and is then dropped: a row may put weight
"nowhere", and its weights sum to 1 − (the sink's share).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import (
    AttentionResult,
    MultiHeadResult,
    attend_heads,
    scaled_dot_product_attention,
)
from attnviz.core.checks import as_array, check_count
from attnviz.core.numerics import read_only, weighted_sum

Array = NDArray[np.floating]


@dataclass(frozen=True, eq=False)
class SinkResult(AttentionResult):
    """An :class:`AttentionResult` whose softmax had a sink column.

    Attributes
    ----------
    sink_logit : float or None
        The sink's logit (compared with the scaled scores); None = no sink column.
    sink_weight : ndarray of shape (t_q,)
        The share of each row the sink took (0 without a sink): the weights of the row sum to
        1 − sink_weight.
    """

    sink_logit: float | None = None
    sink_weight: Array | None = None


def sink_window_mask(t: int, *, window: int, n_sink: int = 0) -> NDArray[np.bool_]:
    """Causal sliding window keeping the first tokens: query i sees key j ≤ i when
    i − j < ``window`` (``window`` keys, itself included) or j < ``n_sink``.

    With ``n_sink=0`` it is :func:`attnviz.core.masks.sliding_window_mask` (Hugging Face's
    ``sliding_window``).

    Raises
    ------
    ValueError
        If ``window`` < 1 or ``n_sink`` < 0.
    """
    t = check_count("t", t)
    window = check_count("window", window)
    if not isinstance(n_sink, (int, np.integer)) or isinstance(n_sink, bool) or n_sink < 0:
        raise ValueError(f"n_sink must be a whole number >= 0, got {n_sink!r}")
    d = np.subtract.outer(np.arange(t), np.arange(t))  # i − j
    return (d >= 0) & ((d < window) | (np.arange(t)[None, :] < n_sink))


def attention_with_sink(q, k, v, *, mask=None, scale: float | None = None,
                        temperature: float = 1.0, sink_logit: float | None = None
                        ) -> SinkResult:
    """Scaled dot-product attention whose softmax has an extra sink column (then dropped).

    weights_ij = exp(S̃_ij) / (Σ_k exp(S̃_ik) + exp(s)) for the sink logit s; a fully masked
    row gives all its weight to the sink (weights 0).

    Parameters
    ----------
    q, k, v, mask, scale, temperature
        As in :func:`~attnviz.core.attention.scaled_dot_product_attention`.
    sink_logit : float, optional
        The sink's logit; None = an ordinary softmax (sink_weight 0).
    """
    full = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale, temperature=temperature)
    s = np.asarray(full.masked)
    if sink_logit is None:
        weights, output, sink = full.weights, full.output, np.zeros(s.shape[0], s.dtype)
    else:
        sink_logit = float(sink_logit)
        if not np.isfinite(sink_logit):
            raise ValueError(f"sink_logit must be a finite number, got {sink_logit!r}")
        top = np.maximum(s.max(axis=1), sink_logit)  # finite: the sink is always there
        e = np.exp(s - top[:, None])  # masked keys: exp(−inf) = 0
        e_sink = np.exp(sink_logit - top)
        total = e.sum(axis=1) + e_sink
        weights, sink = e / total[:, None], e_sink / total
        output = weighted_sum(weights, np.asarray(full.v), "v")
        read_only(weights, output)
    read_only(sink)
    return SinkResult(full.q, full.k, full.v, full.scores, full.scaled, full.masked, weights,
                      output, full.mask, full.scale, full.temperature, score_mods=full.score_mods,
                      sink_logit=sink_logit,
                      sink_weight=sink)


@dataclass(frozen=True, eq=False)
class MultiHeadSinkResult(MultiHeadResult):
    """A :class:`MultiHeadResult` whose every head's softmax had a sink column of its own.

    ``weights``, ``head_outputs``, ``concat`` and ``output`` are those with the sinks;
    ``heads`` are :class:`SinkResult` (head h's ``sink_logit`` is ``sink_logits[h]``).

    Attributes
    ----------
    sink_logits : ndarray of shape (n_heads,)
    sink_weight : ndarray of shape (n_heads, t_q)
        The share of each head's row the sink took: the row sums to 1 − sink_weight.
    """

    sink_logits: Array | None = None
    sink_weight: Array | None = None


def attend_heads_with_sinks(q_h, k_h, v_h, *, sink_logits, mask=None,
                            scale: float | None = None, temperature: float = 1.0,
                            w_o=None, b_o=None) -> MultiHeadSinkResult:
    """Attention over split heads with one learned sink logit per head (gpt-oss).

    For head h with sink logit s_h::

        weights_hij = exp(S̃_hij) / (Σ_k exp(S̃_hik) + exp(s_h))

    the sink is one extra column of each row's softmax, dropped afterwards (Hugging Face's
    gpt-oss ``eager_attention_forward``: ``cat([scores, sinks])``, softmax, ``[..., :-1]``).
    The scores, scale, mask and key/value head mapping (GQA) are those of
    :func:`~attnviz.core.attention.attend_heads`.

    Parameters
    ----------
    q_h : array_like of shape (n_heads, t_q, d_k)
    k_h : array_like of shape (n_kv_heads, t_k, d_k)
    v_h : array_like of shape (n_kv_heads, t_k, d_v)
    sink_logits : array_like of shape (n_heads,)
        One finite logit per query head (compared with the scaled scores).
    mask, scale, temperature, w_o, b_o
        As in :func:`~attnviz.core.attention.attend_heads`.

    Returns
    -------
    MultiHeadSinkResult
    """
    # w_o and b_o are checked (and copied read-only) by attend_heads, as everywhere
    full = attend_heads(q_h, k_h, v_h, mask=mask, scale=scale, temperature=temperature, w_o=w_o,
                        b_o=b_o)
    n_heads, t_q = full.n_heads, full.scores.shape[1]
    sinks = as_array("sink_logits", sink_logits, 1).astype(full.scores.dtype)
    if sinks.shape[0] != n_heads:
        raise ValueError(f"sink_logits must have one logit per head ({n_heads}), got "
                         f"{sinks.shape[0]}")
    s = np.asarray(full.masked)  # (n_heads, t_q, t_k)
    # 1) the softmax of every row with its head's sink as an extra column
    top = np.maximum(s.max(axis=2), sinks[:, None])  # (n_heads, t_q): finite, the sink is there
    e = np.exp(s - top[:, :, None])  # masked keys: exp(−inf) = 0
    e_sink = np.exp(sinks[:, None] - top)  # (n_heads, t_q)
    total = e.sum(axis=2) + e_sink
    weights, sink_weight = e / total[:, :, None], e_sink / total
    # 2) mix the values of each head's key/value head, concatenate, project
    vq = np.stack([np.asarray(head.v) for head in full.heads])  # (n_heads, t_k, d_v)
    head_outputs = weighted_sum(weights, vq, "v")  # (n_heads, t_q, d_v)
    concat = head_outputs.transpose(1, 0, 2).reshape(t_q, -1)  # (t_q, n_heads·d_v)
    output = concat if full.w_o is None else _project_out(concat, full.w_o, full.b_o)
    read_only(weights, sink_weight, head_outputs, concat, output, sinks)
    heads = tuple(
        SinkResult(head.q, head.k, head.v, head.scores, head.scaled, head.masked, weights[h],
                   head_outputs[h], head.mask, head.scale, head.temperature,
                   score_mods=head.score_mods, head_index=h, sink_logit=float(sinks[h]),
                   sink_weight=sink_weight[h])
        for h, head in enumerate(full.heads)
    )
    return MultiHeadSinkResult(full.q, full.k, full.v, heads, full.scores, full.scaled,
                               full.masked, weights, head_outputs, concat, output, full.mask,
                               full.scale, full.temperature, n_heads,
                               score_mods=full.score_mods, w_o=full.w_o, b_o=full.b_o,
                               sink_logits=sinks, sink_weight=sink_weight)


def _project_out(concat: Array, w_o: Array, b_o: Array | None) -> Array:
    """``concat @ w_o (+ b_o)``; a ValueError if it overflows (as attend_heads says it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        output = concat @ w_o if b_o is None else concat @ w_o + b_o  # (t_q, d_out)
    if not np.isfinite(output).all():
        raise ValueError("output = concat @ w_o overflows the floating-point range; use "
                         "smaller values")
    return output
