"""The backward pass of every variant (attnviz.scenarios.gradients) against central finite
differences of the forward pass, field by field, on every preset and on random scenarios.

The loss values are recomputed here from ``run_scenario``'s output with the formulas of the
module docstring, so the references share nothing with the backward code but the forward.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz import VARIANTS
from attnviz.scenarios.gradients import (
    Loss,
    default_loss,
    gradients,
    loss_terms,
    norm_sweep,
    previous_token_pattern,
)
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.scenario import projected, run_scenario, with_variant

EPS = 1e-6
REL = 1e-6


def loss_value(scenario, loss: Loss) -> float:
    """L of the scenario's forward pass, written out from the definitions."""
    att = run_scenario(scenario).attention
    if loss.kind == "output_mse":
        return 0.5 * float(np.sum((att.output - loss.target) ** 2))
    if loss.kind == "given":
        return float(np.sum(att.output * loss.target))
    p = np.asarray(att.weights).reshape(-1, *np.shape(loss.target))
    t = loss.target / np.maximum(loss.target.sum(axis=1, keepdims=True), 1e-300)
    return -float(np.mean([np.sum(t[t > 0] * np.log(ph[t > 0])) for ph in p]))


def check_fields(scenario, loss: Loss) -> None:
    """Every field gradient against central differences of ``loss_value``."""
    g = gradients(scenario, loss)
    assert g.loss == pytest.approx(loss_value(scenario, loss), rel=1e-12, abs=1e-12)
    assert g.params, "the backward pass returns no field gradient"
    for name, exact in g.params.items():
        a = np.array(getattr(scenario, name), dtype=float)
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            up, down = a.copy(), a.copy()
            up[idx] += EPS
            down[idx] -= EPS
            numeric[idx] = (loss_value(replace(scenario, **{name: up}), loss)
                            - loss_value(replace(scenario, **{name: down}), loss)) / (2 * EPS)
        assert exact.shape == a.shape, name
        top = max(np.abs(numeric).max(), 1e-3)
        err = np.abs(exact - numeric).max() / top
        assert err <= REL, f"{name}: relative error {err:.2e}"


def random_loss(scenario, kind: str, rng) -> Loss:
    att = run_scenario(scenario).attention
    if kind == "pattern_ce":
        allowed = np.asarray(att.head(0).weights) > 0
        return Loss(kind, rng.random(allowed.shape) * allowed)
    return Loss(kind, rng.normal(size=np.shape(att.output)))


def random_scenario(key: str, rng, *, mask_kind: str = "window") -> object:
    tokens = ["a", "b", "a c", "🐱", "e"]
    x = rng.normal(size=(5, 4))
    w_q, w_k, w_v = (rng.normal(size=(4, 4)) for _ in range(3))
    sc = projected(tokens, x, w_q, w_k, w_v, w_o=rng.normal(size=(4, 3)), n_heads=2,
                   use_pe=True, mask_kind=mask_kind, window=1, temperature=0.8)
    sc = with_variant(sc, key)
    if key == "cross":
        sc = replace(sc, source_tokens=("x", "y", "z"), source_x=rng.normal(size=(3, 4)))
    if key == "rope":
        sc = replace(sc, params={"rope_offset": 3, "rope_base": 7.0})
    if key == "softcap":
        sc = replace(sc, params={"softcap": 1.2})
    if key == "qk_norm":
        sc = replace(sc, params={"qk_gain": 1.5})
    if key == "sinks":  # the learned sink's column takes part in the softmax: dS̃ as before
        sc = replace(sc, params={"window": 2, "n_sink": 1, "learned_sink": True,
                                 "sink_logit": 0.5})
    return sc


@pytest.mark.parametrize("kind", ["output_mse", "pattern_ce", "given"])
@pytest.mark.parametrize("key", list(VARIANTS))
def test_every_variant_matches_finite_differences(key, kind):
    rng = np.random.default_rng(len(key) * 31 + len(kind))
    sc = random_scenario(key, rng)
    check_fields(sc, random_loss(sc, kind, rng))


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_matches_finite_differences(key):
    sc = PRESETS[key].build()
    rng = np.random.default_rng(5)
    check_fields(sc, random_loss(sc, "given", rng))


@pytest.mark.parametrize("key", [k for k, v in VARIANTS.items() if v.direct])
def test_q_k_v_given_directly_get_their_own_gradients(key):
    sc = with_variant(PRESETS["seed_001_causal"].build(), key)
    assert sc.direct
    rng = np.random.default_rng(2)
    loss = random_loss(sc, "output_mse", rng)
    assert set(gradients(sc, loss).params) == {"q_in", "k_in", "v_in"}
    check_fields(sc, loss)


def test_a_fully_masked_query_gets_zero_gradient_and_no_nan():
    rng = np.random.default_rng(9)
    sc = replace(random_scenario("scaled_dot_product", rng), mask_kind="custom",
                 custom_mask=np.tril(np.ones((5, 5), bool)) & ~np.eye(5, dtype=bool))
    g = gradients(sc, random_loss(sc, "given", rng))
    assert (g.attention.d_scaled[0, 0] == 0).all()  # query 0 sees no key
    assert all(np.isfinite(a).all() for a in g.params.values())
    check_fields(sc, random_loss(sc, "given", rng))


