"""The pitfalls gallery: bugs that real attention tutorials ship, each beside the right result.

Every pitfall runs two code paths on the same inputs:

* a **wrong** function (name starting ``wrong_``) that reproduces the bug as the seed notebook
  (or the usual mistake) writes it — it is executed, never hard-coded, and its numpy warnings
  (overflow, 0/0) are silenced locally because producing inf and NaN is its point;
* the **right** computation, through the attnviz core wherever the core computes it.

:data:`PITFALLS` maps a key to a builder returning a :class:`PitfallCase` (inputs, wrong and
right panels, and the two functions so a page can show their source). Titles, symptoms and
explanations live in :data:`attnviz.teach.text.PITFALLS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import scipy.special
from numpy.typing import NDArray

from attnviz.core.alibi import alibi_slopes
from attnviz.core.attention import scaled_dot_product_attention, softmax
from attnviz.core.backward import attention_backward
from attnviz.core.initializers import init_weights
from attnviz.core.masks import causal_mask
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.core.rope import apply_rope
from attnviz.scenarios.presets import SLEEPY_EMBEDDINGS, SLEEPY_TOKENS

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Panel:
    """One matrix of a pitfall, drawn as a heatmap.

    Attributes
    ----------
    name : str
        What the matrix is ("weights", "output", "row sums", ...).
    z : ndarray of shape (rows, cols)
        May hold NaN or ±inf on the wrong side: that is the symptom.
    x_labels, y_labels : tuple of str
    kind : str or None
        Heatmap colour convention ("weights", "signed", "sequential", "mask"); None = automatic.
    """

    name: str
    z: Array
    x_labels: tuple[str, ...]
    y_labels: tuple[str, ...]
    kind: str | None = None


@dataclass(frozen=True, eq=False)
class PitfallCase:
    """The inputs, the wrong and the right panels of one pitfall.

    Attributes
    ----------
    key : str
    inputs : tuple of Panel
        Shared by both sides.
    wrong, right : tuple of Panel
        The same names in the same order on both sides.
    wrong_function, right_function : callable
        The code that produced each side (a page shows their source).
    """

    key: str
    inputs: tuple[Panel, ...]
    wrong: tuple[Panel, ...]
    right: tuple[Panel, ...]
    wrong_function: Callable
    right_function: Callable

    def panel(self, side: str, name: str) -> Panel:
        """The panel called ``name`` on ``side`` ("inputs", "wrong" or "right")."""
        for p in getattr(self, side):
            if p.name == name:
                return p
        raise KeyError(f"no panel {name!r} on the {side} side of {self.key}")


def _labels(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(n))


def _tokens(tokens) -> tuple[str, ...]:
    return tuple(f"{i}:{t}" for i, t in enumerate(tokens))


def _row_sums(weights: Array) -> Array:
    """Σ_j α_ij of every query, as one row (1, t_q) so it draws as a strip under the weights."""
    return weights.sum(axis=-1)[None, :]  # (1, t_q)


# --------------------------------------------------------------------------------------------
# 1) softmax over the queries (seed 001)
# --------------------------------------------------------------------------------------------

SEED001_Q = np.array([[1.0, 0, 0], [0, 1, 0]])
SEED001_K = np.array([[1.0, 2, 3], [4, 5, 6]])
SEED001_V = np.array([[0.0, 1, 0], [1, 0, 1]])


def wrong_seed001_attention(query: Array, key: Array, value: Array) -> tuple[Array, Array]:
    """WRONG — seed 001's ``dot_product_self_attention`` as the notebook runs it.

    The mask is built with a leading batch axis, shape (1, t, t); ``np.where`` broadcasts the
    2-D scores to (1, t, t), so ``axis=1`` of the logsumexp is now the *queries* axis.
    """
    mask_size = query.shape[-2]
    mask = np.tril(np.ones((1, mask_size, mask_size), dtype=np.bool_), k=0)  # (1, t, t)
    depth = query.shape[-1]
    dots = np.matmul(query, np.swapaxes(key, -1, -2)) / np.sqrt(depth)
    dots = np.where(mask, dots, np.full_like(dots, -1e9))  # (1, t, t): a batch axis appeared
    logsumexp = scipy.special.logsumexp(dots, axis=1, keepdims=True)  # over the queries!
    dots = np.exp(dots - logsumexp)
    attention = np.matmul(dots, value)
    return dots[0], attention[0]


def right_causal_attention(query: Array, key: Array, value: Array) -> tuple[Array, Array]:
    """RIGHT — attnviz's scaled dot-product attention with the causal mask (softmax over keys)."""
    res = scaled_dot_product_attention(query, key, value,
                                       mask=causal_mask(query.shape[0], key.shape[0]))
    return np.array(res.weights), np.array(res.output)


