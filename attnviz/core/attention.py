"""Dot-product attention: scaled, masked, self, cross and multi-head.

    Attention(Q, K, V) = softmax(Q Kᵀ · scale / temperature, masked) V

Vaswani et al. (2017), "Attention Is All You Need", https://arxiv.org/abs/1706.03762, §3.2.
Row-vector convention throughout: ``q = x @ w_q`` (the seed notebooks' ``words @ W_Q``).

Every function returns a frozen result holding each intermediate, computed once when the
result is made. Result arrays are read-only. Every result type (with
:class:`~attnviz.core.additive.AdditiveResult`) has ``n_heads`` and ``head(h)``: the per-head
result with ``scores``, ``scaled``, ``masked``, ``weights`` and ``output``, so that a view
reads one head of any result alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import (
    as_array,
    as_mask,
    as_scores,
    check_count,
    check_flag,
    check_head,
    check_positive,
    float_dtype,
)
from attnviz.core.masks import causal_mask, combine
from attnviz.core.numerics import read_only, stable_softmax, weighted_sum
from attnviz.core.score_mods import At, Bias, ScoreMod, SoftCap, apply, chain, find

Array = NDArray[np.floating]

_SCORES_OVERFLOW = ("the attention scores overflow the floating-point range; use smaller values "
                    "in q and k (or the embeddings and weights), a smaller scale or a larger "
                    "temperature")


class SingleHead:
    """The result protocol of a single-head result: ``n_heads`` is 1 and its only head is the
    result itself (multi-head results give ``head(h)`` from their ``heads``)."""

    @property
    def n_heads(self) -> int:
        """One."""
        return 1

    def head(self, h: int):
        """Head ``h`` (only 0 exists): the result itself."""
        check_head(h, self.n_heads)
        return self


@dataclass(frozen=True, eq=False)
class AttentionResult(SingleHead):
    """Every intermediate of one attention computation.

    Attributes
    ----------
    q : ndarray of shape (t_q, d_k)
    k : ndarray of shape (t_k, d_k)
    v : ndarray of shape (t_k, d_v)
    scores : ndarray of shape (t_q, t_k)
        Raw dot products q·kᵀ.
    scaled : ndarray of shape (t_q, t_k)
        ``scores * scale / temperature``.
    masked : ndarray of shape (t_q, t_k)
        ``scaled`` with −inf where the mask forbids attending (``scaled`` itself when nothing
        is masked).
    weights : ndarray of shape (t_q, t_k)
        Softmax of ``masked`` over the keys; each row sums to 1, except a row whose keys are
        all masked, which is all zeros.
    output : ndarray of shape (t_q, d_v)
        ``weights @ v``; zeros for a fully masked query.
    mask : ndarray of bool, shape (t_q, t_k)
        True = may attend (all True when no mask was given).
    scale : float
        The factor applied to the scores (1/sqrt(d_k) unless given).
    temperature : float
        The divisor applied after the scale.
    score_mods : tuple of ScoreMod
        Every change the scores went through between q·kᵀ and the mask, in order
        (:mod:`attnviz.core.score_mods`): the scale first, then any bias, the variant's own,
        the cap. ``scaled`` is the last one's output.
    head_index : int
        This head's index in the stacked heads the modifiers were made for (0 for one head).
    """

    q: Array
    k: Array
    v: Array
    scores: Array
    scaled: Array
    masked: Array
    weights: Array
    output: Array
    mask: NDArray[np.bool_]
    scale: float
    temperature: float
    score_mods: tuple[ScoreMod, ...]  # required: a result must say what its scores went through
    head_index: int = 0

    @property
    def bias(self) -> Array | None:
        """This head's bias added to the scaled scores (ALiBi), (t_q, t_k), or None."""
        mod = find(self.score_mods, Bias)
        return None if mod is None else mod.values[self.head_index]

    @property
    def softcap(self) -> float | None:
        """The cap c of c·tanh(s / c) (Gemma 2), or None."""
        mod = find(self.score_mods, SoftCap)
        return None if mod is None else mod.cap


