"""A head of a trained induction model as a scenario (attnviz.scenarios.from_model): the
dashboard's own run path computes exactly the model's weights and the head's output, with
learned positions, with RoPE and with layer norm, for every head."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.core.transformer import head_view, init_params
from attnviz.io.examples.make_induction_model import load_induction_model
from attnviz.scenarios.from_model import head_scenario, token_labels
from attnviz.scenarios.induction import InductionSettings, heldout_forward
from attnviz.scenarios.scenario import run_scenario


class Untrained:
    """Random parameters of ``settings`` (what a run or a shipped model holds)."""

    def __init__(self, settings: InductionSettings, seed: int = 3):
        self.settings = settings
        self.params = init_params(settings.config(), seed=seed)


SHIPPED = load_induction_model()


def check_head(model, layer: int, head: int) -> None:
    sc = head_scenario(model, layer, head)
    result = heldout_forward(model.params, model.settings)
    view = head_view(result, layer, head)
    att = run_scenario(sc).attention
    np.testing.assert_allclose(att.weights, result.layers[layer].weights[0, head], rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(att.output @ sc.w_o, view.output, rtol=0, atol=1e-12)
    np.testing.assert_allclose(att.output, result.layers[layer].mixed[0, head], rtol=0,
                               atol=1e-12)
    assert att.scale == pytest.approx(1 / np.sqrt(model.settings.d_head))
    assert np.all(np.triu(att.weights, 1) == 0)  # causal


@pytest.mark.parametrize("layer,head", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_every_head_of_the_shipped_model_opens_with_its_own_weights(layer, head):
    check_head(SHIPPED, layer, head)


def test_the_scenario_holds_the_heads_matrices_and_the_sequence():
    sc = head_scenario(SHIPPED, 1, 1, title="induction head", description="L1 H1")
    w = SHIPPED.params.layer(1)
    np.testing.assert_array_equal(sc.w_q, w["w_q"][1])
    np.testing.assert_array_equal(sc.w_k, w["w_k"][1])
    np.testing.assert_array_equal(sc.w_v, w["w_v"][1])
    np.testing.assert_array_equal(sc.w_o, w["w_o"][1])
    assert sc.tokens == token_labels(SHIPPED.record["heldout_tokens"])
    assert sc.tokens[0] == f"t{SHIPPED.record['heldout_tokens'][0]}"
    assert (sc.variant, sc.scale_mode, sc.use_pe) == ("causal", "sqrt_dk", False)
    assert (sc.title, sc.description) == ("induction head", "L1 H1")
    # the head's input is the residual stream after layer 0, not the embedding
    result = heldout_forward(SHIPPED.params, SHIPPED.settings)
    np.testing.assert_array_equal(sc.x, result.layers[0].x_out[0])


def test_a_rope_model_opens_with_the_rope_variant_and_the_causal_mask():
    model = Untrained(InductionSettings(positional="rope"))
    for layer, head in [(0, 0), (1, 1)]:
        check_head(model, layer, head)
    sc = head_scenario(model, 1, 0)
    assert (sc.variant, sc.mask_kind) == ("rope", "causal")
    assert sc.params["rope_base"] == model.params.config.rope_base


def test_an_alibi_model_opens_as_steps_with_each_heads_own_slope():
    model = Untrained(InductionSettings(positional="alibi"))
    for layer, head in [(0, 0), (0, 1), (1, 1)]:
        check_head(model, layer, head)
    sc = head_scenario(model, 1, 1)
    assert sc.variant == "steps"
    alibi = [s for s in sc.params["steps"] if s.name == "alibi"]
    assert len(alibi) == 1 and alibi[0].slopes == (2.0 ** -8,)  # head 1 of 2: 2^(−8·2/2)


def test_layer_norm_and_three_layers_open_too():
    model = Untrained(InductionSettings(n_layers=3, n_heads=3, layer_norm=True,
                                        positional="sinusoidal"))
    for layer, head in [(0, 2), (2, 1)]:
        check_head(model, layer, head)


def test_a_head_out_of_range_is_refused_in_a_sentence():
    with pytest.raises(ValueError, match="head must be between 0 and 1"):
        head_scenario(SHIPPED, 0, 2)
    with pytest.raises(ValueError, match="layer must be between 0 and 1"):
        head_scenario(SHIPPED, 5, 0)