def softmax_over_queries() -> PitfallCase:
    """Seed 001's causal example: the printed [[0, 0.3595, 0], [1, 0.6405, 1]] vs the right one."""
    q, k, v = SEED001_Q, SEED001_K, SEED001_V
    w_wrong, out_wrong = wrong_seed001_attention(q, k, v)
    w_right, out_right = right_causal_attention(q, k, v)
    ql, kl = _labels("q", 2), _labels("k", 2)
    dims = _labels("d", 3)
    inputs = (Panel("Q", q, dims, ql), Panel("K", k, dims, kl), Panel("V", v, dims, kl),
              Panel("mask", causal_mask(2).astype(float), kl, ql, "mask"))

    def side(w, out):
        return (Panel("weights", w, kl, ql, "weights"), Panel("output", out, dims, ql))

    return PitfallCase("softmax_over_queries", inputs, side(w_wrong, out_wrong),
                       side(w_right, out_right), wrong_seed001_attention,
                       right_causal_attention)


# --------------------------------------------------------------------------------------------
# 2) softmax over an axis of length one (seed 004, Keras)
# --------------------------------------------------------------------------------------------

POOL_W = np.array([[0.5], [-0.3], [0.8]])  # (d, 1): one scoring neuron


def wrong_keras_softmax_length_one(x: Array, w: Array, b: Array) -> tuple[Array, Array]:
    """WRONG — seed 004's "in one catch" cell: ``K.softmax(score)`` on a (t, 1) score.

    ``K.softmax`` normalises over the last axis, which has length one: every weight is
    exp(s)/exp(s) = 1 and the "context" is the plain sum of the values.
    """
    score = np.tanh(x @ w + b)  # (t, 1)
    e = np.exp(score - score.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)  # K.softmax: the last axis (length 1)
    context = np.sum(x * weights, axis=0)  # (d,)
    return weights, context


def right_softmax_over_time(x: Array, w: Array, b: Array) -> tuple[Array, Array]:
    """RIGHT — squeeze the score to (t,) and normalise over time (the tokens)."""
    score = np.tanh(x @ w + b)[:, 0]  # (t,)
    weights = softmax(score, axis=0)[:, None]  # (t, 1)
    context = np.sum(x * weights, axis=0)
    return weights, context


def softmax_length_one() -> PitfallCase:
    """Attention pooling over the sleepy-child embeddings, normalised over the wrong axis."""
    x = SLEEPY_EMBEDDINGS.astype(float)
    b = np.zeros((x.shape[0], 1))
    tl, dims = _tokens(SLEEPY_TOKENS), _labels("d", 3)
    inputs = (Panel("X (values)", x, dims, tl), Panel("w (score neuron)", POOL_W.T, _labels(
        "d", 3), ("w",)))

    def side(weights, context):
        return (Panel("weights", weights.T, tl, ("α",), "weights"),
                Panel("context", context[None, :], dims, ("c",)))

    return PitfallCase("softmax_length_one", inputs,
                       side(*wrong_keras_softmax_length_one(x, POOL_W, b)),
                       side(*right_softmax_over_time(x, POOL_W, b)),
                       wrong_keras_softmax_length_one, right_softmax_over_time)


# --------------------------------------------------------------------------------------------
# 3) a hand-written softmax whose sum broadcasts along the wrong axis (seed 004)
# --------------------------------------------------------------------------------------------

FOUR_WORDS = np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])  # seed 000's words
FOUR_TOKENS = ("word_1", "word_2", "word_3", "word_4")


def four_words_scaled_scores() -> Array:
    """Seed 000's scaled scores: x W_Q (x W_K)ᵀ / √3 with the notebook's randint(3) weights."""
    w_q, w_k, _ = init_weights("randint", [(3, 3)] * 3, seed=42)
    q, k = FOUR_WORDS @ w_q, FOUR_WORDS @ w_k
    return q @ k.T / np.sqrt(3.0)


def wrong_seed004_softmax(x: Array, axis: int = 1) -> Array:
    """WRONG — seed 004's ``softmax``: ``np.exp(x) / np.sum(np.exp(x), axis=axis)``.

    Without ``keepdims`` the (t,) row sums broadcast along the last axis: entry (i, j) is
    divided by the sum of row *j*, not row i.
    """
    return np.exp(x) / np.sum(np.exp(x), axis=axis)


def right_softmax(x: Array, axis: int = 1) -> Array:
    """RIGHT — attnviz's stable softmax (``keepdims=True``: row i divided by its own sum)."""
    return softmax(x, axis=axis)


