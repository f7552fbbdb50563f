"""A learned relative position bias: one number per head for each bucket of distances j − i,
added to the scores (T5, Raffel et al., 2020; MPNet, Song et al., 2020).

Distances below ``num_buckets / 4`` on either side get a bucket each; longer ones share
buckets spaced logarithmically up to ``max_distance``, beyond which all share the last.
:func:`relative_position_bucket` reproduces Hugging Face's bidirectional bucket function
bit for bit, its logarithm taken in float32 as the model takes it (a distance on a bucket's
edge falls on the same side).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray


def relative_position_bucket(relative: NDArray[np.integer], num_buckets: int = 32,
                             max_distance: int = 128) -> NDArray[np.int64]:
    """The bucket of each distance j − i (bidirectional: keys before and after the query use
    separate halves of the buckets).

    Parameters
    ----------
    relative : array of int
        Key position minus query position.
    num_buckets, max_distance : int

    Returns
    -------
    ndarray of int64, the shape of ``relative``
    """
    n = -np.asarray(relative, dtype=np.int64)
    half = num_buckets // 2
    out = np.where(n < 0, half, 0)
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.log(n.astype(np.float32) / np.float32(exact)) \
            / np.float32(math.log(max_distance / exact)) * np.float32(half - exact)
    large = exact + np.where(n < exact, 0, spread).astype(np.int64)
    return out + np.where(n < exact, n, np.minimum(large, half - 1))


def relative_position_bias(table: NDArray[np.floating], t: int, *, num_buckets: int = 32,
                           max_distance: int = 128) -> NDArray[np.float64]:
    """Every head's bias for a sequence of ``t`` tokens at positions 0..t−1.

    Parameters
    ----------
    table : ndarray of shape (buckets, n_heads)
        The learned bias of each bucket for each head (``relative_attention_bias.weight``).
    t : int

    Returns
    -------
    ndarray of shape (n_heads, t, t)
        ``[h, i, j]`` = table[bucket(j − i), h].
    """
    positions = np.arange(t)
    buckets = relative_position_bucket(positions[None, :] - positions[:, None], num_buckets,
                                       max_distance)
    return np.asarray(table, dtype=np.float64)[buckets].transpose(2, 0, 1).copy()
