"""Attention with explicit loops: the independent computation every variant's ``reference``
is written with.

One query, one key, one dimension at a time, in Python floats — no matrix product, no
broadcasting, nothing shared with the vectorised core but the definitions. A variant's
``reference(inputs)`` (see :class:`~attnviz.scenarios.variant.Variant`) builds its q, k and v
and its logit rule from these pieces and returns (weights of shape (n_heads, t_q, t_k),
output); the tests compare it with the variant's ``compute`` to float64 precision.

Conventions as in the core: True in a mask = may attend; a query with no key allowed gets
weights 0 and an output row of 0; query head h reads key/value head h // (n_heads / n_kv).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from attnviz.scenarios.variant import Inputs

Array = NDArray[np.float64]
Logit = Callable[[float, int, int, int], float]  # (q·k, head, i, j) -> the softmax's input


def dot(a, b) -> float:
    """Σ_m a_m b_m, left to right."""
    total = 0.0
    for x, y in zip(a, b, strict=True):
        total += float(x) * float(y)
    return total


def matmul(a, b) -> Array:
    """a @ b, one dot product per entry."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = np.zeros((a.shape[0], b.shape[1]))
    for r in range(a.shape[0]):
        for c in range(b.shape[1]):
            out[r, c] = dot(a[r], b[:, c])
    return out


def head_slices(width: int, n: int) -> list[slice]:
    """The column block of each of ``n`` heads in a projection of ``width`` columns."""
    d = width // n
    return [slice(h * d, (h + 1) * d) for h in range(n)]


def softmax_row(logits: dict[int, float], t_k: int, sink: float | None = None) -> list[float]:
    """Weights of one query from its allowed keys' logits (key -> logit); a sink logit joins
    the denominator only."""
    if not logits:
        return [0.0] * t_k
    top = max([*logits.values(), *([sink] if sink is not None else [])])
    exps = {j: math.exp(s - top) for j, s in logits.items()}
    total = math.fsum([*exps.values(), *([math.exp(sink - top)] if sink is not None else [])])
    return [exps[j] / total if j in exps else 0.0 for j in range(t_k)]


def attend_loop(q, k, v, allowed, logit: Logit, *, head: int = 0,
                sink: float | None = None) -> tuple[Array, Array]:
    """One head: weights (t_q, t_k) and output (t_q, d_v) with explicit loops.

    ``logit(s, head, i, j)`` turns the raw score s = q_i·k_j into the softmax's input (scale,
    temperature, bias, cap: whatever the variant does).
    """
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    t_q, t_k = q.shape[0], k.shape[0]
    weights, output = np.zeros((t_q, t_k)), np.zeros((t_q, v.shape[1]))
    for i in range(t_q):
        logits = {j: logit(dot(q[i], k[j]), head, i, j) for j in range(t_k) if allowed[i][j]}
        row = softmax_row(logits, t_k, sink)
        weights[i] = row
        for j in range(t_k):
            for m in range(v.shape[1]):
                output[i, m] += row[j] * v[j, m]
    return weights, output


def scaled_logit(inputs: Inputs, d_k: int, scale: float | None = None) -> Logit:
    """s · scale / τ with the inputs' scale (1/√d_k when None) or the variant's own."""
    factor = scale if scale is not None else inputs.scale
    factor = 1 / math.sqrt(d_k) if factor is None else factor
    return lambda s, h, i, j: s * factor / inputs.temperature


def allowed(inputs: Inputs, t_q: int, t_k: int, *, causal: bool = False) -> list[list[bool]]:
    """The user's mask (all True without one), and j ≤ i when ``causal``."""
    user = inputs.mask
    return [[(user is None or bool(user[i][j])) and (not causal or j <= i) for j in range(t_k)]
            for i in range(t_q)]


