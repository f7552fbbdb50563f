"""Row diagnostics: entropy, effective tokens, max weight, argmax, row-sum check."""

import math

import numpy as np
import pytest

from attnviz.core.attention import multi_head_attention, scaled_dot_product_attention
from attnviz.core.diagnostics import entropy, row_diagnostics
from attnviz.core.masks import causal_mask


def test_one_hot_uniform_and_half_rows():
    w = np.array([[1.0, 0, 0, 0], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0, 0]])
    d = row_diagnostics(w)
    np.testing.assert_allclose(d.entropy, [0.0, math.log(4), math.log(2)])
    np.testing.assert_allclose(d.effective, [1.0, 4.0, 2.0])
    np.testing.assert_allclose(d.max_weight, [1.0, 0.25, 0.5])
    np.testing.assert_array_equal(d.argmax, [0, 0, 0])
    np.testing.assert_allclose(d.row_sum, [1, 1, 1])
    assert d.all_rows_ok
    assert d.max_entropy == pytest.approx(math.log(4))


def test_entropy_by_hand():
    p = [0.1, 0.2, 0.7]
    expected = -sum(x * math.log(x) for x in p)
    assert entropy(p) == pytest.approx(expected, rel=1e-12)
    assert row_diagnostics(p).effective[0] == pytest.approx(math.exp(expected), rel=1e-12)


def test_fully_masked_row_rule():
    res = scaled_dot_product_attention(np.eye(3), np.eye(3), np.eye(3),
                                       mask=np.array([[False] * 3, [True] * 3, [True] * 3]))
    d = row_diagnostics(res.weights)
    assert d.fully_masked.tolist() == [True, False, False]
    assert d.entropy[0] == 0 and d.effective[0] == 0 and d.max_weight[0] == 0
    assert d.argmax[0] == -1
    assert d.row_sum[0] == 0 and d.row_sum_ok[0]
    assert d.all_rows_ok


def test_rows_that_do_not_sum_to_one_are_flagged():
    d = row_diagnostics([[0.5, 0.2, 0.0], [0.3, 0.3, 0.4]])
    assert d.row_sum_ok.tolist() == [False, True]
    assert not d.all_rows_ok


def test_stacked_heads_and_causal_weights():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4))
    w = rng.standard_normal((4, 4))
    res = multi_head_attention(x, None, w, w, w, n_heads=2, causal=True)
    d = row_diagnostics(res.weights)
    assert d.entropy.shape == (2, 5)
    # the first query of a causal head sees one key: entropy 0, one effective token
    np.testing.assert_allclose(d.entropy[:, 0], 0.0, atol=1e-15)
    np.testing.assert_allclose(d.effective[:, 0], 1.0)
    # query i sees i + 1 keys: at most ln(i + 1)
    assert np.all(d.entropy <= np.log(np.arange(1, 6)) + 1e-12)
    assert d.all_rows_ok
    np.testing.assert_array_equal(d.argmax, np.argmax(res.weights, axis=-1))


def test_causal_uniform_scores_give_log_i():
    res = scaled_dot_product_attention(np.zeros((4, 2)), np.zeros((4, 2)), np.eye(4),
                                       mask=causal_mask(4))
    d = row_diagnostics(res.weights)
    np.testing.assert_allclose(d.effective, [1, 2, 3, 4])


@pytest.mark.parametrize("bad", [[[0.5, -0.1, 0.6]], [[np.nan, 1.0]], [[[[1.0]]]]])
def test_invalid_weights_raise_a_sentence(bad):
    with pytest.raises(ValueError):
        row_diagnostics(bad)
