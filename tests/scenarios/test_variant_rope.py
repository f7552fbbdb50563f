"""The RoPE variant: its settings, its preset, and its numbers against the rotation by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, VARIANTS, run_scenario, scaled_dot_product_attention
from attnviz.scenarios.scenario import with_variant

TOL = {"rtol": 1e-12, "atol": 1e-12}


def rotate(x, base, pairs, offset=0):
    """Rotate each row m of x by (m + offset)·base^(−2i/d_rot) in the given (a, b) pairs."""
    out = x.copy()
    d_rot = 2 * len(pairs)
    for m in range(len(x)):
        for i, (a, b) in enumerate(pairs):
            angle = (m + offset) * base ** (-2 * i / d_rot)
            c, s = np.cos(angle), np.sin(angle)
            out[m, a], out[m, b] = c * x[m, a] - s * x[m, b], s * x[m, a] + c * x[m, b]
    return out


@pytest.mark.parametrize(("layout", "fraction", "pairs"), [
    ("split_half", 1.0, [(0, 2), (1, 3)]),
    ("interleaved", 1.0, [(0, 1), (2, 3)]),
    ("split_half", 0.5, [(0, 1)]),
    ("interleaved", 0.75, [(0, 1)]),  # int(4 · 0.75) = 3: the dashboard rotates one pair
])
def test_the_preset_with_each_layout_matches_the_rotation_by_hand(layout, fraction, pairs):
    sc = PRESETS["rope_shift"].build()
    sc = replace(sc, params={**sc.params, "rope_layout": layout, "rope_fraction": fraction,
                             "rope_offset": 3})
    result = run_scenario(sc).attention
    base = sc.param("rope_base")
    q, k = (rotate(sc.x @ w, base, pairs, offset=3) for w in (sc.w_q, sc.w_k))
    expected = scaled_dot_product_attention(q, k, sc.x @ sc.w_v)
    np.testing.assert_allclose(result.q, q, **TOL)
    np.testing.assert_allclose(result.weights, expected.weights, **TOL)
    np.testing.assert_allclose(result.output, expected.output, **TOL)


@pytest.mark.parametrize("offset", [1, 7, 100, 4096])
def test_the_preset_shifting_positions_changes_no_weight_but_pe_does(offset):
    sc = PRESETS["rope_shift"].build()
    before = run_scenario(sc).attention
    after = run_scenario(replace(sc, params={**sc.params, "rope_offset": offset})).attention
    np.testing.assert_allclose(after.weights, before.weights, rtol=1e-9, atol=1e-12)
    assert not np.allclose(after.q, before.q)  # the vectors did turn
    with_pe = run_scenario(replace(sc, use_pe=True)).attention
    assert np.abs(with_pe.weights - before.weights).max() > 0.1  # visible on screen


def test_the_preset_tells_repeated_words_apart_by_distance():
    """Rows of the same word at different positions differ: RoPE carries position."""
    sc = PRESETS["rope_shift"].build()
    w = run_scenario(sc).attention.weights
    nope = run_scenario(replace(sc, variant="scaled_dot_product", params={})).attention.weights
    np.testing.assert_allclose(nope[0], nope[2], **TOL)  # NoPE: "the" at 0 and 2 alike
    assert not np.allclose(w[0], w[2])


def test_default_settings_and_the_picker():
    assert [p.name for p in VARIANTS["rope"].params] == ["rope_base", "rope_layout",
                                                         "rope_fraction", "rope_offset",
                                                         "rope_softcap", "rope_inv_freq",
                                                         "rope_attention_scaling"]
    sc = with_variant(PRESETS["seed_000"].build(), "rope")  # d_k = 3: one pair rotated
    result = run_scenario(sc).attention
    np.testing.assert_array_equal(result.q[:, 2], (sc.x @ sc.w_q)[:, 2])
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize(("params", "message"), [
    ({"rope_base": 0.0}, r"rope_base must be between 1 and 1e\+06, got 0.0"),
    ({"rope_layout": "rows"}, r"rope_layout must be one of split_half, interleaved"),
    ({"rope_fraction": 0.2}, r"rope_fraction 0.2 of the head width d_k = 4 rotates no pair"),
    ({"rope_offset": 1.5}, r"rope_offset must be a whole number"),
])
def test_bad_settings_are_refused_with_the_settings_name(params, message):
    sc = PRESETS["rope_shift"].build()
    with pytest.raises(ValueError, match=message):
        run_scenario(replace(sc, params={**sc.params, **params}))
