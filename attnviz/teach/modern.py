"""Demonstrations behind the Modern attention page: RoPE's shift invariance next to the
sinusoidal encoding's, ALiBi's bias at any length, and the key/value heads GQA shares.

Each function computes from the scenario's own embeddings and weights (one head: every column of
W_Q and W_K), through the core's RoPE, ALiBi and positional-encoding functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.alibi import alibi_bias, alibi_slopes
from attnviz.core.checks import as_array
from attnviz.core.diagnostics import entropy
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.core.rope import apply_rope, rope_angles
from attnviz.scenarios.scenario import Scenario, run_scenario, with_variant

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class ShiftCheck:
    """Scores of the same tokens at positions 0.. and at positions Δ.., two ways.

    Attributes
    ----------
    rope, rope_shifted : ndarray of shape (t, t)
        q·k / √d_k with q and k rotated by RoPE at positions p and p + Δ.
    pe, pe_shifted : ndarray of shape (t, t)
        The same with the sinusoidal encoding of positions p and p + Δ added to x instead.
    rope_change, pe_change : float
        The largest absolute change of a score under the shift.
    """

    rope: Array
    rope_shifted: Array
    pe: Array
    pe_shifted: Array
    rope_change: float
    pe_change: float


def shift_check(scenario: Scenario, delta: int, *, base: float = 10000.0,
                layout: str = "split_half") -> ShiftCheck:
    """Shift every position by ``delta``: RoPE's scores stay, the sinusoidal encoding's move.

    Raises
    ------
    ValueError
        If the head width is below 2 (nothing to rotate) or the matrices do not fit.
    """
    x = as_array("x", scenario.x, 2)
    w_q, w_k = as_array("w_q", scenario.w_q, 2), as_array("w_k", scenario.w_k, 2)
    if not x.shape[1] == w_q.shape[0] == w_k.shape[0] or w_q.shape[1] != w_k.shape[1]:
        raise ValueError(f"x {x.shape}, W_Q {w_q.shape} and W_K {w_k.shape} do not fit "
                         f"together (x's columns = the weights' rows; W_Q and W_K as wide)")
    t, d_k = x.shape[0], w_q.shape[1]
    d_rot = 2 * (d_k // 2)
    if d_rot < 2:
        raise ValueError(f"RoPE needs a head width of at least 2; W_Q has {d_k} column(s)")
    scale = 1.0 / np.sqrt(d_k)
    with np.errstate(over="ignore", invalid="ignore"):
        q, k = x @ w_q, x @ w_k
    if not (np.isfinite(q).all() and np.isfinite(k).all()):
        raise ValueError("q = x·W_Q or k = x·W_K overflows the floating-point range; use "
                         "smaller values")

    def rope_scores(offset: int) -> Array:
        kw = dict(base=base, layout=layout, d_rot=d_rot, offset=float(offset))
        return apply_rope(q, **kw) @ apply_rope(k, **kw).T * scale

    def pe_scores(offset: int) -> Array:
        pe = sinusoidal_positional_encoding(t + offset, x.shape[1], base=scenario.pe_base)
        xp = x + pe[offset:]
        return (xp @ w_q) @ (xp @ w_k).T * scale

    with np.errstate(over="ignore", invalid="ignore"):
        r0, r1, p0, p1 = rope_scores(0), rope_scores(delta), pe_scores(0), pe_scores(delta)
    if not all(np.isfinite(a).all() for a in (r0, r1, p0, p1)):
        raise ValueError("the scores overflow the floating-point range; use smaller values")
    return ShiftCheck(r0, r1, p0, p1, float(np.abs(r1 - r0).max()),
                      float(np.abs(p1 - p0).max()))


def angles(t: int, d_k: int, *, base: float = 10000.0) -> Array:
    """RoPE's angle (radians) of every position (rows) and rotated pair (columns)."""
    return rope_angles(np.arange(t, dtype=float), 2 * max(d_k // 2, 1), base=base)


def kv_sharing(n_heads: int, n_kv: int) -> Array:
    """One row per query head, one column per key/value head: 1 where the query head reads
    that key/value head (query head h reads h // (n_heads / n_kv))."""
    if n_kv < 1 or n_heads % n_kv:
        raise ValueError(f"n_kv_heads ({n_kv}) must divide n_heads ({n_heads})")
    return np.eye(n_kv)[np.repeat(np.arange(n_kv), n_heads // n_kv)]


def cache_entries_per_token(n_kv: int, d_head: int, n_layers: int = 1) -> int:
    """Numbers a KV cache keeps per token: a key and a value of every key/value head and
    layer."""
    return 2 * n_kv * d_head * n_layers


def kv_choices(n_q: int) -> list[int]:
    """The numbers of key/value heads that ``n_q`` query heads can share: its divisors."""
    return [d for d in range(1, n_q + 1) if n_q % d == 0]


def kv_for(n_q: int, n_kv: int) -> int:
    """The key/value heads used with ``n_q`` query heads: ``n_kv`` while it divides them, else
    the middle divisor (as after changing the query heads)."""
    choices = kv_choices(n_q)
    return n_kv if n_kv in choices else choices[len(choices) // 2]


def cache_rows(n_q: int, n_kv: int, d_head: int) -> list[tuple[str, int, int, float]]:
    """The KV cache per token of multi-head, grouped-query and multi-query attention:
    (kind "mha"/"gqa"/"mqa", key/value heads, numbers per token, ratio to multi-head)."""
    full = cache_entries_per_token(n_q, d_head)
    return [(kind, n, cache_entries_per_token(n, d_head),
             cache_entries_per_token(n, d_head) / full)
            for kind, n in (("mha", n_q), ("gqa", n_kv), ("mqa", 1))]


ALIBI_LENGTHS = (2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32, 48, 64)  # the length slider's grid


def alibi_length(t: int) -> int:
    """The ALiBi length a scenario of ``t`` tokens starts at: t, kept within 2..64."""
    return min(max(t, 2), 64)


def alibi_lengths(t: int) -> list[int]:
    """The sequence lengths of ALiBi's length slider: a grid from 2 to 64 and the scenario's
    own number of tokens (each a frame of the drag sliders: every 2..64 would send 89,000
    numbers per head)."""
    return sorted({*ALIBI_LENGTHS, alibi_length(t)})


def causal_bias(n_heads: int, h: int, length: int) -> Array:
    """Head ``h``'s ALiBi bias with the causal mask: −∞ where j > i (and 0, not −0, at i = j)."""
    return np.where(np.tri(length, dtype=bool), alibi_bias(n_heads, length)[h] + 0.0, -np.inf)


def slopes(n_heads: int) -> Array:
    """ALiBi's geometric slope of every head (:func:`attnviz.core.alibi.alibi_slopes`)."""
    return alibi_slopes(n_heads)


def shown_heads(n_heads: int, most: int = 4) -> list[int]:
    """At most ``most`` heads spread evenly from the first to the last."""
    return sorted({int(round(h)) for h in np.linspace(0, n_heads - 1, min(n_heads, most))})


@dataclass(frozen=True, eq=False)
class NormEffect:
    """Plain scaled dot-product attention next to QK-norm on the same scenario (one head).

    Attributes
    ----------
    plain, normed : ndarray of shape (t_q, t_k)
        The softmax's input (scaled scores, −inf where masked).
    plain_largest, normed_largest : float
        The largest |logit| allowed by the mask.
    plain_entropy, normed_entropy : float
        The mean entropy of the weights' rows (nats).
    bound : float
        QK-norm's bound on |logit|: d_k · g² · scale / τ.
    """

    plain: Array
    normed: Array
    plain_largest: float
    normed_largest: float
    plain_entropy: float
    normed_entropy: float
    bound: float


def qk_norm_effect(scenario: Scenario, gain: float) -> NormEffect:
    """The logits and the entropy of the weights with and without QK-norm (gain ``gain``).

    Raises
    ------
    ValueError
        If the scenario does not compute (as :func:`run_scenario`).
    """
    plain = run_scenario(replace(with_variant(scenario, "scaled_dot_product"),
                                 params={})).attention
    normed = run_scenario(replace(with_variant(scenario, "qk_norm"),
                                  params={"qk_gain": float(gain)})).attention

    def largest(a) -> float:
        a = np.asarray(a.masked)
        return float(np.abs(a[np.isfinite(a)]).max()) if np.isfinite(a).any() else 0.0

    d_k = np.shape(normed.q)[1]
    bound = d_k * gain ** 2 * normed.scale / normed.temperature
    return NormEffect(np.asarray(plain.masked), np.asarray(normed.masked), largest(plain),
                      largest(normed), float(np.mean(entropy(plain.weights))),
                      float(np.mean(entropy(normed.weights))), float(bound))
