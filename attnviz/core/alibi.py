"""ALiBi: attention with linear biases, −m_h·(i − j) added to head h's scores.

Press, Smith & Lewis (2022), "Train Short, Test Long: Attention with Linear Biases Enables
Input Length Extrapolation", https://arxiv.org/abs/2108.12409, §3. No positional encoding is
added to the embeddings; instead each head penalises a key by its distance to the query, with
a head-specific slope m_h. The slopes are the paper's: for n heads a power of two, the
geometric sequence m_h = 2^(−8(h+1)/n); otherwise the slopes of the nearest lower power of two
n' followed by every other slope of 2n' (the reference code's ``get_slopes``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import check_count

Array = NDArray[np.float64]


def alibi_slopes(n_heads: int) -> Array:
    """The paper's slope of every head, shape (n_heads,).

    Raises
    ------
    ValueError
        If ``n_heads`` is not a whole number >= 1.
    """
    n_heads = check_count("n_heads", n_heads)
    if n_heads & (n_heads - 1) == 0:  # a power of two: 2^(−8/n), 2^(−16/n), ...
        return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)
    lower = 2 ** int(math.floor(math.log2(n_heads)))
    return np.concatenate([alibi_slopes(lower), alibi_slopes(2 * lower)[0::2][:n_heads - lower]])


def alibi_bias(n_heads: int, t_q: int, t_k: int | None = None, *, slopes=None) -> Array:
    """The bias −m_h·(i − j) of every head, query i and key j, shape (n_heads, t_q, t_k).

    Positions count from 0 for the queries and the keys alike (query i and key i are the same
    token). Keys after the query (j > i) get a positive bias; ALiBi is used with a causal mask,
    which hides them.

    Parameters
    ----------
    n_heads, t_q : int
    t_k : int, optional
        Default t_q.
    slopes : array_like of shape (n_heads,), optional
        Default :func:`alibi_slopes`.
    """
    n_heads = check_count("n_heads", n_heads)
    t_q = check_count("t_q", t_q)
    t_k = t_q if t_k is None else check_count("t_k", t_k)
    m = alibi_slopes(n_heads) if slopes is None else np.asarray(slopes, dtype=float)
    if m.shape != (n_heads,):
        raise ValueError(f"slopes must have one entry per head ({n_heads}), got shape {m.shape}")
    distance = np.arange(t_q)[:, None] - np.arange(t_k)[None, :]  # (t_q, t_k): i − j
    return -m[:, None, None] * distance[None, :, :]  # (n_heads, t_q, t_k)
