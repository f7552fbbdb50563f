"""A scenario of attention steps (the ``steps`` variants, attnviz.scenarios.variants.steps).

Golden: every preset read as a list of steps (``as_steps``) computes every matrix its own
variant computes — forward, the multi-head form and the backward pass (tests/scenarios/golden.py's
``matrices``) — within golden.py's tolerance (1e-12 of each matrix's scale); additive attention,
whose scores are not dot products, is refused in a sentence. Files and links keep a list;
the explicit-loop reference agrees on lists that combine steps no single variant has."""

from __future__ import annotations

import numpy as np
import pytest
from golden import difference, matrices

from attnviz.core import steps as S
from attnviz.io import scenario_io
from attnviz.scenarios.gradients import Loss, gradients
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import projected, run_scenario, scenario_inputs, written
from attnviz.scenarios.variants.steps import as_steps

NOT_DOT_PRODUCTS = {"bahdanau"}


@pytest.mark.parametrize("key", sorted(PRESETS))
def test_every_preset_as_steps_computes_its_own_numbers(key):
    scenario = PRESETS[key].build()
    if key in NOT_DOT_PRODUCTS:
        with pytest.raises(ValueError, match="not a list of dot-product steps"):
            as_steps(scenario)
        return
    listed = as_steps(scenario)
    assert listed.variant in ("steps", "steps_source")
    want, got = matrices(scenario), matrices(listed)
    changed = {name: difference(value, got.get(name)) for name, value in want.items()}
    changed = {name: why for name, why in changed.items() if why is not None}
    assert not changed, changed


def test_only_additive_attention_is_not_a_list():
    refused = set()
    for key, preset in PRESETS.items():
        try:
            as_steps(preset.build())
        except ValueError:
            refused.add(key)
    assert refused == NOT_DOT_PRODUCTS


def combined(**fields):
    rng = np.random.default_rng(11)
    x = rng.normal(size=(6, 5))
    w_q, w_k, w_v = rng.normal(size=(3, 5, 8)) * 0.7
    listed = (S.Heads(2, 1, project_out=True),
              S.QKNorm(tuple(rng.uniform(0.5, 1.5, 4)), tuple(rng.uniform(0.5, 1.5, 4)), 1e-6),
              S.RoPE(base=100.0, layout="interleaved"), S.ALiBi((0.3, 0.1), "key"),
              S.SoftCap(2.5), S.Causal(), S.Window(4), S.SinkSoftmax((0.5, -0.5)))
    return projected([f"t{i}" for i in range(6)], x, w_q, w_k, w_v,
                     w_o=rng.normal(size=(8, 5)), variant="steps", n_heads=2,
                     params={"steps": listed}, **fields)


@pytest.mark.parametrize("fields", [{}, dict(temperature=0.6, scale_mode="custom",
                                             custom_scale=0.4, mask_kind="padding",
                                             valid_len=5)])
def test_a_combined_list_matches_its_explicit_loops(fields):
    sc = combined(**fields)
    result = run_scenario(sc).attention
    weights, output = sc.spec.reference(scenario_inputs(sc))
    np.testing.assert_allclose(result.weights, weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.output, output, rtol=0, atol=1e-12)
    assert (result.weights.sum(axis=2) < 1).all()  # the sinks take a share of every row


def test_a_combined_lists_gradients_match_finite_differences():
    sc = combined()
    target = np.random.default_rng(3).normal(size=(6, 5))
    g = gradients(sc, Loss("output_mse", target))
    eps = 1e-6

    def loss(s):
        return gradients(s, Loss("output_mse", target)).loss

    from dataclasses import replace
    for name in ("w_q", "w_k", "x"):
        base = np.array(getattr(sc, name))
        for idx in [(0, 0), (1, 3), (2, 4)]:
            up, down = base.copy(), base.copy()
            up[idx] += eps
            down[idx] -= eps
            num = (loss(replace(sc, **{name: up})) - loss(replace(sc, **{name: down}))) / (2 * eps)
            assert abs(g.params[name][idx] - num) < 1e-6 * max(1.0, abs(num)), (name, idx)


