"""Dot-product attention: scaled, masked, self, cross and multi-head.

    Attention(Q, K, V) = softmax(Q Kᵀ · scale / temperature, masked) V

Vaswani et al. (2017), "Attention Is All You Need", https://arxiv.org/abs/1706.03762, §3.2.
Row-vector convention throughout: ``q = x @ w_q`` (the seed notebooks' ``words @ W_Q``).

Every function returns a frozen result holding each intermediate. The scaled and masked scores
are derived from the raw scores by one multiplication and one ``np.where``; where the computing
path had to hold them anyway (up to 512 × 512 scores per head) the result keeps those arrays,
otherwise they are computed on first access, by the same functions, so the bits are the same
either way. Result arrays are read-only.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
from numpy.typing import NDArray

from attnviz.core.blas import blas_threads
from attnviz.core.checks import as_array, as_mask, check_count, check_positive, float_dtype
from attnviz.core.masks import causal_mask

Array = NDArray[np.floating]

# Scores whose magnitude may exceed this fraction of their dtype's largest number are checked for
# overflow before the softmax (float64: ~1.8e300; float32: ~3.4e30).
_OVERFLOW_MARGIN = 1e-8

# Heads with at least this many scores (t_q · t_k) are computed one head at a time: each head's
# scores, scaled scores and weights (4 MB at 1024 × 1024 float32) stay in the CPU cache through
# the passes over them, where a whole (heads, t_q, t_k) tensor (32 MB) goes back and forth to
# memory on every pass — ~15 % faster at 8 heads × 1024 tokens, no gain at the dashboard's
# sizes (≤ 256 tokens), which keep the batched path. Every entry goes through the same
# operations (the batched product is the per-head product), so the results are bit-identical
# (tests/pages/test_speed.py).
_PER_HEAD_ABOVE = 512 * 512
# On that path, when BLAS itself runs single-threaded (the dashboard sets that, attnviz.core.blas),
# the heads are spread over one thread per core: numpy and BLAS release the GIL, so whole heads
# (products and softmax) run in parallel. With a multi-threaded BLAS the heads run in turn, as
# two levels of threads would fight over the cores. Measured with 8 heads × 1024 tokens
# float32 on 2 cores: benchmarks/RESULTS.md.


class _DerivedScores:
    """``scaled`` and ``masked`` of a result, derived from its ``scores``, ``mask``, ``scale``
    and ``temperature`` on first access (or stored by :func:`_keep` when already computed)."""

    scores: Array
    mask: NDArray[np.bool_]
    scale: float
    temperature: float

    @cached_property
    def scaled(self) -> Array:  # noqa: D102 — documented in the result classes' docstrings
        return _frozen_array(_scale_scores(self.scores, self.scale / self.temperature))

    @cached_property
    def masked(self) -> Array:  # noqa: D102
        return _frozen_array(_mask_scores(self.scaled, self.mask))


@dataclass(frozen=True, eq=False)
class AttentionResult(_DerivedScores):
    """Every intermediate of one attention computation.

    Attributes
    ----------
    q : ndarray of shape (t_q, d_k)
    k : ndarray of shape (t_k, d_k)
    v : ndarray of shape (t_k, d_v)
    scores : ndarray of shape (t_q, t_k)
        Raw dot products q·kᵀ.
    scaled : ndarray of shape (t_q, t_k)
        ``scores * scale / temperature`` (the same array as ``scores`` when that factor is 1).
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
    """

    q: Array
    k: Array
    v: Array
    scores: Array
    weights: Array
    output: Array
    mask: NDArray[np.bool_]
    scale: float
    temperature: float


@dataclass(frozen=True, eq=False)
class MultiHeadResult(_DerivedScores):
    """Every intermediate of multi-head attention (heads stacked on the first axis).

    Attributes
    ----------
    q, k, v : ndarray of shape (t, n_heads·d_k) / (t_k, n_heads·d_v)
        The full projections before the split into heads.
    heads : tuple of AttentionResult
        One result per head (views into the stacked arrays below).
    scores, scaled, masked, weights : ndarray of shape (n_heads, t_q, t_k)
        As in :class:`AttentionResult` (``scaled`` and ``masked`` may be computed on access).
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
    """

    q: Array
    k: Array
    v: Array
    heads: tuple[AttentionResult, ...]
    scores: Array
    weights: Array
    head_outputs: Array
    concat: Array
    output: Array
    mask: NDArray[np.bool_]
    scale: float
    temperature: float
    n_heads: int


def _scale_scores(scores: Array, factor: float) -> Array:
    """``scores · factor`` in the scores' dtype (the scores themselves when the factor is 1).

    May hold ±inf where the product overflows; the computing path checks for that.
    """
    if factor == 1.0:
        return scores
    with np.errstate(over="ignore", invalid="ignore"):
        return scores * scores.dtype.type(factor)


def _mask_scores(scaled: Array, mask: NDArray[np.bool_]) -> Array:
    """``scaled`` with −inf where ``mask`` (broadcast over leading axes) is False."""
    if mask.all():
        return scaled
    # np.where already gives scaled's dtype: astype makes no second copy
    return np.where(mask, scaled, -np.inf).astype(scaled.dtype, copy=False)


def _keep(result, scaled: Array | None, masked: Array | None):
    """Store already computed ``scaled``/``masked`` arrays in ``result`` (its cached values)."""
    for name, array in (("scaled", scaled), ("masked", masked)):
        if array is not None:
            result.__dict__[name] = array  # what cached_property would store on first access
    return result


def softmax(x: Array, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis``.

    Entries equal to −inf get weight 0. A slice whose entries are all −inf (a query whose keys
    are all masked) gets all zeros rather than NaN, without a RuntimeWarning.

    Parameters
    ----------
    x : array_like
        Finite values or −inf (integers are computed in float64).
    axis : int
        The axis that sums to 1 (the keys for attention).
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    return _softmax_into(x, np.empty_like(x), axis)


def _softmax_into(x: Array, out: Array, axis: int = -1) -> Array:
    """:func:`softmax` of ``x`` written into ``out`` (same shape and dtype); returns ``out``."""
    # 1) subtract the row maximum so exp never overflows
    row_max = np.max(x, axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)  # all −inf slice: leave it −inf
    with np.errstate(over="ignore"):  # x − max below −max_float is −inf: weight 0, as it should
        np.subtract(x, row_max, out=out)
    np.exp(out, out=out)
    # 2) normalise; an all-zero slice stays zero
    total = out.sum(axis=axis, keepdims=True)
    positive = total > 0
    if positive.all():  # the usual case: a plain in-place division is ~1.6x faster
        return np.divide(out, total, out=out)
    return np.divide(out, total, out=out, where=positive)


def _resolve_scale(scale: float | None, d_k: int) -> float:
    """1/sqrt(d_k) for None, otherwise the given factor (validated)."""
    if scale is None:
        return 1.0 / float(np.sqrt(d_k))
    return check_positive("scale", scale, allow_zero=True)


def _attend(q: Array, k: Array, v: Array, mask: NDArray[np.bool_], scale: float,
            temperature: float) -> tuple[Array, Array | None, Array | None, Array, Array]:
    """The computing path on trusted inputs with any leading batch axes.

    Returns ``scores, scaled, masked, weights, output`` of shapes (..., t_q, t_k) and
    (..., t_q, d_v); ``scaled`` and ``masked`` are None when they were not kept (large heads,
    see _PER_HEAD_ABOVE: the results compute them on access). Raises ValueError if the scores
    overflow the float range.
    """
    factor = scale / temperature
    bound = (q.shape[-1] * float(np.max(np.abs(q))) * float(np.max(np.abs(k)))
             * max(factor, 1.0))
    if q.ndim == 3 and q.shape[0] > 1 and q.shape[1] * k.shape[1] >= _PER_HEAD_ABOVE:
        return _attend_per_head(q, k, v, mask, factor, bound)
    with np.errstate(over="ignore", invalid="ignore"):
        # 1) score every query against every key
        scores = q @ np.swapaxes(k, -1, -2)  # (..., t_q, t_k)
    # 2) scale and apply temperature (one multiplication; no copy when the factor is 1)
    scaled = _scale_scores(scores, factor)
    _overflow_check(scaled, bound, factor)
    # 3) mask: −inf where attending is forbidden
    masked = _mask_scores(scaled, mask)
    # 4) normalise over the keys, 5) mix the values
    weights = softmax(masked, axis=-1)
    output = _mix_values(weights, v, "v")  # (..., t_q, d_v)
    return scores, scaled, masked, weights, output


def _overflow_check(scaled: Array, bound: float, factor: float) -> None:
    """Raise if the scaled scores may have overflowed and did (``bound``: their largest
    possible magnitude, from the inputs)."""
    guard = float(np.finfo(scaled.dtype).max) * _OVERFLOW_MARGIN
    # `not (... <= ...)` also checks when the bound is NaN (0 · inf); a factor beyond the guard
    # may itself overflow the dtype (then 0 · inf = NaN even for zero scores)
    if not (bound <= guard and factor <= guard) and not np.all(np.isfinite(scaled)):
        raise ValueError(
            "the attention scores overflow the floating-point range; use smaller values in "
            "q and k (or the embeddings and weights), a smaller scale or a larger temperature"
        )


def _attend_per_head(q: Array, k: Array, v: Array, mask: NDArray[np.bool_], factor: float,
                     bound: float) -> tuple[Array, None, None, Array, Array]:
    """:func:`_attend` for (n_heads, t, d) inputs, one head at a time (see _PER_HEAD_ABOVE).

    Each head's scaled and masked scores go through one reused buffer instead of two more
    (n_heads, t_q, t_k) arrays (64 MB at 8 × 1024 × 1024 float32, whose first writing alone
    costs as much as a fifth of the matrix products here); the result derives them on access
    with the same arithmetic (``_scale_scores``, ``_mask_scores``). Whole heads (products and
    softmax) run in parallel when BLAS is single-threaded (see _PER_HEAD_ABOVE); every head gets
    the same operations as on the batched path.
    """
    n_heads, t_q, t_k = q.shape[0], q.shape[1], k.shape[1]
    dtype = np.result_type(q, k)
    scores = np.empty((n_heads, t_q, t_k), dtype=dtype)
    weights = np.empty_like(scores)
    output = np.empty((n_heads, t_q, v.shape[2]), dtype=np.result_type(weights, v))
    forbidden = ~np.broadcast_to(mask, (t_q, t_k))
    masking = bool(forbidden.any())
    with np.errstate(over="ignore", invalid="ignore"):
        f = scores.dtype.type(factor)
    lanes = min(n_heads, _cores()) if blas_threads() == 1 else 1
    # one buffer per lane: its heads' scaled, then masked, scores
    buffers = np.empty((lanes, t_q, t_k), dtype=dtype)

    def lane(i: int) -> None:
        """Heads i, i + lanes, ...: score, scale, check, mask, normalise, mix the values."""
        buffer = buffers[i]
        for h in range(i, n_heads, lanes):
            with np.errstate(over="ignore", invalid="ignore"):
                np.matmul(q[h], np.swapaxes(k[h], -1, -2), out=scores[h])
                scaled = scores[h]
                if factor != 1.0 or masking:
                    scaled = np.multiply(scores[h], f, out=buffer)  # × 1 copies exactly
            _overflow_check(scaled, bound, factor)
            if masking:  # the same values as _mask_scores
                np.copyto(scaled, -np.inf, where=forbidden)
            _softmax_into(scaled, weights[h], axis=-1)
            with np.errstate(over="ignore", invalid="ignore"):
                np.matmul(weights[h], v[h], out=output[h])

    if lanes == 1:
        lane(0)
    else:
        for _ in _workers().map(lane, range(lanes)):  # iterating re-raises a lane's error here
            pass
    if not np.all(np.isfinite(output)):
        raise ValueError("the attention output overflows the floating-point range; use smaller "
                         "values in v")
    return scores, None, None, weights, output


@cache
def _cores() -> int:
    """How many cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@cache
