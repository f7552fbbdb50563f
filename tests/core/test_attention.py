"""Dot-product attention: golden numbers from the seed notebooks, the loop reference, details.

Three kinds of test (STYLE.md convention 12):

* golden numbers: the seed notebooks' correct values, and hand-checked tiny cases;
* an independent reference (``tests/reference.py``: explicit loops with ``math.exp``) on random
  shapes, masks, head counts, scales and temperatures, every intermediate to 1e-12;
* details of the results (read-only arrays, fields, views) and the numerics of ``softmax``.

Properties (rows sum to 1, permutation equivariance, ...) are in ``test_properties.py`` and
every ValueError message in ``test_validation.py``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings

import numpy as np
import pytest
import reference
import scipy.special

from attnviz import (
    AttentionResult,
    MultiHeadResult,
    additive_attention,
    causal_mask,
    cross_attention,
    init_weights,
    mix_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    self_attention,
    softmax,
    valid_head_counts,
)

TOL = {"rtol": 1e-12, "atol": 1e-12}
PRINTED = {"rtol": 0.0, "atol": 1e-8}  # the notebooks print 8 or 9 significant digits

SEED_000_WORDS = [[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]
SEED_002_WORDS = [[1, 0, 1], [0, 1, 1], [1, 0, 0], [1, 1, 1]]


def seed_weights():
    """``np.random.seed(42)`` then three ``randint(3, size=(3, 3))``: seeds 000 and 002."""
    return init_weights("randint", [(3, 3)] * 3, seed=42)


def assert_close(actual, expected, **tol):
    """Same shape, same values (to 1e-12 unless told otherwise); −inf must match −inf."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, **(tol or TOL))


# ---------------------------------------------------------------------------------------------
# Golden numbers: the seed notebooks
# ---------------------------------------------------------------------------------------------


def test_seed_000_weights_are_the_notebooks_legacy_stream():
    w_q, w_k, w_v = seed_weights()
    np.random.seed(42)  # noqa: NPY002 - the notebook's own legacy calls, to compare with
    expected = [np.random.randint(3, size=(3, 3)) for _ in range(3)]  # noqa: NPY002
    for got, want in zip((w_q, w_k, w_v), expected, strict=True):
        assert_close(got, want)


def test_seed_000_general_attention():
    result = self_attention(SEED_000_WORDS, *seed_weights())
    assert_close(result.scores[0], [8, 2, 10, 2])  # word 1 against the four keys
    assert_close(result.weights[0], [0.23608986, 0.00738988, 0.74913039, 0.00738988], **PRINTED)
    assert_close(result.output, [[0.98522025, 1.74174051, 0.75652026],
                                 [0.90965265, 1.40965265, 0.5],
                                 [0.99851226, 1.75849334, 0.75998108],
                                 [0.99560386, 1.90407309, 0.90846923]], **PRINTED)
    assert result.scale == pytest.approx(1 / math.sqrt(3))


def test_seed_000_per_word_form_equals_matrix_form():
    """The notebook computes word 1 alone, then all words in matrix form: both must agree."""
    words = np.array(SEED_000_WORDS)
    w_q, w_k, w_v = seed_weights()
    query_1 = words[0] @ w_q
    keys = [word @ w_k for word in words]
    values = [word @ w_v for word in words]
    scores = np.array([query_1 @ key for key in keys])
    weights = scipy.special.softmax(scores / math.sqrt(3))
    attention = sum(weight * value for weight, value in zip(weights, values, strict=True))
    result = self_attention(words, w_q, w_k, w_v)
    assert_close(result.output[0], attention)
    assert_close(result.weights[0], weights)


def test_seed_002_step_by_step_self_attention():
    result = self_attention(SEED_002_WORDS, *seed_weights())
    assert_close(result.scores[0], [23, 11, 18, 29])
    assert_close(result.weights[0], [3.02989149e-02, 2.96856554e-05, 1.68937823e-03,
                                     9.67982021e-01], **PRINTED)
    assert_close(result.output, [[0.99997031, 1.96798202, 0.96801171],
                                 [0.99972362, 1.89509373, 0.89537011],
                                 [0.99307425, 1.70208093, 0.70900668],
                                 [0.99999705, 1.9680079, 0.96801085]], **PRINTED)


