"""Numerical building blocks the core's attention functions share (trusted inputs, no checks).

The public functions of :mod:`attnviz.core.attention` and :mod:`attnviz.core.additive` validate
their arguments, then compute with these.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.floating]


def stable_softmax(x: Array, axis: int) -> Array:
    """Softmax along ``axis`` of a float array of finite values and −inf (no checks: the
    public :func:`attnviz.core.attention.softmax` checks its input, then calls this)."""
    if x.size == 0:
        return np.zeros_like(x)
    # 1) subtract the largest entry of each slice, so that exp never overflows
    top = np.max(x, axis=axis, keepdims=True)
    top[np.isneginf(top)] = 0  # an all −inf slice stays −inf
    with np.errstate(over="ignore"):  # x − top below −max_float is −inf: weight 0, as it should
        exp = x - top
        np.exp(exp, out=exp)  # in place: one array of the scores' size, not two
    # 2) normalise; an all-zero slice (all −inf) stays zero
    total = exp.sum(axis=axis, keepdims=True)
    total[total == 0] = 1
    exp /= total
    return exp


def weighted_sum(weights: Array, values: Array, name: str) -> Array:
    """``weights @ values``; a ValueError if rounding pushes values near the float limit to inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        output = weights @ values
    if not np.isfinite(output).all():
        raise ValueError(f"the attention output overflows the floating-point range; use smaller "
                         f"values in {name}")
    return output


def read_only(*arrays: np.ndarray) -> None:
    """Mark arrays read-only, so that results cannot be changed behind a view's back."""
    for a in arrays:
        a.flags.writeable = False
