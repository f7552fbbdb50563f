"""A real head with a scaled RoPE: the frequencies decide, not the
rope_type's name.

* Dynamic NTK RoPE leaves its frequencies base^(−2i/d) on every text a capture takes (within
  max_position_embeddings): such a head opens as the default RoPE, from its base.
* Linear, YaRN, Llama 3 and LongRoPE change them (Llama 3 one band at a time, LongRoPE one
  factor per frequency; YaRN and LongRoPE with an attention scaling): such a head opens with
  the model's own frequencies (``rope_inv_freq``) and attention scaling
  (``rope_attention_scaling``), and the scenario's run gives the model's probabilities —
  ≤ 1e-10 in float64 (Hugging Face's float32 softmax and rotary table lifted; the
  frequencies are the model's own numbers, so they need no lift), ≤ 1e-5 as shipped in
  float32.
* Each matters: the same head from the plain base (the frequencies dropped) or without the
  attention scaling (YaRN, LongRoPE) moves the probabilities by more than 1e-3.
* The backward pass reads what the forward applied: the Gradients page's ∂L/∂W_Q, ∂L/∂W_K and
  ∂L/∂x of a YaRN head agree with central differences of the forward, and differ from those
  of the same head from the base.

Small random Llama models (tests/hf_models.py's SMALL, weights with std PARITY_INIT, GQA, head
width 4: two frequencies, which Llama 3's factors put in two different bands) are built in
memory with the local tokenizer; nothing is downloaded.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_models import PARITY_INIT, SMALL, Float64Lift, make_tokenizer  # noqa: E402
from reference import central_differences  # noqa: E402

from attnviz.io.hf_layers import layer_inputs  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.gradients import default_loss, gradients  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

TEXT = "the cat sat on a mat and then the dog ran far away"
EXACT = 1e-10
SHIPPED = 1e-5
MATTERS = 1e-3
BASE = 10000.0
#: Hugging Face's rope_parameters of each scaled RoPE (original context 16: the text's 13
#: tokens sit inside it, and Llama 3's two frequencies fall in two different bands).
SCALED = {
    "linear": {"rope_type": "linear", "factor": 2.0},
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16},
    "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
    "longrope": {"rope_type": "longrope", "factor": 2.0, "short_factor": [1.0, 1.5],
                 "long_factor": [2.0, 4.0], "original_max_position_embeddings": 16},
}


def llama(rope: dict, *, dtype=torch.float64, freqs: bool = False):
    """Layer 0 of a random Llama with this RoPE, read with Hugging Face's float32 steps lifted
    (float64) or as shipped (float32), and the lift (None as shipped). ``freqs``: the default
    RoPE's frequencies recomputed in float64 too (for a head that opens from its base)."""
    from transformers import AutoModel, LlamaConfig

    torch.manual_seed(0)
    config = LlamaConfig(**SMALL | {"initializer_range": PARITY_INIT}, num_key_value_heads=2,
                         rope_parameters={"rope_theta": BASE} | rope)
    model = AutoModel.from_config(config).to(dtype).eval()
    tokenizer = make_tokenizer(bert=False, pad=False)
    if dtype != torch.float64:
        return layer_inputs(model, tokenizer, TEXT, 0), None
    with Float64Lift(model, freqs=freqs) as lift:
        return layer_inputs(model, tokenizer, TEXT, 0), lift


@pytest.fixture(scope="module")
def lifted() -> dict:
    return {kind: llama(rope)[0] for kind, rope in SCALED.items()}


def head_error(li, head: int, sc=None) -> float:
    sc = layer_scenario(li, head) if sc is None else sc
    return float(np.abs(np.asarray(run_scenario(sc).attention.weights)
                        - li.model_weights[head]).max())


def test_a_dynamic_ntk_head_opens_from_its_base_with_the_models_own_probabilities():
    li, lift = llama({"rope_type": "dynamic", "factor": 2.0}, freqs=True)
    assert li.rope.rope_type == "dynamic" and set(lift.rotary_dtypes) == {torch.float64}
    for head in range(li.n_heads):
        sc = layer_scenario(li, head)
        assert sc.variant == "rope" and sc.param("rope_base") == BASE
        assert sc.param("rope_inv_freq") == () and sc.param("rope_attention_scaling") == 1.0
        assert head_error(li, head, sc) <= EXACT, head


@pytest.mark.parametrize("kind", list(SCALED))
def test_a_scaled_head_opens_with_the_models_frequencies_and_probabilities(lifted, kind):
    li = lifted[kind]
    assert li.rope.rope_type == kind
    plain = BASE ** (-np.arange(0, 4, 2) / 4)
    assert not np.allclose(li.rope.inv_freq, plain, rtol=1e-3)  # the scaling changed them
    for head in range(li.n_heads):
        sc = layer_scenario(li, head)
        assert sc.variant == "rope" and sc.mask_kind == "causal"
        assert sc.params["rope_inv_freq"] == tuple(float(f) for f in li.rope.inv_freq)
        assert sc.params["rope_attention_scaling"] == li.rope.attention_scaling
        assert sc.params["rope_base"] == BASE  # shown (disabled): the frequencies decide
        assert head_error(li, head, sc) <= EXACT, (kind, head)