def _workers() -> ThreadPoolExecutor:
    """The threads of the per-head path, one per usable core (made on first use)."""
    return ThreadPoolExecutor(_cores(), thread_name_prefix="attnviz")


def _mix_values(weights: Array, values: Array, name: str) -> Array:
    """``weights @ values``; a ValueError if rounding pushes values near the float limit to inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        output = weights @ values
    if not np.all(np.isfinite(output)):
        raise ValueError(f"the attention output overflows the floating-point range; use smaller "
                         f"values in {name}")
    return output


def _frozen(*arrays: np.ndarray | None) -> None:
    """Mark arrays read-only so that results cannot be changed behind a view's back."""
    for a in arrays:
        if a is not None:
            a.flags.writeable = False


def _frozen_array(a: np.ndarray) -> np.ndarray:
    """``a``, marked read-only."""
    _frozen(a)
    return a


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
    return _single(q, k, v, mask, scale, temperature)


def _single(q: Array, k: Array, v: Array, mask, scale, temperature) -> AttentionResult:
    """Shared tail of the single-head entry points: cast, resolve settings, attend."""
    dtype = float_dtype(q, k, v)
    # copies: the result is frozen below and must neither freeze nor alias the caller's arrays
    q, k, v = (a.astype(dtype, copy=True) for a in (q, k, v))
    scale = _resolve_scale(scale, q.shape[1])
    temperature = check_positive("temperature", temperature)
    full_mask = as_mask("mask", mask, (q.shape[0], k.shape[0]))
    scores, scaled, masked, weights, output = _attend(q, k, v, full_mask, scale, temperature)
    _frozen(q, k, v, scores, scaled, masked, weights, output)
    result = AttentionResult(q, k, v, scores, weights, output, mask=full_mask, scale=scale,
                             temperature=temperature)
    return _keep(result, scaled, masked)


