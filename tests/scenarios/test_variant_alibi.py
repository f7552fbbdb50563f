"""The ALiBi variant: causal heads with the paper's slopes, against a per-query loop."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, run_scenario
from attnviz.scenarios.scenario import with_variant

TOL = {"rtol": 1e-12, "atol": 1e-12}


def loop(sc, slopes):
    """Head h, query i: softmax over keys j <= i of q·k/√d_k − m_h·(i − j)."""
    n, t = sc.n_heads, sc.t
    d_k, d_v = sc.w_q.shape[1] // n, sc.w_v.shape[1] // n
    weights = np.zeros((n, t, t))
    heads = []
    for h in range(n):
        q, k, v = (sc.x @ w[:, h * d:(h + 1) * d]
                   for w, d in ((sc.w_q, d_k), (sc.w_k, d_k), (sc.w_v, d_v)))
        out = np.zeros((t, d_v))
        for i in range(t):
            logits = np.array([q[i] @ k[j] / np.sqrt(d_k) - slopes[h] * (i - j)
                               for j in range(i + 1)])
            e = np.exp(logits - logits.max())
            weights[h, i, :i + 1] = e / e.sum()
            out[i] = weights[h, i, :i + 1] @ v[:i + 1]
        heads.append(out)
    return weights, np.hstack(heads) @ sc.w_o


def test_the_preset_matches_the_loop_with_the_papers_four_slopes():
    sc = PRESETS["alibi_local"].build()
    weights, output = loop(sc, [1 / 4, 1 / 16, 1 / 64, 1 / 256])
    result = run_scenario(sc).attention
    np.testing.assert_allclose(result.weights, weights, **TOL)
    np.testing.assert_allclose(result.output, output, **TOL)


def test_the_preset_steep_heads_look_near_shallow_heads_far():
    w = run_scenario(PRESETS["alibi_local"].build()).attention.weights  # (4, 8, 8)
    last = w[:, -1]  # the last query's weights, per head
    assert np.all(np.diff(last[0]) > 0)  # head 0: weight grows towards the query
    assert last[0, -1] > 2 * last[0, 0]
    assert last[3].max() - last[3].min() < last[0].max() - last[0].min()


def test_three_heads_use_the_interleaving_rule():
    sc = with_variant(PRESETS["seed_000"].build(), "alibi")
    sc = replace(sc, n_heads=3)
    weights, output = loop(sc, [2 ** -4, 2 ** -8, 2 ** -2])
    result = run_scenario(sc).attention
    np.testing.assert_allclose(result.weights, weights, **TOL)
    np.testing.assert_allclose(result.output, output, **TOL)
    assert np.all(np.triu(result.weights[0], 1) == 0)


def test_the_bias_is_in_scaled_not_in_scores():
    sc = PRESETS["alibi_local"].build()
    result = run_scenario(sc).attention
    d_k = sc.w_q.shape[1] // sc.n_heads
    distance = np.arange(8)[:, None] - np.arange(8)[None, :]
    np.testing.assert_allclose(result.scaled[0], result.scores[0] / np.sqrt(d_k)
                               - 0.25 * distance, **TOL)


def test_a_head_count_that_does_not_divide_the_weights_is_refused():
    sc = replace(PRESETS["alibi_local"].build(), n_heads=3)
    with pytest.raises(ValueError, match=r"n_heads \(3\) must divide the number of columns "
                                         r"of w_q \(4\)"):
        run_scenario(sc)