SEED_001_Q = [[1, 0, 0], [0, 1, 0]]
SEED_001_K = [[1, 2, 3], [4, 5, 6]]
SEED_001_V = [[0, 1, 0], [1, 0, 1]]
SEED_001_PRINTED = [[0, 0.35954252, 0], [1, 0.64045748, 1]]


def test_seed_001_causal_example_by_hand():
    """Seed 001's causal example, worked out by hand.

    scores = q · kᵀ = [[1·1, 1·4], [0·1 + 1·2, 0·4 + 1·5]] = [[1, 4], [2, 5]], scaled by 1/√3.
    Row 0 (query 0) may only see key 0: weights [1, 0], output = v_0 = [0, 1, 0].
    Row 1 sees both keys: softmax([2, 5]/√3); the difference is 3/√3 = √3, so the weights are
    [1/(1 + e^√3), 1/(1 + e^−√3)] = [0.15032545, 0.84967455], and the output is
    0.1503·[0, 1, 0] + 0.8497·[1, 0, 1] = [0.84967455, 0.15032545, 0.84967455].
    """
    result = scaled_dot_product_attention(SEED_001_Q, SEED_001_K, SEED_001_V,
                                          mask=causal_mask(2))
    w1 = 1 / (1 + math.exp(math.sqrt(3)))
    assert_close(result.scores, [[1, 4], [2, 5]])
    assert_close(result.scaled, np.array([[1, 4], [2, 5]]) / math.sqrt(3))
    assert result.masked[0, 1] == -np.inf
    assert_close(result.weights, [[1, 0], [w1, 1 - w1]])
    assert_close(result.weights[1], [0.15032545, 0.84967455], **PRINTED)
    assert_close(result.output, [[0, 1, 0], [1 - w1, w1, 1 - w1]])


def test_seed_001_printed_output_is_a_softmax_over_the_queries():
    """Seed 001's bug: its softmax normalises over the QUERIES, not the keys.

    ``DotProductAttention`` takes ``logsumexp(dots, axis=1)``, but ``dots`` has shape
    (1, L_q, L_k) there (the causal mask is built with a leading axis of 1), so axis 1 is the
    query axis: each *column* sums to 1. The printed [[0, 0.3595, 0], [1, 0.6405, 1]] is what
    you get by normalising our masked scores over axis 0; the right answer (over the keys) is
    [[0, 1, 0], [0.8497, 0.1503, 0.8497]]. A pitfall worth showing students.
    """
    result = scaled_dot_product_attention(SEED_001_Q, SEED_001_K, SEED_001_V,
                                          mask=causal_mask(2))
    wrong_weights = softmax(np.asarray(result.masked), axis=0)  # normalised over the queries
    assert_close(wrong_weights.sum(axis=0), [1, 1])  # columns sum to 1 ...
    assert not np.allclose(wrong_weights.sum(axis=1), 1)  # ... rows do not
    assert_close(wrong_weights @ np.array(SEED_001_V), SEED_001_PRINTED, **PRINTED)

    # the notebook's own function, as written, prints the same wrong array
    q, k, v = (np.array(a) for a in (SEED_001_Q, SEED_001_K, SEED_001_V))
    mask = np.tril(np.ones((1, 2, 2), dtype=np.bool_), k=0)
    dots = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    dots = np.where(mask, dots, np.full_like(dots, -1e9))
    dots = np.exp(dots - scipy.special.logsumexp(dots, axis=1, keepdims=True))
    assert_close(np.matmul(dots, v)[0], SEED_001_PRINTED, **PRINTED)
    assert not np.allclose(result.output, SEED_001_PRINTED, atol=1e-3)


SLEEPY_K = [[0, 0, 0], [2, 0, 1], [1, -1, -2], [2, 3, 1], [-2, 0, 0], [0, 2, 1]]
SLEEPY_V = [[0], [-0.2], [0.3], [0.4], [0], [0.1]]
SLEEPY_Q = [0, 2, 1]  # "book"