@dataclass(frozen=True, eq=False)
class MultiHeadResult:
    """Every intermediate of multi-head attention (heads stacked on the first axis).

    Attributes
    ----------
    q : ndarray of shape (t_q, n_heads·d_k)
    k : ndarray of shape (t_k, n_heads·d_k)
    v : ndarray of shape (t_k, n_heads·d_v)
        The full projections before the split into heads (n_kv_heads in place of n_heads for
        k and v when heads share them: :func:`attend_heads`).
    heads : tuple of AttentionResult
        One result per head (views into the stacked arrays below).
    scores, scaled, masked, weights : ndarray of shape (n_heads, t_q, t_k)
        As in :class:`AttentionResult`.
    head_outputs : ndarray of shape (n_heads, t_q, d_v)
    concat : ndarray of shape (t_q, n_heads·d_v)
        The heads' outputs side by side (``np.hstack``, seed 002).
    output : ndarray of shape (t_q, d_out)
        ``concat @ w_o``, or ``concat`` when no w_o was given.
    mask : ndarray of bool, shape (t_q, t_k)
    scale : float
        The factor applied to every head's scores (1/sqrt(d_k) of one head unless given).
    temperature : float
    n_heads : int
    score_mods : tuple of ScoreMod
        As in :class:`AttentionResult` (a bias holds every head's).
    w_o : ndarray of shape (n_heads·d_v, d_out) or None
        The output projection, as given (None: the output is the concatenation).
    b_o : ndarray of shape (d_out,) or None
        The output projection's bias (``output = concat @ w_o + b_o``), or None.
    """

    q: Array
    k: Array
    v: Array
    heads: tuple[AttentionResult, ...]
    scores: Array
    scaled: Array
    masked: Array
    weights: Array
    head_outputs: Array
    concat: Array
    output: Array
    mask: NDArray[np.bool_]
    scale: float
    temperature: float
    n_heads: int
    score_mods: tuple[ScoreMod, ...]  # required, as W_O: the backward pass reads both
    w_o: Array | None
    b_o: Array | None = None

    @property
    def bias(self) -> Array | None:
        """Every head's bias, (n_heads, t_q, t_k), or None."""
        mod = find(self.score_mods, Bias)
        return None if mod is None else mod.values

    @property
    def softcap(self) -> float | None:
        """The cap c of c·tanh(s / c), or None."""
        mod = find(self.score_mods, SoftCap)
        return None if mod is None else mod.cap

    def head(self, h: int) -> AttentionResult:
        """The intermediates of head ``h`` (0-based): ``heads[h]``."""
        check_head(h, self.n_heads)
        return self.heads[h]