def test_a_list_survives_files_and_links():
    sc = combined(temperature=0.8)
    for back in (scenario_io.from_json(scenario_io.to_json(sc)),
                 scenario_io.from_link_param(scenario_io.to_link_param(sc))):
        assert S.to_dicts(back.params["steps"]) == S.to_dicts(sc.params["steps"])
        np.testing.assert_array_equal(run_scenario(back).attention.weights,
                                      run_scenario(sc).attention.weights)


def test_a_file_with_a_bad_step_is_refused_in_a_sentence():
    data = scenario_io.to_dict(combined())
    data["params"]["steps"][1]["step"] = "warp"
    with pytest.raises(ValueError, match="'warp' is not a step"):
        scenario_io.from_dict(data)
    data = scenario_io.to_dict(combined())
    data["params"]["steps"].append({"step": "scale"})
    with pytest.raises(ValueError, match="leave the scale step out"):
        scenario_io.from_dict(data)


def test_the_formula_is_written_from_the_list():
    sc = combined(temperature=0.5)
    w = written(sc, run_scenario(sc).mask)
    formula, query = sc.spec.written(w), sc.spec.written_query(w)
    for piece in (r"\tau", r"\mathrm{softmax}_{+s_h}", r"c\,\tanh", r"b_{ij} = m_h\,j",
                  r"\mathrm{Concat}", r"(j \le i) \wedge (i - 4 < j \le i)", r"\circ g_q"):
        assert piece in formula, piece
    assert query == r"q_i = R(p_i)\,(\mathrm{RMS}\!\left((x_i W_Q)\right) \circ g_q)," \
                    r"\quad k_j \text{ likewise}"


def grouped(qk_step: str):
    """Four query heads on two key/value heads, a q/k step with one table row per query head
    (the two query heads of a group share the key's row, as a model's per-key-head norm
    gives), a causal mask and W_O."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, 6))
    w_q, w_k, w_v = rng.normal(size=(3, 6, 12))
    rows = [tuple(map(tuple, a)) for a in (
        rng.uniform(0.5, 1.5, (4, 3)), np.repeat(rng.uniform(0.5, 1.5, (2, 3)), 2, axis=0))]
    step = S.QKLayerNorm(*rows, tuple(map(tuple, rng.normal(size=(4, 3)) * 0.2)),
                         tuple(map(tuple, np.repeat(rng.normal(size=(2, 3)) * 0.2, 2, axis=0)))) \
        if qk_step == "layernorm" else \
        S.QKNormAcross(*rows, tuple(map(tuple, rng.uniform(0, 2, (4, 5)))),
                       tuple(map(tuple, np.repeat(rng.uniform(0, 2, (2, 5)), 2, axis=0))),
                       q_width=12, k_width=6)
    listed = (S.Heads(4, 2, project_out=True), step, S.Causal(), S.Softmax())
    return projected([f"t{i}" for i in range(5)], x, w_q, w_k, w_v, w_o=rng.normal(size=(12, 6)),
                     variant="steps", n_heads=4, params={"steps": listed})


@pytest.mark.parametrize("qk_step", ["layernorm", "across"])
def test_grouped_heads_take_the_keys_row_of_the_query_heads_that_read_them(qk_step):
    """The loops and the backward pass read a key's table row where the forward pass does."""
    from dataclasses import replace

    sc = grouped(qk_step)
    result = run_scenario(sc).attention
    weights, output = sc.spec.reference(scenario_inputs(sc))
    np.testing.assert_allclose(result.weights, weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.output, output, rtol=0, atol=1e-11)
    target = np.random.default_rng(3).normal(size=(5, 6))
    g = gradients(sc, Loss("output_mse", target))
    eps = 1e-6

    def loss(s):
        return gradients(s, Loss("output_mse", target)).loss

    for name, idx in (("w_k", (0, 0)), ("w_k", (4, 5)), ("w_k", (2, 10)), ("w_q", (1, 7)),
                      ("x", (3, 2))):
        up, down = (np.array(getattr(sc, name)) for _ in range(2))
        up[idx] += eps
        down[idx] -= eps
        num = (loss(replace(sc, **{name: up})) - loss(replace(sc, **{name: down}))) / (2 * eps)
        assert abs(g.params[name][idx] - num) < 1e-6 * max(1.0, abs(num)), (name, idx)
