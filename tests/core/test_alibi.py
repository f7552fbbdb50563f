"""ALiBi (attnviz.core.alibi): the paper's slopes and the bias −m_h·(i − j)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.core.alibi import alibi_bias, alibi_slopes


def reference_get_slopes(n):
    """Press et al.'s reference code (attention_with_linear_biases, ``get_slopes``), as printed
    in the repository's README."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + reference_get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


@pytest.mark.parametrize("n_heads", range(1, 33))
def test_slopes_are_the_reference_codes(n_heads):
    # the reference multiplies 16 times (start·ratio^i): a few ulps from 2^(−8(h+1)/n)
    np.testing.assert_allclose(alibi_slopes(n_heads), reference_get_slopes(n_heads),
                               rtol=1e-14, atol=0)


def test_golden_slopes():
    np.testing.assert_array_equal(alibi_slopes(8), [1 / 2 ** k for k in range(1, 9)])
    # 12 heads: the 8 slopes of 8 heads, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...)
    np.testing.assert_allclose(alibi_slopes(12)[8:], [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5])


def test_the_power_of_two_formula_for_12_heads_is_a_different_set():
    """The pitfall: 2^(−8h/12) for 12 heads is not what ALiBi models were trained with."""
    wrong = 2.0 ** (-8.0 * np.arange(1, 13) / 12)
    assert not np.allclose(np.sort(wrong), np.sort(alibi_slopes(12)))


def test_bias_is_minus_slope_times_distance_written_out():
    n, t_q, t_k = 3, 4, 6
    bias = alibi_bias(n, t_q, t_k)
    slopes = alibi_slopes(n)
    assert bias.shape == (n, t_q, t_k)
    for h in range(n):
        for i in range(t_q):
            for j in range(t_k):
                assert bias[h, i, j] == -slopes[h] * (i - j)
    np.testing.assert_array_equal(np.diagonal(bias, axis1=1, axis2=2), 0)


def test_given_slopes_are_used():
    np.testing.assert_array_equal(alibi_bias(2, 2, slopes=[1.0, 3.0])[:, 1, 0], [-1.0, -3.0])


@pytest.mark.parametrize(("call", "message"), [
    (lambda: alibi_slopes(0), r"n_heads must be a whole number >= 1"),
    (lambda: alibi_slopes(2.5), r"n_heads must be a whole number"),
    (lambda: alibi_bias(2, 0), r"t_q must be a whole number >= 1"),
    (lambda: alibi_bias(2, 3, slopes=[1.0]), r"slopes must have one entry per head \(2\)"),
])
def test_validation_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