def test_seed_004_single_query_explicitly():
    """b = softmax(K·q/√3), output = b·V, written out term by term.

    K·q = [0, 1, −4, 7, 0, 5] (e.g. "reads" = [2, 3, 1]: 2·0 + 3·2 + 1·1 = 7).
    """
    dots = [sum(k_r * q_r for k_r, q_r in zip(key, SLEEPY_Q, strict=True)) for key in SLEEPY_K]
    assert dots == [0, 1, -4, 7, 0, 5]
    exps = [math.exp(d / math.sqrt(3)) for d in dots]
    b = [e / sum(exps) for e in exps]
    out = sum(b_j * v_j[0] for b_j, v_j in zip(b, SLEEPY_V, strict=True))

    result = scaled_dot_product_attention([SLEEPY_Q], SLEEPY_K, SLEEPY_V)
    assert_close(result.scores, [dots])
    assert_close(result.weights, [b])
    assert_close(result.output, [[out]])
    assert result.weights[0].argmax() == 3  # "book" attends most to "reads"
    # the notebook's own single-query formulas agree (its softmax is fine for a 1-D input)
    k, q, v = np.array(SLEEPY_K), np.array(SLEEPY_Q), np.array(SLEEPY_V)
    notebook_b = np.exp(k @ q / np.sqrt(3)) / np.sum(np.exp(k @ q / np.sqrt(3)))
    assert_close(result.output[0], notebook_b @ v)


def test_seed_004_batched_softmax_broadcasts_along_the_wrong_axis():
    """Seed 004's ``batched_tensor_dot`` has two bugs worth showing.

    ``np.exp(a) / np.sum(np.exp(a), axis=1)`` drops the summed axis, so entry (i, j) is
    divided by the sum of row *j*: the rows of its "weights" do not sum to 1. And it scales
    by ``sqrt(q.shape[0])``, the number of tokens, instead of sqrt(d). The package's rows
    sum to 1 and it scales by 1/√d_k.
    """
    x = np.array(SLEEPY_K, dtype=float)
    a = np.einsum("ij,kj->ik", x, x) / np.sqrt(x.shape[0])  # the notebook: sqrt(6 tokens)
    notebook_b = np.exp(a) / np.sum(np.exp(a), axis=1)
    assert not np.allclose(notebook_b.sum(axis=1), 1)

    identity = np.eye(3)
    result = self_attention(x, identity, identity, identity)
    assert_close(result.weights.sum(axis=1), np.ones(6))
    assert_close(result.scaled, x @ x.T / np.sqrt(3))
    fixed = softmax(x @ x.T / np.sqrt(3), axis=1)
    assert_close(result.weights, fixed)


class NotebookAttention:
    """Seed 003's ``Attention`` class, re-typed with a Generator instead of the global stream.

    W has shape (d_L, d_K) and the latent representations are ``Q @ W_Q.T``; the similarity
    is scaled by 1/sqrt(d_L), the latent (query/key) width, i.e. our d_k.
    """

    def __init__(self, d_K, d_V, d_L, rng):  # noqa: N803 - the notebook's names
        limit = np.sqrt(6 / (d_K + d_L))
        self.d_L = d_L
        self.W_Q = rng.uniform(-limit, limit, size=(d_L, d_K))
        self.W_K = rng.uniform(-limit, limit, size=(d_L, d_K))
        # (the notebook reuses the Q/K limit here; Glorot's for (d_L, d_V) would use d_V)
        self.W_V = rng.uniform(-limit, limit, size=(d_L, d_V))

    def calc_attention(self, Q, K, V):  # noqa: N803
        l_q, l_k, l_v = Q @ self.W_Q.T, K @ self.W_K.T, V @ self.W_V.T
        similarity = l_q @ l_k.T / np.sqrt(self.d_L)
        weights = scipy.special.softmax(similarity, axis=1)
        return np.sum(weights[:, :, np.newaxis] * l_v[np.newaxis, :, :], axis=1)


@pytest.mark.parametrize(("t", "d_model", "d_l", "seed"),
                         [(5, 4, 3, 0), (1, 2, 5, 1), (7, 6, 6, 2), (3, 3, 1, 3)])
def test_seed_003_attention_class_equals_self_attention(t, d_model, d_l, seed):
    rng = np.random.default_rng(seed)
    layer = NotebookAttention(d_model, d_model, d_l, rng)
    x = rng.normal(size=(t, d_model))
    result = self_attention(x, layer.W_Q.T, layer.W_K.T, layer.W_V.T)
    assert_close(result.output, layer.calc_attention(x, x, x))
    assert result.scale == pytest.approx(1 / math.sqrt(d_l))


