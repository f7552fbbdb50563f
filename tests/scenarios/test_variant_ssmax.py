"""Scalable-Softmax (SSMax): golden numbers, the explicit-loop reference, PyTorch autograd, and
what defines it (the peak survives a long context; s·log n = 1 is plain causal attention)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from attnviz import PRESETS, run_scenario
from attnviz.core.explain import explain_row
from attnviz.scenarios.gradients import Loss, gradients
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import Scenario, scenario_inputs
from attnviz.teach.explain import formulas_for

TOL = {"rtol": 1e-12, "atol": 1e-13}
SPEC = VARIANTS["ssmax"]


def scenario(t=5, d=4, s=0.8, seed=0, **fields) -> Scenario:
    rng = np.random.default_rng(seed)
    w = {name: rng.normal(size=(d, d)) for name in ("w_q", "w_k", "w_v", "w_o")}
    return Scenario(tokens=tuple(f"t{i}" for i in range(t)), x=rng.normal(size=(t, d)),
                    variant="ssmax", params={"ssmax_s": s}, **w, **fields)


def test_golden_two_tokens():
    # x = I₂, W = I: q = k = v = I; query 1 sees 2 keys: logits s·log 2·(0, 1)/√2
    sc = Scenario(tokens=("a", "b"), x=np.eye(2), w_q=np.eye(2), w_k=np.eye(2), w_v=np.eye(2),
                  w_o=np.eye(2), variant="ssmax", params={"ssmax_s": 2.0})
    att = run_scenario(sc).attention
    z = 2.0 * math.log(2) / math.sqrt(2)
    assert att.weights[0].tolist() == [1.0, 0.0]
    np.testing.assert_allclose(att.weights[1], [1 / (1 + math.exp(z)), 1 / (1 + math.exp(-z))],
                               **TOL)
    np.testing.assert_allclose(att.scaled[1], [0.0, z], **TOL)


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_the_explicit_loop_reference(seed):
    mask = np.random.default_rng(seed).random((6, 6)) < 0.8
    for sc in (scenario(t=6, seed=seed), scenario(t=6, seed=seed, mask_kind="custom",
                                                   custom_mask=mask)):
        weights, output = SPEC.reference(scenario_inputs(sc))
        att = run_scenario(sc).attention
        np.testing.assert_allclose(att.weights, weights[0], **TOL)
        np.testing.assert_allclose(att.output, output, **TOL)


def test_gradients_match_pytorch_autograd():
    torch = pytest.importorskip("torch")
    sc = scenario(t=6, s=1.3, seed=7, temperature=0.7)
    target = np.random.default_rng(1).normal(size=(6, 4))
    ours = gradients(sc, Loss("output_mse", target)).params
    t = {n: torch.tensor(getattr(sc, n), requires_grad=True) for n in ("x", "w_q", "w_k", "w_v")}
    q, k, v = t["x"] @ t["w_q"], t["x"] @ t["w_k"], t["x"] @ t["w_v"]
    n = torch.arange(1, 7, dtype=torch.float64)[:, None]  # causal: query i sees i + 1 keys
    logits = 1.3 * torch.log(n) * (q @ k.T) / math.sqrt(4) / 0.7
    logits = logits.masked_fill(~torch.tril(torch.ones(6, 6, dtype=torch.bool)), -math.inf)
    out = torch.softmax(logits, dim=-1) @ v
    (0.5 * ((out - torch.tensor(target)) ** 2).sum()).backward()
    for name, tensor in t.items():
        np.testing.assert_allclose(ours[name], tensor.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


def test_the_preset_keeps_the_peak_where_plain_softmax_spreads_it():
    sc = PRESETS["ssmax_long"].build()
    ssmax = run_scenario(sc).attention
    plain = run_scenario(replace(sc, variant="causal", params={})).attention
    matches = [2, 9]  # the two 'idea's: the numbers the description states
    assert round(ssmax.weights[9, matches].sum(), 2) == 0.97
    assert round(plain.weights[9, matches].sum(), 2) == 0.71


def test_s_log_n_of_one_is_plain_causal_attention_for_that_query():
    sc = scenario(t=8, s=1 / math.log(8))  # the last query sees 8 keys
    ssmax = run_scenario(sc).attention
    plain = run_scenario(replace(sc, variant="causal", params={})).attention
    np.testing.assert_allclose(ssmax.weights[7], plain.weights[7], **TOL)
    assert not np.allclose(ssmax.weights[3], plain.weights[3])


def test_every_step_is_written_and_traced_from_the_recorded_modifier():
    att = run_scenario(scenario()).attention
    assert [m.key for m in att.score_mods] == ["scaled", "ssmax"]
    row = explain_row(att, 3)
    assert row.differences()["weights"] < 1e-15
    assert r"\log n_i" in formulas_for(row)["ssmax"]
    step = row.mod_steps[0]
    assert np.array_equal(step.after, att.scaled[3])
    assert "log 4" in step.mod.traced(float(step.before[1]), float(step.after[1]),
                                      step.at._replace(j=1), lambda x: f"{x:.4g}")


def test_a_setting_out_of_range_is_refused_by_name():
    with pytest.raises(ValueError, match="ssmax_s"):
        run_scenario(scenario(s=50.0))
