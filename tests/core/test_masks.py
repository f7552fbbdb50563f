"""Boolean masks, True = may attend: causal, padding and sliding-window, entry by entry."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import causal_mask, padding_mask, scaled_dot_product_attention, window_mask


def _by_rule(t_q, t_k, rule):
    """A mask written out entry by entry from a rule on (query i, key j)."""
    return np.array([[rule(i, j) for j in range(t_k)] for i in range(t_q)], dtype=bool)


def test_causal_mask_by_hand():
    assert causal_mask(3).tolist() == [[True, False, False],
                                       [True, True, False],
                                       [True, True, True]]


@pytest.mark.parametrize(("t_q", "t_k"), [(1, 1), (4, 4), (2, 5), (5, 2)])
def test_causal_mask_is_the_lower_triangle(t_q, t_k):
    mask = causal_mask(t_q, t_k)
    assert mask.dtype == np.bool_ and mask.shape == (t_q, t_k)
    assert np.array_equal(mask, _by_rule(t_q, t_k, lambda i, j: j <= i))


def test_causal_mask_defaults_to_square():
    assert causal_mask(4).shape == (4, 4)


def test_padding_mask_by_hand():
    assert padding_mask(2, 4).tolist() == [[True, True, False, False]] * 4
    assert padding_mask(1, 3, t_q=2).tolist() == [[True, False, False]] * 2


@pytest.mark.parametrize("valid_len", [0, 1, 3, 5])
def test_padding_mask_hides_the_keys_after_valid_len(valid_len):
    mask = padding_mask(valid_len, 5, t_q=3)
    assert mask.shape == (3, 5)
    assert np.array_equal(mask, _by_rule(3, 5, lambda i, j: j < valid_len))


def test_padding_mask_is_writable_and_independent():
    mask = padding_mask(1, 3)
    mask[0, 2] = True  # a copy, not a read-only broadcast view
    assert padding_mask(1, 3)[0, 2] == np.False_


def test_padding_mask_zero_valid_len_gives_fully_masked_queries():
    mask = padding_mask(0, 3)
    result = scaled_dot_product_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)),
                                          mask=mask)
    assert np.all(result.weights == 0) and np.all(result.output == 0)


def test_window_mask_by_hand():
    assert window_mask(4, width=1).astype(int).tolist() == [[1, 1, 0, 0],
                                                            [1, 1, 1, 0],
                                                            [0, 1, 1, 1],
                                                            [0, 0, 1, 1]]
    assert window_mask(3, width=0).tolist() == np.eye(3, dtype=bool).tolist()


@pytest.mark.parametrize(("t_q", "t_k", "width"), [(5, 5, 0), (5, 5, 2), (3, 6, 1), (6, 3, 4)])
@pytest.mark.parametrize("causal", [False, True])
def test_window_mask_rule(t_q, t_k, width, causal):
    mask = window_mask(t_q, t_k, width=width, causal=causal)
    if causal:
        expected = _by_rule(t_q, t_k, lambda i, j: 0 <= i - j <= width)
    else:
        expected = _by_rule(t_q, t_k, lambda i, j: abs(i - j) <= width)
    assert mask.dtype == np.bool_
    assert np.array_equal(mask, expected)


def test_wide_causal_window_is_the_causal_mask():
    assert np.array_equal(window_mask(5, width=10, causal=True), causal_mask(5))
    assert np.all(window_mask(5, width=4))


def test_masks_combine_with_logical_and():
    combined = np.logical_and(causal_mask(4), padding_mask(2, 4))
    assert np.array_equal(combined, _by_rule(4, 4, lambda i, j: j <= i and j < 2))
