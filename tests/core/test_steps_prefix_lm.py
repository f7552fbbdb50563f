"""The prefix-LM mask part (attnviz/core/steps/prefix_lm.py): against an explicit loop, the
backward pass of a list that holds it against finite differences, its dictionary and its
sentences, and in a scenario of the ``steps`` variant (numbers, loop reference and formula)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.core import steps as S
from attnviz.core.steps.prefix_lm import PrefixLM

TOL = 1e-12


def loop_allowed(prefix, t_q, t_k):
    return [[j <= i or j < prefix for j in range(t_k)] for i in range(t_q)]


def loop_weights(q, k, prefix, scale):
    """softmax over the keys query i may see, one score at a time."""
    t_q, t_k = len(q), len(k)
    out = np.zeros((t_q, t_k))
    for i in range(t_q):
        logits = {j: sum(float(a) * float(b) for a, b in zip(q[i], k[j], strict=True)) * scale
                  for j in range(t_k) if j <= i or j < prefix}
        top = max(logits.values())
        total = math.fsum(math.exp(s - top) for s in logits.values())
        for j, s in logits.items():
            out[i, j] = math.exp(s - top) / total
    return out


@settings(max_examples=60, deadline=None)
@given(prefix=st.integers(0, 9), t_q=st.integers(1, 8), t_k=st.integers(1, 8))
def test_the_mask_is_the_loop(prefix, t_q, t_k):
    got = PrefixLM(prefix).allowed(t_q, t_k)
    assert got.dtype == bool and got.tolist() == loop_allowed(prefix, t_q, t_k)


def test_the_prefix_reads_both_ways_and_the_rest_is_causal():
    m = PrefixLM(3).allowed(6, 6)
    assert m[:3, :3].all()  # the prompt: every prefix token sees every other
    assert not m[:3, 3:].any()  # ... and none of the continuation
    assert m[3:, :3].all()  # the continuation sees the whole prompt
    np.testing.assert_array_equal(m[3:, 3:], np.tril(np.ones((3, 3), dtype=bool)))
    np.testing.assert_array_equal(PrefixLM(0).allowed(5, 5), S.Causal().allowed(5, 5))
    np.testing.assert_array_equal(PrefixLM(1).allowed(5, 5), S.Causal().allowed(5, 5))
    assert PrefixLM(5).allowed(5, 5).all()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), t=st.integers(1, 7), prefix=st.integers(0, 8))
def test_a_head_with_the_part_is_the_loop(seed, t, prefix):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(3, t, 4))
    tr = S.run_head([S.Scale(), PrefixLM(prefix)], q, k, v)
    want = loop_weights(q, k, prefix, 0.5)
    np.testing.assert_allclose(tr.weights, want, rtol=0, atol=TOL)
    np.testing.assert_allclose(tr.output, want @ v, rtol=0, atol=TOL)


def test_the_backward_pass_through_a_list_with_it_is_finite_differences():
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 6, 4))
    d_out = rng.normal(size=(6, 4))
    steps = [S.RoPE(base=50.0), S.Scale(temperature=0.7), S.SoftCap(3.0), PrefixLM(2)]

    def loss(q_, k_, v_):
        return float(np.sum(S.run_head(steps, q_, k_, v_).output * d_out))

    grads = S.head_backward(steps, S.run_head(steps, q, k, v), d_out)
    eps, given = 1e-6, {"q": q, "k": k, "v": v}
    for name, got in (("q", grads.d_q_in), ("k", grads.d_k_in), ("v", grads.d_v)):
        numeric = np.zeros_like(given[name])
        for idx in np.ndindex(numeric.shape):
            moved = []
            for sign in (1, -1):
                arrays = {n: a.copy() for n, a in given.items()}
                arrays[name][idx] += sign * eps
                moved.append(loss(arrays["q"], arrays["k"], arrays["v"]))
            numeric[idx] = (moved[0] - moved[1]) / (2 * eps)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8, err_msg=name)
    # the prompt's queries get nothing from the continuation's keys
    assert np.all(grads.d_scores[:2, 2:] == 0)


def test_the_dictionary_and_its_sentences():
    assert S.STEP_TYPES["prefix_lm"] is PrefixLM  # registered by its module alone
    [back] = S.from_dicts(S.to_dicts([PrefixLM(3)]))
    assert isinstance(back, PrefixLM) and back.prefix == 3
    for value in (-1, 2.5, True, "3"):
        with pytest.raises(ValueError, match=r"step 0 \(prefix_lm\): the prefix length must be a "
                                             r"whole number from 0 to"):
            S.from_dicts([{"step": "prefix_lm", "prefix": value}])
    assert PrefixLM(4).written() == r"M_{ij} = (j \le i \vee j < 4)"


def prefix_scenario(prefix: int, **fields):
    from attnviz.scenarios.scenario import projected

    rng = np.random.default_rng(7)
    x = rng.normal(size=(5, 4))
    w_q, w_k, w_v = rng.normal(size=(3, 4, 4))
    return projected([f"t{i}" for i in range(5)], x, w_q, w_k, w_v, variant="steps",
                     params={"steps": (PrefixLM(prefix),)}, **fields)


def test_it_works_in_the_steps_variant_and_its_formula():
    from attnviz.scenarios.scenario import run_scenario, scenario_inputs, written

    sc = prefix_scenario(2, temperature=0.8)
    result = run_scenario(sc)
    weights = result.attention.weights
    q, k = sc.x @ sc.w_q, sc.x @ sc.w_k
    np.testing.assert_allclose(weights, loop_weights(q, k, 2, 1 / (2 * 0.8)), rtol=0, atol=TOL)
    ref_weights, ref_out = sc.spec.reference(scenario_inputs(sc))
    np.testing.assert_allclose(weights, np.asarray(ref_weights).reshape(weights.shape), atol=TOL)
    np.testing.assert_allclose(result.attention.output, ref_out, atol=TOL)
    formula = sc.spec.written(written(sc, result.mask))
    assert r"M_{ij} = (j \le i \vee j < 2)" in formula and r"\mathrm{mask}_M" in formula
    # the user's causal mask joins it as one more part: the prefix is masked again
    causal = run_scenario(prefix_scenario(2, mask_kind="causal")).attention.weights
    assert causal[0, 1] == 0 < weights[0, 1]


def test_the_package_registers_it_without_a_line_of_its_own():
    # a fresh interpreter that imports only the package (as the app does before it opens a
    # file naming the step) knows the step
    code = ("from attnviz.core import steps; "
            "[s] = steps.from_dicts([{'step': 'prefix_lm', 'prefix': 2}]); print(type(s).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0 and out.stdout.strip() == "PrefixLM", out.stderr[-400:]