def test_the_scalings_are_hugging_faces():
    """What each kind does to base^(−2i/d) = (1, 0.01): linear divides by its factor, YaRN
    keeps the fast pair and divides the slow one (with mscale 0.1·ln 4 + 1), Llama 3 divides
    the low band by 8 and blends the middle one."""
    li = {kind: llama(rope, dtype=torch.float32)[0] for kind, rope in SCALED.items()}
    np.testing.assert_allclose(li["linear"].rope.inv_freq, [0.5, 0.005], rtol=1e-6)
    np.testing.assert_allclose(li["yarn"].rope.inv_freq, [1.0, 0.0025], rtol=1e-6)
    assert li["yarn"].rope.attention_scaling == pytest.approx(0.1 * np.log(4.0) + 1.0)
    smooth = (16 / (2 * np.pi) - 1.0) / (4.0 - 1.0)  # Llama 3's blend for the middle band
    np.testing.assert_allclose(li["llama3"].rope.inv_freq,
                               [(1 - smooth) / 8 + smooth, 0.01 / 8], rtol=1e-6)
    assert li["linear"].rope.attention_scaling == li["llama3"].rope.attention_scaling == 1.0
    # LongRoPE: each frequency divided by its own factor (the short ones: the text is within
    # the original context), and the attention factor √(1 + ln 2 / ln 16)
    np.testing.assert_allclose(li["longrope"].rope.inv_freq, [1.0, 0.01 / 1.5], rtol=1e-6)
    assert li["longrope"].rope.attention_scaling == pytest.approx(
        np.sqrt(1 + np.log(2.0) / np.log(16.0)))


@pytest.mark.parametrize("kind", list(SCALED))
def test_a_float32_model_as_shipped_agrees_to_1e_5(kind):
    li, _ = llama(SCALED[kind], dtype=torch.float32)
    worst = max(head_error(li, h) for h in range(li.n_heads))
    assert 0 < worst <= SHIPPED, (kind, worst)


CHANGES = {
    # the model's frequencies dropped: θ_i from the base, as before this setting existed
    "plain base (linear)": ("linear", {"rope_inv_freq": ()}),
    "plain base (yarn)": ("yarn", {"rope_inv_freq": ()}),
    "plain base (llama3)": ("llama3", {"rope_inv_freq": ()}),
    "no attention scaling (yarn)": ("yarn", {"rope_attention_scaling": 1.0}),
    "plain base (longrope)": ("longrope", {"rope_inv_freq": ()}),
    "no attention scaling (longrope)": ("longrope", {"rope_attention_scaling": 1.0}),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_part_of_the_scaling_matters(lifted, change):
    kind, params = CHANGES[change]
    li = lifted[kind]
    moved = 0.0
    for head in range(li.n_heads):
        sc = layer_scenario(li, head)
        assert head_error(li, head, sc) <= EXACT
        wrong = dataclasses.replace(sc, params={**sc.params, **params})
        moved = max(moved, head_error(li, head, wrong))
    assert moved > MATTERS, (change, moved)



def test_the_gradients_read_the_frequencies_and_scaling_the_forward_applied(lifted):
    """The Gradients page's numbers (attnviz.scenarios.gradients) for a YaRN head: the
    backward pass undoes the model's rotation and scaling, as central differences of the
    forward say; the same head from the base has other gradients."""
    li = lifted["yarn"]
    sc = layer_scenario(li, 1)
    sc = dataclasses.replace(sc, tokens=sc.tokens[:5], x=sc.x[:5, :6], w_q=sc.w_q[:6],
                             w_k=sc.w_k[:6], w_v=sc.w_v[:6])  # small enough to difference
    loss = default_loss(sc, "output_mse")

    def value(s) -> float:
        return float(gradients(s, loss).loss)

    ours = gradients(sc, loss).params
    for field in ("w_q", "w_k", "x"):
        np.testing.assert_allclose(ours[field], central_differences(sc, field, value),
                                   rtol=1e-5, atol=1e-8, err_msg=field)
    plain = gradients(dataclasses.replace(sc, params={**sc.params, "rope_inv_freq": (),
                                                      "rope_attention_scaling": 1.0}), loss)
    assert np.abs(plain.params["w_q"] - ours["w_q"]).max() > MATTERS


def test_a_longrope_text_beyond_the_original_context_opens_with_the_long_factors():
    """13 tokens past LongRoPE's original 8: the model's forward switched to its long factors
    (Hugging Face updates inv_freq in the forward); the head opens with those, as shipped.
    (Float64Lift replaces that forward, so this runs in float32, to 1e-5.)"""
    li, _ = llama(SCALED["longrope"] | {"original_max_position_embeddings": 8},
                  dtype=torch.float32)
    np.testing.assert_allclose(li.rope.inv_freq, [1.0 / 2.0, 0.01 / 4.0], rtol=1e-6)
    sc = layer_scenario(li, 0)
    assert sc.params["rope_inv_freq"] == tuple(float(f) for f in li.rope.inv_freq)
    assert max(head_error(li, h) for h in range(li.n_heads)) <= SHIPPED