def test_gqa_gives_unused_key_value_blocks_zero_gradient():
    rng = np.random.default_rng(4)
    sc = random_scenario("gqa", rng)  # 2 query heads share n_kv_heads = 1 key/value head
    g = gradients(sc, random_loss(sc, "output_mse", rng))
    assert (g.params["w_k"][:, 2:] == 0).all() and (g.params["w_v"][:, 2:] == 0).all()
    assert np.abs(g.params["w_k"][:, :2]).sum() > 0


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([k for k, v in VARIANTS.items() if v.projections]),
       st.integers(0, 2**31))
def test_a_pattern_loss_gives_exactly_zero_gradient_to_w_v_and_w_o(key, seed):
    rng = np.random.default_rng(seed)
    sc = random_scenario(key, rng, mask_kind="causal")
    g = gradients(sc, random_loss(sc, "pattern_ce", rng))
    assert (g.params["w_v"] == 0).all()
    assert "w_o" not in g.params or (g.params["w_o"] == 0).all()
    mask = run_scenario(sc).mask
    assert (g.attention.d_scaled[:, ~mask] == 0).all()
    # rows of dS̃ sum to 0, or, when a sink column took a share of the row (the learned sink),
    # to (1 − Σ_j P_ij) · Σ_j P_ij dP_ij
    p = np.asarray(g.forward.attention.weights).reshape(g.attention.d_weights.shape)
    expected = (1 - p.sum(axis=-1)) * (p * g.attention.d_weights).sum(axis=-1)
    np.testing.assert_allclose(g.attention.d_scaled.sum(axis=-1), expected, atol=1e-10)


def test_the_pattern_loss_refuses_weight_on_a_masked_key_in_words():
    sc = replace(PRESETS["seed_000"].build(), mask_kind="causal")
    with pytest.raises(ValueError, match="wants weight on key 1 of query 0"):
        gradients(sc, Loss("pattern_ce", np.ones((4, 4))))


def test_targets_of_the_wrong_shape_are_refused_in_words():
    sc = PRESETS["seed_000"].build()
    with pytest.raises(ValueError, match="output's shape"):
        gradients(sc, Loss("output_mse", np.zeros((2, 2))))
    with pytest.raises(ValueError, match="weights' shape"):
        gradients(sc, Loss("pattern_ce", np.zeros((2, 2))))
    with pytest.raises(ValueError, match="negative"):
        gradients(sc, Loss("pattern_ce", -np.eye(4)))
    with pytest.raises(ValueError, match="loss must be one of"):
        Loss("hinge", np.zeros((2, 2)))


def test_pattern_rows_of_zeros_ask_nothing_and_rows_are_normalised():
    sc = PRESETS["seed_000"].build()
    target = previous_token_pattern(4, 4)
    value, _, d_w = loss_terms(Loss("pattern_ce", 3 * target), run_scenario(sc).attention)
    value1, _, d_w1 = loss_terms(Loss("pattern_ce", target), run_scenario(sc).attention)
    assert value == value1 and (d_w == d_w1).all()
    target[2] = 0
    _, _, d_w = loss_terms(Loss("pattern_ce", target), run_scenario(sc).attention)
    assert (d_w[2] == 0).all()


def test_default_losses_fit_the_scenario():
    sc = PRESETS["gqa_8_2"].build()
    for kind in ("output_mse", "pattern_ce", "given"):
        g = gradients(sc, default_loss(sc, kind))
        assert np.isfinite(g.loss)


def test_the_gradient_norm_collapses_as_the_softmax_saturates():
    # (seed 000 would keep a floor: its second query ties two keys, 4 and 4, at any scale)
    sc = random_scenario("scaled_dot_product", np.random.default_rng(0), mask_kind="none")
    loss = default_loss(sc, "output_mse")
    norms = norm_sweep(sc, loss, "scale", [0.5, 2.0, 8.0, 32.0, 128.0])
    assert norms[-1] < 1e-3 * norms.max()
    sharp, soft = norm_sweep(sc, loss, "temperature", [0.02, 1.0])
    assert sharp < 1e-3 * soft


def test_cross_entropy_on_the_weights_does_not_vanish_when_saturated():
    # dS̃ = (P − T) / n_heads: the log of the loss undoes the exp of the softmax
    sc = PRESETS["seed_000"].build()
    norms = norm_sweep(sc, default_loss(sc, "pattern_ce"), "scale", [0.5, 32.0])
    assert norms[1] > norms[0] > 1


def test_the_default_target_output_asks_for_each_token_attending_to_itself():
    sc = PRESETS["seed_000"].build()
    target = default_loss(sc, "output_mse").target
    res = run_scenario(sc).attention
    v = np.asarray(res.v)
    np.testing.assert_allclose(target, v, rtol=1e-12)  # one head, no W_O: row i is v_i
    g = gradients(sc, default_loss(sc, "output_mse"))
    assert g.loss > 0.1 and np.abs(g.params["w_q"]).max() > 1e-3  # something to learn
    causal = PRESETS["cat_sat"].build()  # causal: the diagonal is allowed
    shape = run_scenario(causal).attention.output.shape
    assert default_loss(causal, "output_mse").target.shape == shape
