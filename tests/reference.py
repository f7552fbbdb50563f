"""An independent reference implementation of attention: explicit Python loops and ``math.exp``.

Written from the formulas (Vaswani et al. 2017, §3.2; Bahdanau et al. 2014, appendix A.1.2),
not from ``attnviz``: it imports nothing from the package and uses NumPy only to read inputs
into nested lists and to hand results back as arrays for comparison. Every sum is a loop over
one index, every exponential is ``math.exp``; nothing is vectorised.

Conventions are the vocabulary of ``attnviz/__init__.py``: rows are tokens, ``q = x @ w_q``,
a mask entry True means "may attend", and a query whose keys are all masked gets weights 0
and output 0.
"""

from __future__ import annotations

import math

import numpy as np

NEG_INF = float("-inf")


def _rows(a) -> list[list[float]]:
    """A 2-D input as a list of lists of Python floats."""
    return [[float(value) for value in row] for row in np.asarray(a, dtype=np.float64)]


def _vector(a) -> list[float]:
    """A 1-D input as a list of Python floats."""
    return [float(value) for value in np.asarray(a, dtype=np.float64).reshape(-1)]


def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """(n, m) @ (m, p) by the definition: out[i][j] = Σ_r a[i][r] · b[r][j]."""
    n, m, p = len(a), len(b), len(b[0])
    out = []
    for i in range(n):
        row = []
        for j in range(p):
            total = 0.0
            for r in range(m):
                total += a[i][r] * b[r][j]
            row.append(total)
        out.append(row)
    return out


def dot(a: list[float], b: list[float]) -> float:
    """Σ_r a[r] · b[r]."""
    total = 0.0
    for r in range(len(a)):
        total += a[r] * b[r]
    return total


def softmax_row(row: list[float]) -> list[float]:
    """softmax of one row; −inf entries get 0, an all −inf row is all 0.

    exp(s_j − m) / Σ_l exp(s_l − m) with m the largest finite entry (the same value as
    exp(s_j) / Σ exp(s_l), without overflow).
    """
    finite = [s for s in row if s != NEG_INF]
    if not finite:
        return [0.0] * len(row)
    m = max(finite)
    exps = [0.0 if s == NEG_INF else math.exp(s - m) for s in row]
    total = 0.0
    for e in exps:
        total += e
    return [e / total for e in exps]


def sdpa(q, k, v, *, mask=None, scale=None, temperature=1.0) -> dict[str, np.ndarray]:
    """softmax(q·kᵀ · scale / temperature, masked) · v, one query and one key at a time.

    ``scale=None`` means 1/sqrt(d_k). Returns every intermediate as a float64 array:
    scores, scaled, masked, weights (t_q, t_k) and output (t_q, d_v).
    """
    q, k, v = _rows(q), _rows(k), _rows(v)
    t_q, t_k, d_k, d_v = len(q), len(k), len(q[0]), len(v[0])
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    allowed = (np.ones((t_q, t_k), dtype=bool) if mask is None
               else np.broadcast_to(np.asarray(mask, dtype=bool), (t_q, t_k)))
    scores, scaled, masked, weights, output = [], [], [], [], []
    for i in range(t_q):
        s_row = [dot(q[i], k[j]) for j in range(t_k)]  # e_ij = q_i · k_j
        c_row = [s * scale / temperature for s in s_row]
        m_row = [c_row[j] if allowed[i][j] else NEG_INF for j in range(t_k)]
        w_row = softmax_row(m_row)
        o_row = []
        for c in range(d_v):  # output_i = Σ_j α_ij v_j
            total = 0.0
            for j in range(t_k):
                total += w_row[j] * v[j][c]
            o_row.append(total)
        scores.append(s_row)
        scaled.append(c_row)
        masked.append(m_row)
        weights.append(w_row)
        output.append(o_row)
    return {name: np.array(value, dtype=np.float64) for name, value in
            (("scores", scores), ("scaled", scaled), ("masked", masked), ("weights", weights),
             ("output", output))}


def causal(t_q: int, t_k: int) -> np.ndarray:
    """mask[i][j] = (j <= i), written out entry by entry."""
    return np.array([[j <= i for j in range(t_k)] for i in range(t_q)], dtype=bool)


def _and(a, b) -> np.ndarray:
    """Entry-wise logical and of two masks (either may be None = all True)."""
    if a is None:
        return b
    if b is None:
        return a
    return np.array([[bool(x and y) for x, y in zip(ra, rb, strict=True)]
                     for ra, rb in zip(a, b, strict=True)], dtype=bool)


