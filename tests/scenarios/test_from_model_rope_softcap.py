"""The RoPE variant's soft-cap (``rope_softcap``), added so a Gemma 2 head (rotated and capped)
opens as one scenario (attnviz.scenarios.from_model.layer_scenario): 0 is no cap; c > 0 passes
the scaled scores through c·tanh(s / c), as the soft-capping variant does, and agrees with the
variant's explicit loops; the backward pass carries the cap's derivative."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import run_scenario, scenario_inputs

TOL = dict(rtol=0, atol=1e-12)


def rope_preset(cap: float | None = None):
    sc = PRESETS["rope_shift"].build()
    return sc if cap is None else replace(sc, params={**sc.params, "rope_softcap": cap})


def test_no_cap_by_default_and_at_zero():
    plain, zero = rope_preset(), rope_preset(0.0)
    assert "rope_softcap" not in plain.params and plain.param("rope_softcap") == 0.0
    a, b = run_scenario(plain).attention, run_scenario(zero).attention
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.softcap is None and b.softcap is None


def test_the_cap_bends_the_scaled_scores_and_matches_the_loops():
    plain = run_scenario(rope_preset()).attention
    capped_sc = rope_preset(0.5)
    capped = run_scenario(capped_sc).attention
    assert capped.softcap == 0.5
    np.testing.assert_allclose(capped.scaled, 0.5 * np.tanh(plain.scaled / 0.5), **TOL)
    assert np.abs(capped.weights - plain.weights).max() > 1e-2  # the cap binds here
    weights, output = VARIANTS["rope"].reference(scenario_inputs(capped_sc))
    np.testing.assert_allclose(capped.weights, weights[0], **TOL)  # (1, t, t): one head
    np.testing.assert_allclose(capped.output, output, **TOL)


def test_the_backward_pass_carries_the_caps_derivative():
    """∂L/∂W_Q by the variant's backward pass against central differences, with the cap."""
    sc = rope_preset(0.5)
    spec = VARIANTS["rope"]
    inputs = scenario_inputs(sc)
    result = spec.compute(inputs)
    d_out = np.random.default_rng(0).normal(size=np.shape(result.output))
    _, grads = spec.backward(inputs, result, d_out, None)

    def loss(w_q):
        return float((run_scenario(replace(sc, w_q=w_q)).attention.output * d_out).sum())

    eps, numeric = 1e-6, np.zeros_like(sc.w_q)
    for idx in np.ndindex(sc.w_q.shape):
        up, down = sc.w_q.copy(), sc.w_q.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(grads["w_q"], numeric, rtol=1e-5, atol=1e-8)


def test_the_formula_writes_the_cap_only_when_it_is_on():
    from attnviz.core.steps import SoftCap as SoftCapStep
    from attnviz.scenarios.scenario import written

    plain, capped = rope_preset(), rope_preset(0.5)
    def caps(sc):
        return [s.cap for s in written(sc).steps if isinstance(s, SoftCapStep)]

    assert caps(plain) == [] and caps(rope_preset(0.0)) == []
    assert caps(capped) == [0.5]  # the variant's own settings wrote the cap step
    assert r"\tanh" not in VARIANTS["rope"].written(written(plain))
    formula = VARIANTS["rope"].written(written(capped))
    assert r"c\,\tanh" in formula and r"(R_{\Theta,m}\,q_m)" in formula
    assert formula.count("{") == formula.count("}")
