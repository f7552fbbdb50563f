"""Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), hand-checked entry by entry."""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference

from attnviz import sinusoidal_positional_encoding


def test_position_zero_is_sin0_cos0():
    pe = sinusoidal_positional_encoding(3, 8)
    assert pe[0].tolist() == [0.0, 1.0] * 4


def test_hand_checked_entries():
    d = 6
    pe = sinusoidal_positional_encoding(5, d)
    assert pe[1, 0] == pytest.approx(math.sin(1))
    assert pe[1, 1] == pytest.approx(math.cos(1))
    for t in range(5):
        assert pe[t, 0] == pytest.approx(math.sin(t))
        assert pe[t, 2] == pytest.approx(math.sin(t / 10000 ** (2 / d)))
        assert pe[t, 3] == pytest.approx(math.cos(t / 10000 ** (2 / d)))
        assert pe[t, 4] == pytest.approx(math.sin(t / 10000 ** (4 / d)))
        assert pe[t, 5] == pytest.approx(math.cos(t / 10000 ** (4 / d)))


@pytest.mark.parametrize(("n", "d", "base"), [(1, 1, 10000.0), (7, 4, 10000.0), (10, 5, 10000.0),
                                              (6, 3, 1000.0), (4, 2, 2.0)])
def test_matches_the_loop_reference(n, d, base):
    pe = sinusoidal_positional_encoding(n, d, base=base)
    assert pe.shape == (n, d) and pe.dtype == np.float64
    np.testing.assert_allclose(pe, reference.positional_encoding(n, d, base), rtol=1e-12,
                               atol=1e-12)


def test_odd_d_model_ends_with_a_sine():
    d = 5
    pe = sinusoidal_positional_encoding(4, d)
    assert pe.shape == (4, 5)
    for t in range(4):  # column 4 = 2i with i = 2: sin(t / 10000^(4/5))
        assert pe[t, 4] == pytest.approx(math.sin(t / 10000 ** (4 / d)))
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_seed_002_base_1000_is_a_different_encoding():
    """Seed 002 prints the base as 1000 (a typo for the paper's 10000): the numbers differ."""
    paper = sinusoidal_positional_encoding(4, 4)
    typo = sinusoidal_positional_encoding(4, 4, base=1000.0)
    np.testing.assert_array_equal(paper[:, :2], typo[:, :2])  # i = 0: base^0 = 1 either way
    assert not np.allclose(paper[1:, 2:], typo[1:, 2:])
    assert typo[1, 2] == pytest.approx(math.sin(1 / 1000 ** 0.5))


def test_values_lie_in_minus_one_to_one_and_rows_are_distinct():
    pe = sinusoidal_positional_encoding(50, 16)
    assert np.all(np.abs(pe) <= 1)
    assert len({tuple(row) for row in pe.round(12)}) == 50
    # each (sin, cos) pair is on the unit circle
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, rtol=1e-12)
