"""Diagnostics of attention weights, one number per query row (and per head).

For a weights row α_i (non-negative, summing to 1 over the keys):

    entropy            H_i = −Σ_j α_ij ln α_ij          (nats; 0 ln 0 = 0)
    effective tokens   N_i = exp(H_i)                   (1 = one key, t_k = uniform)
    max weight         max_j α_ij  and its key argmax_j α_ij
    row sum            Σ_j α_ij                         (1, or 0 for a fully masked query)

A fully masked query (all weights 0, see :func:`attnviz.core.attention.softmax`) has entropy 0,
0 effective tokens, max weight 0, no argmax (−1) and row sum 0, which counts as correct.
The effective number of tokens is the perplexity of the row (e.g. Clark et al. 2019, "What does
BERT look at?", use the entropy of attention heads).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.core.checks import as_array, check_positive

Array = NDArray[np.float64]
ROW_SUM_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class RowDiagnostics:
    """Per-row diagnostics; every field has the weights' shape without the key axis.

    Attributes
    ----------
    entropy : ndarray of shape (..., t_q)
        Shannon entropy in nats.
    effective : ndarray of shape (..., t_q)
        exp(entropy): how many keys the query effectively attends to (0 when fully masked).
    max_weight : ndarray of shape (..., t_q)
    argmax : ndarray of int, shape (..., t_q)
        The key with the largest weight (the first one on ties); −1 for a fully masked query.
    row_sum : ndarray of shape (..., t_q)
    row_sum_ok : ndarray of bool, shape (..., t_q)
        |row sum − 1| <= tol, or the row is all zeros (fully masked).
    fully_masked : ndarray of bool, shape (..., t_q)
    max_entropy : float
        ln(t_k), the entropy of a uniform row.
    """

    entropy: Array
    effective: Array
    max_weight: Array
    argmax: NDArray[np.int64]
    row_sum: Array
    row_sum_ok: NDArray[np.bool_]
    fully_masked: NDArray[np.bool_]
    max_entropy: float

    @property
    def all_rows_ok(self) -> bool:
        """True when every row sums to 1 (or is a fully masked row of zeros)."""
        return bool(np.all(self.row_sum_ok))


def entropy(weights: ArrayLike, axis: int = -1) -> Array:
    """Shannon entropy −Σ p ln p along ``axis`` (a whole number) in nats, with 0 ln 0 = 0."""
    p = np.asarray(weights, dtype=np.float64)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ValueError(f"axis must be a whole number, got {axis!r}")
    if not -p.ndim <= axis < p.ndim:
        raise ValueError(f"axis {axis} is out of range for weights of {p.ndim} dimensions")
    safe = np.where(p > 0, p, 1.0)  # ln 1 = 0 for the zero entries
    return -np.sum(np.where(p > 0, p * np.log(safe), 0.0), axis=axis)


def row_diagnostics(weights: ArrayLike, *, tol: float = ROW_SUM_TOL) -> RowDiagnostics:
    """Entropy, effective tokens, max weight, argmax and row-sum check of every query row.

    Parameters
    ----------
    weights : array_like of shape (t_q, t_k) or (n_heads, t_q, t_k)
        Attention weights (softmax over the last axis).
    tol : float
        Allowed |row sum − 1|, a finite number >= 0.

    Returns
    -------
    RowDiagnostics
    """
    tol = check_positive("tol", tol, allow_zero=True)
    w = as_array("weights", weights, (1, 2, 3)).astype(np.float64, copy=False)
    if w.ndim == 1:
        w = w[None, :]  # one query
    if np.any(w < 0):
        raise ValueError("attention weights must be non-negative")
    row_sum = w.sum(axis=-1)
    fully_masked = np.all(w == 0, axis=-1)
    h = entropy(w)
    effective = np.where(fully_masked, 0.0, np.exp(h))
    argmax = np.where(fully_masked, -1, np.argmax(w, axis=-1))
    ok = (np.abs(row_sum - 1.0) <= tol) | fully_masked
    return RowDiagnostics(entropy=h, effective=effective, max_weight=w.max(axis=-1),
                          argmax=argmax.astype(np.int64), row_sum=row_sum, row_sum_ok=ok,
                          fully_masked=fully_masked, max_entropy=float(np.log(w.shape[-1])))