def multi_head(inputs: Inputs, logit: Callable[[int], Logit], *, causal: bool = False,
               n_kv: int | None = None, change: Callable | None = None,
               w_o: bool = True) -> tuple[Array, Array]:
    """Self-attention of ``inputs.n_heads`` heads projected from x: weights (n, t, t) and the
    output (through W_O when ``w_o``, else the concatenation).

    ``logit(d_k)`` gives the logit rule; ``n_kv`` key/value heads (the first blocks of W_K and
    W_V) shared by the query heads; ``change(q, k, head)`` changes a head's q and k (RoPE,
    QK-norm) before the scores.
    """
    sc, x, n = inputs.scenario, inputs.x, inputs.n_heads
    n_kv = n if n_kv is None else n_kv
    q_all, k_all, v_all = (matmul(x, getattr(sc, w)) for w in ("w_q", "w_k", "w_v"))
    q_cols, k_cols, v_cols = (head_slices(a.shape[1], n) for a in (q_all, k_all, v_all))
    t = x.shape[0]
    ok = allowed(inputs, t, t, causal=causal)
    weights, heads = [], []
    for h in range(n):
        g = h // (n // n_kv)  # the key/value head this query head reads
        q, k, v = q_all[:, q_cols[h]], k_all[:, k_cols[g]], v_all[:, v_cols[g]]
        if change is not None:
            q, k = change(q, k, h)
        w, o = attend_loop(q, k, v, ok, logit(q.shape[1]), head=h)
        weights.append(w)
        heads.append(o)
    concat = np.hstack(heads)
    return np.array(weights), (matmul(concat, sc.w_o) if w_o else concat)


def dot_product(inputs: Inputs, *, causal: bool = False, scale: float | None = None,
                heads: bool = False) -> tuple[Array, Array]:
    """What :func:`~attnviz.scenarios.variant.dot_product` computes, with loops: Q, K and V
    given directly, one head of self- or cross-attention, or ``inputs.n_heads`` heads
    (``heads``: always, with W_O)."""
    sc = inputs.scenario
    if sc.direct:
        q, k, v = (np.asarray(a, dtype=float) for a in (sc.q_in, sc.k_in, sc.v_in))
    elif heads or inputs.n_heads > 1:
        return multi_head(inputs, lambda d_k: scaled_logit(inputs, d_k, scale), causal=causal)
    else:
        x_kv = inputs.x if inputs.source is None else inputs.source
        q, k, v = matmul(inputs.x, sc.w_q), matmul(x_kv, sc.w_k), matmul(x_kv, sc.w_v)
    ok = allowed(inputs, q.shape[0], k.shape[0], causal=causal)
    weights, output = attend_loop(q, k, v, ok, scaled_logit(inputs, q.shape[1], scale))
    return weights[None], output


def rms(row, gain: float, eps: float = 1e-6) -> list[float]:
    """row / sqrt(mean(row²) + eps) · gain, one entry at a time."""
    mean_square = math.fsum(float(a) * float(a) for a in row) / len(row)
    return [float(a) / math.sqrt(mean_square + eps) * gain for a in row]


def rotate(row, position: float, d_rot: int, base: float, layout: str, inv_freq=None,
           scaling: float = 1.0) -> list[float]:
    """One query or key rotated by RoPE: pair i (dimensions i and i + d_rot/2 split-half, 2i and
    2i + 1 interleaved) turned by position · θ_i, θ_i = base^(−2i/d_rot) or ``inv_freq[i]`` when
    given, and multiplied by ``scaling``; the rest passed through."""
    out = [float(a) for a in row]
    for i in range(d_rot // 2):
        a, b = (i, i + d_rot // 2) if layout == "split_half" else (2 * i, 2 * i + 1)
        theta = base ** (-2 * i / d_rot) if inv_freq is None else inv_freq[i]
        angle = position * theta
        out[a] = scaling * (row[a] * math.cos(angle) - row[b] * math.sin(angle))
        out[b] = scaling * (row[a] * math.sin(angle) + row[b] * math.cos(angle))
    return out