def test_seed_003_attention_class_equals_cross_attention():
    rng = np.random.default_rng(30)
    layer = NotebookAttention(4, 4, 2, rng)  # inputs 4-d, latent 2-d
    x_q, x_kv = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    result = cross_attention(x_q, x_kv, layer.W_Q.T, layer.W_K.T, layer.W_V.T)
    assert_close(result.output, layer.calc_attention(x_q, x_kv, x_kv))
    # separate value inputs (d_V = 3): project them and attend directly
    layer = NotebookAttention(4, 3, 2, rng)
    v_in = rng.normal(size=(5, 3))
    q, k, v = x_q @ layer.W_Q.T, x_kv @ layer.W_K.T, v_in @ layer.W_V.T
    assert_close(scaled_dot_product_attention(q, k, v).output,
                 layer.calc_attention(x_q, x_kv, v_in))


# ---------------------------------------------------------------------------------------------
# Tiny hand-checked cases
# ---------------------------------------------------------------------------------------------


def test_equal_scores_give_uniform_weights_and_the_mean_of_the_values():
    v = [[1.0, 2.0], [3.0, 6.0], [5.0, 1.0]]
    result = scaled_dot_product_attention([[0.0, 0.0]], [[1, 2], [3, 4], [5, 6]], v)
    assert_close(result.weights, [[1 / 3, 1 / 3, 1 / 3]])
    assert_close(result.output, [[3.0, 3.0]])


def test_two_keys_by_hand():
    # scores [1, 0] with d_k = 1 (scale 1): weights [e/(e+1), 1/(e+1)]
    result = scaled_dot_product_attention([[1.0]], [[1.0], [0.0]], [[10.0], [0.0]])
    e = math.e
    assert_close(result.weights, [[e / (e + 1), 1 / (e + 1)]])
    assert_close(result.output, [[10 * e / (e + 1)]])


def test_scale_and_temperature_multiply_the_scores():
    q, k, v = [[1.0, 2.0]], [[3.0, 1.0], [0.0, 1.0]], [[1.0], [2.0]]
    plain = scaled_dot_product_attention(q, k, v, scale=1.0)
    assert_close(plain.scaled, plain.scores)
    assert_close(plain.scores, [[5.0, 2.0]])
    default = scaled_dot_product_attention(q, k, v)
    assert default.scale == pytest.approx(1 / math.sqrt(2))
    assert_close(default.scaled, np.array([[5.0, 2.0]]) / math.sqrt(2))
    hot = scaled_dot_product_attention(q, k, v, scale=0.5, temperature=4.0)
    assert (hot.scale, hot.temperature) == (0.5, 4.0)
    assert_close(hot.scaled, [[5.0 * 0.5 / 4.0, 2.0 * 0.5 / 4.0]])
    # scale 0: every score is 0, the weights are uniform
    flat = scaled_dot_product_attention(q, k, v, scale=0)
    assert_close(flat.weights, [[0.5, 0.5]])


def test_high_temperature_flattens_and_low_temperature_sharpens():
    q, k, v = [[1.0, 0.0]], [[2.0, 0.0], [1.0, 0.0], [0.0, 0.0]], [[1.0], [0.0], [0.0]]
    cold = scaled_dot_product_attention(q, k, v, temperature=0.01).weights[0]
    warm = scaled_dot_product_attention(q, k, v).weights[0]
    hot = scaled_dot_product_attention(q, k, v, temperature=1000.0).weights[0]
    assert cold[0] > 1 - 1e-12
    assert hot.max() - hot.min() < 1e-3
    assert hot.max() < warm.max() < cold.max()


def test_causal_self_attention_first_token_sees_only_itself():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3))
    w = [rng.normal(size=(3, 2)) for _ in range(3)]
    result = self_attention(x, *w, causal=True)
    assert_close(result.mask, np.tri(4, dtype=bool))
    assert_close(result.weights[0], [1, 0, 0, 0])
    assert_close(result.output[0], result.v[0])
    assert np.all(result.weights[np.triu_indices(4, 1)] == 0)