def self_attention(x, w_q, w_k, w_v, *, mask=None, causal_: bool = False, scale=None,
                   temperature=1.0) -> dict[str, np.ndarray]:
    """Project q = x·w_q, k = x·w_k, v = x·w_v with loops, then :func:`sdpa`."""
    return cross_attention(x, x, w_q, w_k, w_v, mask=mask, causal_=causal_, scale=scale,
                           temperature=temperature)


def cross_attention(x_q, x_kv, w_q, w_k, w_v, *, mask=None, causal_: bool = False, scale=None,
                    temperature=1.0) -> dict[str, np.ndarray]:
    """Queries from x_q, keys and values from x_kv; returns q, k, v and every intermediate."""
    q = matmul(_rows(x_q), _rows(w_q))
    k = matmul(_rows(x_kv), _rows(w_k))
    v = matmul(_rows(x_kv), _rows(w_v))
    full = None
    if mask is not None:
        full = np.broadcast_to(np.asarray(mask, dtype=bool), (len(q), len(k)))
    if causal_:
        full = _and(full, causal(len(q), len(k)))
    out = sdpa(q, k, v, mask=full, scale=scale, temperature=temperature)
    out.update(q=np.array(q), k=np.array(k), v=np.array(v))
    return out


def multi_head(x_q, x_kv, w_q, w_k, w_v, w_o=None, *, n_heads: int, mask=None,
               causal_: bool = False, scale=None, temperature=1.0) -> dict[str, np.ndarray]:
    """Head h uses column block h of w_q, w_k (width d_k) and w_v (width d_v).

    Each head is computed by :func:`cross_attention` on its own column block of the weights
    (which is the same as splitting the full projections). Returns stacked per-head
    intermediates (n_heads, ...), ``concat`` (t_q, n_heads·d_v) and ``output`` (concat·w_o).
    """
    x_kv = x_q if x_kv is None else x_kv
    w_q, w_k, w_v = _rows(w_q), _rows(w_k), _rows(w_v)
    d_k = len(w_q[0]) // n_heads
    d_v = len(w_v[0]) // n_heads
    heads = []
    for h in range(n_heads):
        block_q = [row[h * d_k:(h + 1) * d_k] for row in w_q]
        block_k = [row[h * d_k:(h + 1) * d_k] for row in w_k]
        block_v = [row[h * d_v:(h + 1) * d_v] for row in w_v]
        heads.append(cross_attention(x_q, x_kv, block_q, block_k, block_v, mask=mask,
                                     causal_=causal_, scale=scale, temperature=temperature))
    t_q = len(heads[0]["output"])
    concat = []
    for i in range(t_q):  # [head_1 | head_2 | ...] side by side
        row = []
        for h in range(n_heads):
            row.extend(float(value) for value in heads[h]["output"][i])
        concat.append(row)
    output = concat if w_o is None else matmul(concat, _rows(w_o))
    result = {name: np.stack([head[name] for head in heads]) for name in
              ("q", "k", "v", "scores", "scaled", "masked", "weights", "output")}
    result["head_outputs"] = result.pop("output")
    result["concat"] = np.array(concat, dtype=np.float64)
    result["output"] = np.array(output, dtype=np.float64)
    return result


def additive(query, keys, values, w_q, w_k, v_a, *, bias=None, mask=None) -> dict[str, np.ndarray]:
    """Bahdanau: e_ij = Σ_a v_a[a] · tanh(Σ_r q_i[r] w_q[r][a] + Σ_r k_j[r] w_k[r][a] + b[a]).

    ``query`` may be one query (1-D) or several (2-D); for one query the query axis is
    dropped from every result, as in the package.
    """
    single = np.ndim(query) == 1
    queries = [_vector(query)] if single else _rows(query)
    keys, values = _rows(keys), _rows(values)
    w_q, w_k, v_a = _rows(w_q), _rows(w_k), _vector(v_a)
    d_a = len(v_a)
    bias = [0.0] * d_a if bias is None else _vector(bias)
    t_q, t_k, d_v = len(queries), len(keys), len(values[0])
    allowed = (np.ones((t_q, t_k), dtype=bool) if mask is None
               else np.broadcast_to(np.asarray(mask, dtype=bool), (t_q, t_k)))
    features, scores, masked, weights, output = [], [], [], [], []
    for i in range(t_q):
        f_rows, s_row = [], []
        for j in range(t_k):
            f = []
            for a in range(d_a):
                pre = bias[a]
                for r in range(len(queries[i])):
                    pre += queries[i][r] * w_q[r][a]
                for r in range(len(keys[j])):
                    pre += keys[j][r] * w_k[r][a]
                f.append(math.tanh(pre))
            f_rows.append(f)
            s_row.append(dot(f, v_a))
        m_row = [s_row[j] if allowed[i][j] else NEG_INF for j in range(t_k)]
        w_row = softmax_row(m_row)
        o_row = []
        for c in range(d_v):
            total = 0.0
            for j in range(t_k):
                total += w_row[j] * values[j][c]
            o_row.append(total)
        features.append(f_rows)
        scores.append(s_row)
        masked.append(m_row)
        weights.append(w_row)
        output.append(o_row)
    result = {name: np.array(value, dtype=np.float64) for name, value in
              (("features", features), ("scores", scores), ("masked", masked),
               ("weights", weights), ("output", output))}
    result["mask"] = np.array(allowed, dtype=bool)
    if single:
        result = {name: value[0] for name, value in result.items()}
    return result


