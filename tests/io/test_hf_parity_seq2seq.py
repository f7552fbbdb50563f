"""Encoder–decoder models (T5, BART, mBART, MarianMT), exactly: small random-initialised models
saved with save_pretrained beside a local tokenizer (tests/hf_models.py ``seq2seq_configs``),
loaded as a user loads them (``load_model``), captured by ``capture_seq2seq`` and read by
``seq2seq_layer_inputs``, against Hugging Face's own eager attention weights.

* capture: every layer and head of the encoder's self-attention, the decoder's causal
  self-attention and the cross-attention equal ``encoder_attentions``, ``decoder_attentions``
  and ``cross_attentions`` of the model's own forward (max |diff| ≤ 1e-6 in float32), with the
  labels the rows and columns are: queries the decoder's input, keys the source;
* a cross-attention head opened as a scenario of the "cross" variant (run by the dashboard's
  own run path) gives the model's probabilities: ≤ 1e-10 with ``model.double()`` (their
  eager attention has no float32 step of its own), ≤ 1e-5 as shipped; the heads'
  outputs times their rows of W_O, plus b_o, are the block's output;
* the conventions matter: T5 opened with 1/√d_k, or BART without its biases, moves the
  probabilities by more than 1e-3; T5's self-attention recomputed without its relative
  position bias too;
* BART's, mBART's (pre-LayerNorm) and MarianMT's (sinusoidal positions) encoder and decoder
  self-attention heads open as ordinary heads (bidirectional, causal); T5's open as a list of
  steps whose bias step is its relative position bias.
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

from hf_models import save_model, seq2seq_configs  # noqa: E402

from attnviz.io.capture import capture, capture_seq2seq, is_causal, load_model  # noqa: E402
from attnviz.io.hf_layers import (  # noqa: E402
    layer_inputs,
    recompute,
    recompute_cross,
    seq2seq_layer_inputs,
)
from attnviz.scenarios.from_model import cross_scenario, layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

SOURCE = "the cat sat on a mat and then slept"
TARGET = "a dog ran far away"
CAPTURED = 1e-6
EXACT = 1e-10
SHIPPED = 1e-5
MATTERS = 1e-3
NAMES = list(seq2seq_configs())
HEADS = (0, 3)  # two heads of every layer


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folders = {}
    for name, (config, bert, pad) in seq2seq_configs().items():
        folders[name] = save_model(config, bert, pad, tmp_path_factory.mktemp(name), seed=1,
                                   bias_std=0.0 if name == "t5" else 0.5)
    return folders


@pytest.fixture(scope="module")
def loaded(saved):
    return {name: load_model(folder) for name, folder in saved.items()}


def hf_eager(model, cap):
    """The model's own forward (eager), on the ids the capture used."""
    model.config._attn_implementation = "eager"
    with torch.no_grad():
        return model(input_ids=torch.from_numpy(cap.source_ids[None]),
                     decoder_input_ids=torch.from_numpy(cap.target_ids[None]),
                     output_attentions=True,
                     use_cache=False)


@pytest.mark.parametrize("name", NAMES)
def test_capture_equals_hugging_face_every_layer_and_head(loaded, name):
    model, tokenizer = loaded[name]
    cap = capture_seq2seq(model, tokenizer, source=SOURCE, target=TARGET)
    out = hf_eager(model, cap)
    for kind, theirs in (("encoder", out.encoder_attentions),
                         ("decoder", out.decoder_attentions),
                         ("cross", out.cross_attentions)):
        ours = cap.kind(kind)
        assert ours.dtype == np.float64 and ours.shape[0] == len(theirs) == 2
        expected = np.stack([a[0].double().numpy() for a in theirs])
        assert ours.shape == expected.shape
        assert np.abs(ours - expected).max() <= CAPTURED
    t_s, t = len(cap.source_tokens), len(cap.target_tokens)
    assert cap.source_tokens == tuple(SOURCE.split())
    assert cap.target_tokens[1:] == tuple(TARGET.split())  # after the decoder's start token
    assert cap.target_ids[0] == model.config.decoder_start_token_id
    assert cap.encoder.shape == (2, 4, t_s, t_s)
    assert cap.decoder.shape == (2, 4, t, t)
    assert cap.cross.shape == (2, 4, t, t_s)  # queries: the target; keys: the source
    assert np.all(cap.decoder[..., np.triu_indices(t, 1)[0], np.triu_indices(t, 1)[1]] == 0)
    np.testing.assert_allclose(cap.cross.sum(axis=-1), 1.0, atol=1e-6)
    assert 0.2 < cap.cross.max(axis=-1).mean() < 0.999  # not uniform (1/9), not one-hot
    assert is_causal(model.get_decoder()) and not is_causal(model.get_encoder())


def test_capture_says_how_to_read_an_encoder_decoder_model(loaded):
    model, tokenizer = loaded["t5"]
    with pytest.raises(ValueError, match=r"T5Model is an encoder-decoder model; capture its "
                                         r"three kinds of attention with capture_seq2seq"):
        capture(model, tokenizer, text=SOURCE)
    with pytest.raises(ValueError, match=r"the source text is empty"):
        capture_seq2seq(model, tokenizer, source=" ", target=TARGET)
    with pytest.raises(ValueError, match=r"the source holds 14 tokens; at most 12 are "
                                         r"captured"):
        capture_seq2seq(model, tokenizer, source=SOURCE + " and a dog ran far",
                        target=TARGET, max_tokens=12)
    cap = capture_seq2seq(model, tokenizer, source=SOURCE, target="")  # the start token alone
    assert cap.cross.shape[2:] == (1, 9)