def sum_broadcast() -> PitfallCase:
    """Seed 000's scaled scores normalised by seed 004's broadcasting softmax."""
    s = four_words_scaled_scores()
    tl = _tokens(FOUR_TOKENS)
    inputs = (Panel("scaled scores", s, tl, tl),)

    def side(w):
        return (Panel("weights", w, tl, tl, "weights"),
                Panel("row sums", _row_sums(w), tl, ("Σ_j α_ij",), "sequential"))

    return PitfallCase("sum_broadcast", inputs, side(wrong_seed004_softmax(s)),
                       side(right_softmax(s)), wrong_seed004_softmax, right_softmax)


# --------------------------------------------------------------------------------------------
# 4) scaling by √(sequence length) instead of √d_k (seed 004)
# --------------------------------------------------------------------------------------------

def wrong_seed004_batched_tensor_dot(q: Array, k: Array) -> Array:
    """WRONG — seed 004's ``batched_tensor_dot``: divides by ``sqrt(q.shape[0])``.

    ``q.shape[0]`` is the number of tokens t, not the width d_k. (Its softmax is replaced by a
    correct one here so that only the scale is wrong.)
    """
    a = np.einsum("ij,kj->ik", q, k) / np.sqrt(q.shape[0])  # √t, should be √d_k
    return softmax(a, axis=1)


def right_scaled_weights(q: Array, k: Array) -> Array:
    """RIGHT — attnviz's scaled dot-product attention: divide by √d_k = √(q.shape[1])."""
    return np.array(scaled_dot_product_attention(q, k, k).weights)


def scale_by_length() -> PitfallCase:
    """Seed 004's self-attention on the sleepy child (q = k = v = x, t = 6, d_k = 3)."""
    x = SLEEPY_EMBEDDINGS.astype(float)
    tl, dims = _tokens(SLEEPY_TOKENS), _labels("d", 3)
    inputs = (Panel("X (= Q = K = V)", x, dims, tl),)

    def side(w):
        return (Panel("weights", w, tl, tl, "weights"), Panel("output", w @ x, dims, tl))

    return PitfallCase("scale_by_length", inputs, side(wrong_seed004_batched_tensor_dot(x, x)),
                       side(right_scaled_weights(x, x)), wrong_seed004_batched_tensor_dot,
                       right_scaled_weights)


# --------------------------------------------------------------------------------------------
# 5) naive exp overflowing for large scores
# --------------------------------------------------------------------------------------------

LARGE_SCORES = np.array([[1.0, 2, 3], [700, 710, 705], [800, 805, 790]])


def wrong_naive_softmax(scores: Array) -> Array:
    """WRONG — the textbook formula exp(s) / Σ exp(s) without subtracting the row maximum.

    exp(710) overflows float64 to inf, and inf / inf = NaN.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(scores)
        return e / e.sum(axis=-1, keepdims=True)


def right_stable_softmax(scores: Array) -> Array:
    """RIGHT — attnviz's softmax: exp(s − max s) / Σ exp(s − max s), mathematically equal."""
    return softmax(scores, axis=-1)


def naive_overflow() -> PitfallCase:
    """Three rows of scaled scores: small, partly overflowing, fully overflowing."""
    s = LARGE_SCORES
    ql, kl = _labels("q", 3), _labels("k", 3)
    inputs = (Panel("scaled scores", s, kl, ql),)

    def side(w):
        return (Panel("weights", w, kl, ql, "weights"),
                Panel("row sums", _row_sums(w), ql, ("Σ_j α_ij",), "sequential"))

    return PitfallCase("naive_overflow", inputs, side(wrong_naive_softmax(s)),
                       side(right_stable_softmax(s)), wrong_naive_softmax,
                       right_stable_softmax)


# --------------------------------------------------------------------------------------------
# 6) the mask applied after the softmax
# --------------------------------------------------------------------------------------------

def wrong_mask_after_softmax(scaled: Array, mask: NDArray[np.bool_]) -> Array:
    """WRONG — normalise first, then zero the forbidden weights: rows no longer sum to 1."""
    weights = softmax(scaled, axis=-1)
    return np.where(mask, weights, 0.0)


def right_mask_before_softmax(scaled: Array, mask: NDArray[np.bool_]) -> Array:
    """RIGHT — forbidden scores become −inf *before* the softmax, so the rest renormalise."""
    return softmax(np.where(mask, scaled, -np.inf), axis=-1)


