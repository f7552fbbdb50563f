"""Additive attention: Bahdanau's alignment model and seed 004's query-free attention pooling.

Bahdanau, Cho & Bengio (2014), "Neural Machine Translation by Jointly Learning to Align and
Translate", https://arxiv.org/abs/1409.0473, §3.1 and appendix A.1.2:

    e_j = v_a · tanh(query · W_q + key_j · W_k (+ bias))
    α = softmax(e),   context = Σ_j α_j · value_j
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import SingleHead
from attnviz.core.checks import as_array, as_mask, float_dtype
from attnviz.core.numerics import read_only, stable_softmax, weighted_sum

Array = NDArray[np.floating]


@dataclass(frozen=True, eq=False)
class AdditiveResult(SingleHead):
    """Every intermediate of additive (Bahdanau) attention.

    With a single query (1-D ``query``) the query axis is dropped from every field below.

    Attributes
    ----------
    features : ndarray of shape (t_q, t_k, d_a)
        tanh(query·W_q + key·W_k + bias), the hidden layer of the alignment model.
    scores : ndarray of shape (t_q, t_k)
        Alignment scores e = features · v_a.
    scaled : ndarray of shape (t_q, t_k)
        The scores themselves (additive attention has no scale), named as in
        :class:`~attnviz.core.attention.AttentionResult` so that views read every result alike.
    masked : ndarray of shape (t_q, t_k)
        Scores with −inf where the mask forbids attending (``scores`` itself when nothing is
        masked).
    weights : ndarray of shape (t_q, t_k)
        softmax over the keys.
    output : ndarray of shape (t_q, d_v)
        Context vectors Σ_j α_j · value_j.
    mask : ndarray of bool, shape (t_q, t_k)
    """

    features: Array
    scores: Array
    scaled: Array
    masked: Array
    weights: Array
    output: Array
    mask: NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class PoolingResult:
    """Every intermediate of query-free attention pooling.

    Attributes
    ----------
    scores : ndarray of shape (t,)
        e_t = tanh(x_t · w + b_t).
    weights : ndarray of shape (t,)
        softmax of the scores over time.
    output : ndarray of shape (d,)
        The context vector Σ_t α_t · x_t.
    """

    scores: Array
    weights: Array
    output: Array


def additive_attention(query, keys, values, w_q, w_k, v_a, *, bias=None,
                       mask=None) -> AdditiveResult:
    """Bahdanau additive attention for one query or a matrix of queries.

    Parameters
    ----------
    query : array_like of shape (d_q,) or (t_q, d_q)
    keys : array_like of shape (t_k, d_key)
    values : array_like of shape (t_k, d_v)
    w_q : array_like of shape (d_q, d_a)
    w_k : array_like of shape (d_key, d_a)
    v_a : array_like of shape (d_a,)
    bias : array_like of shape (d_a,), optional
    mask : array_like of bool, broadcastable to (t_q, t_k), optional
        True = may attend; a fully masked query gets zero weights and a zero context.

    Returns
    -------
    AdditiveResult
    """
    query = as_array("query", query, (1, 2))
    single = query.ndim == 1
    queries = np.atleast_2d(query)  # (t_q, d_q)
    keys = as_array("keys", keys, 2)
    values = as_array("values", values, 2)
    w_q = as_array("w_q", w_q, 2)
    w_k = as_array("w_k", w_k, 2)
    v_a = as_array("v_a", v_a, 1)
    bias = np.zeros(w_q.shape[1], dtype=w_q.dtype) if bias is None else as_array("bias", bias, 1)
    _check_additive_shapes(queries, keys, values, w_q, w_k, v_a, bias)
    dtype = float_dtype(queries, keys, values, w_q, w_k, v_a, bias)
    full_mask = as_mask("mask", mask, (queries.shape[0], keys.shape[0]))
    # 1) project query and keys into the alignment space and combine through tanh
    with np.errstate(over="ignore", invalid="ignore"):
        hidden = (queries @ w_q)[:, None, :] + (keys @ w_k)[None, :, :] + bias  # (t_q, t_k, d_a)
        features = np.tanh(hidden).astype(dtype, copy=False)
        # 2) score
        scores = features @ v_a.astype(dtype, copy=False)  # (t_q, t_k)
    # tanh(±inf) = ±1 is fine; inf − inf (NaN) and a huge v_a are not
    if not np.isfinite(scores).all():
        raise ValueError("the additive-attention scores overflow the floating-point range; use "
                         "smaller values in the query, keys, w_q, w_k, bias or v_a")
    # 3) mask, 4) normalise over the keys, 5) context
    masked = scores if full_mask.all() else np.where(full_mask, scores, dtype.type(-np.inf))
    weights = stable_softmax(masked, axis=-1)
    output = weighted_sum(weights, values, "values").astype(dtype, copy=False)  # (t_q, d_v)
    if single:
        features, scores, masked, weights, output, full_mask = (
            a[0] for a in (features, scores, masked, weights, output, full_mask))
    read_only(features, scores, masked, weights, output)
    return AdditiveResult(features, scores, scores, masked, weights, output, mask=full_mask)


def attention_pooling(x, w, b=0.0) -> PoolingResult:
    """Query-free additive attention pooling (seed 004's Keras ``Attention`` layer).

    e_t = tanh(x_t · w + b_t), α = softmax over time, context = Σ_t α_t · x_t.

    Parameters
    ----------
    x : array_like of shape (t, d)
        The sequence to pool (it is both keys and values).
    w : array_like of shape (d,) or (d, 1)
    b : float or array_like of shape (t,) or (t, 1)
        One bias per time step, as in the notebook's layer.

    Returns
    -------
    PoolingResult
    """
    x = as_array("x", x, 2)
    w = as_array("w", w, (1, 2))
    if w.ndim == 2 and w.shape[1] != 1:
        raise ValueError(f"w must have shape (d,) or (d, 1), got {w.shape}")
    w = w.reshape(-1)
    if w.shape[0] != x.shape[1]:
        raise ValueError(f"w length ({w.shape[0]}) must equal x's width d ({x.shape[1]})")
    b_in = b
    b = as_array("b", b, (0, 1, 2)).reshape(-1)
    if b.shape[0] not in (1, x.shape[0]):
        raise ValueError(f"b must be one number or one per time step ({x.shape[0]}), "
                         f"got {b.shape[0]} values")
    # a scalar bias (the default 0.0) does not promote float32 inputs, as in NumPy (NEP 50)
    dtype = float_dtype(x, w, b) if np.ndim(b_in) else float_dtype(x, w)
    with np.errstate(over="ignore", invalid="ignore"):
        pre = x @ w  # (t,)
    # an overflowed x · w (inf, or inf − inf = NaN, whichever numpy's product gives) would
    # pass through tanh as a wrong ±1 or as NaN: refuse it before the tanh
    if not np.isfinite(pre).all():
        raise ValueError("the pooling scores x · w overflow the floating-point range; use "
                         "smaller values in x or w")
    with np.errstate(over="ignore"):  # a finite x · w plus b may still reach ±inf: tanh gives ±1
        scores = np.tanh(pre + b).astype(dtype, copy=False)  # (t,)
    weights = stable_softmax(scores, axis=0)
    output = weighted_sum(weights, x, "x").astype(dtype, copy=False)  # (d,)
    read_only(scores, weights, output)
    return PoolingResult(scores, weights, output)


def _check_additive_shapes(queries, keys, values, w_q, w_k, v_a, bias) -> None:
    """Raise a ValueError naming the first pair of additive-attention sizes that disagree."""
    checks = (
        ("w_q rows", w_q.shape[0], "query width d_q", queries.shape[1]),
        ("w_k rows", w_k.shape[0], "key width", keys.shape[1]),
        ("w_k columns", w_k.shape[1], "w_q columns d_a", w_q.shape[1]),
        ("v_a length", v_a.shape[0], "the alignment size d_a", w_q.shape[1]),
        ("bias length", bias.shape[0], "the alignment size d_a", w_q.shape[1]),
        ("number of values", values.shape[0], "number of keys t_k", keys.shape[0]),
    )
    for name_a, a, name_b, b in checks:
        if a != b:
            raise ValueError(f"{name_a} ({a}) must equal {name_b} ({b})")
