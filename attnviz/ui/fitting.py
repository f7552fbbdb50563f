"""Fit a stored parameter vector to a new size (keep what fits, fill the rest)."""

from __future__ import annotations

import numpy as np


def fit_vector(v: np.ndarray | None, n: int, fill: float) -> np.ndarray:
    """A float vector of length n: the first values of ``v`` that fit, ``fill`` after them.

    ``v`` may be None or empty (a scenario without that parameter): all ``fill`` then.
    """
    out = np.full(n, float(fill))
    if v is not None:
        v = np.asarray(v, dtype=float).reshape(-1)
        k = min(n, v.shape[0])
        out[:k] = v[:k]
    return out