def mask_after_softmax() -> PitfallCase:
    """Seed 000's scaled scores with a causal mask."""
    s = four_words_scaled_scores()
    mask = causal_mask(4)
    tl = _tokens(FOUR_TOKENS)
    inputs = (Panel("scaled scores", s, tl, tl), Panel("mask", mask.astype(float), tl, tl,
                                                       "mask"))

    def side(w):
        return (Panel("weights", w, tl, tl, "weights"),
                Panel("row sums", _row_sums(w), tl, ("Σ_j α_ij",), "sequential"))

    return PitfallCase("mask_after_softmax", inputs, side(wrong_mask_after_softmax(s, mask)),
                       side(right_mask_before_softmax(s, mask)), wrong_mask_after_softmax,
                       right_mask_before_softmax)


# --------------------------------------------------------------------------------------------
# 7) −1e9 instead of −∞, and a fully masked row
# --------------------------------------------------------------------------------------------

PADDED_TOKENS = ("<pad>", "the", "cat")
PADDED_SCORES = np.array([[2.0, 1, 0], [1, 3, 0.5], [0, 2, 1]])
PADDED_VALUES = np.array([[1.0, 0], [0, 1], [1, 1]])


def padded_causal_mask() -> NDArray[np.bool_]:
    """Causal and key padding (key 0 is padding): query 0 may attend to nothing."""
    not_pad = np.array([False, True, True])
    return causal_mask(3) & not_pad[None, :]


def wrong_minus_1e9(scaled: Array, mask: NDArray[np.bool_], v: Array) -> tuple[Array, Array]:
    """WRONG — fill forbidden scores with −1e9 (seed 001 does): a fully masked row becomes a row
    of equal scores, so the softmax spreads it uniformly over keys it must not see."""
    weights = softmax(np.where(mask, scaled, -1e9), axis=-1)
    return weights, weights @ v


def right_minus_inf(scaled: Array, mask: NDArray[np.bool_], v: Array) -> tuple[Array, Array]:
    """RIGHT — attnviz's rule: −∞ for forbidden scores; a fully masked row gets zero weights and
    a zero output (a naive softmax would give 0/0 = NaN)."""
    weights = softmax(np.where(mask, scaled, -np.inf), axis=-1)
    return weights, weights @ v


def fully_masked_row() -> PitfallCase:
    """Left padding with a causal mask: the padding query has no key it may attend to."""
    s, mask, v = PADDED_SCORES, padded_causal_mask(), PADDED_VALUES
    tl, dims = _tokens(PADDED_TOKENS), _labels("d", 2)
    inputs = (Panel("scaled scores", s, tl, tl), Panel("mask", mask.astype(float), tl, tl,
                                                       "mask"),
              Panel("V", v, dims, tl))

    def side(w, out):
        return (Panel("weights", w, tl, tl, "weights"), Panel("output", out, dims, tl))

    return PitfallCase("fully_masked_row", inputs, side(*wrong_minus_1e9(s, mask, v)),
                       side(*right_minus_inf(s, mask, v)), wrong_minus_1e9, right_minus_inf)


# --------------------------------------------------------------------------------------------
# 8) the typo'd positional-encoding base (seed 002)
# --------------------------------------------------------------------------------------------

PE_POSITIONS = 16
PE_D_MODEL = 8


def wrong_seed002_positional_encoding(n_positions: int, d_model: int) -> Array:
    """WRONG — seed 002's formula as printed: w_k = 1 / 1000^(2k/d) (the paper has 10000)."""
    t = np.arange(n_positions, dtype=float)[:, None]  # (t, 1)
    k = np.arange(d_model) // 2
    w = 1.0 / 1000.0 ** (2.0 * k / d_model)  # 1000: the typo
    return np.where(np.arange(d_model) % 2 == 0, np.sin(w * t), np.cos(w * t))


def right_positional_encoding(n_positions: int, d_model: int) -> Array:
    """RIGHT — attnviz's sinusoidal encoding with the paper's base 10000."""
    return sinusoidal_positional_encoding(n_positions, d_model)


def pe_base_typo() -> PitfallCase:
    """16 positions, d_model = 8: the PE matrix and the position similarity PE·PEᵀ."""
    n, d = PE_POSITIONS, PE_D_MODEL
    pl, dims = _labels("t", n), _labels("d", d)

    def side(pe):
        return (Panel("PE", pe, dims, pl, "signed"),
                Panel("similarity PE·PEᵀ", pe @ pe.T, pl, pl, "signed"))

    return PitfallCase("pe_base_typo", (), side(wrong_seed002_positional_encoding(n, d)),
                       side(right_positional_encoding(n, d)),
                       wrong_seed002_positional_encoding, right_positional_encoding)


