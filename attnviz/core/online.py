"""FlashAttention's online softmax: attention computed tile by tile over the keys.

Milakov & Gimelshein (2018), "Online normalizer calculation for softmax",
https://arxiv.org/abs/1805.02867; Dao et al. (2022), "FlashAttention", Algorithm 1. For each
tile of keys j (with S̃ the scaled, masked scores of the tile)::

    m_new = max(m, rowmax(S̃_j))                 running maximum of each query's scores
    α     = exp(m − m_new)                       how much the earlier partial sums shrink
    P̃_j   = exp(S̃_j − m_new)
    l     = α·l + rowsum(P̃_j)                    running sum of the exponentials
    O     = α·O + P̃_j V_j                        running (unnormalised) output
    m     = m_new

and at the end O / l, with the log-sum-exp L = m + log l. Nothing of size t_q × t_k is kept
between tiles: that is FlashAttention's memory saving. The weights are recovered afterwards as
exp(S̃ − L) (what FlashAttention's backward pass recomputes), so every view reads the same
fields as for :class:`~attnviz.core.attention.AttentionResult`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import AttentionResult, scaled_dot_product_attention
from attnviz.core.checks import check_count
from attnviz.core.numerics import read_only

Array = NDArray[np.floating]


@dataclass(frozen=True, eq=False)
class TileState:
    """The running statistics after one tile of keys.

    Attributes
    ----------
    start, stop : int
        The tile's keys: start .. stop − 1.
    m : ndarray of shape (t_q,)
        Running maximum (−inf while a query has seen only masked keys).
    l : ndarray of shape (t_q,)
        Running sum of exp(S̃ − m).
    o : ndarray of shape (t_q, d_v)
        Running unnormalised output Σ exp(S̃ − m) v.
    alpha : ndarray of shape (t_q,)
        The rescaling exp(m_old − m) applied to l and O at this tile.
    """

    start: int
    stop: int
    m: Array
    l: Array  # noqa: E741 - the paper's name
    o: Array
    alpha: Array


@dataclass(frozen=True, eq=False)
class OnlineResult(AttentionResult):
    """An :class:`AttentionResult` computed tile by tile, with the tiles' running statistics.

    Attributes
    ----------
    tile : int
        Keys per tile (the last tile may be shorter).
    tiles : tuple of TileState
    lse : ndarray of shape (t_q,)
        log Σ_j exp(S̃_ij) = m + log l (−inf for a fully masked query).
    difference : float
        The largest absolute difference between this output and the one-pass softmax's.
    """

    tile: int = 1
    tiles: tuple[TileState, ...] = ()
    lse: Array | None = None
    difference: float = 0.0


def online_softmax_attention(q, k, v, *, tile: int, mask=None, scale: float | None = None,
                             temperature: float = 1.0) -> OnlineResult:
    """softmax(q kᵀ · scale / τ, masked) v computed over tiles of ``tile`` keys.

    Parameters
    ----------
    q, k, v, mask, scale, temperature
        As in :func:`~attnviz.core.attention.scaled_dot_product_attention` (which checks them
        and computes the scores; its one-pass output is kept for ``difference``).
    tile : int
        Keys per tile, ≥ 1; larger than t_k means one tile. Need not divide t_k.

    Returns
    -------
    OnlineResult
        ``weights`` = exp(masked − lse) and ``output`` = O / l from the tiles.
    """
    tile = check_count("tile", tile)
    full = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale, temperature=temperature)
    s, values = np.asarray(full.masked), np.asarray(full.v)
    t_q, t_k = s.shape
    dtype = s.dtype
    m = np.full(t_q, -np.inf, dtype)
    l_sum = np.zeros(t_q, dtype)
    o = np.zeros((t_q, values.shape[1]), dtype)
    states = []
    for start in range(0, t_k, tile):
        stop = min(start + tile, t_k)
        block = s[:, start:stop]
        m_new = np.maximum(m, block.max(axis=1))
        seen = np.isfinite(m_new)  # the query has met an allowed key
        m_safe = np.where(seen, m_new, 0.0)  # exp(−inf − 0) = 0 for the masked keys
        alpha = np.where(seen, np.exp(m - m_safe), 1.0)
        p = np.exp(block - m_safe[:, None])
        l_sum = alpha * l_sum + p.sum(axis=1)
        o = alpha[:, None] * o + p @ values[start:stop]
        m = m_new
        states.append(TileState(start, stop, m.copy(), l_sum.copy(), o.copy(), alpha))
    live = l_sum > 0
    output = np.divide(o, l_sum[:, None], out=np.zeros_like(o), where=live[:, None])
    lse = np.where(live, m + np.log(np.where(live, l_sum, 1.0)), -np.inf)
    weights = np.where(live[:, None] & np.isfinite(s),
                       np.exp(s - np.where(live, lse, 0)[:, None]), 0.0)
    difference = float(np.abs(output - full.output).max()) if output.size else 0.0
    for st in states:
        read_only(st.m, st.l, st.o, st.alpha)
    read_only(weights, output, lse)
    return OnlineResult(full.q, full.k, full.v, full.scores, full.scaled, full.masked, weights,
                        output, full.mask, full.scale, full.temperature, score_mods=full.score_mods,
                        tile=tile,
                        tiles=tuple(states), lse=lse, difference=difference)


def memory_traffic(t_q: int, t_k: int, d_k: int, d_v: int, tile: int) -> dict[str, int]:
    """Numbers read and written by the two paths, counted in array entries.

    * naive: read Q and K, write S, read S, write P, read P and V, write O;
    * tiled (all queries in one block, FlashAttention's outer loop over key tiles): read Q,
      every K and V tile once, write O, and keep m and l (2·t_q) per tile.
    """
    naive = t_q * d_k + t_k * d_k + 4 * t_q * t_k + t_k * d_v + t_q * d_v
    n_tiles = -(-t_k // tile)
    tiled = t_q * d_k + t_k * d_k + t_k * d_v + t_q * d_v + 2 * t_q * n_tiles
    return {"naive": naive, "tiled": tiled, "scores_kept_naive": t_q * t_k,
            "scores_kept_tiled": t_q * min(tile, t_k)}