def _project(x_q, x_kv, w_q, w_k, w_v, *, names: tuple[str, str] = ("x_q", "x_kv")
             ) -> tuple[Array, Array, Array]:
    """Validate embeddings and weights; return q = x_q w_q, k = x_kv w_k, v = x_kv w_v.

    ``names`` are the caller's argument names for the two embeddings (``("x", "x")`` for
    self-attention), so messages speak of what the user passed.
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
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(
            f"w_q and w_k must have the same number of columns (d_k), got {w_q.shape[1]} "
            f"and {w_k.shape[1]}"
        )
    dtype = float_dtype(x_q, x_kv, w_q, w_k, w_v)
    return (_product(f"q = {q_name} @ w_q", x_q, w_q, dtype),
            _product(f"k = {kv_name} @ w_k", x_kv, w_k, dtype),
            _product(f"v = {kv_name} @ w_v", x_kv, w_v, dtype))


def _product(what: str, a: Array, b: Array, dtype: np.dtype) -> Array:
    """``a @ b`` in ``dtype``; a ValueError (not a RuntimeWarning or inf) if it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = (a @ b).astype(dtype, copy=False)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} overflows the floating-point range; use smaller values")
    return out


def self_attention(x, w_q, w_k, w_v, *, mask=None, causal: bool = False,
                   scale: float | None = None, temperature: float = 1.0) -> AttentionResult:
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

    Returns
    -------
    AttentionResult
        With the projections ``q = x @ w_q``, ``k = x @ w_k``, ``v = x @ w_v``.
    """
    q, k, v = _project(x, None, w_q, w_k, w_v, names=("x", "x"))
    mask = _with_causal(mask, causal, q.shape[0], k.shape[0])
    return _single(q, k, v, mask, scale, temperature)


def cross_attention(x_q, x_kv, w_q, w_k, w_v, *, mask=None, scale: float | None = None,
                    temperature: float = 1.0) -> AttentionResult:
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
    """
    q, k, v = _project(x_q, x_kv, w_q, w_k, w_v)
    return _single(q, k, v, mask, scale, temperature)


