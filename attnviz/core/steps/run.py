"""Running a list of steps: one head forward (:func:`run_head`), its backward
(:func:`head_backward`), and every head of a layer as the core's result types
(:func:`attend_steps`).

For one head, in the list's order within each kind::

    q, k  <- every q/k step (QK-norm, RoPE)            (t_q, d_k), (t_k, d_k)
    S      = q kᵀ                                       (t_q, t_k)
    M      = the mask parts combined
    S̃      <- every score step (scale and τ, ALiBi, SSMax, bias, DeBERTa's relative
              terms from q and k, cap)
    P      = the normaliser of S̃ with −∞ where M is False
    O      = P v                                        (t_q, d_v)

A run may carry leading batch axes: q (..., t_q, d_k), k (..., t_k, d_k), v (..., t_k, d_v),
every step acting on the last two axes. They hold sequences of one head, or several heads at
once when ``head`` is an array of head indices broadcast against them (the two-layer
transformer runs its (batch, n_heads) heads in one run): each head keeps its own settings
(ALiBi's slope, a sink logit, a QK-LayerNorm row), the mask is the same for all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import AttentionResult, MultiHeadResult
from attnviz.core.masks import combine
from attnviz.core.numerics import read_only, weighted_sum
from attnviz.core.score_mods import At, ScoreMod, apply, pull_back, qk_pull_back, split_scale
from attnviz.core.sinks import MultiHeadSinkResult, SinkResult
from attnviz.core.steps.base import Array, HeadShape, Step, check_order, of_kind
from attnviz.core.steps.heads import Heads
from attnviz.core.steps.normalisers import SinkSoftmax, Softmax

_OVERFLOW = ("the attention scores overflow the floating-point range; use smaller values in q "
             "and k (or the embeddings and weights), a smaller scale or a larger temperature")


@dataclass(frozen=True, eq=False)
class HeadTrace:
    """Every intermediate of one head run through a list of steps.

    Attributes
    ----------
    q_stages, k_stages : tuple of ndarray
        q (k) as given, then after each q/k step: (..., t_q, d_k), (..., t_k, d_k) (``...``:
        the leading batch axes the head was given, none for one sequence).
    v : ndarray of shape (..., t_k, d_v)
    scores : ndarray of shape (..., t_q, t_k)
        q·kᵀ of the changed q and k.
    score_mods : tuple of ScoreMod
        What the score steps made, in order.
    score_stages : tuple of ndarray
        The scores, then after each modifier; the last is ``scaled``.
    mask : ndarray of bool, shape (t_q, t_k)
    masked, weights : ndarray of shape (..., t_q, t_k)
    rest : ndarray of shape (..., t_q)
        The share of each row the normaliser gave no key (a sink's; 0 for a softmax).
    output : ndarray of shape (..., t_q, d_v)
    head : int or ndarray of int
        The head, or the heads along the leading axes.
    """

    q_stages: tuple[Array, ...]
    k_stages: tuple[Array, ...]
    v: Array
    scores: Array
    score_mods: tuple[ScoreMod, ...]
    score_stages: tuple[Array, ...]
    mask: NDArray[np.bool_]
    masked: Array
    weights: Array
    rest: Array
    output: Array
    head: int | NDArray[np.intp]

    @property
    def q(self) -> Array:
        """The query that reached the scores."""
        return self.q_stages[-1]

    @property
    def k(self) -> Array:
        """The key that reached the scores."""
        return self.k_stages[-1]

    @property
    def scaled(self) -> Array:
        """The scores after every score step."""
        return self.score_stages[-1]


@dataclass(frozen=True, eq=False)
class HeadGradients:
    """∂L/∂ of one head's intermediates (see :class:`HeadTrace`).

    Attributes
    ----------
    d_weights, d_scaled, d_scores : ndarray of shape (..., t_q, t_k)
    d_q, d_k : ndarray
        Of the q and k that reached the scores.
    d_q_in, d_k_in : ndarray
        Of the q and k as given (through every q/k step, last first).
    d_v : ndarray of shape (..., t_k, d_v)
    """

    d_weights: Array
    d_scaled: Array
    d_scores: Array
    d_q: Array
    d_k: Array
    d_q_in: Array
    d_k_in: Array
    d_v: Array


def normaliser_of(steps: Sequence[Step]):
    """The list's normaliser (a softmax when it names none)."""
    found = of_kind(steps, "normaliser")
    return found[0] if found else Softmax()


def heads_of(steps: Sequence[Step]) -> Heads:
    """The list's head structure (one head when it names none)."""
    found = of_kind(steps, "heads")
    return found[0] if found else Heads()


def score_mods_for(steps: Sequence[Step], shape: HeadShape) -> tuple[ScoreMod, ...]:
    """The modifiers of the list's score steps for scores of ``shape``."""
    return tuple(s.mod(shape) for s in of_kind(steps, "score"))


def run_head(steps: Sequence[Step], q, k, v, *, head=0, n_heads: int = 1,
             mask=None) -> HeadTrace:
    """One head through a list of steps, every intermediate kept.

    Parameters
    ----------
    steps : sequence of Step
    q : array_like of shape (..., t_q, d_k)
    k : array_like of shape (..., t_k, d_k)
    v : array_like of shape (..., t_k, d_v)
        The head's projections (k and v of the key/value head it reads); leading axes, the
        same for the three, are sequences run at once.
    head : int or array_like of int
        Which head (per-head settings: ALiBi's slope, a sink logit); an array names the head
        of every slice along the leading axes, broadcast against them (shape (n_heads,) for q
        of shape (batch, n_heads, t_q, d_k)).
    n_heads : int
        How many heads the layer has.
    mask : array_like of bool, broadcastable to (t_q, t_k), optional
        One more mask part (True = may attend).

    Raises
    ------
    ValueError
        Shapes that do not fit, a step's setting that does not fit the head, or scores that
        overflow.
    """
    check_order(steps)
    q, k, v = (np.array(a, dtype=float) for a in (q, k, v))
    if q.ndim < 2 or k.ndim != q.ndim or v.ndim != q.ndim or q.shape[-1] != k.shape[-1] \
            or k.shape[-2] != v.shape[-2] or not q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        raise ValueError(f"q (t_q, d_k), k (t_k, d_k) and v (t_k, d_v) must fit; got "
                         f"{q.shape}, {k.shape} and {v.shape}")
    t_q, t_k = q.shape[-2], k.shape[-2]
    head = head if np.ndim(head) == 0 else np.asarray(head, dtype=np.intp)
    # 1) change q and k (QK-norm, RoPE), in order
    q_stages, k_stages = [q], [k]
    for step in of_kind(steps, "qk"):
        q_stages.append(step.forward(q_stages[-1], "q", head))
        k_stages.append(step.forward(k_stages[-1], "k", head))
    # 2) score, 3) the mask parts combined
    with np.errstate(over="ignore", invalid="ignore"):
        scores = q_stages[-1] @ np.swapaxes(k_stages[-1], -1, -2)  # (..., t_q, t_k)
    allowed = combine([*of_kind(steps, "mask"), mask], t_q, t_k)
    # 4) every change of the scores (one that reads q and k, as DeBERTa's relative terms, sees
    #    this head's in every head's place: only head ``head``'s scores are computed here)
    shape = HeadShape(n_heads, t_q, t_k, q.shape[-1], allowed)
    if q.ndim == 2 and np.ndim(head) == 0:
        shape = replace(shape, q=np.broadcast_to(q_stages[-1], (n_heads, t_q, q.shape[-1])),
                        k=np.broadcast_to(k_stages[-1], (n_heads, t_k, q.shape[-1])))
    mods = score_mods_for(steps, shape)
    stages = apply(mods, scores, _where(head, t_q, t_k))
    if not all(np.isfinite(s).all() for s in stages):
        raise ValueError(_OVERFLOW)
    # 5) normalise the masked scores, 6) mix the values
    masked = stages[-1] if allowed.all() else np.where(allowed, stages[-1], -np.inf)
    weights, rest = normaliser_of(steps).forward(masked, head)
    output = weighted_sum(weights, v, "v")  # (..., t_q, d_v)
    trace = HeadTrace(tuple(q_stages), tuple(k_stages), v, scores, mods, tuple(stages),
                      allowed, masked, weights, rest, output, head)
    read_only(*q_stages, *k_stages, v, scores, *stages, allowed, masked, weights, rest, output)
    return trace


def _where(head, t_q: int, t_k: int) -> At:
    """Where a run's scores sit: every score of head ``head``, or of an array of heads along
    the leading axes."""
    if np.ndim(head) == 0:
        return At.head(head, t_q, t_k)
    return At(head[..., None, None], np.arange(t_q)[:, None], np.arange(t_k)[None, :])


def head_backward(steps: Sequence[Step], trace: HeadTrace, d_output=None, *,
                  d_weights=None) -> HeadGradients:
    """The backward pass of :func:`run_head`: every step's derivative, last first.

    Parameters
    ----------
    steps : sequence of Step
        The list the forward ran.
    trace : HeadTrace
    d_output : array_like of shape (..., t_q, d_v), optional
        ∂L/∂output.
    d_weights : array_like of shape (..., t_q, t_k), optional
        A loss's own ∂L/∂weights.
    """
    p = trace.weights
    d_out = np.zeros(trace.output.shape) if d_output is None else np.asarray(d_output, float)
    with np.errstate(over="ignore", invalid="ignore"):
        # 1) through the weighted sum of the values
        d_v = np.swapaxes(p, -1, -2) @ d_out  # (..., t_k, d_v)
        dp = d_out @ np.swapaxes(trace.v, -1, -2)  # (..., t_q, t_k)
        if d_weights is not None:
            dp = dp + np.asarray(d_weights, dtype=float)
        # 2) through the normaliser (0 where masked), 3) every score step, last first
        d_scaled = normaliser_of(steps).backward(p, dp)
        at = _where(trace.head, *trace.scores.shape[-2:])
        d_scores = pull_back(trace.score_mods, list(trace.score_stages), d_scaled, at)
        # 4) through q·kᵀ, and the terms a change of the scores computes from q and k
        d_q = d_scores @ trace.k
        d_k = np.swapaxes(d_scores, -1, -2) @ trace.q
        extra = qk_pull_back(trace.score_mods, list(trace.score_stages), d_scaled, at)
        if extra is not None:
            d_q, d_k = d_q + extra[0], d_k + extra[1]
        # 5) through every q/k step, last first
        d_q_in, d_k_in = d_q, d_k
        qk = of_kind(steps, "qk")
        for n in range(len(qk) - 1, -1, -1):
            d_q_in = qk[n].backward(trace.q_stages[n], d_q_in, "q", trace.head)
            d_k_in = qk[n].backward(trace.k_stages[n], d_k_in, "k", trace.head)
    return HeadGradients(dp, d_scaled, d_scores, d_q, d_k, d_q_in, d_k_in, d_v)


def attend_steps(steps: Sequence[Step], q_h, k_h, v_h, *, w_o=None, b_o=None, mask=None
                 ) -> AttentionResult | MultiHeadResult:
    """Every head of a layer through the list: the core's result types, so every page, the
    backward pass and Trace read it as any other result.

    Parameters
    ----------
    steps : sequence of Step
        Its :class:`Heads` step says how query heads read key/value heads and whether W_O
        projects the heads (a multi-head result); a sink normaliser gives sink results.
    q_h : array_like of shape (n_heads, t_q, d_k)
    k_h : array_like of shape (n_kv_heads, t_k, d_k)
    v_h : array_like of shape (n_kv_heads, t_k, d_v)
    w_o : array_like of shape (n_heads·d_v, d_out), optional
    b_o : array_like of shape (d_out,), optional
    mask : array_like of bool, optional
        One more mask part for every head.

    Returns
    -------
    AttentionResult (one head, no W_O step) or MultiHeadResult; their sink forms with a
    :class:`SinkSoftmax`. The ``scaled`` of a result is its scores after every score step;
    ``q`` and ``k`` are those that reached the scores.
    """
    heads = heads_of(steps)
    q_h, k_h, v_h = (np.asarray(a, dtype=float) for a in (q_h, k_h, v_h))
    n, t_q = q_h.shape[:2]
    n_kv, t_k = k_h.shape[:2]
    if n != heads.n_heads or n_kv != heads.n_kv_heads:
        raise ValueError(f"the heads step says {heads.n_heads} query heads on "
                         f"{heads.n_kv_heads} key/value heads; the projections give {n} on "
                         f"{n_kv}")
    traces = [run_head(steps, q_h[h], k_h[heads.kv_head(h)], v_h[heads.kv_head(h)], head=h,
                       n_heads=n, mask=mask) for h in range(n)]
    mods = score_mods_for(steps, HeadShape(n, t_q, t_k, q_h.shape[2], traces[0].mask,
                                           q=np.stack([tr.q for tr in traces]),
                                           k=np.stack([tr.k for tr in traces])))
    first, _ = split_scale(mods)
    scale, temperature = first.scale, first.temperature
    sinks = isinstance(normaliser_of(steps), SinkSoftmax)
    one = SinkResult if sinks else AttentionResult

    def head_result(tr: HeadTrace) -> AttentionResult:
        extra = dict(sink_logit=normaliser_of(steps).logit(tr.head), sink_weight=tr.rest) \
            if sinks else {}
        return one(tr.q, tr.k, tr.v, tr.scores, tr.scaled, tr.masked, tr.weights, tr.output,
                   tr.mask, scale, temperature, score_mods=mods, head_index=tr.head, **extra)

    if n == 1 and not heads.project_out:
        return head_result(traces[0])
    stack = {name: np.stack([getattr(tr, name) for tr in traces])
             for name in ("scores", "scaled", "masked", "weights", "output", "rest")}
    concat = stack["output"].transpose(1, 0, 2).reshape(t_q, -1)  # (t_q, n_heads·d_v)
    output = concat
    if w_o is not None:
        w_o = np.array(w_o, dtype=float)
        if w_o.shape[0] != concat.shape[1]:
            raise ValueError(f"w_o must have n_heads·d_v = {concat.shape[1]} rows, got shape "
                             f"{w_o.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            output = concat @ w_o if b_o is None else concat @ w_o + np.asarray(b_o, float)
        if not np.isfinite(output).all():
            raise ValueError("output = concat @ w_o overflows the floating-point range; use "
                             "smaller values")
    side = [a.transpose(1, 0, 2).reshape(a.shape[1], -1)
            for a in (np.stack([tr.q for tr in traces]),
                      np.stack([traces[g * (n // n_kv)].k for g in range(n_kv)]),
                      v_h)]
    read_only(concat, output, *side, *stack.values())
    args = (*side, tuple(head_result(tr) for tr in traces), stack["scores"], stack["scaled"],
            stack["masked"], stack["weights"], stack["output"], concat, output,
            traces[0].mask, scale, temperature, n)
    kw = dict(score_mods=mods, w_o=w_o, b_o=None if b_o is None else np.asarray(b_o, float))
    if sinks:
        logits = np.array([normaliser_of(steps).logit(h) for h in range(n)])
        return MultiHeadSinkResult(*args, **kw, sink_logits=logits, sink_weight=stack["rest"])
    return MultiHeadResult(*args, **kw)
