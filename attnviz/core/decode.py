"""KV-cache decoding: prefill a prompt, then one new token at a time against the cached keys.

A decoder generates token t after tokens 0..t−1. Recomputing every key and value at each step
is wasted work: they do not change. The KV cache keeps them; step t computes only q_t, k_t and
v_t, appends k_t and v_t to the cache, and attends q_t to the t + 1 cached keys. With the
causal mask aligned *bottom-right* (the query block is the last rows of the sequence: PyTorch's
``causal_lower_right``), the rows equal full causal attention row for row. Aligned top-left, the
one-row query block would see key 0 only — a classic bug.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import AttentionResult, scaled_dot_product_attention
from attnviz.core.checks import as_mask, check_count
from attnviz.core.masks import causal_mask
from attnviz.core.numerics import read_only

Array = NDArray[np.floating]


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One call of the model: the prefill (several query rows) or one decoded token.

    Attributes
    ----------
    queries : range
        The positions whose rows this step computes.
    cache_len : int
        Keys and values in the cache after this step (= the keys its queries attend over).
    weights : ndarray of shape (len(queries), cache_len)
    output : ndarray of shape (len(queries), d_v)
    """

    queries: range
    cache_len: int
    weights: Array
    output: Array


@dataclass(frozen=True, eq=False)
class DecodeResult(AttentionResult):
    """Causal attention computed as prefill + cached decoding, with every step.

    The inherited fields hold the assembled rows (equal to full causal attention); ``steps``
    the calls as a decoder makes them.

    Attributes
    ----------
    prefill : int
        Tokens processed at once before decoding.
    steps : tuple of DecodeStep
    difference : float
        Largest absolute difference between the assembled output and full causal attention's.
    """

    prefill: int = 1
    steps: tuple[DecodeStep, ...] = ()
    difference: float = 0.0


def cached_decoding(q, k, v, *, prefill: int, mask=None, scale: float | None = None,
                    temperature: float = 1.0) -> DecodeResult:
    """Causal self-attention of t tokens as a decoder computes it with a KV cache.

    Parameters
    ----------
    q, k, v : array_like of shape (t, d_k), (t, d_k), (t, d_v)
        Row i is token i's query, key and value (self-attention: t_q = t_k).
    prefill : int
        1 ≤ prefill ≤ t: the prompt's tokens, processed in one call (causal among themselves).
    mask : array_like of bool, broadcastable to (t, t), optional
        A mask combined with the causal one (e.g. a sliding window).
    scale, temperature
        As in :func:`~attnviz.core.attention.scaled_dot_product_attention`.

    Returns
    -------
    DecodeResult
    """
    full = scaled_dot_product_attention(q, k, v, mask=_causal(mask, q), scale=scale,
                                        temperature=temperature)
    t = full.q.shape[0]
    if full.k.shape[0] != t:
        raise ValueError(f"cached decoding is self-attention: q and k need the same number of "
                         f"rows, got {t} and {full.k.shape[0]}")
    prefill = check_count("prefill", prefill)
    if prefill > t:
        raise ValueError(f"prefill must be between 1 and the number of tokens ({t}), got "
                         f"{prefill}")
    allowed = np.asarray(full.mask)
    steps, weights, output = [], np.zeros_like(full.weights), np.zeros_like(full.output)
    for rows in [range(0, prefill)] + [range(i, i + 1) for i in range(prefill, t)]:
        n = rows.stop  # the cache holds keys 0 .. rows.stop − 1 after this call
        block_mask = causal_mask(len(rows), n, align="bottom_right") & allowed[rows.start:n, :n]
        step = scaled_dot_product_attention(full.q[rows.start:n], full.k[:n], full.v[:n],
                                            mask=block_mask, scale=full.scale,
                                            temperature=full.temperature)
        weights[rows.start:n, :n] = step.weights
        output[rows.start:n] = step.output
        steps.append(DecodeStep(rows, n, step.weights, step.output))
    difference = float(np.abs(output - full.output).max())
    read_only(weights, output)
    return DecodeResult(full.q, full.k, full.v, full.scores, full.scaled, full.masked, weights,
                        output, full.mask, full.scale, full.temperature, score_mods=full.score_mods,
                        prefill=prefill,
                        steps=tuple(steps), difference=difference)


def cache_bytes(tokens: int, n_layers: int, n_kv_heads: int, d_head: int,
                bytes_per_entry: int = 2) -> int:
    """Size of a KV cache: 2 (K and V) · layers · key/value heads · head width · tokens · bytes
    per entry (2 for float16/bfloat16)."""
    return 2 * n_layers * n_kv_heads * d_head * tokens * bytes_per_entry


def _causal(mask, q) -> NDArray[np.bool_]:
    """The causal mask of t = len(q) tokens, and-ed with ``mask``."""
    t = np.shape(q)[0]
    tri = causal_mask(t)
    return tri if mask is None else tri & as_mask("mask", mask, (t, t))