def test_causal_combines_with_a_user_mask():
    x = np.eye(3)
    user = np.array([True, False, True])  # key 1 is padding, broadcast to every query
    result = self_attention(x, x, x, x, mask=user, causal=True)
    expected = np.tri(3, dtype=bool) & user
    assert_close(result.mask, expected)
    assert np.all(result.weights[~expected] == 0)
    assert_close(result.weights[1], [1, 0, 0])


def test_fully_masked_query_gives_zero_weights_and_zero_output():
    mask = np.array([[True, True], [False, False]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = scaled_dot_product_attention([[1.0], [2.0]], [[1.0], [2.0]], [[3.0], [4.0]],
                                              mask=mask)
    assert_close(result.weights[1], [0, 0])
    assert_close(result.output[1], [0])
    assert_close(result.masked[1], [-np.inf, -np.inf])
    assert result.weights[0].sum() == pytest.approx(1)


def test_value_width_may_differ_from_key_width():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(4, 5))
    result = self_attention(x, rng.normal(size=(5, 3)), rng.normal(size=(5, 3)),
                            rng.normal(size=(5, 7)))
    assert result.q.shape == (4, 3) and result.v.shape == (4, 7)
    assert result.output.shape == (4, 7)


# ---------------------------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------------------------


def test_softmax_matches_scipy_on_finite_rows():
    x = np.random.default_rng(0).normal(size=(4, 5)) * 10
    assert_close(softmax(x), scipy.special.softmax(x, axis=-1))
    assert_close(softmax(x, axis=0), scipy.special.softmax(x, axis=0))


def test_softmax_is_stable_for_large_scores():
    assert_close(softmax(np.array([1000.0, 1001.0])), scipy.special.softmax([0.0, 1.0]))
    assert_close(softmax(np.array([-1e308, 1e308])), [0.0, 1.0])  # x − max overflows to −inf


def test_softmax_gives_minus_inf_zero_weight_and_an_all_minus_inf_row_zeros():
    x = np.array([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = softmax(x)
    assert_close(out, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])


def test_softmax_keeps_float32():
    assert softmax(np.ones((2, 3), dtype=np.float32)).dtype == np.float32


# ---------------------------------------------------------------------------------------------
# The loop reference, on random shapes, masks, head counts, scales and temperatures
# ---------------------------------------------------------------------------------------------

SCALES = (None, 1.0, 0.37)
TEMPERATURES = (1.0, 0.5, 2.5)


_random_mask = reference.random_mask


def _settings(rng):
    return {"scale": SCALES[rng.integers(3)], "temperature": TEMPERATURES[rng.integers(3)]}


def _assert_single(result: AttentionResult, ref: dict, with_projections: bool) -> None:
    names = ["scores", "scaled", "masked", "weights", "output"]
    if with_projections:
        names += ["q", "k", "v"]
    for name in names:
        assert_close(getattr(result, name), ref[name])


@pytest.mark.parametrize("case", range(40))
def test_scaled_dot_product_attention_matches_the_loop_reference(case):
    rng = np.random.default_rng(1000 + case)
    t_q, t_k, d_k, d_v = (int(n) for n in rng.integers(1, 6, size=4))
    q, k, v = (rng.normal(size=s) * 2 for s in ((t_q, d_k), (t_k, d_k), (t_k, d_v)))
    mask = None if case % 4 == 0 else _random_mask(rng, t_q, t_k)
    settings = _settings(rng)
    result = scaled_dot_product_attention(q, k, v, mask=mask, **settings)
    ref = reference.sdpa(q, k, v, mask=mask, **settings)
    _assert_single(result, ref, with_projections=False)
    assert result.scale == pytest.approx(1 / math.sqrt(d_k) if settings["scale"] is None
                                         else settings["scale"])


@pytest.mark.parametrize("case", range(30))
def test_self_attention_matches_the_loop_reference(case):
    rng = np.random.default_rng(2000 + case)
    t, d_model, d_k, d_v = (int(n) for n in rng.integers(1, 6, size=4))
    x = rng.normal(size=(t, d_model))
    w_q, w_k, w_v = (rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))
    mask = None if case % 3 == 0 else _random_mask(rng, t, t)
    causal = bool(case % 2)
    settings = _settings(rng)
    result = self_attention(x, w_q, w_k, w_v, mask=mask, causal=causal, **settings)
    ref = reference.self_attention(x, w_q, w_k, w_v, mask=mask, causal_=causal, **settings)
    _assert_single(result, ref, with_projections=True)


@pytest.mark.parametrize("case", range(30))
def test_cross_attention_matches_the_loop_reference(case):
    rng = np.random.default_rng(3000 + case)
    t_q, t_k, d_q, d_kv, d_k, d_v = (int(n) for n in rng.integers(1, 6, size=6))
    x_q, x_kv = rng.normal(size=(t_q, d_q)), rng.normal(size=(t_k, d_kv))
    w_q, w_k, w_v = (rng.normal(size=s) for s in ((d_q, d_k), (d_kv, d_k), (d_kv, d_v)))
    mask = None if case % 3 == 0 else _random_mask(rng, t_q, t_k)
    settings = _settings(rng)
    result = cross_attention(x_q, x_kv, w_q, w_k, w_v, mask=mask, **settings)
    ref = reference.cross_attention(x_q, x_kv, w_q, w_k, w_v, mask=mask, **settings)
    _assert_single(result, ref, with_projections=True)


@pytest.mark.parametrize("n_heads", [1, 2, 3, 4])
@pytest.mark.parametrize("case", range(10))
def test_multi_head_attention_matches_the_loop_reference(n_heads, case):
    rng = np.random.default_rng(4000 + 10 * n_heads + case)
    c = reference.random_multi_head_case(rng, n_heads, case, high=5)
    x_q, x_kv, w_q, w_k, w_v, w_o, mask = (c[k] for k in ("x_q", "x_kv", "w_q", "w_k", "w_v",
                                                          "w_o", "mask"))
    causal = case % 5 == 2
    settings = _settings(rng)
    result = multi_head_attention(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=n_heads, mask=mask,
                                  causal=causal, **settings)
    ref = reference.multi_head(x_q, x_kv, w_q, w_k, w_v, w_o, n_heads=n_heads, mask=mask,
                               causal_=causal, **settings)
    assert isinstance(result, MultiHeadResult)
    assert result.n_heads == n_heads
    for name in ("scores", "scaled", "masked", "weights", "head_outputs", "concat", "output"):
        assert_close(getattr(result, name), ref[name])
    for h, head in enumerate(result.heads):
        for name in ("q", "k", "v", "scores", "weights"):
            assert_close(getattr(head, name), ref[name][h])
        assert_close(head.output, ref["head_outputs"][h])
    # the full projections are the per-head blocks side by side
    assert_close(result.q, np.concatenate(list(ref["q"]), axis=1))
    assert_close(result.v, np.concatenate(list(ref["v"]), axis=1))
    assert result.scale == pytest.approx(1 / math.sqrt(c["d_k"]) if settings["scale"] is None
                                         else settings["scale"])


@pytest.mark.parametrize("case", range(10))
def test_mix_heads_matches_the_loop_reference(case):
    rng = np.random.default_rng(5000 + case)
    n_heads, t_q, d_v = (int(n) for n in rng.integers(1, 5, size=3))
    head_outputs, head_weights = rng.normal(size=(n_heads, t_q, d_v)), rng.normal(size=n_heads)
    mixed = mix_heads(head_outputs, head_weights)
    assert_close(mixed, reference.mix_heads(head_outputs, head_weights))
    # seed 004's np.stack(heads, -1) @ w_h
    assert_close(mixed, np.stack(list(head_outputs), -1) @ head_weights)


# ---------------------------------------------------------------------------------------------
# Multi-head details
# ---------------------------------------------------------------------------------------------


def test_multi_head_without_w_o_returns_the_concatenation():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 4))
    w = [rng.normal(size=(4, 4)) for _ in range(3)]
    result = multi_head_attention(x, None, *w, n_heads=2)
    assert_close(result.output, result.concat)
    assert_close(result.concat, np.hstack([result.heads[0].output, result.heads[1].output]))