# --------------------------------------------------------------------------------------------
# 9) seed 001's example mask: the wrong triangle
# --------------------------------------------------------------------------------------------

SEED001_MARKDOWN_MASK = np.array([[0.0, 0.0], [-1e9, 0.0]])  # the notebook's additive mask


def wrong_seed001_triangle(query: Array, key: Array, value: Array) -> tuple[Array, Array]:
    """WRONG — seed 001's markdown example mask added to the scaled scores: it blocks query 1
    from key 0 (its past) and lets query 0 see key 1 (its future)."""
    dots = query @ key.T / np.sqrt(query.shape[-1]) + SEED001_MARKDOWN_MASK
    weights = softmax(dots, axis=-1)
    return weights, weights @ value


def seed001_wrong_triangle() -> PitfallCase:
    """Seed 001's q, k, v with the notebook's example mask and with the causal mask."""
    q, k, v = SEED001_Q, SEED001_K, SEED001_V
    ql, kl = _labels("q", 2), _labels("k", 2)
    inputs = (Panel("notebook mask (added)", SEED001_MARKDOWN_MASK, kl, ql, "signed"),
              Panel("causal mask", causal_mask(2).astype(float), kl, ql, "mask"))

    def side(result):
        w, out = result
        return (Panel("weights", w, kl, ql, "weights"),
                Panel("output", out, _labels("o", 3), ql, "sequential"))

    return PitfallCase("seed001_wrong_triangle", inputs, side(wrong_seed001_triangle(q, k, v)),
                       side(right_causal_attention(q, k, v)), wrong_seed001_triangle,
                       right_causal_attention)


# --------------------------------------------------------------------------------------------
# 10) seed 004's "in one catch" pooling: the tanh dropped
# --------------------------------------------------------------------------------------------

def wrong_seed004_no_tanh(x: Array, w: Array, b: Array) -> tuple[Array, Array]:
    """WRONG — seed 004's "in one catch" cell: score = x·w + b, no tanh, then the softmax."""
    e = (x @ w)[:, 0] + b
    alpha = softmax(e, axis=0)
    return alpha[None, :], (alpha @ x)[None, :]


def right_seed004_pooling(x: Array, w: Array, b: Array) -> tuple[Array, Array]:
    """RIGHT — the pooling its step-by-step cells build: e = tanh(x·w + b), softmax over time."""
    e = np.tanh((x @ w)[:, 0] + b)
    alpha = softmax(e, axis=0)
    return alpha[None, :], (alpha @ x)[None, :]


def seed004_dropped_tanh() -> PitfallCase:
    """The sleepy-child embeddings pooled with and without the tanh."""
    x = np.asarray(SLEEPY_EMBEDDINGS, dtype=float)
    w, b = POOL_W * 3, np.zeros(x.shape[0])  # larger scores: the tanh visibly bounds them
    tl = _tokens(SLEEPY_TOKENS)
    inputs = (Panel("embeddings x", x, _labels("d", x.shape[1]), tl),
              Panel("scoring weights w", w.T, _labels("d", x.shape[1]), ("w",)))

    def side(result):
        alpha, context = result
        return (Panel("weights", alpha, tl, ("α",), "weights"),
                Panel("context", context, _labels("d", x.shape[1]), ("c",)))

    return PitfallCase("seed004_dropped_tanh", inputs, side(wrong_seed004_no_tanh(x, w, b)),
                       side(right_seed004_pooling(x, w, b)), wrong_seed004_no_tanh,
                       right_seed004_pooling)


# --------------------------------------------------------------------------------------------
# 11) seed 003's Glorot limit for W_V computed with d_K
# --------------------------------------------------------------------------------------------

GLOROT_D_L, GLOROT_D_K, GLOROT_D_V = 4, 1, 16  # sizes where the two limits differ clearly


def wrong_seed003_limit(d_l: int, d_k: int, d_v: int) -> Array:
    """WRONG — seed 003's ``limit = np.sqrt(6 / (d_K + d_L))`` reused for W_V (d_L × d_V)."""
    limit = np.sqrt(6 / (d_k + d_l))
    return np.array([[limit, np.sqrt(6 / (d_l + d_v))]])


def right_seed003_limit(d_l: int, d_k: int, d_v: int) -> Array:
    """RIGHT — Glorot's limit from W_V's own fan-in and fan-out: √(6 / (d_L + d_V))."""
    limit = np.sqrt(6 / (d_l + d_v))
    return np.array([[limit, limit]])


