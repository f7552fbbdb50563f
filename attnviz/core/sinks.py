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

from attnviz.core.attention import AttentionResult, scaled_dot_product_attention
from attnviz.core.checks import check_count
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