def pooling(x, w, b=0.0) -> dict[str, np.ndarray]:
    """Seed 004's layer: e_t = tanh(x_t · w + b_t), α = softmax over t, output = Σ_t α_t x_t."""
    x, w = _rows(x), _vector(w)
    b = _vector(b)
    if len(b) == 1:
        b = b * len(x)
    scores = [math.tanh(dot(x[t], w) + b[t]) for t in range(len(x))]
    weights = softmax_row(scores)
    output = []
    for c in range(len(x[0])):
        total = 0.0
        for t in range(len(x)):
            total += weights[t] * x[t][c]
        output.append(total)
    return {"scores": np.array(scores), "weights": np.array(weights), "output": np.array(output)}


def mix_heads(head_outputs, head_weights) -> np.ndarray:
    """Σ_h w_h · head_h, entry by entry."""
    heads = np.asarray(head_outputs, dtype=np.float64)
    weights = _vector(head_weights)
    n_heads, t_q, d_v = heads.shape
    out = []
    for i in range(t_q):
        row = []
        for c in range(d_v):
            total = 0.0
            for h in range(n_heads):
                total += weights[h] * float(heads[h, i, c])
            row.append(total)
        out.append(row)
    return np.array(out, dtype=np.float64)


def positional_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE[t][2i] = sin(t / base^(2i/d)), PE[t][2i+1] = cos(t / base^(2i/d)), with math.sin/cos."""
    out = []
    for t in range(n_positions):
        row = []
        for col in range(d_model):
            i = col // 2
            angle = t / base ** (2 * i / d_model)
            row.append(math.sin(angle) if col % 2 == 0 else math.cos(angle))
        out.append(row)
    return np.array(out, dtype=np.float64)


# --- random inputs shared by the reference tests (tests/core) ----------------------------------

def random_mask(rng, t_q: int, t_k: int) -> np.ndarray:
    """A random boolean mask (True = may attend), half of the time with a fully masked query."""
    mask = rng.random((t_q, t_k)) < 0.7
    if rng.random() < 0.5:
        mask[rng.integers(t_q)] = False
    return mask


def random_multi_head_case(rng, n_heads: int, case: int, *, high: int) -> dict:
    """Random inputs of multi-head attention, sizes 1 ≤ n < ``high`` per head.

    Odd cases are cross-attention (``x_kv`` given), every third case has no W_O and every
    fourth no mask. Returns the arrays by their argument names (``x_q``, ``x_kv``, ``w_q``,
    ``w_k``, ``w_v``, ``w_o``, ``mask``) and the sizes ``t_q``, ``t_k``, ``d_k``, ``d_v``.
    """
    t_q, t_k, d_model, d_k, d_v, d_out = (int(n) for n in rng.integers(1, high, size=6))
    cross = case % 2 == 1
    x_q = rng.normal(size=(t_q, d_model))
    x_kv = rng.normal(size=(t_k, d_model)) if cross else None
    t_k = t_k if cross else t_q
    w_q, w_k, w_v = (rng.normal(size=(d_model, n_heads * d)) for d in (d_k, d_k, d_v))
    w_o = None if case % 3 == 0 else rng.normal(size=(n_heads * d_v, d_out))
    mask = None if case % 4 == 0 else random_mask(rng, t_q, t_k)
    return dict(x_q=x_q, x_kv=x_kv, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, mask=mask,
                t_q=t_q, t_k=t_k, d_k=d_k, d_v=d_v)


def central_differences(record, field: str, value, eps: float = 1e-6) -> np.ndarray:
    """∂value/∂field by central differences: ``value`` is a function of a dataclass ``record``
    (a scenario) returning a float; every entry of ``record.field`` is moved by ±``eps`` in a
    copy made with ``dataclasses.replace``."""
    import dataclasses

    base = np.asarray(getattr(record, field), dtype=np.float64)
    out = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[idx] += eps
        down[idx] -= eps
        out[idx] = (value(dataclasses.replace(record, **{field: up}))
                    - value(dataclasses.replace(record, **{field: down}))) / (2 * eps)
    return out