def seed003_glorot_limit() -> PitfallCase:
    """The limit W_V is drawn with, beside the one its shape asks for, and the variance of a
    unit input after W_V (Glorot: about 2 / (fan_in + fan_out) · fan_in)."""
    sizes = (GLOROT_D_L, GLOROT_D_K, GLOROT_D_V)
    cols = ("limit used", "limit for W_V's shape")
    inputs = (Panel("sizes", np.array([sizes], dtype=float), ("d_L", "d_K", "d_V"), ("",)),)

    def side(limits):
        used = float(limits[0, 0])
        # variance of x·W_V for unit-variance x: d_L · limit² / 3 (uniform on ±limit)
        spread = np.array([[GLOROT_D_L * used**2 / 3]])
        return (Panel("limits", limits, cols, ("W_V",), "sequential"),
                Panel("variance of x·W_V", spread, ("var",), ("",), "sequential"))

    return PitfallCase("seed003_glorot_limit", inputs, side(wrong_seed003_limit(*sizes)),
                       side(right_seed003_limit(*sizes)), wrong_seed003_limit,
                       right_seed003_limit)


# --------------------------------------------------------------------------------------------
# 12) no 1/√d_k: the softmax saturates and its gradients vanish
# --------------------------------------------------------------------------------------------

GRADIENT_D_K = 256  # wide enough that unscaled scores (std √256 = 16) saturate the softmax


def _weights_and_d_scaled(q: Array, k: Array, v: Array, d_out: Array, scale) -> tuple[Array,
                                                                                       Array]:
    """The weights and dS̃ (the softmax input's gradient) for dO = ``d_out``."""
    result = scaled_dot_product_attention(q, k, v, scale=scale)
    return np.array(result.weights), np.array(attention_backward(result, d_out).d_scaled[0])


def wrong_unscaled_gradients(q: Array, k: Array, v: Array, d_out: Array) -> tuple[Array, Array]:
    """WRONG — softmax(q kᵀ) v without dividing by √d_k (scale 1): with d_k = 256 the scores
    have a standard deviation of 16, each row puts almost all its weight on one key, and
    dS̃ = P ∘ (dP − rowsum(P ∘ dP)) is almost 0 — W_Q and W_K would stop learning."""
    return _weights_and_d_scaled(q, k, v, d_out, 1.0)


def right_scaled_gradients(q: Array, k: Array, v: Array, d_out: Array) -> tuple[Array, Array]:
    """RIGHT — scaled by 1/√d_k: the scores have a standard deviation of about 1 and the
    gradient reaches the scores."""
    return _weights_and_d_scaled(q, k, v, d_out, None)


def gradients_vanish() -> PitfallCase:
    """Random q, k (5 tokens, d_k = 256), v and an upstream gradient dO (seed 0)."""
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(5, GRADIENT_D_K)), rng.normal(size=(5, GRADIENT_D_K))
    v, d_out = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    tl = _labels("t", 5)
    inputs = (Panel("scores S = q kᵀ", q @ k.T, tl, tl, "signed"),
              Panel("upstream dO", d_out, _labels("d", 4), tl, "signed"))

    def side(pair):
        w, ds = pair
        return (Panel("weights", w, tl, tl, "weights"), Panel("dS̃ (gradient)", ds, tl, tl,
                                                              "signed"))

    return PitfallCase("gradients_vanish", inputs, side(wrong_unscaled_gradients(q, k, v, d_out)),
                       side(right_scaled_gradients(q, k, v, d_out)), wrong_unscaled_gradients,
                       right_scaled_gradients)


# --------------------------------------------------------------------------------------------
# 13) GQA heads grouped with tile (repeat) instead of repeat_interleave
# --------------------------------------------------------------------------------------------


def _gqa_weights(q_h: Array, k_h: Array, kv_of_head) -> Array:
    """Every query head's weights with its key head ``kv_of_head[h]`` (scale 1/√d_k)."""
    return np.stack([np.array(scaled_dot_product_attention(q_h[h], k_h[g], k_h[g]).weights)
                     for h, g in enumerate(kv_of_head)])