def opened(ci, head):
    return run_scenario(cross_scenario(ci, head)).attention


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("layer", [0, 1])
def test_cross_attention_heads_open_exactly(loaded, name, layer):
    model, tokenizer = loaded[name]
    double = model.double()
    try:
        ci = seq2seq_layer_inputs(double, tokenizer, SOURCE, TARGET, layer, "cross")
        assert ci.model_weights.shape == (4, 6, 9)
        assert ci.tokens[1:] == tuple(TARGET.split())
        assert ci.source_tokens == tuple(SOURCE.split())
        again = recompute_cross(ci)
        assert np.abs(again.weights - ci.model_weights).max() <= EXACT
        assert np.abs(again.output - ci.model_output).max() <= EXACT
        total = np.zeros_like(ci.model_output) if ci.b_o is None else np.tile(ci.b_o, (6, 1))
        for head in range(ci.n_heads):
            att = opened(ci, head)
            assert np.abs(att.weights - ci.model_weights[head]).max() <= EXACT
            total += att.output @ cross_scenario(ci, head).w_o
        assert np.abs(total - ci.model_output).max() <= EXACT  # the heads add up to the block
    finally:
        model.float()
    ci = seq2seq_layer_inputs(model, tokenizer, SOURCE, TARGET, layer, "cross")
    for head in HEADS:
        assert np.abs(opened(ci, head).weights - ci.model_weights[head]).max() <= SHIPPED


def test_t5_cross_attention_is_unscaled_and_bart_has_biases(loaded):
    t5 = seq2seq_layer_inputs(*loaded["t5"], SOURCE, TARGET, 1, "cross")
    scenario = cross_scenario(t5, 0)
    assert (scenario.variant, scenario.scale_mode, scenario.custom_scale) == ("cross", "custom",
                                                                              1.0)
    assert scenario.source_tokens == tuple(SOURCE.split())
    scaled = dataclasses.replace(scenario, scale_mode="sqrt_dk")
    moved = np.abs(run_scenario(scaled).attention.weights - t5.model_weights[0]).max()
    assert moved > MATTERS
    bart = seq2seq_layer_inputs(*loaded["bart"], SOURCE, TARGET, 1, "cross")
    scenario = cross_scenario(bart, 3)
    assert scenario.scale_mode == "sqrt_dk" and scenario.d_model == 17  # the bias trick
    no_bias = dataclasses.replace(bart, b_q=None, b_k=None, b_v=None)
    moved = np.abs(opened(no_bias, 3).weights - bart.model_weights[3]).max()
    assert moved > MATTERS


@pytest.mark.parametrize("name", ["bart", "mbart", "marian"])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_bart_self_attention_heads_open_as_ordinary_heads(loaded, kind, name):
    model, tokenizer = loaded[name]
    double = model.double()
    try:
        for layer in (0, 1):
            li = seq2seq_layer_inputs(double, tokenizer, SOURCE, TARGET, layer, kind)
            assert li.causal == (kind == "decoder")
            assert np.abs(recompute(li).weights - li.model_weights).max() <= EXACT
            for head in HEADS:
                scenario = layer_scenario(li, head)
                assert scenario.variant == ("causal" if kind == "decoder"
                                            else "scaled_dot_product")
                weights = run_scenario(scenario).attention.weights
                assert np.abs(weights - li.model_weights[head]).max() <= EXACT
    finally:
        model.float()


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_t5_self_attention_adds_its_relative_bias_and_opens_as_a_list_of_steps(loaded, kind):
    model, tokenizer = loaded["t5"]
    double = model.double()
    try:
        for layer in (0, 1):
            li = seq2seq_layer_inputs(double, tokenizer, SOURCE, TARGET, layer, kind)
            t = li.x.shape[0]
            assert li.position_bias.shape == (4, t, t)
            assert np.abs(recompute(li).weights - li.model_weights).max() <= EXACT
            unbiased = recompute(dataclasses.replace(li, position_bias=None)).weights
            assert np.abs(unbiased - li.model_weights).max() > MATTERS
            for head in range(li.n_heads):  # the bias is a step of the head's list
                sc = layer_scenario(li, head)
                assert sc.variant == "steps" and "bias" in [s.name for s in sc.params["steps"]]
                opened = np.asarray(run_scenario(sc).attention.weights)
                assert np.abs(opened - li.model_weights[head]).max() <= EXACT, (layer, head)
    finally:
        model.float()


def test_layer_inputs_points_to_the_stacks(loaded):
    model, tokenizer = loaded["bart"]
    with pytest.raises(ValueError, match=r"bart is an encoder–decoder model: read a layer of "
                                         r"its encoder, its decoder or its cross-attention with "
                                         r"seq2seq_layer_inputs"):
        layer_inputs(model, tokenizer, SOURCE, 0)
    with pytest.raises(ValueError, match=r"layer must be a whole number from 0 to 1 \(the "
                                         r"decoder has 2 layers\)"):
        seq2seq_layer_inputs(model, tokenizer, SOURCE, TARGET, 2, "cross")
    with pytest.raises(ValueError, match=r"kind must be one of encoder, decoder, cross"):
        seq2seq_layer_inputs(model, tokenizer, SOURCE, TARGET, 0, "both")