def _with_causal(mask, causal: bool, t_q: int, t_k: int):
    """Combine a user mask with the causal mask when ``causal`` is set."""
    if not causal:
        return mask
    tri = causal_mask(t_q, t_k)
    return tri if mask is None else np.logical_and(as_mask("mask", mask, (t_q, t_k)), tri)


def valid_head_counts(width: int, limit: int | None = None) -> list[int]:
    """The numbers of heads that divide ``width`` (optionally only those <= ``limit``)."""
    top = width if limit is None else min(width, limit)
    return [h for h in range(1, top + 1) if width % h == 0]


def multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o=None, *, n_heads: int, mask=None,
                         scale: float | None = None, temperature: float = 1.0,
                         causal: bool = False) -> MultiHeadResult:
    """Multi-head attention: split the projections into heads, attend, concatenate, project.

    Head h uses the h-th contiguous block of columns of w_q and w_k (width d_k = columns /
    n_heads) and of w_v (width d_v = columns / n_heads).

    Parameters
    ----------
    x_q : array_like of shape (t_q, d_model)
    x_kv : array_like of shape (t_k, d_model), or None for self-attention
    w_q, w_k : array_like of shape (d_model, n_heads·d_k)
    w_v : array_like of shape (d_model, n_heads·d_v)
    w_o : array_like of shape (n_heads·d_v, d_out), optional
    n_heads : int
        Must divide the columns of w_q, w_k and w_v.
    mask : array_like of bool, broadcastable to (t_q, t_k), optional
    scale : float, optional
        None means 1/sqrt(d_k) with d_k the width of one head.
    temperature : float
    causal : bool
        Also forbid attending to later tokens.
    """
    q, k, v = _project(x_q, x_kv, w_q, w_k, w_v)
    n_heads = check_count("n_heads", n_heads)
    for name, width in (("w_q", q.shape[1]), ("w_v", v.shape[1])):
        if width % n_heads:
            choices = ", ".join(map(str, valid_head_counts(width, 16)))
            raise ValueError(
                f"n_heads ({n_heads}) must divide the number of columns of {name} ({width}); "
                f"valid choices: {choices}"
            )
    t_q, t_k = q.shape[0], k.shape[0]
    # 1) split into heads
    qh = q.reshape(t_q, n_heads, -1).transpose(1, 0, 2)  # (n_heads, t_q, d_k)
    kh = k.reshape(t_k, n_heads, -1).transpose(1, 0, 2)  # (n_heads, t_k, d_k)
    vh = v.reshape(t_k, n_heads, -1).transpose(1, 0, 2)  # (n_heads, t_k, d_v)
    scale = _resolve_scale(scale, qh.shape[2])
    temperature = check_positive("temperature", temperature)
    full_mask = as_mask("mask", _with_causal(mask, causal, t_q, t_k), (t_q, t_k))
    # 2) attend in every head at once
    scores, scaled, masked, weights, head_outputs = _attend(qh, kh, vh, full_mask, scale,
                                                            temperature)
    # 3) concatenate the heads side by side, 4) project
    concat = head_outputs.transpose(1, 0, 2).reshape(t_q, -1)  # (t_q, n_heads·d_v)
    if w_o is None:
        output = concat
    else:
        w_o = as_array("w_o", w_o, 2)
        if w_o.shape[0] != concat.shape[1]:
            raise ValueError(
                f"w_o must have n_heads·d_v = {concat.shape[1]} rows, got shape {w_o.shape}"
            )
        output = _product("output = concat @ w_o", concat, w_o, concat.dtype)
    _frozen(q, k, v, qh, kh, vh, scores, scaled, masked, weights, head_outputs, concat, output)
    heads = tuple(
        _keep(AttentionResult(qh[h], kh[h], vh[h], scores[h], weights[h], head_outputs[h],
                              mask=full_mask, scale=scale, temperature=temperature),
              None if scaled is None else scaled[h], None if masked is None else masked[h])
        for h in range(n_heads)
    )
    result = MultiHeadResult(q, k, v, heads, scores, weights, head_outputs, concat, output,
                             mask=full_mask, scale=scale, temperature=temperature,
                             n_heads=n_heads)
    return _keep(result, scaled, masked)


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
    if not np.all(np.isfinite(mixed)):
        raise ValueError("the mixed head outputs overflow the floating-point range; use smaller "
                         "head outputs or head weights")
    return mixed