def wrong_gqa_tile(q_h: Array, k_h: Array) -> tuple[Array, Array]:
    """WRONG — ``np.tile`` (torch ``repeat``) copies the key/value heads as a block: query head
    h gets key head h mod n_kv, so heads that should share a key head do not."""
    n, n_kv = q_h.shape[0], k_h.shape[0]
    kv_of_head = np.tile(np.arange(n_kv), n // n_kv)
    return np.eye(n_kv)[kv_of_head], _gqa_weights(q_h, k_h, kv_of_head)


def right_gqa_interleave(q_h: Array, k_h: Array) -> tuple[Array, Array]:
    """RIGHT — ``np.repeat`` (torch ``repeat_interleave``, Hugging Face ``repeat_kv``): query
    head h uses key head h // (n_heads / n_kv), consecutive heads form a group."""
    n, n_kv = q_h.shape[0], k_h.shape[0]
    kv_of_head = np.repeat(np.arange(n_kv), n // n_kv)
    return np.eye(n_kv)[kv_of_head], _gqa_weights(q_h, k_h, kv_of_head)


def gqa_tiled_heads() -> PitfallCase:
    """4 query heads on 2 key/value heads: random q and k (seed 5), 5 tokens, width 3."""
    rng = np.random.default_rng(5)
    q_h, k_h = rng.normal(size=(4, 5, 3)) * 1.5, rng.normal(size=(2, 5, 3)) * 1.5
    tl, heads, kv = _labels("t", 5), _labels("head ", 4), _labels("kv ", 2)
    inputs = (Panel("keys of key/value head 0", k_h[0], _labels("d", 3), tl, "signed"),
              Panel("keys of key/value head 1", k_h[1], _labels("d", 3), tl, "signed"))

    def side(pair):
        assign, w = pair
        return (Panel("key/value head of each query head", assign, kv, heads, "mask"),
                Panel("weights of query head 1", w[1], tl, tl, "weights"))

    return PitfallCase("gqa_tiled_heads", inputs, side(wrong_gqa_tile(q_h, k_h)),
                       side(right_gqa_interleave(q_h, k_h)), wrong_gqa_tile,
                       right_gqa_interleave)


# --------------------------------------------------------------------------------------------
# 14) the causal mask aligned top-left during cached decoding
# --------------------------------------------------------------------------------------------


def _decode_rows(q: Array, k: Array, v: Array, align: str) -> tuple[Array, Array]:
    """One call per token (no prefill): query row i against keys 0..i of the cache."""
    t = q.shape[0]
    weights, output = np.zeros((t, t)), np.zeros((t, v.shape[1]))
    for i in range(t):
        r = scaled_dot_product_attention(q[i:i + 1], k[:i + 1], v[:i + 1],
                                         mask=causal_mask(1, i + 1, align=align))
        weights[i, :i + 1], output[i] = r.weights[0], r.output[0]
    return weights, output


def wrong_decode_top_left(q: Array, k: Array, v: Array) -> tuple[Array, Array]:
    """WRONG — ``np.tril(ones(t_q, t_k))`` for the decoding call's (1, i + 1) block: aligned
    top-left, the one new query row may see key 0 only."""
    return _decode_rows(q, k, v, "top_left")


def right_decode_bottom_right(q: Array, k: Array, v: Array) -> tuple[Array, Array]:
    """RIGHT — the block's mask aligned bottom-right (PyTorch's ``causal_lower_right``): the new
    query is the last position and sees every cached key."""
    return _decode_rows(q, k, v, "bottom_right")


def decode_top_left() -> PitfallCase:
    """Random q, k, v of 5 tokens (seed 6), decoded one token per call."""
    rng = np.random.default_rng(6)
    q, k, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    tl = _labels("t", 5)
    inputs = (Panel("q", q, _labels("d", 3), tl, "signed"), Panel("k", k, _labels("d", 3), tl,
                                                                   "signed"))

    def side(pair):
        w, o = pair
        return (Panel("weights of the decoding calls", w, tl, tl, "weights"),
                Panel("output", o, _labels("d", 2), tl))

    return PitfallCase("decode_top_left", inputs, side(wrong_decode_top_left(q, k, v)),
                       side(right_decode_bottom_right(q, k, v)), wrong_decode_top_left,
                       right_decode_bottom_right)


# --------------------------------------------------------------------------------------------
# 15) the sliding window off by one
# --------------------------------------------------------------------------------------------

WINDOW = 3  # keys a query sees, itself included (Mistral's sliding_window)


def wrong_window_le(t: int, window: int) -> tuple[Array, Array]:
    """WRONG — ``i − j <= window``: the query sees window + 1 keys."""
    d = np.subtract.outer(np.arange(t), np.arange(t))
    mask = (d >= 0) & (d <= window)
    return mask.astype(float), mask.sum(axis=1, keepdims=True).astype(float)


def right_window_lt(t: int, window: int) -> tuple[Array, Array]:
    """RIGHT — ``i − j < window`` (causal): exactly ``window`` keys, the query included."""
    d = np.subtract.outer(np.arange(t), np.arange(t))
    mask = (d >= 0) & (d < window)
    return mask.astype(float), mask.sum(axis=1, keepdims=True).astype(float)


def window_off_by_one() -> PitfallCase:
    """A causal sliding window of 3 keys over 6 tokens."""
    tl = _labels("t", 6)
    inputs = (Panel("distance i − j", np.subtract.outer(np.arange(6), np.arange(6)).astype(float),
                    tl, tl, "signed"),)

    def side(pair):
        mask, count = pair
        return (Panel("mask (1 = may attend)", mask, tl, tl, "mask"),
                Panel("keys seen", count, ("keys",), tl, "sequential"))

    return PitfallCase("window_off_by_one", inputs, side(wrong_window_le(6, WINDOW)),
                       side(right_window_lt(6, WINDOW)), wrong_window_le, right_window_lt)


# --------------------------------------------------------------------------------------------
# 16) ALiBi slopes from the power-of-two formula for 12 heads
# --------------------------------------------------------------------------------------------


def wrong_alibi_geometric(n_heads: int) -> Array:
    """WRONG — 2^(−8(h+1)/n) for every head count: the power-of-two formula used for 12 heads."""
    return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)[None, :]


def right_alibi_paper(n_heads: int) -> Array:
    """RIGHT — the paper's rule (its reference code's ``get_slopes``): the 8 slopes of the
    nearest lower power of two, then every other slope of 16 heads."""
    return alibi_slopes(n_heads)[None, :]


def alibi_twelve_heads() -> PitfallCase:
    """The slopes of 12 heads."""
    heads = _labels("h", 12)
    inputs = (Panel("slopes of 8 heads (a power of two: both rules agree)",
                    alibi_slopes(8)[None, :], _labels("h", 8), ("m",), "sequential"),)
    return PitfallCase("alibi_twelve_heads", inputs,
                       (Panel("slopes", wrong_alibi_geometric(12), heads, ("m",), "sequential"),),
                       (Panel("slopes", right_alibi_paper(12), heads, ("m",), "sequential"),),
                       wrong_alibi_geometric, right_alibi_paper)


# --------------------------------------------------------------------------------------------
# 17) RoPE layouts mixed
# --------------------------------------------------------------------------------------------


def _rope_weights(q: Array, k: Array, layout: str) -> Array:
    return np.array(scaled_dot_product_attention(apply_rope(q, layout=layout),
                                                 apply_rope(k, layout=layout), k).weights)


def wrong_rope_mixed_layout(q: Array, k: Array) -> Array:
    """WRONG — q and k from weights laid out for split-half (Hugging Face ``rotate_half``)
    rotated with the interleaved pairs (Meta's ``apply_rotary_emb``): the wrong dimensions
    are paired, so the positions are encoded into other directions than the model learned."""
    return _rope_weights(q, k, "interleaved")


def right_rope_same_layout(q: Array, k: Array) -> Array:
    """RIGHT — rotated with the layout the weights were made for (split-half here); to use
    the other convention, permute the weight columns first (``layout_permutation``)."""
    return _rope_weights(q, k, "split_half")


def rope_mixed_layouts() -> PitfallCase:
    """q and k of 5 tokens, width 4 (seed 8), RoPE base 10 000."""
    rng = np.random.default_rng(8)
    q, k = rng.normal(size=(5, 4)) * 2, rng.normal(size=(5, 4)) * 2
    tl = _labels("t", 5)
    inputs = (Panel("q (before rotation)", q, _labels("d", 4), tl, "signed"),
              Panel("k (before rotation)", k, _labels("d", 4), tl, "signed"))
    return PitfallCase("rope_mixed_layouts", inputs,
                       (Panel("weights", wrong_rope_mixed_layout(q, k), tl, tl, "weights"),),
                       (Panel("weights", right_rope_same_layout(q, k), tl, tl, "weights"),),
                       wrong_rope_mixed_layout, right_rope_same_layout)


PITFALLS: MappingProxyType[str, Callable[[], PitfallCase]] = MappingProxyType({
    "softmax_over_queries": softmax_over_queries,
    "softmax_length_one": softmax_length_one,
    "sum_broadcast": sum_broadcast,
    "scale_by_length": scale_by_length,
    "naive_overflow": naive_overflow,
    "mask_after_softmax": mask_after_softmax,
    "fully_masked_row": fully_masked_row,
    "pe_base_typo": pe_base_typo,
    "seed001_wrong_triangle": seed001_wrong_triangle,
    "seed004_dropped_tanh": seed004_dropped_tanh,
    "seed003_glorot_limit": seed003_glorot_limit,
    "gradients_vanish": gradients_vanish,
    "gqa_tiled_heads": gqa_tiled_heads,
    "decode_top_left": decode_top_left,
    "window_off_by_one": window_off_by_one,
    "alibi_twelve_heads": alibi_twelve_heads,
    "rope_mixed_layouts": rope_mixed_layouts,
})
