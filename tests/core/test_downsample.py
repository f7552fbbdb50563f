"""attnviz.core.downsample: block pooling of attention weights for display."""

import numpy as np
import pytest

from attnviz.core.downsample import block_factor, block_labels, block_starts, downsample


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _reference(w, max_size):
    """An explicit loop: mean over the queries of a block of the sum over its keys."""
    fq = -(-w.shape[0] // max_size)
    fk = -(-w.shape[1] // max_size)
    out = np.zeros((-(-w.shape[0] // fq), -(-w.shape[1] // fk)))
    for bi, i0 in enumerate(range(0, w.shape[0], fq)):
        for bj, j0 in enumerate(range(0, w.shape[1], fk)):
            block = w[i0:i0 + fq, j0:j0 + fk]
            out[bi, bj] = block.sum(axis=1).mean()
    return out


def test_golden_4x4_to_2x2():
    w = np.array([[1.0, 0.0, 0.0, 0.0],
                  [0.5, 0.5, 0.0, 0.0],
                  [0.0, 0.0, 0.25, 0.75],
                  [0.1, 0.2, 0.3, 0.4]])
    got = downsample(w, 2)
    # block (0, 0): rows 0-1 give 1.0 and 1.0 -> mean 1.0; block (1, 0): rows 2-3 give 0 and 0.3
    np.testing.assert_allclose(got, [[1.0, 0.0], [0.15, 0.85]])
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_rows_still_sum_to_one_with_ragged_last_block():
    rng = np.random.default_rng(0)
    w = _softmax_rows(rng.standard_normal((1000, 1000)))
    got = downsample(w, 512)  # factor 2, 500 blocks
    assert got.shape == (500, 500)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    w = _softmax_rows(rng.standard_normal((1023, 1023)))
    got = downsample(w, 100)  # factor 11: 1023 = 93 blocks of 11
    assert got.shape == (93, 93)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    w = _softmax_rows(rng.standard_normal((1024, 1024)))
    got = downsample(w, 300)  # factor 4: 256 blocks
    assert got.shape == (256, 256)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    w = _softmax_rows(rng.standard_normal((10, 10)))
    got = downsample(w, 4)  # factor 3: blocks of 3, 3, 3, 1
    assert got.shape == (4, 4)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(got, _reference(w, 4), atol=1e-15)


def test_matches_reference_loop_non_square():
    rng = np.random.default_rng(1)
    w = _softmax_rows(rng.standard_normal((37, 53)))
    for max_size in (1, 2, 5, 8, 36, 52, 53, 100):
        np.testing.assert_allclose(downsample(w, max_size), _reference(w, max_size), atol=1e-14)


def test_fully_masked_row_keeps_its_share_of_zero():
    w = np.array([[1.0, 0.0], [0.0, 0.0], [0.5, 0.5], [0.5, 0.5]])  # row 1: all masked
    w = np.hstack([w, np.zeros((4, 2))])
    got = downsample(w, 2)
    np.testing.assert_allclose(got.sum(axis=1), [0.5, 1.0])  # only where every row summed to 1


def test_small_matrix_is_an_unchanged_copy():
    w = np.array([[0.2, 0.8], [0.6, 0.4]], dtype=np.float32)
    got = downsample(w, 2)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, w)
    got[0, 0] = 5.0
    assert w[0, 0] == np.float32(0.2)


def test_leading_axes_are_pooled_per_head():
    rng = np.random.default_rng(2)
    w = _softmax_rows(rng.standard_normal((3, 2, 20, 20)))  # (layers, heads, t, t)
    got = downsample(w, 6)
    assert got.shape == (3, 2, 5, 5)
    for layer in range(3):
        for head in range(2):
            np.testing.assert_allclose(got[layer, head], _reference(w[layer, head], 6))


def test_max_size_one_gives_the_average_row_total():
    w = np.array([[0.5, 0.5], [1.0, 0.0]])
    np.testing.assert_allclose(downsample(w, 1), [[1.0]])


@pytest.mark.parametrize("bad, message", [
    (np.zeros(4), "non-empty matrix"),
    (np.zeros((0, 3)), "non-empty matrix"),
    (np.array([[np.nan, 1.0]]), "finite"),
    (np.array([[np.inf, 1.0]]), "finite"),
])
def test_bad_input_raises_value_error(bad, message):
    with pytest.raises(ValueError, match=message):
        downsample(bad, 2)


def test_max_size_below_one_raises():
    with pytest.raises(ValueError, match="max_size must be at least 1"):
        downsample(np.eye(3), 0)


def test_block_helpers():
    assert block_factor(1024, 512) == 2
    assert block_factor(512, 512) == 1
    assert block_factor(513, 512) == 2
    np.testing.assert_array_equal(block_starts(10, 4), [0, 3, 6, 9])
    assert block_labels([f"t{i}" for i in range(10)], 4) == ["0–2", "3–5", "6–8", "9–9"]
    assert block_labels(["a", "b"], 4) == ["a", "b"]
