"""The RoPE variant with given frequencies (``rope_inv_freq``) and an attention scaling
(``rope_attention_scaling``): what a real model's scaled RoPE (linear, YaRN, Llama 3) opens
with. Checked against the rotation by hand, the explicit-loop reference, the core's
apply_rope, the relative-position property, the backward pass by central differences, the
formula, and the settings' messages.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from reference import central_differences

from attnviz import PRESETS, VARIANTS, run_scenario, scaled_dot_product_attention
from attnviz.core.rope import apply_rope
from attnviz.core.steps import RoPE as RoPEStep
from attnviz.scenarios.gradients import default_loss, gradients
from attnviz.scenarios.scenario import scenario_inputs, written

TOL = {"rtol": 1e-12, "atol": 1e-12}
FREQ = (0.7, 0.031)  # two pairs: the preset's d_k = 4
SCALING = 1.3


def preset(**params):
    sc = PRESETS["rope_shift"].build()
    return replace(sc, params={**sc.params, **params})


def by_hand(x, freq, scaling, offset=0):
    """Split-half pairs (i, i + d/2) of row m turned by (m + offset)·freq[i], times scaling."""
    out = x.copy()
    half = len(freq)
    for m in range(len(x)):
        for i, theta in enumerate(freq):
            c, s = np.cos((m + offset) * theta), np.sin((m + offset) * theta)
            a, b = x[m, i], x[m, i + half]
            out[m, i], out[m, i + half] = scaling * (c * a - s * b), scaling * (s * a + c * b)
    return out


def test_given_frequencies_and_scaling_match_the_rotation_by_hand():
    sc = preset(rope_inv_freq=FREQ, rope_attention_scaling=SCALING, rope_offset=2)
    result = run_scenario(sc).attention
    q, k = (by_hand(sc.x @ w, FREQ, SCALING, offset=2) for w in (sc.w_q, sc.w_k))
    expected = scaled_dot_product_attention(q, k, sc.x @ sc.w_v)
    np.testing.assert_allclose(result.q, q, **TOL)
    np.testing.assert_allclose(result.k, k, **TOL)
    np.testing.assert_allclose(result.weights, expected.weights, **TOL)
    np.testing.assert_allclose(result.output, expected.output, **TOL)
    # the core's apply_rope with the same inv_freq and attention_scaling
    np.testing.assert_allclose(result.q, apply_rope(sc.x @ sc.w_q, inv_freq=FREQ,
                                                    attention_scaling=SCALING, offset=2), **TOL)


def test_the_loop_reference_reads_the_frequencies_and_scaling():
    for params in ({"rope_inv_freq": FREQ}, {"rope_attention_scaling": SCALING},
                   {"rope_inv_freq": FREQ, "rope_attention_scaling": SCALING}):
        sc = preset(**params)
        weights, output = VARIANTS["rope"].reference(scenario_inputs(sc))
        result = run_scenario(sc).attention
        np.testing.assert_allclose(np.asarray(result.weights)[None], weights, **TOL)
        np.testing.assert_allclose(result.output, output, **TOL)


def test_each_setting_matters_and_the_base_does_not_once_frequencies_are_given():
    plain = run_scenario(preset()).attention.weights
    given = run_scenario(preset(rope_inv_freq=FREQ)).attention.weights
    scaled = run_scenario(preset(rope_inv_freq=FREQ, rope_attention_scaling=SCALING)
                          ).attention.weights
    assert np.abs(given - plain).max() > 1e-3
    assert np.abs(scaled - given).max() > 1e-3
    other_base = run_scenario(preset(rope_inv_freq=FREQ, rope_base=77.0)).attention.weights
    np.testing.assert_array_equal(other_base, given)
    # the frequencies base^(−2i/d) given as numbers: the same as from the base
    base = preset().param("rope_base")
    as_numbers = tuple(base ** (-np.arange(0, 4, 2) / 4))
    np.testing.assert_allclose(run_scenario(preset(rope_inv_freq=as_numbers)).attention.weights,
                               plain, **TOL)


def test_the_scaling_multiplies_the_scores_by_its_square():
    one = run_scenario(preset(rope_inv_freq=FREQ)).attention
    two = run_scenario(preset(rope_inv_freq=FREQ, rope_attention_scaling=SCALING)).attention
    np.testing.assert_allclose(two.scores, SCALING ** 2 * one.scores, **TOL)


@pytest.mark.parametrize("offset", [1, 9, 4096])
def test_a_shift_of_positions_still_changes_no_weight(offset):
    sc = preset(rope_inv_freq=FREQ, rope_attention_scaling=SCALING)
    before = run_scenario(sc).attention.weights
    after = run_scenario(replace(sc, params={**sc.params, "rope_offset": offset})
                         ).attention.weights
    np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12)



def test_the_backward_pass_reads_the_frequencies_and_scaling():
    """∂L/∂W_Q, ∂L/∂W_K and ∂L/∂x against central differences of the forward."""
    sc = preset(rope_inv_freq=FREQ, rope_attention_scaling=SCALING)
    loss = default_loss(sc, "output_mse")
    ours = gradients(sc, loss)
    for field in ("w_q", "w_k", "x"):
        numeric = central_differences(sc, field, lambda s: float(gradients(s, loss).loss))
        np.testing.assert_allclose(ours.params[field], numeric, rtol=1e-5, atol=1e-8,
                                   err_msg=field)
    plain = gradients(preset(), default_loss(preset(), "output_mse"))
    assert np.abs(plain.params["w_q"] - ours.params["w_q"]).max() > 1e-3


def test_the_formula_says_where_the_frequencies_come_from():
    rope = VARIANTS["rope"]
    plain = rope.written(written(preset()))
    assert r"\theta_i = b^{-2i/d}" in plain and "from the model" not in plain
    assert r"a\," not in plain
    given = rope.written(written(preset(rope_inv_freq=FREQ, rope_attention_scaling=SCALING)))
    assert r"\theta_i\ \text{from the model (not from the base } b\text{)}" in given
    assert r"b^{-2i/d}" not in given
    assert r"(a\,R_{\Theta,m}\,q_m)^\top (a\,R_{\Theta,n}\,k_n)" in given
    assert r"a = 1.3" in given and given.count("{") == given.count("}")
    w = written(preset(rope_inv_freq=FREQ))
    [step] = [s for s in w.steps if isinstance(s, RoPEStep)]  # the settings as the step reads them
    assert step.inv_freq == FREQ and step.attention_scaling == 1.0
    assert r"a\," not in rope.written(w)


@pytest.mark.parametrize(("value", "message"), [
    ((0.5,), r"rope_inv_freq holds 1 frequencies, but a head of width d_k = 4 rotating the "
             r"fraction 1 has 2 pairs; set the head width back to the model's, or drop the "
             r"model's frequencies"),
    ((0.5, 0.1, 0.01), r"rope_inv_freq holds 3 frequencies, but a head of width d_k = 4"),
    ((0.5, float("nan")), r"rope_inv_freq\[1\] must be a positive finite number, got nan"),
    ((0.5, float("inf")), r"rope_inv_freq\[1\] must be a positive finite number, got inf"),
    ((0.0, 0.1), r"rope_inv_freq\[0\] must be a positive finite number, got 0.0"),
    ((0.5, -0.1), r"rope_inv_freq\[1\] must be a positive finite number, got -0.1"),
    ("0.5, 0.1", r"rope_inv_freq must be a list of positive numbers, got '0.5\? 0.1'"),
    ((0.5, "x"), r"rope_inv_freq\[1\] must be a number, got 'x'"),
    ((0.5, True), r"rope_inv_freq\[1\] must be a number, got True"),
    (tuple([0.5] * 65), r"rope_inv_freq holds 65 numbers; at most 64"),
])
def test_bad_frequencies_are_refused_in_sentences(value, message):
    with pytest.raises(ValueError, match=message):
        run_scenario(preset(rope_inv_freq=value))


@pytest.mark.parametrize(("value", "message"), [
    (0.0, r"rope_attention_scaling must be between 0.01 and 100, got 0.0"),
    (-1.0, r"rope_attention_scaling must be between 0.01 and 100, got -1.0"),
    (float("nan"), r"rope_attention_scaling must be a finite number, got nan"),
])
def test_a_bad_attention_scaling_is_refused_in_a_sentence(value, message):
    with pytest.raises(ValueError, match=message):
        run_scenario(preset(rope_attention_scaling=value))


def test_a_partial_rotary_head_takes_one_frequency_per_rotated_pair():
    sc = preset(rope_fraction=0.5, rope_inv_freq=FREQ[:1])
    result = run_scenario(sc).attention
    q = sc.x @ sc.w_q
    np.testing.assert_allclose(result.q[:, 2:], q[:, 2:], **TOL)  # not rotated
    np.testing.assert_allclose(result.q, apply_rope(q, inv_freq=FREQ[:1]), **TOL)
    with pytest.raises(ValueError, match=r"rope_inv_freq holds 2 frequencies, but a head of "
                                         r"width d_k = 4 rotating the fraction 0.5 has 1 pairs"):
        run_scenario(preset(rope_fraction=0.5, rope_inv_freq=FREQ))


def test_a_setting_can_only_be_overridden_by_a_vector_setting_of_its_variant():
    from attnviz.scenarios.variant import Param, Variant

    rope = VARIANTS["rope"]
    assert rope.param("rope_base").overridden_by == "rope_inv_freq"
    with pytest.raises(ValueError, match=r"variant x: b is overridden_by 'c', which is not one "
                                         r"of its vector settings"):
        Variant(key="x", name="X", description="", formula="", compute=rope.compute, order=0,
                params=(Param("b", "B", 1.0, overridden_by="c"), Param("c", "C", 2.0)))
