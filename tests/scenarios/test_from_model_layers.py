"""One head of a real Hugging Face model's layer as a scenario
(attnviz.scenarios.from_model.layer_scenario): the dashboard's own run path
(:func:`~attnviz.scenarios.scenario.run_scenario`) computes the model's probabilities for that
head, and the heads' outputs through W_O add up to the attention block's output.

The models are tests/hf_models.py's ``parity_configs`` (weights and biases drawn with std
PARITY_INIT, so every feature shows): BERT (biases, bidirectional, a padded second sequence),
GPT-2 (Conv1D, biases), Llama (RoPE + GQA), Mistral (a sliding window shorter than the text),
Gemma 2 (soft-cap, query_pre_attn_scalar, a sliding layer), saved with save_pretrained and
loaded through ``attnviz.io.capture.load_model`` as a user does. Nothing is downloaded.

* float64: ``model.double()`` with Hugging Face's float32 steps lifted to float64 — the eager
  softmax, the rotary table, and the rotary inverse frequencies (Hugging Face computes
  base^(−2i/d) in float32; the RoPE variant computes it in float64) — ≤ 1e-10;
* float32 as shipped: ≤ 1e-5;
* each convention matters: without RoPE, with GQA's mapping tiled, without the window, without
  the cap, with 1/√d_k instead of Gemma 2's scale, or without the biases the probabilities
  move by more than 1e-3;
* heads that combine ideas (QK-norm with RoPE, sinks with RoPE) open as a list of steps, and
  sizes beyond the editing limits are refused in a sentence; frequencies that are not the base's
  open as given (a scaled RoPE: tests/scenarios/test_from_model_scaled_rope.py).
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

from hf_models import PARITY_INIT, Float64Lift, parity_configs, save_model  # noqa: E402

from attnviz.io.capture import load_model  # noqa: E402
from attnviz.io.hf_layers import LayerInputs, layer_inputs, recompute  # noqa: E402
from attnviz.scenarios import from_model, limits  # noqa: E402
from attnviz.scenarios.from_model import kv_head, layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

TEXTS = ["the cat sat on a mat and then the dog ran far away", "a dog ran in sun"]
NAMES = ["bert", "gpt2", "llama", "mistral", "gemma2"]
REFUSED = ["qwen3", "gpt_oss"]
EXACT = 1e-10
SHIPPED = 1e-5
MATTERS = 1e-3


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    configs = parity_configs()
    return {name: save_model(*configs[name], tmp_path_factory.mktemp(name),
                             bias_std=PARITY_INIT) for name in NAMES + REFUSED}


def layers_of(model, tokenizer) -> list[LayerInputs]:
    """Every layer of the first text, and of the padded second one where there is padding."""
    texts = TEXTS if tokenizer.pad_token is not None else TEXTS[:1]
    return [layer_inputs(model, tokenizer, texts, layer, sequence=b)
            for layer in range(model.config.num_hidden_layers) for b in range(len(texts))]


@pytest.fixture(scope="module")
def lifted(folders) -> dict:
    """name -> (every layer's inputs read from the float64 model with the lift, the lift)."""
    out = {}
    for name in NAMES:
        model, tokenizer = load_model(folders[name])
        model = model.double()
        with Float64Lift(model, freqs=True) as lift:
            out[name] = (layers_of(model, tokenizer), lift)
    return out


def head_errors(li: LayerInputs, head: int, sc=None) -> float:
    """Largest |scenario − model| of head ``head``'s probabilities over the real tokens."""
    sc = layer_scenario(li, head) if sc is None else sc
    weights = np.asarray(run_scenario(sc).attention.weights)
    keep = li.padding
    return float(np.abs(weights - li.model_weights[head])[keep][:, keep].max())


# ---------------------------------------------------------------------------------------------
# Exactness
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_head_opens_with_the_models_own_probabilities(lifted, name):
    inputs, lift = lifted[name]
    assert lift.softmax_dtypes and set(lift.softmax_dtypes) == {torch.float64}
    assert bool(lift.rotary_dtypes) == (name not in ("bert", "gpt2"))
    assert set(lift.rotary_dtypes) <= {torch.float64}
    for li in inputs:
        for head in range(li.n_heads):
            sc = layer_scenario(li, head)
            assert head_errors(li, head, sc) <= EXACT, (name, li.layer, head)
            assert sc.w_q.shape[1] == sc.w_k.shape[1] == sc.w_v.shape[1] == li.head_dim


def test_the_float64_frequencies_are_what_closes_the_gap(folders):
    """With HF's float32-rounded inverse frequencies (the rest lifted) the RoPE variant's
    base^(−2i/d) in float64 misses 1e-10 — by the rounding only (measured ~3e-9)."""
    model, tokenizer = load_model(folders["llama"])
    model = model.double()
    with Float64Lift(model):
        inputs = layers_of(model, tokenizer)
    worst = max(head_errors(li, h) for li in inputs for h in range(li.n_heads))
    assert EXACT < worst < 1e-7


@pytest.mark.parametrize("name", NAMES)
def test_the_heads_through_w_o_add_up_to_the_blocks_output(lifted, name):
    """Σ_h head_h · W_O[h] + b_O is the attention block's output: the values (and their bias
    and key/value head) are the model's too."""
    for li in lifted[name][0]:
        total = sum(np.asarray(run_scenario(sc).attention.output) @ sc.w_o
                    for sc in (layer_scenario(li, h) for h in range(li.n_heads)))
        if li.b_o is not None:
            total = total + li.b_o
        keep = li.padding
        assert np.abs(total - li.model_output)[keep].max() <= EXACT, (name, li.layer)


def test_a_float32_model_as_shipped_agrees_to_1e_5(folders):
    model, tokenizer = load_model(folders["llama"])
    assert next(model.parameters()).dtype == torch.float32
    li = layer_inputs(model, tokenizer, TEXTS[0], 1)
    worst = max(head_errors(li, h) for h in range(li.n_heads))
    assert 0 < worst <= SHIPPED


def test_the_scenario_holds_the_heads_blocks_and_the_models_conventions(lifted):
    llama = lifted["llama"][0][1]  # layer 1 (no pad token: one text)
    assert (llama.n_heads, llama.n_kv_heads, llama.head_dim) == (4, 2, 4)
    sc = layer_scenario(llama, 3, title="L1 H3", description="a head")
    d = llama.head_dim
    np.testing.assert_array_equal(sc.x, llama.x)  # no bias: no extra column
    np.testing.assert_array_equal(sc.w_q, llama.w_q[:, 3 * d:4 * d])
    np.testing.assert_array_equal(sc.w_k, llama.w_k[:, 1 * d:2 * d])  # kv head 3 // 2 = 1
    np.testing.assert_array_equal(sc.w_v, llama.w_v[:, 1 * d:2 * d])
    np.testing.assert_array_equal(sc.w_o, llama.w_o[3 * d:4 * d])
    assert (sc.variant, sc.mask_kind, sc.scale_mode, sc.n_heads) == ("rope", "causal",
                                                                     "sqrt_dk", 1)
    assert dict(sc.params) == dict(rope_base=10000.0, rope_layout="split_half",
                                   rope_fraction=1.0, rope_offset=0)
    assert (sc.title, sc.description) == ("L1 H3", "a head")
    assert sc.tokens == llama.tokens
    assert [kv_head(4, 2, h) for h in range(4)] == [0, 0, 1, 1]
    # GPT-2: the bias trick, the causal variant
    gpt2 = lifted["gpt2"][0][0]
    sc = layer_scenario(gpt2, 1)
    np.testing.assert_array_equal(sc.x[:, :-1], gpt2.x)
    np.testing.assert_array_equal(sc.x[:, -1], 1.0)
    np.testing.assert_array_equal(sc.w_q[-1], gpt2.b_q[d:2 * d])
    np.testing.assert_array_equal(sc.w_v[:-1], gpt2.w_v[:, d:2 * d])
    assert (sc.variant, sc.mask_kind) == ("causal", "none")
    # Gemma 2: RoPE with the cap, its own scale, the window as the custom mask on layer 0
    gemma = lifted["gemma2"][0][0]
    sc = layer_scenario(gemma, 0)
    assert (sc.variant, sc.scale_mode, sc.custom_scale) == ("rope", "custom", 16 ** -0.5)
    assert sc.params["rope_softcap"] == 1.0 and sc.mask_kind == "custom"
    np.testing.assert_array_equal(sc.custom_mask, gemma.mask)
    # BERT: bidirectional, the padded sequence's padding as a custom mask
    bert = lifted["bert"][0][1]
    assert not bert.padding.all()
    sc = layer_scenario(bert, 0)
    assert (sc.variant, sc.mask_kind) == ("scaled_dot_product", "custom")
    assert not sc.custom_mask[:, ~bert.padding].any()


# ---------------------------------------------------------------------------------------------
# Each convention matters
# ---------------------------------------------------------------------------------------------

def _moved(inputs, change) -> float:
    """Largest |changed scenario − model| over the layers and heads (the right one agrees)."""
    worst = 0.0
    for li in inputs:
        for head in range(li.n_heads):
            sc = layer_scenario(li, head)
            assert head_errors(li, head, sc) <= EXACT
            worst = max(worst, head_errors(li, head, change(li, head, sc)))
    return worst


def _without_bias(li, head, sc):
    return dataclasses.replace(sc, x=sc.x[:, :-1], w_q=sc.w_q[:-1], w_k=sc.w_k[:-1],
                               w_v=sc.w_v[:-1])


def _tiled(li, head, sc):
    """GQA read the wrong way: query head h on key/value head h % n_kv (tile)."""
    d, g = li.head_dim, head % li.n_kv_heads
    return dataclasses.replace(sc, w_k=li.w_k[:, g * d:(g + 1) * d],
                               w_v=li.w_v[:, g * d:(g + 1) * d])


CHANGES = {
    "no RoPE": ("llama", lambda li, h, sc: dataclasses.replace(sc, variant="causal", params={},
                                                               mask_kind="none")),
    "GQA tiled": ("llama", _tiled),
    "no window": ("mistral", lambda li, h, sc: dataclasses.replace(
        sc, mask_kind="causal", custom_mask=None)),
    "no soft-cap": ("gemma2", lambda li, h, sc: dataclasses.replace(
        sc, params={**sc.params, "rope_softcap": 0.0})),
    "scale 1/sqrt(d_k)": ("gemma2", lambda li, h, sc: dataclasses.replace(
        sc, scale_mode="sqrt_dk")),
    "no biases (GPT-2)": ("gpt2", _without_bias),
    "no biases (BERT)": ("bert", _without_bias),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_convention_matters(lifted, change):
    name, alter = CHANGES[change]
    assert _moved(lifted[name][0], alter) > MATTERS


def test_the_kv_head_mapping_is_what_the_scenario_uses(lifted, monkeypatch):
    """layer_scenario reads kv_head: mapping the heads the tiled way moves the result."""
    li = lifted["llama"][0][0]
    monkeypatch.setattr(from_model, "kv_head", lambda n, n_kv, h: h % n_kv)
    assert max(head_errors(li, h) for h in range(li.n_heads)) > MATTERS


# ---------------------------------------------------------------------------------------------
# What cannot be opened exactly, and the limits
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REFUSED)
def test_heads_that_combine_ideas_open_as_steps(folders, name):
    """QK-norm with RoPE (Qwen 3) and sinks with RoPE (gpt-oss) open as a list of steps (their
    exactness: tests/io/test_hf_parity_steps.py)."""
    model, tokenizer = load_model(folders[name])
    li = layer_inputs(model, tokenizer, TEXTS[0], 0)
    assert layer_scenario(li, 0).variant == "steps"


def test_frequencies_that_are_not_the_base_open_as_given(lifted):
    """The frequencies decide: 1 % off the base's, they open as the model's own (the base
    unused), and the run is the adapter's recomputation of that layer (hf_layers.recompute)."""
    li = lifted["llama"][0][0]
    odd = dataclasses.replace(li, rope=dataclasses.replace(li.rope, inv_freq=li.rope.inv_freq
                                                           * 1.01))
    for head in range(li.n_heads):
        sc = layer_scenario(odd, head)
        assert sc.params["rope_inv_freq"] == tuple(odd.rope.inv_freq)
        assert sc.params["rope_attention_scaling"] == 1.0
        ours = np.asarray(run_scenario(sc).attention.weights)
        np.testing.assert_allclose(ours, np.asarray(recompute(odd).weights)[head], rtol=0,
                                   atol=EXACT)
        assert np.abs(ours - li.model_weights[head]).max() > 1e-6  # not the model's any more


def test_a_rope_without_a_named_base_opens_with_its_frequencies(lifted):
    li = lifted["llama"][0][0]
    unnamed = dataclasses.replace(li, rope=dataclasses.replace(li.rope, base=None))
    sc = layer_scenario(unnamed, 0)
    assert "rope_base" not in sc.params and sc.params["rope_inv_freq"] == tuple(li.rope.inv_freq)
    assert head_errors(unnamed, 0, sc) <= EXACT


def test_a_base_beyond_the_base_box_opens_with_its_frequencies(lifted):
    """rope_theta 1e7 (long-context Qwen 2.5) is beyond the RoPE base's range (1e6): the head
    opens with its frequencies, computed as the adapter does, instead of being refused."""
    li = lifted["llama"][0][0]
    base = 1e7
    far = dataclasses.replace(li, rope=dataclasses.replace(
        li.rope, base=base, inv_freq=base ** (-np.arange(0, 4, 2) / 4)))
    sc = layer_scenario(far, 1)
    assert "rope_base" not in sc.params and sc.params["rope_inv_freq"] == tuple(
        far.rope.inv_freq)
    np.testing.assert_allclose(run_scenario(sc).attention.weights,
                               np.asarray(recompute(far).weights)[1], rtol=0, atol=EXACT)


def test_partial_rotary_opens_with_its_fraction(lifted):
    """One of two pairs rotated (partial_rotary_factor 0.5): rope_fraction 0.5, the rest of
    each head passed through, as the adapter computes it."""
    li = lifted["llama"][0][0]
    half = dataclasses.replace(li, rope=dataclasses.replace(li.rope,
                                                            inv_freq=li.rope.inv_freq[:1]))
    sc = layer_scenario(half, 0)
    assert sc.params["rope_fraction"] == 0.5 and sc.params["rope_base"] == 10000.0
    assert "rope_inv_freq" not in sc.params  # base^(−2i/d_rot) for d_rot = 2: 1, the base's
    np.testing.assert_allclose(run_scenario(sc).attention.weights,
                               np.asarray(recompute(half).weights)[0], rtol=0, atol=EXACT)


def test_turns_the_variant_cannot_express_are_refused(lifted):
    li = lifted["llama"][0][0]
    shifted = dataclasses.replace(li, positions=li.positions + 1)
    with pytest.raises(ValueError, match=r"llama layer 0 turns its tokens by positions other "
                                         r"than 0, 1, 2, ...; the RoPE variant cannot"):
        layer_scenario(shifted, 0)
    odd = dataclasses.replace(li, rope=dataclasses.replace(li.rope, layout="diagonal"))
    with pytest.raises(ValueError, match=r"llama layer 0 rotates 4 of 4 dimensions in its "
                                         r"diagonal layout; the RoPE variant cannot"):
        layer_scenario(odd, 0)


def test_an_interleaved_rope_opens_in_its_layout(lifted):
    """GPT-J's pairs (2i, 2i + 1): the RoPE variant in its interleaved layout computes what the
    adapter computes for that layer (and not what the split-half layout computes)."""
    li = lifted["llama"][0][0]
    interleaved = dataclasses.replace(li, rope=dataclasses.replace(li.rope, layout="interleaved"))
    for head in range(li.n_heads):
        sc = layer_scenario(interleaved, head)
        assert sc.params["rope_layout"] == "interleaved"
        ours = np.asarray(run_scenario(sc).attention.weights)
        np.testing.assert_allclose(ours, np.asarray(recompute(interleaved).weights)[head],
                                   rtol=0, atol=EXACT)
    assert max(np.abs(np.asarray(run_scenario(layer_scenario(interleaved, h)).attention.weights)
                      - li.model_weights[h]).max() for h in range(li.n_heads)) > MATTERS


def test_heads_and_sizes_beyond_the_limits_are_refused(lifted):
    li = lifted["gpt2"][0][0]
    with pytest.raises(ValueError, match=r"head must be a whole number from 0 to 3 \(gpt2 layer "
                                         r"0 has 4 heads\), got 4"):
        layer_scenario(li, 4)
    d = limits.MAX_REAL_D_MODEL + 1
    wide = dataclasses.replace(li, x=np.zeros((li.x.shape[0], d)), w_q=np.zeros((d, 16)))
    with pytest.raises(ValueError, match=rf"gpt2 layer 0 has a hidden size of {d}; a real head "
                                         rf"opens with a hidden size of at most "
                                         rf"{limits.MAX_REAL_D_MODEL} \(MAX_REAL_D_MODEL\)"):
        layer_scenario(wide, 0)
    t = limits.MAX_TOKENS + 1
    long = dataclasses.replace(li, x=np.zeros((t, li.x.shape[1])), padding=np.ones(t, bool))
    with pytest.raises(ValueError, match=rf"the text has {t} tokens; a head opens with at most "
                                         rf"{limits.MAX_TOKENS} tokens"):
        layer_scenario(long, 0)