def softmax(x, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis``.

    Entries equal to −inf get weight 0. A slice whose entries are all −inf (a query whose keys
    are all masked) gets all zeros rather than NaN, without a RuntimeWarning.

    Parameters
    ----------
    x : array_like
        Finite values or −inf (integers are computed in float64, float32 stays float32).
    axis : int
        The axis that sums to 1 (the keys for attention).

    Returns
    -------
    ndarray of the shape of ``x``

    Raises
    ------
    ValueError
        If ``x`` is not numeric or holds NaN or +inf.
    """
    return stable_softmax(as_scores("x", x), axis)


def scaled_dot_product_attention(q, k, v, *, mask=None, scale: float | None = None,
                                 temperature: float = 1.0) -> AttentionResult:
    """softmax(q kᵀ · scale / temperature, masked) v.

    Parameters
    ----------
    q : array_like of shape (t_q, d_k)
    k : array_like of shape (t_k, d_k)
    v : array_like of shape (t_k, d_v)
    mask : array_like of bool, broadcastable to (t_q, t_k), optional
        True = may attend (PyTorch's boolean convention).
    scale : float, optional
        None means 1/sqrt(d_k); ``scale=1.0`` is plain (unscaled) dot-product attention.
    temperature : float
        Divides the scaled scores before the softmax; must be > 0.

    Returns
    -------
    AttentionResult
        A query whose keys are all masked gets a weights row of zeros and an output row of
        zeros (no NaN, no RuntimeWarning).
    """
    q = as_array("q", q, 2)
    k = as_array("k", k, 2)
    v = as_array("v", v, 2)
    if q.shape[1] != k.shape[1]:
        raise ValueError(
            f"q and k must have the same width d_k; q is {q.shape} and k is {k.shape}"
        )
    if k.shape[0] != v.shape[0]:
        raise ValueError(
            f"k and v must have the same number of rows t_k; k is {k.shape} and v is {v.shape}"
        )
    dtype = float_dtype(q, k, v)
    # copies: the result is read-only and must neither freeze nor alias the caller's arrays
    q, k, v = (a.astype(dtype, copy=True) for a in (q, k, v))
    return _single_head(q, k, v, mask, scale, temperature)


def self_attention(x, w_q, w_k, w_v, *, mask=None, causal: bool = False,
                   scale: float | None = None, temperature: float = 1.0, b_q=None, b_k=None,
                   b_v=None) -> AttentionResult:
    """Self-attention: queries, keys and values all projected from the same tokens.

    Parameters
    ----------
    x : array_like of shape (t, d_model)
    w_q, w_k : array_like of shape (d_model, d_k)
    w_v : array_like of shape (d_model, d_v)
        d_v may differ from d_k (seed 003's separate latent sizes).
    mask : array_like of bool, broadcastable to (t, t), optional
        True = may attend.
    causal : bool
        Also forbid attending to later tokens (combined with ``mask`` by logical and).
    scale, temperature
        As in :func:`scaled_dot_product_attention`.
    b_q, b_k : array_like of shape (d_k,), optional
    b_v : array_like of shape (d_v,), optional
        Projection biases (GPT-2, BERT): ``q = x @ w_q + b_q``, ... None = no bias (the
        product alone, bit for bit).

    Returns
    -------
    AttentionResult
        With the projections ``q = x @ w_q``, ``k = x @ w_k``, ``v = x @ w_v`` (plus biases).
    """
    causal = check_flag("causal", causal)
    q, k, v = _project(x, None, w_q, w_k, w_v, names=("x", "x"), biases=(b_q, b_k, b_v))
    mask = _with_causal(mask, causal, q.shape[0], k.shape[0])
    return _single_head(q, k, v, mask, scale, temperature)


def cross_attention(x_q, x_kv, w_q, w_k, w_v, *, mask=None, scale: float | None = None,
                    temperature: float = 1.0, b_q=None, b_k=None, b_v=None) -> AttentionResult:
    """Encoder–decoder attention: queries from one sequence, keys and values from another.

    Parameters
    ----------
    x_q : array_like of shape (t_q, d_model_q)
        The target (decoder) tokens.
    x_kv : array_like of shape (t_k, d_model_kv)
        The source (encoder) tokens.
    w_q : array_like of shape (d_model_q, d_k)
    w_k : array_like of shape (d_model_kv, d_k)
    w_v : array_like of shape (d_model_kv, d_v)
    mask, scale, temperature
        As in :func:`scaled_dot_product_attention`.
    b_q, b_k, b_v : array_like, optional
        Projection biases, as in :func:`self_attention`.

    Returns
    -------
    AttentionResult
    """
    q, k, v = _project(x_q, x_kv, w_q, w_k, w_v, biases=(b_q, b_k, b_v))
    return _single_head(q, k, v, mask, scale, temperature)


def multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o=None, *, n_heads: int, mask=None,
                         scale: float | None = None, temperature: float = 1.0,
                         causal: bool = False, n_kv_heads: int | None = None, b_q=None,
                         b_k=None, b_v=None, b_o=None) -> MultiHeadResult:
    """Multi-head attention: split the projections into heads, attend, concatenate, project.

    Head h uses the h-th contiguous block of columns of w_q (width d_k = columns / n_heads);
    with n_kv_heads key/value heads, key/value head g is the g-th block of columns of w_k and
    w_v, and query head h reads key/value head h // (n_heads / n_kv_heads) (grouped-query
    attention, as :func:`attend_heads`).

    Parameters
    ----------
    x_q : array_like of shape (t_q, d_model)
    x_kv : array_like of shape (t_k, d_model), or None for self-attention
    w_q : array_like of shape (d_model, n_heads·d_k)
    w_k : array_like of shape (d_model, n_kv_heads·d_k)
    w_v : array_like of shape (d_model, n_kv_heads·d_v)
    w_o : array_like of shape (n_heads·d_v, d_out), optional
    n_heads : int
        Must divide the columns of w_q.
    mask : array_like of bool, broadcastable to (t_q, t_k), optional
    scale : float, optional
        None means 1/sqrt(d_k) with d_k the width of one head.
    temperature : float
    causal : bool
        Also forbid attending to later tokens.
    n_kv_heads : int, optional
        Key/value heads (None: n_heads, multi-head attention; 1: multi-query attention); must
        divide n_heads.
    b_q : array_like of shape (n_heads·d_k,), optional
    b_k : array_like of shape (n_kv_heads·d_k,), optional
    b_v : array_like of shape (n_kv_heads·d_v,), optional
    b_o : array_like of shape (d_out,), optional
        Biases of the projections (``q = x_q @ w_q + b_q``, ``output = concat @ w_o + b_o``);
        None = no bias, the products alone bit for bit. b_o needs w_o.

    Returns
    -------
    MultiHeadResult
    """
    causal = check_flag("causal", causal)
    q, k, v = _project(x_q, x_kv, w_q, w_k, w_v, biases=(b_q, b_k, b_v),
                       same_width=n_kv_heads is None)
    n_heads = check_count("n_heads", n_heads)
    n_kv = n_heads if n_kv_heads is None else check_count("n_kv_heads", n_kv_heads)
    if n_heads % n_kv:
        choices = ", ".join(map(str, valid_head_counts(n_heads)))
        raise ValueError(f"n_kv_heads ({n_kv}) must divide n_heads ({n_heads}); valid "
                         f"choices: {choices}")
    for name, width in (("w_q", q.shape[1]), ("w_v", v.shape[1])):
        heads = n_heads if name == "w_q" else n_kv
        if width % heads:
            choices = ", ".join(map(str, valid_head_counts(width, 16)))
            what = "n_heads" if name == "w_q" or n_kv_heads is None else "n_kv_heads"
            raise ValueError(
                f"{what} ({heads}) must divide the number of columns of {name} ({width}); "
                f"valid choices: {choices}"
            )
    if k.shape[1] * n_heads != q.shape[1] * n_kv:
        raise ValueError(
            f"w_k must have n_kv_heads·d_k = {n_kv} × {q.shape[1] // n_heads} = "
            f"{n_kv * (q.shape[1] // n_heads)} columns (d_k from w_q's {q.shape[1]} columns "
            f"over {n_heads} heads), got {k.shape[1]}"
        )
    if b_o is not None and w_o is None:
        raise ValueError("b_o is the bias of the output projection w_o; give w_o with it")
    t_q, t_k = q.shape[0], k.shape[0]
    scale = _resolve_scale(scale, q.shape[1] // n_heads)
    temperature = check_positive("temperature", temperature)
    mask = as_mask("mask", _with_causal(mask, causal, t_q, t_k), (t_q, t_k))
    # 1) split the projections into heads
    qh = q.reshape(t_q, n_heads, -1).transpose(1, 0, 2)  # (n_heads, t_q, d_k)
    kh = k.reshape(t_k, n_kv, -1).transpose(1, 0, 2)  # (n_kv_heads, t_k, d_k)
    vh = v.reshape(t_k, n_kv, -1).transpose(1, 0, 2)  # (n_kv_heads, t_k, d_v)
    # 2) attend in every head, concatenate, project
    return attend_heads(qh, kh, vh, mask=mask, scale=scale, temperature=temperature, w_o=w_o,
                        b_o=b_o)


def attend_heads(q_h, k_h, v_h, *, mask=None, scale: float | None = None,
                 temperature: float = 1.0, bias=None, softcap: float | None = None,
                 score_mods: tuple[ScoreMod, ...] = (), w_o=None, b_o=None) -> MultiHeadResult:
    """Attention over heads already split: the one path every multi-head variant goes through.

    A variant that transforms q and k per head (RoPE, QK-norm), adds a bias to the scores
    (ALiBi) or shares key/value heads between query heads (GQA, MQA) prepares ``q_h``, ``k_h``,
    ``v_h`` and ``bias`` and calls this; the scale, temperature, mask, softmax, concatenation
    and W_O are the same code for all of them::

        scaled_h = q_h k_hᵀ · scale / temperature + bias_h     (then c·tanh(scaled_h / c))
        weights_h = softmax(scaled_h, masked)          output = Concat_h(weights_h v_h) W_O

    Parameters
    ----------
    q_h : array_like of shape (n_heads, t_q, d_k)
    k_h : array_like of shape (n_kv_heads, t_k, d_k)
    v_h : array_like of shape (n_kv_heads, t_k, d_v)
        n_kv_heads must divide n_heads: query head h uses key/value head
        h // (n_heads / n_kv_heads) (grouped-query attention; PyTorch's ``enable_gqa``,
        Hugging Face's ``repeat_kv``). n_kv_heads = n_heads is multi-head attention, 1 is
        multi-query attention.
    mask : array_like of bool, broadcastable to (t_q, t_k), optional
        True = may attend; the same for every head.
    scale : float, optional
        None means 1/sqrt(d_k).
    temperature : float
        Divides ``q_h k_hᵀ · scale`` (not the bias); must be > 0.
    bias : array_like broadcastable to (n_heads, t_q, t_k), optional
        Added to the scaled scores before the mask (PyTorch's float ``attn_mask``).
    softcap : float, optional
        Logit soft-capping (Gemma 2): the scaled scores s become c·tanh(s / c), before the
        mask; must be > 0. Nearly the identity for |s| ≪ c, never beyond ±c.
    score_mods : tuple of ScoreMod, optional
        A variant's own changes of the scores (:mod:`attnviz.core.score_mods`), applied after
        the bias and before the cap.
    w_o : array_like of shape (n_heads·d_v, d_out), optional
    b_o : array_like of shape (d_out,), optional
        The output projection's bias: ``output = concat @ w_o + b_o`` (needs w_o).

    Returns
    -------
    MultiHeadResult
        ``q`` is ``q_h`` with its heads side by side, (t_q, n_heads·d_k); ``k`` and ``v`` are
        ``k_h`` and ``v_h`` likewise, (t_k, n_kv_heads·d_k) and (t_k, n_kv_heads·d_v). Head h's
        ``k`` and ``v`` are the key/value head it uses; its ``scaled`` includes the bias.
    """
    q_h = as_array("q_h", q_h, 3)
    k_h = as_array("k_h", k_h, 3)
    v_h = as_array("v_h", v_h, 3)
    n_heads, t_q, d_k = q_h.shape
    n_kv, t_k = k_h.shape[:2]
    if k_h.shape[2] != d_k:
        raise ValueError(f"q_h and k_h must have the same head width d_k; q_h is {q_h.shape} "
                         f"and k_h is {k_h.shape}")
    if v_h.shape[:2] != (n_kv, t_k):
        raise ValueError(f"v_h must have as many heads and rows as k_h (n_kv_heads, t_k) = "
                         f"({n_kv}, {t_k}); got shape {v_h.shape}")
    if n_heads % n_kv:
        choices = ", ".join(map(str, valid_head_counts(n_heads)))
        raise ValueError(f"n_kv_heads ({n_kv}, the heads of k_h and v_h) must divide n_heads "
                         f"({n_heads}, the heads of q_h); valid choices: {choices}")
    dtype = float_dtype(q_h, k_h, v_h)
    # copies: the result is read-only and must neither freeze nor alias the caller's arrays
    q_h, k_h, v_h = (a.astype(dtype, copy=True) for a in (q_h, k_h, v_h))
    d_v = v_h.shape[2]
    scale = _resolve_scale(scale, d_k)
    temperature = check_positive("temperature", temperature)
    mask = as_mask("mask", mask, (t_q, t_k))
    mods = chain(scale, temperature, bias=bias, softcap=softcap, extra=tuple(score_mods),
                 shape=(n_heads, t_q, t_k), dtype=dtype)
    if w_o is not None:
        w_o = as_array("w_o", w_o, 2)
        if w_o.shape[0] != n_heads * d_v:
            raise ValueError(
                f"w_o must have n_heads·d_v = {n_heads * d_v} rows, got shape {w_o.shape}"
            )
    if b_o is not None:
        if w_o is None:
            raise ValueError("b_o is the bias of the output projection w_o; give w_o with it")
        b_o = _bias("b_o", b_o, w_o.shape[1], "w_o")
    # 1) key/value head of each query head (repeat_interleave: 0,0,1,1 for 4 heads on 2)
    group = n_heads // n_kv
    kq = np.repeat(k_h, group, axis=0) if group > 1 else k_h  # (n_heads, t_k, d_k)
    vq = np.repeat(v_h, group, axis=0) if group > 1 else v_h  # (n_heads, t_k, d_v)
    # 2) attend in every head at once
    scores, scaled, masked, weights, head_outputs = attend_kernel(q_h, kq, vq, mask, mods,
                                                            At.grid(n_heads, t_q, t_k))
    # 3) concatenate the heads side by side
    concat = head_outputs.transpose(1, 0, 2).reshape(t_q, -1)  # (t_q, n_heads·d_v)
    # 4) project
    output = concat if w_o is None else _product("output = concat @ w_o", concat, w_o,
                                                 concat.dtype, b_o)  # (t_q, d_out)
    q = q_h.transpose(1, 0, 2).reshape(t_q, -1)  # (t_q, n_heads·d_k)
    k = k_h.transpose(1, 0, 2).reshape(t_k, -1)  # (t_k, n_kv_heads·d_k)
    v = v_h.transpose(1, 0, 2).reshape(t_k, -1)  # (t_k, n_kv_heads·d_v)
    if w_o is not None:
        w_o = w_o.copy()
    if b_o is not None:
        b_o = b_o.astype(output.dtype, copy=True)
    read_only(q, k, v, q_h, kq, vq, scores, scaled, masked, weights, head_outputs, concat,
              output, *(a for a in (w_o, b_o) if a is not None))
    heads = tuple(
        AttentionResult(q_h[h], kq[h], vq[h], scores[h], scaled[h], masked[h], weights[h],
                        head_outputs[h], mask, scale, temperature, score_mods=mods,
                        head_index=h)
        for h in range(n_heads)
    )
    return MultiHeadResult(q, k, v, heads, scores, scaled, masked, weights, head_outputs,
                           concat, output, mask, scale, temperature, n_heads, score_mods=mods,
                           w_o=w_o, b_o=b_o)


def reweigh(result: AttentionResult, score_mods: tuple[ScoreMod, ...]) -> tuple[Array, Array]:
    """One head's scaled scores and weights again, from its raw scores, with other modifiers.

    What a slider over a setting of the score modifiers (τ, a scale) shows while it is
    dragged: no projection and no product is recomputed, and each frame has the bits that
    computing the whole result with those modifiers gives (the same operations).

    Parameters
    ----------
    result : AttentionResult
        One head (``MultiHeadResult.head(h)``, or a single-head result).
    score_mods : tuple of ScoreMod
        The modifiers to apply instead of ``result.score_mods``.

    Returns
    -------
    scaled, weights : ndarray of shape (t_q, t_k)
    """
    t_q, t_k = result.scores.shape
    stages = apply(score_mods, result.scores, At.head(result.head_index, t_q, t_k))
    if not all(np.isfinite(s).all() for s in stages[1:]):
        raise ValueError(_SCORES_OVERFLOW)
    scaled = stages[-1]
    mask = result.mask
    masked = scaled if mask.all() else np.where(mask, scaled, scaled.dtype.type(-np.inf))
    return scaled, stable_softmax(masked, axis=-1)


def mix_heads(head_outputs, head_weights) -> Array:
    """Combine head outputs with one weight per head instead of W_O (seed 004's two heads).

    ``np.stack(heads, -1) @ w_h`` in the notebook, i.e. Σ_h w_h · head_h.

    Parameters
    ----------
    head_outputs : array_like of shape (n_heads, t_q, d_v)
    head_weights : array_like of shape (n_heads,)

    Returns
    -------
    ndarray of shape (t_q, d_v)
    """
    head_outputs = as_array("head_outputs", head_outputs, 3)
    head_weights = as_array("head_weights", head_weights, 1)
    if head_weights.shape[0] != head_outputs.shape[0]:
        raise ValueError(
            f"head_weights must have one weight per head ({head_outputs.shape[0]}), "
            f"got {head_weights.shape[0]}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        mixed = np.tensordot(head_weights, head_outputs, axes=1)  # (t_q, d_v)
    if not np.isfinite(mixed).all():
        raise ValueError("the mixed head outputs overflow the floating-point range; use smaller "
                         "head outputs or head weights")
    return mixed


def valid_head_counts(width: int, limit: int | None = None) -> list[int]:
    """The numbers of heads that divide ``width`` (optionally only those <= ``limit``)."""
    top = width if limit is None else min(width, limit)
    return [h for h in range(1, top + 1) if width % h == 0]


# ------------------------------------------------------------------------------ private helpers


def _single_head(q: Array, k: Array, v: Array, mask, scale, temperature) -> AttentionResult:
    """Shared tail of the single-head entry points: validate the settings, attend, freeze.

    ``q``, ``k`` and ``v`` are checked arrays of one float dtype that no caller holds.
    """
    scale = _resolve_scale(scale, q.shape[1])
    temperature = check_positive("temperature", temperature)
    mask = as_mask("mask", mask, (q.shape[0], k.shape[0]))
    mods = chain(scale, temperature)
    scores, scaled, masked, weights, output = attend_kernel(q, k, v, mask, mods,
                                                      At.head(0, q.shape[0], k.shape[0]))
    read_only(q, k, v, scores, scaled, masked, weights, output)
    return AttentionResult(q, k, v, scores, scaled, masked, weights, output, mask, scale,
                           temperature, score_mods=mods)


def attend_kernel(q: Array, k: Array, v: Array, mask: NDArray[np.bool_],
                  mods: tuple[ScoreMod, ...], at: At
                  ) -> tuple[Array, Array, Array, Array, Array]:
    """The one attention kernel, on trusted inputs, with any leading (batch, head) axes.

    The public functions above and every variant of the dashboard compute through it, and
    :func:`attnviz.core.backward.kernel_backward` is its backward pass, so a change of the
    scores (a :class:`~attnviz.core.score_mods.ScoreMod`: scale and τ, a bias such as ALiBi's,
    a cap) works the same everywhere.

    Parameters
    ----------
    q : ndarray of shape (..., t_q, d_k)
    k : ndarray of shape (..., t_k, d_k)
    v : ndarray of shape (..., t_k, d_v)
    mask : ndarray of bool, broadcastable to (..., t_q, t_k)
    mods : tuple of ScoreMod
        The changes of the scores, in order (the scale first).
    at : At
        Where the scores sit (head, query and key indices).

    Returns
    -------
    scores, scaled, masked, weights : ndarray of shape (..., t_q, t_k)
    output : ndarray of shape (..., t_q, d_v)

    Raises
    ------
    ValueError
        If the scores or the output overflow the floating-point range.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        # 1) score every query against every key
        scores = q @ np.swapaxes(k, -1, -2)  # (..., t_q, t_k)
    # 2) every change of the scores: scale and temperature, bias, the variant's, cap
    stages = apply(mods, scores, at)
    if not all(np.isfinite(s).all() for s in stages[1:]):
        raise ValueError(_SCORES_OVERFLOW)
    scaled = stages[-1]
    # 3) mask: −inf where attending is forbidden
    masked = scaled if mask.all() else np.where(mask, scaled, scaled.dtype.type(-np.inf))
    # 4) normalise over the keys
    weights = stable_softmax(masked, axis=-1)
    # 5) mix the values
    output = weighted_sum(weights, v, "v")  # (..., t_q, d_v)
    return scores, scaled, masked, weights, output


def _resolve_scale(scale, d_k: int) -> float:
    """1/sqrt(d_k) for None, otherwise the given factor (validated)."""
    if scale is None:
        return 1.0 / float(np.sqrt(d_k))
    return check_positive("scale", scale, allow_zero=True)


def _project(x_q, x_kv, w_q, w_k, w_v, *, names: tuple[str, str] = ("x_q", "x_kv"),
             biases=(None, None, None), same_width: bool = True
             ) -> tuple[Array, Array, Array]:
    """Validate embeddings, weights and biases; return q = x_q w_q (+ b_q), k = x_kv w_k
    (+ b_k), v = x_kv w_v (+ b_v).

    ``names`` are the caller's argument names for the two embeddings (``("x", "x")`` for
    self-attention), so messages speak of what the user passed. ``same_width`` requires w_q
    and w_k to have the same columns (one head; multi-head attention checks its own).
    """
    q_name, kv_name = names if x_kv is not None else (names[0], names[0])
    x_q = as_array(q_name, x_q, 2)
    x_kv = x_q if x_kv is None else as_array(kv_name, x_kv, 2)
    w_q = as_array("w_q", w_q, 2)
    w_k = as_array("w_k", w_k, 2)
    w_v = as_array("w_v", w_v, 2)
    for name, w, x, x_name in (("w_q", w_q, x_q, q_name), ("w_k", w_k, x_kv, kv_name),
                               ("w_v", w_v, x_kv, kv_name)):
        if w.shape[0] != x.shape[1]:
            raise ValueError(
                f"{name} must have one row per embedding dimension: {x_name} has d_model = "
                f"{x.shape[1]} columns but {name} has {w.shape[0]} rows (shape {w.shape})"
            )
    if same_width and w_q.shape[1] != w_k.shape[1]:
        raise ValueError(
            f"w_q and w_k must have the same number of columns (d_k), got {w_q.shape[1]} "
            f"and {w_k.shape[1]}"
        )
    b_q, b_k, b_v = (None if b is None else _bias(f"b_{n}", b, w.shape[1], f"w_{n}")
                     for b, w, n in zip(biases, (w_q, w_k, w_v), "qkv", strict=True))
    dtype = float_dtype(x_q, x_kv, w_q, w_k, w_v, *(b for b in (b_q, b_k, b_v) if b is not None))
    return (_product(f"q = {q_name} @ w_q", x_q, w_q, dtype, b_q),
            _product(f"k = {kv_name} @ w_k", x_kv, w_k, dtype, b_k),
            _product(f"v = {kv_name} @ w_v", x_kv, w_v, dtype, b_v))


def _bias(name: str, b, width: int, w_name: str) -> Array:
    """A projection bias checked against its matrix: one value per column of ``w_name``."""
    b = as_array(name, b, 1)
    if b.shape[0] != width:
        raise ValueError(f"{name} must have one value per column of {w_name} ({width}), "
                         f"got {b.shape[0]}")
    return b


def _product(what: str, a: Array, b: Array, dtype: np.dtype, bias: Array | None = None
             ) -> Array:
    """``a @ b`` (``+ bias``) in ``dtype``; a ValueError (not a RuntimeWarning or inf) if it
    overflows. Without a bias the product alone, bit for bit."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = (a @ b).astype(dtype, copy=False)
        if bias is not None:
            out = out + bias.astype(dtype, copy=False)
    if not np.isfinite(out).all():
        raise ValueError(f"{what} overflows the floating-point range; use smaller values")
    return out


def _with_causal(mask, causal: bool, t_q: int, t_k: int):
    """Combine a user mask with the causal mask when ``causal`` is set."""
    if not causal:
        return mask
    user = None if mask is None else as_mask("mask", mask, (t_q, t_k))
    return combine([user, causal_mask(t_q, t_k)], t_q, t_k)


