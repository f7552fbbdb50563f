"""The why-√d_k experiment: variance grows with d_k unscaled; the softmax saturates."""

import numpy as np
import pytest

from attnviz.teach.sqrt_dk import sqrt_dk_experiment


@pytest.fixture(scope="module")
def res():
    return sqrt_dk_experiment((1, 4, 16, 64, 256), t_k=16, n_queries=400, seed=0)


def test_variance_follows_d_k_unscaled_and_one_scaled(res):
    np.testing.assert_allclose(res.var_unscaled / res.d_ks, 1.0, rtol=0.1)
    np.testing.assert_allclose(res.var_scaled, 1.0, rtol=0.1)


def test_entropy_collapses_without_scaling(res):
    assert np.all(np.diff(res.entropy_unscaled) < 0)
    assert res.entropy_unscaled[-1] < 0.3 * res.max_entropy
    # scaled: the entropy hardly depends on d_k (d_k = 1 differs a little: a single product
    # q_1 k_1 is not Gaussian; from d_k = 4 on the sum is nearly so). The true spread over
    # d_k >= 4 is ~0.024; 400 queries add noise of about that size, so measure on 5000.
    many = sqrt_dk_experiment((1, 4, 16, 64, 256), t_k=16, n_queries=5000, seed=0)
    assert np.ptp(many.entropy_scaled) < 0.15
    assert np.ptp(many.entropy_scaled[1:]) < 0.05
    assert res.entropy_scaled[-1] > 0.8 * res.max_entropy
    assert res.max_entropy == pytest.approx(np.log(16))
    assert res.max_weight_unscaled[-1] > 0.85 > res.max_weight_scaled[-1]


def test_d_k_one_is_the_same_with_and_without_scale(res):
    assert res.var_unscaled[0] == res.var_scaled[0]
    np.testing.assert_array_equal(res.example_unscaled[0], res.example_scaled[0])


def test_reproducible_and_seeded(res):
    again = sqrt_dk_experiment((1, 4, 16, 64, 256), t_k=16, n_queries=400, seed=0)
    np.testing.assert_array_equal(again.var_unscaled, res.var_unscaled)
    other = sqrt_dk_experiment((1, 4, 16, 64, 256), t_k=16, n_queries=400, seed=1)
    assert not np.array_equal(other.var_unscaled, res.var_unscaled)


def test_example_rows_are_distributions(res):
    assert res.example_unscaled.shape == (5, 16)
    np.testing.assert_allclose(res.example_unscaled.sum(axis=1), 1.0)
    np.testing.assert_allclose(res.example_scaled.sum(axis=1), 1.0)


@pytest.mark.parametrize("kwargs", [dict(d_ks=()), dict(d_ks=(0,)), dict(d_ks=(10**6,)),
                                    dict(t_k=1), dict(n_queries=0), dict(seed=-1),
                                    dict(d_ks=(4096,) * 100, n_queries=10**5)])
def test_bad_arguments_raise_sentences(kwargs):
    with pytest.raises(ValueError):
        sqrt_dk_experiment(**kwargs)


def test_scores_drawn_through_the_norm_of_q_match_explicit_keys():
    """The experiment samples q·k as sqrt(chi2(d_k))·z; drawing q and every key gives the same
    statistics (independent reference, other seed, within Monte-Carlo error)."""
    from scipy.special import softmax
    from scipy.stats import entropy as scipy_entropy
    d_ks, t_k, n = (1, 8, 128), 8, 4000
    res = sqrt_dk_experiment(d_ks, t_k=t_k, n_queries=n, seed=5)
    rng = np.random.default_rng(123)
    for i, d_k in enumerate(d_ks):
        q = rng.standard_normal((n, d_k))
        k = rng.standard_normal((n, t_k, d_k))
        scores = np.einsum("qd,qtd->qt", q, k)
        w = softmax(scores, axis=-1)
        w_scaled = softmax(scores / np.sqrt(d_k), axis=-1)
        np.testing.assert_allclose(res.var_unscaled[i], scores.var(), rtol=0.08)
        np.testing.assert_allclose(res.entropy_unscaled[i], scipy_entropy(w, axis=-1).mean(),
                                   rtol=0.08)
        np.testing.assert_allclose(res.entropy_scaled[i],
                                   scipy_entropy(w_scaled, axis=-1).mean(), rtol=0.05)
        np.testing.assert_allclose(res.max_weight_unscaled[i], w.max(axis=-1).mean(), rtol=0.05)
