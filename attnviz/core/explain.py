"""One query row of attention, every step recomputed with explicit arithmetic.

:func:`explain_row` takes a result the vectorised core computed and query ``i``, and recomputes
row i with scalar and vector operations — an independent path — keeping the core's own row
beside it (:class:`CoreRow`) so a view can show both and a test can check they agree.
:meth:`RowSteps.cell` gives the steps of one key j of that row.

Dot-product attention (Vaswani et al. 2017, https://arxiv.org/abs/1706.03762, §3.2):

    s_ij = q_i · k_j = Σ_m q_im k_jm        raw score (the products q_im k_jm are kept)
    s_ij · scale                             scale = 1/√d_k unless chosen otherwise
    s'_ij = s_ij · scale / τ                 temperature τ
    s''_ij = s'_ij if M_ij else −∞           mask (True = may attend)
    m_i = max_j s''_ij                       row maximum (none when every key is masked)
    e_ij = exp(s''_ij − m_i)                 stable exp; exp(−∞) = 0; m_i cancels below
    Z_i = Σ_j e_ij                           row sum
    α_ij = e_ij / Z_i                        all 0 when Z_i = 0 (a fully masked query)
    o_i = Σ_j α_ij v_j                       output row, one term α_ij v_j per key

Multi-head (§3.2.2): head h's row o_i^(h) is slice h·d_v … (h+1)·d_v − 1 of
concat_i = [o_i^(0), …, o_i^(H−1)], and the output row is concat_i W_O; key j of head h adds
(α_ij v_j) W_O[rows of head h] to it.

Additive attention (Bahdanau et al. 2014, https://arxiv.org/abs/1409.0473, §3.1): the score is
e_ij = v_a · f_ij with f_ij = tanh(a_i + b_j (+ bias)), a_i = x_i W_q, b_j = k_j W_k, in place
of the dot product; there is no scale and no temperature (both 1), the rest is the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import AttentionResult, MultiHeadResult
from attnviz.core.score_mods import At, ScoreMod, split_scale

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class CoreRow:
    """Row i as the vectorised core stored it (the numbers the heatmaps show).

    Attributes
    ----------
    scores, scaled, masked, weights : ndarray of shape (t_k,)
        For additive attention ``scaled`` is ``scores`` (no scale, no temperature).
    output : ndarray of shape (d_v,)
        This head's output row (additive: the context vector).
    features : ndarray of shape (t_k, d_a) or None
        Additive attention's tanh features.
    concat : ndarray of shape (n_heads·d_v,) or None
        Multi-head: row i of the concatenation.
    final_output : ndarray of shape (d_out,) or None
        Multi-head with W_O given: row i of concat @ W_O.
    """

    scores: Array
    scaled: Array
    masked: Array
    weights: Array
    output: Array
    features: Array | None = None
    concat: Array | None = None
    final_output: Array | None = None


@dataclass(frozen=True, eq=False)
class AdditiveInputs:
    """What additive attention was computed from (an :class:`AdditiveResult` keeps none of it).

    Attributes
    ----------
    queries : array_like of shape (t_q, d_q)
    keys : array_like of shape (t_k, d_key)
    values : array_like of shape (t_k, d_v)
    w_q : array_like of shape (d_q, d_a)
    w_k : array_like of shape (d_key, d_a)
    v_a : array_like of shape (d_a,)
    bias : array_like of shape (d_a,), optional
    """

    queries: ArrayLike
    keys: ArrayLike
    values: ArrayLike
    w_q: ArrayLike
    w_k: ArrayLike
    v_a: ArrayLike
    bias: ArrayLike | None = None


@dataclass(frozen=True, eq=False)
class ModStep:
    """One score modifier applied to a row: ``after = mod.forward(before, at)``.

    Attributes
    ----------
    mod : ScoreMod
    before, after : ndarray of shape (t_k,)
    at : At
        Where the row sits (its head and query index, every key).
    """

    mod: ScoreMod
    before: Array
    after: Array
    at: At


@dataclass(frozen=True, eq=False)
class RowSteps:
    """Every step of query row i, recomputed, with the core's row in ``core``.

    Attributes
    ----------
    kind : {"dot", "additive"}
    i : int
    head : int or None
        The head, for multi-head attention.
    n_heads : int
    q : ndarray of shape (d_k,) or None
        q_i (dot product).
    k : ndarray of shape (t_k, d_k) or None
        Every key k_j (dot product).
    x_q : ndarray of shape (d_q,) or None
        The query's input row (additive).
    a : ndarray of shape (d_a,) or None
        x_q W_q (additive).
    b : ndarray of shape (t_k, d_a) or None
        k_j W_k for every key (additive).
    features : ndarray of shape (t_k, d_a) or None
        f_ij = tanh(a_i + b_j (+ bias)) (additive).
    v_a : ndarray of shape (d_a,) or None
    products : ndarray of shape (t_k, d)
        q_im k_jm (dot) or v_a,m f_ijm (additive); each row sums to the score.
    scores : ndarray of shape (t_k,)
        s_ij (additive: e_ij).
    scale : float
    times_scale : ndarray of shape (t_k,)
        s_ij · scale.
    temperature : float
    scaled : ndarray of shape (t_k,)
        s'_ij = s_ij · scale / τ.
    mask : ndarray of bool, shape (t_k,)
        M_ij for this row.
    any_masked : bool
        Whether the result masks any pair at all (not only in this row).
    masked : ndarray of shape (t_k,)
        s''_ij (−inf where masked).
    row_max : float or None
        m_i; None when every key of the row is masked.
    shifted : ndarray of shape (t_k,)
        s''_ij − m_i (−inf where masked).
    exp : ndarray of shape (t_k,)
        e_ij = exp(s''_ij − m_i); 0 where masked.
    row_sum : float
        Z_i (0 for a fully masked row).
    weights : ndarray of shape (t_k,)
        α_ij.
    v : ndarray of shape (t_k, d_v)
    terms : ndarray of shape (t_k, d_v)
        α_ij v_j, one row per key.
    output : ndarray of shape (d_v,)
        o_i = Σ_j α_ij v_j (this head's output row; additive: the context c_i).
    concat : ndarray of shape (n_heads·d_v,) or None
        Multi-head: every head's recomputed output row, side by side.
    w_o_block : ndarray of shape (d_v, d_out) or None
        Multi-head with W_O: the rows of W_O that meet this head's slice of the concatenation.
    head_share : ndarray of shape (d_out,) or None
        o_i^(h) W_O[rows of head h]: this head's share of the output row.
    final_output : ndarray of shape (d_out,) or None
        concat_i W_O.
    sink_exp : float or None
        A learned sink logit s (attention sinks): its term exp(s − m_i) in the row sum Z_i,
        which m_i also covers; None without a sink.
    factor_scaled : ndarray of shape (t_k,) or None
        s_ij · scale / τ, before any later score modifier (``scaled`` is after all of them).
    mod_steps : tuple of ModStep
        Every score modifier after the scale (a bias, a cap, a variant's own), with this
        row's scores before and after it, in order.
    core : CoreRow
    """

    kind: str
    i: int
    head: int | None
    n_heads: int
    products: Array
    scores: Array
    scale: float
    times_scale: Array
    temperature: float
    scaled: Array
    mask: NDArray[np.bool_]
    any_masked: bool
    masked: Array
    row_max: float | None
    shifted: Array
    exp: Array
    row_sum: float
    weights: Array
    v: Array
    terms: Array
    output: Array
    core: CoreRow
    q: Array | None = None
    k: Array | None = None
    x_q: Array | None = None
    a: Array | None = None
    b: Array | None = None
    features: Array | None = None
    v_a: Array | None = None
    concat: Array | None = None
    w_o_block: Array | None = None
    head_share: Array | None = None
    final_output: Array | None = None
    sink_exp: float | None = None
    factor_scaled: Array | None = None
    mod_steps: tuple[ModStep, ...] = ()

    @property
    def t_k(self) -> int:
        """The number of keys."""
        return int(self.scores.shape[0])

    @property
    def d_k(self) -> int:
        """Width of the score's two factors (d_k for a dot product, d_a for additive)."""
        return int(self.products.shape[1])

    @property
    def fully_masked(self) -> bool:
        """True when query i may attend to no key."""
        return not bool(self.mask.any())

    def cell(self, j: int) -> CellSteps:
        """The steps of key ``j`` of this row."""
        j = int(j)
        if not 0 <= j < self.t_k:
            raise ValueError(f"key j must be between 0 and {self.t_k - 1}, got {j}")
        return _cell(self, j)

    def differences(self) -> dict[str, float]:
        """Largest difference between recomputed and core values, per quantity the core also
        stores: |ours − core| / max(1, |core|) (inf when a −∞ of one is finite in the other)."""
        pairs = {"scores": (self.scores, self.core.scores),
                 "scaled": (self.scaled, self.core.scaled),
                 "masked": (self.masked, self.core.masked),
                 "weights": (self.weights, self.core.weights),
                 "output": (self.output, self.core.output),
                 "features": (self.features, self.core.features),
                 "concat": (self.concat, self.core.concat),
                 "final_output": (self.final_output, self.core.final_output)}
        return {name: _largest_difference(ours, theirs)
                for name, (ours, theirs) in pairs.items()
                if ours is not None and theirs is not None}


@dataclass(frozen=True, eq=False)
class CellSteps:
    """The steps of one cell (i, j) of a :class:`RowSteps` (row-wide quantities — m_i, Z_i,
    o_i, the W_O path — are read from ``row``).

    Attributes
    ----------
    row : RowSteps
    i, j : int
    k_j : ndarray of shape (d_k,) or None
        Dot product only.
    features : ndarray of shape (d_a,) or None
        f_ij, additive only.
    products : ndarray of shape (d,)
        q_im k_jm (or v_a,m f_ijm), one per dimension m.
    score, times_scale, scaled, masked, exp : float
        s_ij, s_ij · scale, s'_ij, s''_ij (−inf when masked) and e_ij.
    allowed : bool
        M_ij.
    alpha, core_alpha : float
        α_ij recomputed, and as the vectorised core computed it.
    v_j, term : ndarray of shape (d_v,)
        v_j and α_ij v_j.
    through_w_o : ndarray of shape (d_out,) or None
        (α_ij v_j) W_O[rows of this head]: key j's share of the final output row.
    """

    row: RowSteps
    i: int
    j: int
    k_j: Array | None
    features: Array | None
    products: Array
    score: float
    times_scale: float
    scaled: float
    allowed: bool
    masked: float
    exp: float
    alpha: float
    core_alpha: float
    v_j: Array
    term: Array
    through_w_o: Array | None


def _cell(row: RowSteps, j: int) -> CellSteps:
    """Key j's entries of every per-key array of the row."""
    term = row.terms[j]
    return CellSteps(
        row=row, i=row.i, j=j, k_j=None if row.k is None else row.k[j],
        features=None if row.features is None else row.features[j],
        products=row.products[j], score=float(row.scores[j]),
        times_scale=float(row.times_scale[j]), scaled=float(row.scaled[j]),
        allowed=bool(row.mask[j]), masked=float(row.masked[j]), exp=float(row.exp[j]),
        alpha=float(row.weights[j]), core_alpha=float(row.core.weights[j]), v_j=row.v[j],
        term=term,
        through_w_o=None if row.w_o_block is None else _vector_times_matrix(term, row.w_o_block))


def explain_row(result: AttentionResult | MultiHeadResult | AdditiveResult, i: int, *,
                head: int | None = None, w_o: ArrayLike | None = None,
                additive: AdditiveInputs | None = None) -> RowSteps:
    """Every step of query row ``i`` of ``result``, recomputed, with the core's row beside it.

    Parameters
    ----------
    result : AttentionResult, MultiHeadResult or AdditiveResult
    i : int
        The query row.
    head : int, optional
        Which head of a MultiHeadResult (default 0).
    w_o : array_like of shape (n_heads·d_v, d_out), optional
        The output projection a MultiHeadResult was computed with, to follow the row through it.
    additive : AdditiveInputs
        Required for an AdditiveResult: the inputs it was computed from.

    Returns
    -------
    RowSteps
    """
    if isinstance(result, AdditiveResult):
        if additive is None:
            raise ValueError("an additive-attention result needs its inputs (AdditiveInputs) "
                             "to be explained")
        return _additive_row(result, i, additive)
    if isinstance(result, MultiHeadResult):
        return _multi_head_row(result, i, head, w_o)
    return _dot_row(result, _check_index("query i", i, result.weights.shape[0]))


# --- the score, one way per kind -------------------------------------------------------------

def _dot_row(part: AttentionResult, i: int) -> RowSteps:
    """Row i of one head of dot-product attention."""
    q_i = _f64(part.q[i])
    k = _f64(part.k)
    # 1) one product per dimension, then their sum (left to right, as Σ_m is written)
    products = q_i[None, :] * k  # (t_k, d_k)
    core = CoreRow(scores=_f64(part.scores[i]), scaled=_f64(part.scaled[i]),
                   masked=_f64(part.masked[i]), weights=_f64(part.weights[i]),
                   output=_f64(part.output[i]))
    chain = _chain(products, part.score_mods, At.row(part.head_index, i, k.shape[0]),
                   part.mask[i], _f64(part.v), sink=getattr(part, "sink_logit", None))
    return RowSteps(kind="dot", i=i, q=q_i, k=k, any_masked=not bool(np.all(part.mask)),
                    head=None, n_heads=1, core=core, **chain)


def _multi_head_row(result: MultiHeadResult, i: int, head: int | None,
                    w_o: ArrayLike | None) -> RowSteps:
    """Row i of one head, then every head's row concatenated and (with W_O) projected."""
    head = _check_index("head", 0 if head is None else head, result.n_heads)
    i = _check_index("query i", i, result.weights.shape[1])
    rows = [_dot_row(result.heads[h], i) for h in range(result.n_heads)]
    # 1) the heads' output rows side by side
    concat = np.concatenate([r.output for r in rows])  # (n_heads·d_v,)
    extra = dict(head=head, n_heads=result.n_heads, concat=concat)
    core = rows[head].core
    core_concat = _f64(result.concat[i])
    if w_o is None:
        core = replace(core, concat=core_concat)
    else:
        w_o = _f64(w_o)
        if w_o.shape[0] != concat.shape[0]:
            raise ValueError(f"w_o must have n_heads·d_v = {concat.shape[0]} rows, got shape "
                             f"{w_o.shape}")
        # 2) this head's rows of W_O, 3) the output row concat_i W_O
        d_v = rows[head].output.shape[0]
        block = w_o[head * d_v:(head + 1) * d_v]  # (d_v, d_out)
        extra.update(w_o_block=block,
                     head_share=_vector_times_matrix(rows[head].output, block),
                     final_output=_vector_times_matrix(concat, w_o))
        core = replace(core, concat=core_concat, final_output=_f64(result.output[i]))
    return replace(rows[head], **extra, core=core)


def _additive_row(result: AdditiveResult, i: int, inputs: AdditiveInputs) -> RowSteps:
    """Row i of additive attention: e_ij = v_a · tanh(x_i W_q + k_j W_k (+ bias))."""
    weights = np.atleast_2d(result.weights)
    i = _check_index("query i", i, weights.shape[0])
    x_q = _f64(np.atleast_2d(inputs.queries)[i])
    keys, values = _f64(inputs.keys), _f64(inputs.values)
    w_q, w_k, v_a = _f64(inputs.w_q), _f64(inputs.w_k), _f64(inputs.v_a)
    # 1) project the query and every key into the alignment space
    a = _vector_times_matrix(x_q, w_q)  # (d_a,)
    b = np.stack([_vector_times_matrix(key, w_k) for key in keys])  # (t_k, d_a)
    hidden = a[None, :] + b
    if inputs.bias is not None:
        hidden = hidden + _f64(inputs.bias)
    # 2) features, 3) one product per alignment dimension
    features = np.tanh(hidden)  # (t_k, d_a)
    products = v_a[None, :] * features
    stored = result.features if result.features.ndim == 3 else result.features[None]
    scores = _f64(np.atleast_2d(result.scores)[i])
    core = CoreRow(scores=scores, scaled=scores, masked=_f64(np.atleast_2d(result.masked)[i]),
                   weights=_f64(weights[i]), output=_f64(np.atleast_2d(result.output)[i]),
                   features=_f64(stored[i]))
    mask = np.atleast_2d(result.mask)
    chain = _chain(products, (), At.row(0, i, products.shape[0]), mask[i], values)
    return RowSteps(kind="additive", i=i, head=None, n_heads=1, x_q=x_q, a=a, b=b,
                    features=features, v_a=v_a, any_masked=not bool(np.all(mask)), core=core,
                    **chain)


# --- the common chain: scale, temperature, mask, softmax, values -------------------------------

def _chain(products: Array, mods: tuple[ScoreMod, ...], at: At,
           mask_row: NDArray[np.bool_], v: Array, *, sink: float | None = None) -> dict:
    """Every step after the products, for one row (the fields RowSteps shares across kinds):
    the result's score modifiers in its order (the scale first; none for additive scores),
    the mask, the softmax (``sink``: a learned sink logit that joins it, its exp in the row
    sum) and the values."""
    t_k, d = products.shape
    # 1) score: Σ_m of the products, in order
    scores = np.zeros(t_k)
    for m in range(d):
        scores = scores + products[:, m]
    # 2) scale and temperature (one factor, as the core applies it: the same bits), then
    #    every later modifier of the scores
    first, rest = split_scale(mods)
    scale, temperature = float(first.scale), float(first.temperature)
    times_scale = scores * scale
    factor_scaled = first.forward(scores, at)
    mod_steps, scaled = [], factor_scaled
    for mod in rest:
        after = mod.forward(scaled, at)
        mod_steps.append(ModStep(mod, scaled, after, at))
        scaled = after
    # 3) mask
    mask = np.array(mask_row, dtype=bool)
    masked = np.where(mask, scaled, -math.inf)
    # 4) row maximum, exp of the shifted scores, row sum (exactly rounded), weights
    row_max = float(np.max(scaled[mask])) if mask.any() else None
    if sink is not None:
        row_max = float(sink) if row_max is None else max(row_max, float(sink))
    shifted = masked - (row_max if row_max is not None else 0.0)
    exp = np.zeros(t_k)
    exp[mask] = np.exp(shifted[mask])
    sink_exp = None if sink is None else math.exp(float(sink) - row_max)
    row_sum = math.fsum([*exp, *([sink_exp] if sink_exp is not None else [])])
    weights = exp / row_sum if row_sum > 0 else np.zeros(t_k)
    # 5) the values, weighted, and their sum
    terms = weights[:, None] * v  # (t_k, d_v)
    output = terms.sum(axis=0)
    return dict(products=products, scores=scores, scale=scale, times_scale=times_scale,
                temperature=temperature, scaled=scaled, mask=mask, masked=masked,
                row_max=row_max, shifted=shifted, exp=exp, row_sum=row_sum, weights=weights,
                v=v, terms=terms, output=output, sink_exp=sink_exp,
                factor_scaled=factor_scaled, mod_steps=tuple(mod_steps))


def _vector_times_matrix(vec: Array, matrix: Array) -> Array:
    """vec @ matrix as Σ_r vec_r · matrix[r], one row of the matrix at a time."""
    out = np.zeros(matrix.shape[1])
    for x, row in zip(vec, matrix, strict=True):
        out = out + x * row
    return out


def _largest_difference(ours: Array, theirs: Array) -> float:
    """max |ours − theirs| / max(1, |theirs|) over finite entries; inf when their −inf/finite
    patterns differ."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    finite = np.isfinite(ours)
    if not np.array_equal(finite, np.isfinite(theirs)) or \
            not np.array_equal(ours[~finite], theirs[~finite]):
        return math.inf
    gap = np.abs(ours[finite] - theirs[finite]) / np.maximum(1.0, np.abs(theirs[finite]))
    return float(np.max(gap, initial=0.0))


def _check_index(name: str, value: int, n: int) -> int:
    value = int(value)
    if not 0 <= value < n:
        raise ValueError(f"{name} must be between 0 and {n - 1}, got {value}")
    return value


def _f64(a: ArrayLike) -> Array:
    return np.array(a, dtype=np.float64)
