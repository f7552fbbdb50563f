"""Downsampling attention weights for display: block pooling that keeps rows summing to 1.

A 1024×1024 heatmap is ~4 MB of float32 the browser has to draw, and a screen has fewer pixels
than that anyway. Beyond ``max_size`` tokens on a side, neighbouring tokens are grouped into
contiguous blocks of ``factor = ceil(t / max_size)`` tokens (the last block may be smaller):

    pooled[I, J] = mean over queries i in block I of ( sum over keys j in block J of w[i, j] )

i.e. "how much attention the queries of block I pay, on average, to the keys of block J".
Averaging over queries and summing over keys keeps every pooled row a probability
distribution: a block of rows that each sum to 1 gives a pooled row that sums to 1 (up to
rounding). A plain block mean would give rows summing to 1/factor instead.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.core.checks import check_count

Array = NDArray[np.float64]


def block_factor(n: int, max_size: int) -> int:
    """Tokens per block so that n tokens fit in at most ``max_size`` blocks (1 = no pooling).

    ``n`` is a whole number >= 0, ``max_size`` a whole number >= 1 (else a ValueError).
    """
    n = check_count("n", n, minimum=0)
    if isinstance(max_size, (int, np.integer)) and not isinstance(max_size, bool) \
            and max_size < 1:
        raise ValueError(f"max_size must be at least 1, got {max_size}")
    max_size = check_count("max_size", max_size)
    return max(1, math.ceil(n / max_size))


def block_starts(n: int, max_size: int) -> NDArray[np.intp]:
    """First index of every block of n tokens pooled to at most ``max_size`` blocks."""
    return np.arange(0, n, block_factor(n, max_size))


def block_labels(labels, max_size: int) -> list[str]:
    """Labels of pooled blocks: ``"0–3"`` (first and last position); unchanged if not pooled."""
    labels = list(labels)
    n = len(labels)
    factor = block_factor(n, max_size)
    if factor == 1:
        return labels
    return [f"{i}–{min(i + factor, n) - 1}" for i in range(0, n, factor)]


def downsample(weights: ArrayLike, max_size: int) -> Array:
    """Pool attention weights to at most ``max_size`` × ``max_size`` cells.

    Parameters
    ----------
    weights : array_like of shape (..., t_q, t_k)
        Attention weights (rows over keys sum to 1); leading axes (heads, layers) are kept.
    max_size : int >= 1
        Largest number of cells on each side of the result (a whole number: not a float,
        a bool or a string).

    Returns
    -------
    ndarray of shape (..., ceil(t_q / f_q), ceil(t_k / f_k)), float64
        ``f = ceil(t / max_size)`` tokens per block on each axis. Queries are averaged within a
        block and keys summed, so rows that summed to 1 still do. A matrix already within
        ``max_size`` is returned unchanged (as a float64 copy).

    Raises
    ------
    ValueError
        If ``weights`` has fewer than 2 dimensions, is empty or holds NaN/inf, or
        ``max_size`` is not a whole number >= 1.
    """
    block_factor(1, max_size)  # checks max_size before any work
    w = np.array(weights, dtype=np.float64)  # a copy: the result never aliases the input
    if w.ndim < 2 or w.size == 0:
        raise ValueError(f"weights must be a non-empty matrix (..., t_q, t_k), got shape "
                         f"{w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must hold finite numbers (no NaN or inf)")
    t_q, t_k = w.shape[-2:]
    rows = block_starts(t_q, max_size)
    cols = block_starts(t_k, max_size)
    if rows.size == t_q and cols.size == t_k:
        return w
    # 1) sum the keys of each column block
    w = np.add.reduceat(w, cols, axis=-1)  # (..., t_q, n_col_blocks)
    # 2) average the queries of each row block (the last block may hold fewer rows)
    sizes = np.diff(np.append(rows, t_q))  # (n_row_blocks,)
    w = np.add.reduceat(w, rows, axis=-2)  # (..., n_row_blocks, n_col_blocks)
    return w / sizes[:, None]
