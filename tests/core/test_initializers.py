"""Weight initialisers: the notebooks' legacy randint stream, Glorot bounds, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz import INIT_KINDS, init_weights


def test_kinds():
    assert INIT_KINDS == ("randint", "normal", "glorot_uniform", "identity", "zeros")


def test_randint_reproduces_np_random_seed_42():
    """Seeds 000 and 002: np.random.seed(42); W_Q, W_K, W_V = randint(3, size=(3, 3)) x 3."""
    w_q, w_k, w_v = init_weights("randint", [(3, 3)] * 3, seed=42)
    assert w_q.tolist() == [[2, 0, 2], [2, 0, 0], [2, 1, 2]]
    assert w_k.tolist() == [[2, 2, 2], [0, 2, 1], [0, 1, 1]]
    assert w_v.tolist() == [[1, 1, 0], [0, 1, 1], [0, 0, 0]]
    assert (np.array([1, 0, 1]) @ w_v).tolist() == [1, 1, 0]  # seed 002 prints value_1 = [1 1 0]
    assert all(w.dtype == np.float64 for w in (w_q, w_k, w_v))


def test_randint_leaves_the_global_random_state_alone():
    np.random.seed(123)  # noqa: NPY002 - checking that the global stream is not touched
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    init_weights("randint", [(2, 2)], seed=42)
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002


@pytest.mark.parametrize("kind", INIT_KINDS)
def test_same_seed_same_matrices_and_shapes(kind):
    shapes = [(2, 3), (3, 1), (4, 4)]
    first = init_weights(kind, shapes, seed=5)
    second = init_weights(kind, shapes, seed=5)
    assert [w.shape for w in first] == shapes
    for a, b in zip(first, second, strict=True):
        assert a.dtype == np.float64
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["randint", "normal", "glorot_uniform"])
def test_different_seeds_differ(kind):
    a = init_weights(kind, [(6, 6)], seed=1)[0]
    b = init_weights(kind, [(6, 6)], seed=2)[0]
    assert not np.array_equal(a, b)


def test_randint_values_are_0_1_2():
    w = init_weights("randint", [(30, 30)], seed=0)[0]
    assert set(np.unique(w).tolist()) == {0.0, 1.0, 2.0}


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (50, 70), (1, 9)])
def test_glorot_uniform_lies_within_the_glorot_limit(shape):
    """Glorot & Bengio (2010), seed 003: U(−limit, limit), limit = sqrt(6/(fan_in + fan_out))."""
    limit = math.sqrt(6 / (shape[0] + shape[1]))
    w = init_weights("glorot_uniform", [shape], seed=3)[0]
    assert np.all(np.abs(w) <= limit)
    if w.size >= 1000:  # and it fills the interval: not a narrower distribution
        assert np.abs(w).max() > 0.95 * limit
        assert abs(w.mean()) < 0.1 * limit
        assert w.var() == pytest.approx(limit ** 2 / 3, rel=0.1)


def test_glorot_limit_differs_per_shape():
    small, large = init_weights("glorot_uniform", [(2, 2), (200, 200)], seed=0)
    assert np.abs(small).max() <= math.sqrt(6 / 4)
    assert np.abs(large).max() <= math.sqrt(6 / 400)


def test_normal_is_standard_normal():
    w = init_weights("normal", [(100, 100)], seed=0)[0]
    assert abs(w.mean()) < 0.05 and w.std() == pytest.approx(1, abs=0.05)


def test_identity_and_zeros():
    eye, rect, zeros = (init_weights("identity", [(3, 3), (2, 4)])
                        + init_weights("zeros", [(2, 3)]))
    np.testing.assert_array_equal(eye, np.eye(3))
    np.testing.assert_array_equal(rect, np.eye(2, 4))
    np.testing.assert_array_equal(zeros, np.zeros((2, 3)))


def test_shapes_may_be_lists_and_numpy_integers():
    w = init_weights("zeros", [[2, np.int64(3)]])[0]
    assert w.shape == (2, 3)


def test_no_shapes_gives_no_matrices():
    assert init_weights("normal", []) == []