def test_multi_head_scale_uses_the_width_of_one_head():
    x = np.eye(4)
    result = multi_head_attention(x, None, x, x, x, n_heads=4)  # d_k = 1 per head
    assert result.scale == 1.0
    assert multi_head_attention(x, None, x, x, x, n_heads=2).scale == pytest.approx(2 ** -0.5)


def test_multi_head_heads_are_views_of_the_stacked_arrays():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3, 6))
    w = [rng.normal(size=(6, 6)) for _ in range(3)]
    result = multi_head_attention(x, None, *w, np.eye(6), n_heads=3, causal=True)
    for h, head in enumerate(result.heads):
        assert np.shares_memory(head.weights, result.weights)
        assert_close(head.weights, result.weights[h])
        assert_close(head.mask, result.mask)
    assert_close(result.mask, np.tri(3, dtype=bool))


def test_valid_head_counts():
    assert valid_head_counts(12) == [1, 2, 3, 4, 6, 12]
    assert valid_head_counts(12, 5) == [1, 2, 3, 4]
    assert valid_head_counts(7) == [1, 7]
    assert valid_head_counts(1) == [1]


# ---------------------------------------------------------------------------------------------
# Results are read-only and do not touch the caller's arrays
# ---------------------------------------------------------------------------------------------


def test_single_head_result_arrays_are_read_only():
    result = scaled_dot_product_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 1)))
    for name in ("q", "k", "v", "scores", "scaled", "masked", "weights", "output"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(result, name)[0, 0] = 5.0


def test_multi_head_result_arrays_are_read_only():
    x = np.eye(2)
    result = multi_head_attention(x, None, x, x, x, x, n_heads=2)
    for name in ("q", "scores", "weights", "head_outputs", "concat", "output"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(result, name).flat[0] = 5.0


def test_the_callers_arrays_stay_writeable_and_are_not_aliased():
    """Regression: q, k, v given as float64 arrays used to be frozen in place (and aliased)."""
    q, k, v = np.ones((2, 2)), np.ones((3, 2)), np.arange(3.0)[:, None]
    result = scaled_dot_product_attention(q, k, v)
    assert q.flags.writeable and k.flags.writeable and v.flags.writeable
    v[0, 0] = 100.0  # editing the input afterwards must not change the result
    assert result.v[0, 0] == 0.0
    assert not np.shares_memory(result.q, q)


def test_integer_and_boolean_inputs_compute_in_float64():
    result = scaled_dot_product_attention([[1, 0]], [[True, False], [False, True]], [[1], [2]])
    assert result.weights.dtype == np.float64
    assert_close(result.scores, [[1, 0]])


def test_softmax_accepts_lists_and_integers():
    np.testing.assert_allclose(softmax([[0, 0], [1, 1]]), [[0.5, 0.5], [0.5, 0.5]])


def test_default_mask_is_read_only_like_every_result_array():
    result = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2))
    assert result.mask.all() and not result.mask.flags.writeable


