"""Sinusoidal positional encoding (Vaswani et al. 2017, §3.5).

    PE[t, 2i]   = sin(t / base^(2i / d_model))
    PE[t, 2i+1] = cos(t / base^(2i / d_model))

with base = 10000 in the paper. (Seed 002 prints the base as 1000: a typo worth showing.)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import check_count, check_entries, check_positive


def sinusoidal_positional_encoding(n_positions: int, d_model: int, *,
                                   base: float = 10000.0) -> NDArray[np.float64]:
    """The sinusoidal positional-encoding matrix.

    Parameters
    ----------
    n_positions : int
        Number of positions t = 0 .. n_positions − 1.
    d_model : int
        Embedding width; odd widths work (the last column is a sine).
    base : float
        The wavelength base, > 1 for the usual geometric progression of frequencies.

    Returns
    -------
    ndarray of shape (n_positions, d_model)

    Raises
    ------
    ValueError
        Sizes that are not whole numbers >= 1, n_positions·d_model above
        :data:`~attnviz.core.checks.MAX_ENTRIES` (2**24), or a base that is not a number > 0.
    """
    n_positions = check_count("n_positions", n_positions)
    d_model = check_count("d_model", d_model)
    base = check_positive("base", base)
    check_entries("the positional encoding", (n_positions, d_model))
    positions = np.arange(n_positions, dtype=np.float64)[:, None]  # (t, 1)
    pair = np.arange(d_model) // 2  # i for columns 2i and 2i+1
    angle = positions / base ** (2.0 * pair / d_model)  # (t, d_model)
    even = np.arange(d_model) % 2 == 0
    return np.where(even, np.sin(angle), np.cos(angle))
