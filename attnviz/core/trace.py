"""Trace one attention weight α_ij back to its arithmetic.

:func:`trace_cell` recomputes, for query i and key j, every step from q_i and k_j to α_ij·v_j
with scalar and vector operations (an explicit, independent path), and keeps the value the
vectorised core stored, so a page can show both and a test can check they agree:

    s_ij = q_i · k_j = Σ_d q_id k_jd              raw score
    s_ij · scale                                  scale = 1/√d_k unless chosen otherwise
    s'_ij = s_ij · scale / τ                      temperature
    s''_ij = s'_ij if M_ij else −∞                mask
    e_ij = exp(s''_ij − m_i),  m_i = max_j' s''_ij'   (stable; m_i cancels in the ratio)
    Z_i = Σ_j' e_ij'                              row sum
    α_ij = e_ij / Z_i                             (0 when Z_i = 0: a fully masked query)
    α_ij v_j                                      this key's share of output row i
    (α_ij v_j) W_O[head block]                    multi-head: its share of the final output

:func:`trace_additive_cell` does the same for additive (Bahdanau) attention, whose score is
e_ij = v_a · tanh(q_i W_q + k_j W_k) instead of a dot product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import AttentionResult, MultiHeadResult

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class SoftmaxSteps:
    """The softmax part of the chain for one cell (shared by both kinds of trace).

    Attributes
    ----------
    allowed : bool
        M_ij: may query i attend to key j?
    masked : float
        s''_ij (−inf when not allowed).
    row_masked : ndarray of shape (t_k,)
        Row i of the masked scores.
    row_max : float
        m_i, subtracted before exp (0 for a fully masked row).
    exp_shifted : float
        e_ij = exp(s''_ij − m_i).
    row_exp : ndarray of shape (t_k,)
    row_sum : float
        Z_i.
    alpha : float
        α_ij recomputed here.
    stored_alpha : float
        α_ij as the vectorised core computed it.
    """

    allowed: bool
    masked: float
    row_masked: Array
    row_max: float
    exp_shifted: float
    row_exp: Array
    row_sum: float
    alpha: float
    stored_alpha: float


@dataclass(frozen=True, eq=False)
class CellTrace:
    """Every number on the way from q_i and k_j to α_ij·v_j (dot-product attention).

    Attributes
    ----------
    i, j : int
    head : int or None
        The head, for multi-head attention.
    q_i, k_j : ndarray of shape (d_k,)
    products : ndarray of shape (d_k,)
        q_id · k_jd, summed to the raw score.
    score : float
        s_ij.
    scale : float
    scaled : float
        s_ij · scale.
    temperature : float
    divided : float
        s_ij · scale / τ.
    softmax : SoftmaxSteps
    v_j : ndarray of shape (d_v,)
    contribution : ndarray of shape (d_v,)
        α_ij v_j.
    output_i : ndarray of shape (d_v,)
        Row i of this head's output, Σ_j α_ij v_j (from the core).
    w_o_block : ndarray of shape (d_v, d_out) or None
        The rows of W_O that multiply this head's slot of the concatenation.
    through_w_o : ndarray of shape (d_out,) or None
        (α_ij v_j) W_O[block]: the cell's share of the final output row i.
    final_output_i : ndarray of shape (d_out,) or None
        Row i of the multi-head output.
    """

    i: int
    j: int
    head: int | None
    q_i: Array
    k_j: Array
    products: Array
    score: float
    scale: float
    scaled: float
    temperature: float
    divided: float
    softmax: SoftmaxSteps
    v_j: Array
    contribution: Array
    output_i: Array
    w_o_block: Array | None = None
    through_w_o: Array | None = None
    final_output_i: Array | None = None


@dataclass(frozen=True, eq=False)
class AdditiveCellTrace:
    """Every number from the alignment features to α_ij·v_j (additive attention).

    Attributes
    ----------
    i, j : int
    features : ndarray of shape (d_a,)
        tanh(q_i W_q + k_j W_k (+ bias)), from the core.
    v_a : ndarray of shape (d_a,)
    products : ndarray of shape (d_a,)
        v_a ⊙ features, summed to the score.
    score : float
        e_ij = v_a · features.
    softmax : SoftmaxSteps
    v_j, contribution, output_i : ndarray of shape (d_v,)
    """

    i: int
    j: int
    features: Array
    v_a: Array
    products: Array
    score: float
    softmax: SoftmaxSteps
    v_j: Array
    contribution: Array
    output_i: Array


def _check_cell(i: int, j: int, t_q: int, t_k: int) -> tuple[int, int]:
    i, j = int(i), int(j)
    if not (0 <= i < t_q and 0 <= j < t_k):
        raise ValueError(f"cell ({i}, {j}) is outside the {t_q}×{t_k} weights matrix")
    return i, j


def _softmax_steps(value: float, allowed: bool, row: Array, j: int,
                   stored_alpha: float) -> SoftmaxSteps:
    """Mask, shift by the row max, exp, sum, divide — for one cell of one row."""
    masked = value if allowed else -np.inf
    finite = row[np.isfinite(row)]
    row_max = float(finite.max()) if finite.size else 0.0
    row_exp = np.array([0.0 if np.isneginf(s) else float(np.exp(s - row_max)) for s in row])
    row_sum = float(sum(row_exp))
    exp_shifted = float(row_exp[j])
    alpha = exp_shifted / row_sum if row_sum > 0 else 0.0
    return SoftmaxSteps(allowed=bool(allowed), masked=float(masked), row_masked=row,
                        row_max=row_max, exp_shifted=exp_shifted, row_exp=row_exp,
                        row_sum=row_sum, alpha=alpha, stored_alpha=float(stored_alpha))


def trace_cell(result: AttentionResult | MultiHeadResult, i: int, j: int, *,
               head: int | None = None, w_o: ArrayLike | None = None) -> CellTrace:
    """The arithmetic behind α_ij (and α_ij v_j) of a dot-product attention result.

    Parameters
    ----------
    result : AttentionResult or MultiHeadResult
    i, j : int
        Query row and key column.
    head : int, optional
        Which head of a MultiHeadResult (default 0).
    w_o : array_like of shape (n_heads·d_v, d_out), optional
        The output projection used for a MultiHeadResult, to follow the cell through W_O.

    Returns
    -------
    CellTrace
    """
    multi = isinstance(result, MultiHeadResult)
    if multi:
        head = 0 if head is None else int(head)
        if not 0 <= head < result.n_heads:
            raise ValueError(f"head must be between 0 and {result.n_heads - 1}, got {head}")
        part = result.heads[head]
    else:
        head = None
        part = result
    t_q, t_k = part.weights.shape
    i, j = _check_cell(i, j, t_q, t_k)
    q_i = np.array(part.q[i], dtype=np.float64)
    k_j = np.array(part.k[j], dtype=np.float64)
    # 1) score: one product per dimension, then their sum
    products = q_i * k_j
    score = float(sum(products))
    # 2) scale, 3) temperature
    scaled = score * part.scale
    divided = scaled / part.temperature
    # 4) the whole row i the same way (the softmax needs every key of the row)
    row = np.array([
        (float(np.dot(q_i, part.k[jj])) * part.scale / part.temperature)
        if part.mask[i, jj] else -np.inf for jj in range(t_k)])
    sm = _softmax_steps(divided, bool(part.mask[i, j]), row, j, part.weights[i, j])
    # 5) this key's share of the output row
    v_j = np.array(part.v[j], dtype=np.float64)
    contribution = sm.alpha * v_j
    trace = dict(i=i, j=j, head=head, q_i=q_i, k_j=k_j, products=products, score=score,
                 scale=float(part.scale), scaled=scaled, temperature=float(part.temperature),
                 divided=divided, softmax=sm, v_j=v_j, contribution=contribution,
                 output_i=np.array(part.output[i], dtype=np.float64))
    if multi and w_o is not None:
        # 6) through W_O: the head's slot of the concatenation meets these rows of W_O
        w_o = np.asarray(w_o, dtype=np.float64)
        d_v = v_j.shape[0]
        block = w_o[head * d_v:(head + 1) * d_v]  # (d_v, d_out)
        trace.update(w_o_block=block, through_w_o=contribution @ block,
                     final_output_i=np.array(result.output[i], dtype=np.float64))
    return CellTrace(**trace)


def trace_additive_cell(result: AdditiveResult, values: ArrayLike, v_a: ArrayLike, i: int,
                        j: int) -> AdditiveCellTrace:
    """The arithmetic behind α_ij of additive attention (2-D result: a matrix of queries).

    Parameters
    ----------
    result : AdditiveResult
    values : array_like of shape (t_k, d_v)
        The values the result mixed.
    v_a : array_like of shape (d_a,)
    i, j : int
    """
    weights = np.atleast_2d(result.weights)
    features = result.features if result.features.ndim == 3 else result.features[None]
    scores = np.atleast_2d(result.scores)
    mask = np.atleast_2d(result.mask)
    output = np.atleast_2d(result.output)
    t_q, t_k = weights.shape
    i, j = _check_cell(i, j, t_q, t_k)
    v_a = np.asarray(v_a, dtype=np.float64)
    f = np.array(features[i, j], dtype=np.float64)
    products = v_a * f
    score = float(sum(products))
    row = np.where(mask[i], scores[i], -np.inf).astype(np.float64)
    sm = _softmax_steps(score, bool(mask[i, j]), row, j, weights[i, j])
    v_j = np.array(np.asarray(values, dtype=np.float64)[j])
    return AdditiveCellTrace(i=i, j=j, features=f, v_a=v_a, products=products, score=score,
                             softmax=sm, v_j=v_j, contribution=sm.alpha * v_j,
                             output_i=np.array(output[i], dtype=np.float64))