# ---------------------------------------------------------------------------------------------
# Results are eager, frozen dataclasses
# ---------------------------------------------------------------------------------------------


def test_results_store_every_field_when_they_are_made():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(3, 4))
    w = [rng.normal(size=(4, 4)) for _ in range(3)]
    single = self_attention(x, *w[:3], causal=True, scale=0.5, temperature=2.0)
    multi = multi_head_attention(x, None, *w, n_heads=2, causal=True)
    for result, names in (
        (single, ["q", "k", "v", "scores", "scaled", "masked", "weights", "output", "mask",
                  "scale", "temperature", "score_mods", "head_index"]),
        (multi, ["q", "k", "v", "heads", "scores", "scaled", "masked", "weights",
                 "head_outputs", "concat", "output", "mask", "scale", "temperature",
                 "n_heads", "score_mods", "w_o", "b_o"]),
    ):
        assert [f.name for f in dataclasses.fields(result)] == names
        assert set(vars(result)) == set(names)  # stored, nothing computed on access
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.scores = None
    assert_close(single.scaled, single.scores * 0.5 / 2.0)
    assert_close(single.masked, np.where(single.mask, single.scaled, -np.inf))
    assert_close(multi.scaled, multi.scores * multi.scale)
    assert_close(multi.masked, np.where(multi.mask, multi.scaled, -np.inf))


def test_nothing_masked_leaves_masked_equal_to_scaled():
    result = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), scale=1.0)
    assert_close(result.masked, result.scaled)
    assert_close(result.scaled, result.scores)
    assert not result.scaled.flags.writeable and not result.masked.flags.writeable


