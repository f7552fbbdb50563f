"""The backward pass of attention: the gradient of every intermediate, exact and vectorised.

Reverse mode through the forward of :func:`attnviz.core.attention.attend_heads` (row-vector
convention, heads on the first axis; dX means ∂L/∂X for a scalar loss L)::

    dW_O = Concatᵀ dO          dConcat = dO W_Oᵀ           (split into the heads' dO_h)
    dV_h = P_hᵀ dO_h           dP_h = dO_h V_hᵀ (+ a loss's own ∂L/∂P_h)
    dS̃_h = P_h ∘ (dP_h − rowsum(P_h ∘ dP_h))                 (softmax; 0 where masked)
    dS_h = dS̃_h ∘ ∂S̃_h/∂S_h                                  (through every score modifier:
                                e.g. (1 − (S̃_h / c)²) for a cap c, then · scale / τ)
    dQ_h = dS_h K_h            dK_h = dS_hᵀ Q_h

Heads that share a key/value head (grouped-query attention) add their dK_h and dV_h into it.
The additive (Bahdanau) scores have their own step (:func:`additive_backward`), as has seed
004's attention pooling (:func:`pooling_backward`), and a linear projection ``y = x @ w`` its
two products (:func:`linear_backward`).

Every function takes the forward result as computed (read-only arrays of one float dtype) and
returns a frozen result with read-only arrays; nothing is recomputed from the inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.additive import AdditiveResult, PoolingResult
from attnviz.core.attention import AttentionResult, MultiHeadResult
from attnviz.core.checks import as_array
from attnviz.core.numerics import read_only
from attnviz.core.score_mods import At, apply, pull_back, qk_pull_back

Array = NDArray[np.floating]

_OVERFLOW = ("the gradients overflow the floating-point range; use smaller values (inputs, "
             "weights or target) or a smaller loss")


@dataclass(frozen=True, eq=False)
class AttentionGradients:
    """The gradient of a scalar loss with respect to every intermediate of one attention result.

    Heads are on the first axis (one head: a first axis of length 1), as in
    :class:`~attnviz.core.attention.MultiHeadResult`.

    Attributes
    ----------
    d_output : ndarray of shape (t_q, d_out)
        ∂L/∂output (zeros when the loss reads only the weights).
    d_concat : ndarray of shape (t_q, n_heads·d_v)
        ∂L/∂Concat = dO W_Oᵀ (``d_output`` itself without W_O).
    d_w_o : ndarray of shape (n_heads·d_v, d_out) or None
        ∂L/∂W_O = Concatᵀ dO; None without W_O.
    d_head_outputs : ndarray of shape (n_heads, t_q, d_v)
    d_weights : ndarray of shape (n_heads, t_q, t_k)
        dP = dO_h V_hᵀ plus the loss's own gradient of the weights.
    d_scaled : ndarray of shape (n_heads, t_q, t_k)
        dS̃: the gradient of the softmax's input (the scaled, biased, capped scores); exactly 0
        where the mask forbids attending; every row sums to 0.
    d_scores : ndarray of shape (n_heads, t_q, t_k)
        dS: the gradient of the raw scores q·kᵀ (``d_scaled`` through the cap, times
        scale / τ).
    d_q : ndarray of shape (n_heads, t_q, d_k)
    d_k : ndarray of shape (n_kv_heads, t_k, d_k)
    d_v : ndarray of shape (n_kv_heads, t_k, d_v)
        Summed over the query heads that share each key/value head.
    """

    d_output: Array
    d_concat: Array
    d_w_o: Array | None
    d_head_outputs: Array
    d_weights: Array
    d_scaled: Array
    d_scores: Array
    d_q: Array
    d_k: Array
    d_v: Array

    @property
    def n_heads(self) -> int:
        """The number of query heads."""
        return self.d_q.shape[0]


@dataclass(frozen=True, eq=False)
class AdditiveGradients:
    """The gradient of a scalar loss through additive (Bahdanau) attention.

    Attributes
    ----------
    d_output : ndarray of shape (t_q, d_v)
    d_weights : ndarray of shape (1, t_q, t_k)
    d_scaled : ndarray of shape (1, t_q, t_k)
        de = the softmax step's gradient (0 where masked; rows sum to 0); a leading axis of
        one head, as in :class:`AttentionGradients`.
    d_scores : ndarray of shape (1, t_q, t_k)
        The same array (additive scores are not scaled).
    d_features : ndarray of shape (t_q, t_k, d_a)
    d_query : ndarray of shape (t_q, d_q)
    d_keys : ndarray of shape (t_k, d_key)
    d_values : ndarray of shape (t_k, d_v)
    d_w_q : ndarray of shape (d_q, d_a)
    d_w_k : ndarray of shape (d_key, d_a)
    d_v_a : ndarray of shape (d_a,)
    """

    d_output: Array
    d_weights: Array
    d_scaled: Array
    d_scores: Array
    d_features: Array
    d_query: Array
    d_keys: Array
    d_values: Array
    d_w_q: Array
    d_w_k: Array
    d_v_a: Array

    @property
    def n_heads(self) -> int:
        """One."""
        return 1


def softmax_backward(weights, d_weights) -> Array:
    """The gradient of the softmax's input: P ∘ (dP − rowsum(P ∘ dP)), over the last axis.

    Parameters
    ----------
    weights : array_like of shape (..., t_k)
        The softmax's output P (rows summing to 1, or all zeros for a fully masked row).
    d_weights : array_like of the same shape
        ∂L/∂P.

    Returns
    -------
    ndarray of the same shape
        Exactly 0 wherever P is 0 (a masked key, a fully masked row); each row sums to 0
        (up to rounding).
    """
    p = as_array("weights", weights, (1, 2, 3))
    dp = as_array("d_weights", d_weights, (1, 2, 3))
    if p.shape != dp.shape:
        raise ValueError(f"weights and d_weights must have the same shape, got {p.shape} and "
                         f"{dp.shape}")
    return _softmax_backward(p, dp)


def attention_backward(result: AttentionResult | MultiHeadResult, d_output=None, *,
                       d_weights=None) -> AttentionGradients:
    """The gradients of every intermediate of a dot-product attention result.

    Everything the forward applied is read from the result — its score modifiers
    (``score_mods``: scale and temperature, bias, cap, a variant's own) and its W_O — so the
    backward pass cannot disagree with the forward.

    Parameters
    ----------
    result : AttentionResult or MultiHeadResult
        The forward result (from any dot-product variant).
    d_output : array_like of shape (t_q, d_out), optional
        ∂L/∂output; None = the loss does not read the output.
    d_weights : array_like of shape (n_heads, t_q, t_k) or (t_q, t_k), optional
        A loss's own gradient of the weights (e.g. cross-entropy against a target pattern),
        added to dO_h V_hᵀ.

    Returns
    -------
    AttentionGradients
    """
    heads = isinstance(result, MultiHeadResult)
    p = result.weights if heads else result.weights[None]  # (n, t_q, t_k)
    n, t_q, t_k = p.shape
    q_h = np.stack([h.q for h in result.heads]) if heads else result.q[None]
    v_h = np.stack([h.v for h in result.heads]) if heads else result.v[None]  # per query head
    k_h = np.stack([h.k for h in result.heads]) if heads else result.k[None]
    d_k_width, d_v_width = q_h.shape[2], v_h.shape[2]
    n_kv = (result.k.shape[1] // d_k_width) if heads else 1
    concat = result.concat if heads else result.output
    w_o = result.w_o if heads else None
    out = result.output
    dtype = p.dtype
    d_out = np.zeros(out.shape, dtype) if d_output is None else \
        as_array("d_output", d_output, 2).astype(dtype)
    if d_out.shape != out.shape:
        raise ValueError(f"d_output must have the output's shape {out.shape}, got {d_out.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        # 1) through W_O and the concatenation
        if w_o is not None:
            w_o = w_o.astype(dtype)
            d_w_o = concat.T @ d_out
            d_concat = d_out @ w_o.T
        else:
            d_w_o, d_concat = None, d_out.copy()
        d_ho = d_concat.reshape(t_q, n, d_v_width).transpose(1, 0, 2).copy()  # (n, t_q, d_v)
        # 2)-5) the kernel's backward: the weighted sum, the softmax, every change of the
        # scores, q·kᵀ
        if d_weights is not None:
            d_weights = np.broadcast_to(as_array("d_weights", d_weights, (2, 3)), p.shape)
        scores = result.scores if heads else result.scores[None]
        at = At.grid(n, t_q, t_k) if heads else At(
            np.full((1, 1, 1), result.head_index), *At.head(0, t_q, t_k)[1:])
        dp, d_scaled, d_scores, d_q, d_kq, d_vq = kernel_backward(
            q_h, k_h, v_h, p, scores, result.score_mods, at, d_ho, d_weights)
        # 6) into the shared key/value heads
        d_k = d_kq.reshape(n_kv, n // n_kv, t_k, d_k_width).sum(axis=1)
        d_v = d_vq.reshape(n_kv, n // n_kv, t_k, d_v_width).sum(axis=1)
    arrays = [d_out, d_concat, d_ho, dp, d_scaled, d_scores, d_q, d_k, d_v]
    if d_w_o is not None:
        arrays.append(d_w_o)
    _check_finite(*arrays)
    read_only(*arrays)
    return AttentionGradients(d_out, d_concat, d_w_o, d_ho, dp, d_scaled, d_scores, d_q, d_k,
                              d_v)


def kernel_backward(q: Array, k: Array, v: Array, weights: Array, scores: Array,
                    mods: tuple, at: At, d_output: Array, d_weights: Array | None = None
                    ) -> tuple[Array, Array, Array, Array, Array, Array]:
    """The backward pass of :func:`attnviz.core.attention.attend_kernel`, on trusted arrays
    with any leading (batch, head) axes: the one backward every dot-product attention of
    the dashboard's variants goes through.

    Parameters
    ----------
    q : ndarray of shape (..., t_q, d_k)
    k : ndarray of shape (..., t_k, d_k)
    v : ndarray of shape (..., t_k, d_v)
        What the kernel attended with (k and v per query head).
    weights : ndarray of shape (..., t_q, t_k)
    scores : ndarray of shape (..., t_q, t_k)
        The raw scores q·kᵀ (the modifiers' stages are computed again from them).
    mods : tuple of ScoreMod
        The kernel's changes of the scores, in the forward's order.
    at : At
        Where the scores sit, as in the forward.
    d_output : ndarray of shape (..., t_q, d_v)
        ∂L/∂ of the kernel's output.
    d_weights : ndarray of shape (..., t_q, t_k), optional
        A loss's own ∂L/∂weights, added to dO Vᵀ.

    Returns
    -------
    d_weights, d_scaled, d_scores : ndarray of shape (..., t_q, t_k)
        ∂L/∂ of the weights (all of it), of the last stage before the softmax, of the raw
        scores.
    d_q : ndarray of shape (..., t_q, d_k)
    d_k : ndarray of shape (..., t_k, d_k)
    d_v : ndarray of shape (..., t_k, d_v)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        # 1) through the weighted sum of the values
        d_v = np.swapaxes(weights, -1, -2) @ d_output  # (..., t_k, d_v)
        dp = d_output @ np.swapaxes(v, -1, -2)  # (..., t_q, t_k)
        if d_weights is not None:
            dp = dp + d_weights
        # 2) through the softmax (0 where masked), 3) every change of the scores, last first
        d_scaled = _softmax_backward(weights, dp)
        stages = apply(mods, scores, at)
        d_scores = pull_back(mods, stages, d_scaled, at)
        # 4) through q·kᵀ, and the terms a change of the scores computes from q and k
        d_q = d_scores @ k  # (..., t_q, d_k)
        d_k = np.swapaxes(d_scores, -1, -2) @ q  # (..., t_k, d_k)
        extra = qk_pull_back(mods, stages, d_scaled, at)
        if extra is not None:
            d_q, d_k = d_q + extra[0], d_k + extra[1]
    return dp, d_scaled, d_scores, d_q, d_k, d_v


def additive_backward(result: AdditiveResult, query, keys, values, w_q, w_k, v_a,
                      d_output=None, *, d_weights=None) -> AdditiveGradients:
    """The gradients through additive attention e_ij = v_a · tanh(q_i W_q + k_j W_k + b).

    Parameters
    ----------
    result : AdditiveResult
        The forward result of a matrix of queries (2-D ``query``).
    query : array_like of shape (t_q, d_q)
    keys : array_like of shape (t_k, d_key)
    values : array_like of shape (t_k, d_v)
    w_q, w_k, v_a
        The forward's alignment weights.
    d_output : array_like of shape (t_q, d_v), optional
    d_weights : array_like of shape (t_q, t_k), optional
        A loss's own gradient of the weights.

    Returns
    -------
    AdditiveGradients
        ``d_keys`` and ``d_values`` are separate even when keys and values are one sequence:
        its gradient is their sum.
    """
    p, f = result.weights, result.features  # (t_q, t_k), (t_q, t_k, d_a)
    dtype = p.dtype
    query, keys, values, w_q, w_k, v_a = (
        as_array(name, a, nd).astype(dtype) for name, a, nd in (
            ("query", query, 2), ("keys", keys, 2), ("values", values, 2), ("w_q", w_q, 2),
            ("w_k", w_k, 2), ("v_a", v_a, 1)))
    d_out = np.zeros(result.output.shape, dtype) if d_output is None else \
        as_array("d_output", d_output, 2).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        # 1) the context Σ_j α_ij v_j
        d_values = p.T @ d_out
        dp = d_out @ values.T
        if d_weights is not None:
            dp = dp + as_array("d_weights", d_weights, 2)
        # 2) the softmax, 3) the score v_a · f and the tanh
        d_scores = _softmax_backward(p, dp)
        d_v_a = np.einsum("ij,ija->a", d_scores, f)
        d_features = d_scores[:, :, None] * v_a
        d_hidden = d_features * (1 - f * f)  # (t_q, t_k, d_a)
        # 4) the two projections into the alignment space
        d_qa, d_ka = d_hidden.sum(axis=1), d_hidden.sum(axis=0)  # (t_q, d_a), (t_k, d_a)
        d_w_q, d_query = query.T @ d_qa, d_qa @ w_q.T
        d_w_k, d_keys = keys.T @ d_ka, d_ka @ w_k.T
    arrays = (d_out, dp[None], d_scores[None], d_features, d_query, d_keys, d_values, d_w_q,
              d_w_k, d_v_a)
    _check_finite(*arrays)
    read_only(*arrays)
    d_out, dp, d_scores, *rest = arrays
    return AdditiveGradients(d_out, dp, d_scores, d_scores, *rest)


@dataclass(frozen=True, eq=False)
class PoolingGradients:
    """The gradient of a scalar loss through attention pooling (seed 004's Keras layer).

    Attributes
    ----------
    d_output : ndarray of shape (d,)
    d_weights : ndarray of shape (t,)
    d_scores : ndarray of shape (t,)
        The softmax step's gradient (sums to 0).
    d_x : ndarray of shape (t, d)
        Through both roles of x: the scores and the weighted sum.
    d_w : ndarray of shape (d,)
    d_b : ndarray of shape (t,)
    """

    d_output: Array
    d_weights: Array
    d_scores: Array
    d_x: Array
    d_w: Array
    d_b: Array


def pooling_backward(result: PoolingResult, x, w, d_output) -> PoolingGradients:
    """The gradients of attention pooling e = tanh(x·w + b), α = softmax(e), c = Σ_t α_t x_t.

    Parameters
    ----------
    result : PoolingResult
        The forward result.
    x : array_like of shape (t, d)
    w : array_like of shape (d,) or (d, 1)
    d_output : array_like of shape (d,)
        ∂L/∂c.
    """
    x = as_array("x", x, 2)
    w = as_array("w", w, (1, 2)).reshape(-1)
    d_out = as_array("d_output", d_output, 1)
    alpha, e = np.asarray(result.weights), np.asarray(result.scores)
    with np.errstate(over="ignore", invalid="ignore"):
        d_alpha = x @ d_out  # (t,)
        d_e = _softmax_backward(alpha, d_alpha)
        d_pre = d_e * (1 - e * e)  # through the tanh
        d_x = np.outer(alpha, d_out) + np.outer(d_pre, w)
        d_w = x.T @ d_pre
    arrays = (d_out, d_alpha, d_e, d_x, d_w, d_pre)
    _check_finite(*arrays)
    read_only(*arrays)
    return PoolingGradients(*arrays)


def linear_backward(x, w, d_y) -> tuple[Array, Array]:
    """The gradients of ``y = x @ w``: (∂L/∂x, ∂L/∂w) = (d_y wᵀ, xᵀ d_y).

    Parameters
    ----------
    x : array_like of shape (t, d_in)
    w : array_like of shape (d_in, d_out)
    d_y : array_like of shape (t, d_out)
    """
    x, w, d_y = as_array("x", x, 2), as_array("w", w, 2), as_array("d_y", d_y, 2)
    with np.errstate(over="ignore", invalid="ignore"):
        d_x, d_w = d_y @ w.T, x.T @ d_y
    _check_finite(d_x, d_w)
    return d_x, d_w


# ------------------------------------------------------------------------------ private helpers


def _softmax_backward(p: Array, dp: Array) -> Array:
    """P ∘ (dP − rowsum(P ∘ dP)) on trusted arrays (finite dP), as P∘dP − P∘rowsum: exactly 0
    where P is 0 (0·dP − 0·rowsum), with one temporary of the weights' size."""
    pdp = p * dp
    row = pdp.sum(axis=-1, keepdims=True)
    pdp -= p * row
    return pdp


def _check_finite(*arrays: Array) -> None:
    """A ValueError if any gradient overflowed."""
    if not all(np.isfinite(a).all() for a in arrays):
        raise ValueError(_OVERFLOW)