def test_large_multi_head_result_is_consistent():
    """8 heads × 600 tokens: rows sum to 1, each head equals a one-head run on its q, k, v."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((600, 16))
    w = [rng.standard_normal((16, 16)) / 4 for _ in range(3)]
    res = multi_head_attention(x, None, *w, n_heads=8, causal=True)
    np.testing.assert_allclose(res.weights.sum(axis=-1), 1.0, atol=1e-12)
    head = scaled_dot_product_attention(res.heads[5].q, res.heads[5].k, res.heads[5].v,
                                        mask=res.mask)
    for name in ("scores", "scaled", "masked", "weights", "output"):
        np.testing.assert_array_equal(getattr(head, name), getattr(res.heads[5], name))
    np.testing.assert_array_equal(res.heads[5].masked, res.masked[5])
    assert np.all(res.masked[:, ~np.tri(600, dtype=bool)] == -np.inf)


# ---------------------------------------------------------------------------------------------
# One result protocol: n_heads and head(h) on every result type
# ---------------------------------------------------------------------------------------------

PER_HEAD = ("scores", "scaled", "masked", "weights", "output")


def _every_result():
    """One result of each type (additive with one and with several queries)."""
    rng = np.random.default_rng(12)
    x = rng.normal(size=(3, 6))
    w = [rng.normal(size=(6, 6)) for _ in range(4)]
    keys, values = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    additive_args = (keys, values, rng.normal(size=(2, 5)), rng.normal(size=(2, 5)),
                     rng.normal(size=5))
    return {
        "single": self_attention(x, *w[:3], causal=True),
        "multi": multi_head_attention(x, None, *w, n_heads=3, causal=True),
        "additive": additive_attention(rng.normal(size=(2, 2)), *additive_args,
                                       mask=np.array([True, True, False, True])),
        "additive, one query": additive_attention(rng.normal(size=2), *additive_args),
    }


@pytest.mark.parametrize("kind", list(_every_result()))
def test_every_result_has_n_heads_and_head(kind):
    result = _every_result()[kind]
    assert isinstance(result.n_heads, int)
    assert result.n_heads == (3 if kind == "multi" else 1)
    for h in range(result.n_heads):
        head = result.head(h)
        for name in PER_HEAD:
            if kind == "multi":  # head h of the stacked arrays
                expected = getattr(result, "head_outputs" if name == "output" else name)[h]
            else:
                expected = getattr(result, name)
            assert_close(getattr(head, name), expected)
        assert_close(head.weights.sum(axis=-1), np.ones(head.weights.shape[:-1]))
        assert not head.weights.flags.writeable


def test_head_of_a_single_result_is_the_result_itself():
    results = _every_result()
    for kind in ("single", "additive", "additive, one query"):
        assert results[kind].head(0) is results[kind]
    multi = results["multi"]
    for h in range(3):
        assert multi.head(h) is multi.heads[h]
        assert isinstance(multi.head(h), AttentionResult)
        assert multi.head(h).n_heads == 1


def test_additive_scaled_is_its_scores():
    for kind in ("additive", "additive, one query"):
        result = _every_result()[kind]
        assert_close(result.scaled, result.scores)
        assert_close(result.masked, np.where(result.mask, result.scores, -np.inf))


@pytest.mark.parametrize(("kind", "h", "message"), [
    ("single", 1, "there is no head 1: this result has only head 0"),
    ("single", -1, "there is no head -1: this result has only head 0"),
    ("additive", 2, "there is no head 2: this result has only head 0"),
    ("multi", 3, "there is no head 3: this result has heads 0 to 2"),
    ("multi", -1, "there is no head -1: this result has heads 0 to 2"),
    ("multi", 1.0, "the head index must be a whole number, got 1.0"),
    ("multi", True, "the head index must be a whole number, got True"),
    ("single", "0", "the head index must be a whole number, got '0'"),
])
def test_head_out_of_range_raises_a_sentence(kind, h, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        _every_result()[kind].head(h)


def test_head_accepts_numpy_integers():
    multi = _every_result()["multi"]
    assert multi.head(np.int64(2)) is multi.heads[2]
