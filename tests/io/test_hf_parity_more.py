"""The heads of more real architectures, exactly: every layer of small random-initialised models
of RoBERTa, XLM-RoBERTa, ELECTRA, DistilBERT, ALBERT, ModernBERT, GPT-Neo, GPT-J, GPT-NeoX, OPT,
Falcon (three fused layouts, RoPE and ALiBi), BLOOM, Mixtral, Gemma, Phi, Phi-3, StableLM and
StarCoder2 (tests/hf_models.py ``more_parity_configs``), read by attnviz.io.hf_layers and
recomputed by attnviz's core, and each opened head (attnviz.scenarios.from_model.layer_scenario
-> run_scenario, the dashboard's own run path) against Hugging Face's own probabilities.

* float64: ``model.double()`` with Hugging Face's float32 steps lifted (the eager softmax, the
  rotary tables, GPT-Neo's and GPT-J's float32 scores, ModernBERT's float32 rotation; the RoPE
  frequencies in float64): ≤ 1e-10;
* float32 as shipped: the probabilities ≤ 1e-5; the block's output ≤ 1e-5 of its largest
  entry (the outputs reach ~30, where float32's own rounding is ~2e-6);
* each convention that sets an architecture apart matters: read another way (a fused layout
  cut as another, interleaved pairs as split halves, partial rotary as full, GPT-Neo scaled,
  a window dropped or made causal, ALBERT's shared module read at its first call, ModernBERT's
  local layer with the global base, ALiBi dropped or its slopes reordered) the probabilities
  move by more than 1e-3;
* ALiBi heads open when their slope is the ALiBi variant's one-head slope 2^−8 (BLOOM's head 7
  of 8, Falcon's head 6 of 8 after its 1/√d_k), with the scaled scores the model's minus m·i
  per query row; the others, and the architectures no variant computes (QK-norm with RoPE,
  relative position biases, disentangled attention, a LayerNorm of q and k), are refused in
  one sentence each; encoder–decoders are pointed to seq2seq_layer_inputs
  (tests/io/test_hf_parity_seq2seq.py).
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

from hf_models import (  # noqa: E402
    PARITY_INIT,
    Float64Lift,
    more_parity_configs,
    refused_configs,
    save_model,
)

from attnviz.io import hf_layers  # noqa: E402
from attnviz.io.capture import load_model  # noqa: E402
from attnviz.io.hf_layers import LayerInputs, layer_inputs, recompute  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

TEXTS = ["the cat sat on a mat and then the dog ran far away", "a dog ran in sun"]
EXACT = 1e-10
SHIPPED = 1e-5
MATTERS = 1e-3
NAMES = list(more_parity_configs())
ALIBI_OPEN = {"bloom": 7, "falcon_alibi": 6}  # the head whose slope is 2^-8


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    return {name: save_model(config, bert, pad, tmp_path_factory.mktemp(name),
                             bias_std=PARITY_INIT)
            for name, (config, bert, pad) in more_parity_configs().items()}


def every_layer(model, tokenizer) -> list[LayerInputs]:
    """Every layer of both texts (the second padded on the right)."""
    return [layer_inputs(model, tokenizer, TEXTS, layer, sequence=b)
            for layer in range(model.config.num_hidden_layers) for b in range(len(TEXTS))]


@pytest.fixture(scope="module")
def shipped(folders) -> dict:
    """name -> (model, tokenizer, every layer's inputs) as load_model gives it: float32."""
    out = {}
    for name, folder in folders.items():
        model, tokenizer = load_model(folder)
        out[name] = (model, tokenizer, every_layer(model, tokenizer))
    return out


@pytest.fixture(scope="module")
def lifted(folders) -> dict:
    """name -> (model, tokenizer, every layer's inputs, the lift) from the float64 model with
    Hugging Face's float32 steps lifted and the RoPE frequencies computed in float64."""
    out = {}
    for name, folder in folders.items():
        model, tokenizer = load_model(folder)
        if name == "mixtral":  # the default grouped_mm experts take no float64
            model.set_experts_implementation("eager")
        model = model.double()
        with Float64Lift(model, freqs=True) as lift:
            out[name] = (model, tokenizer, every_layer(model, tokenizer), lift)
    return out


def layer_errors(li: LayerInputs, result=None) -> tuple[float, float]:
    """Largest |ours − HF| of the probabilities, and of the block's output over its largest
    entry, on the real tokens."""
    result = recompute(li) if result is None else result
    keep = li.padding
    w = np.abs(np.asarray(result.weights) - li.model_weights)[:, keep][:, :, keep]
    o = np.abs(np.asarray(result.output) - li.model_output)[keep]
    return float(w.max()), float(o.max() / max(1.0, np.abs(li.model_output[keep]).max()))


def opened(li: LayerInputs) -> list[int]:
    """The heads of the layer that open: every one (an ALiBi head of a slope other than
    2^-8 as a list of steps)."""
    return list(range(li.n_heads))


def head_error(li: LayerInputs, head: int, sc=None) -> float:
    """Largest |scenario − model| of one head's probabilities over the real tokens."""
    sc = layer_scenario(li, head) if sc is None else sc
    weights = np.asarray(run_scenario(sc).attention.head(0).weights)
    keep = li.padding
    return float(np.abs(weights - li.model_weights[head])[keep][:, keep].max())


# ---------------------------------------------------------------------------------------------
# Exactness
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_layer_and_opened_head_agrees_in_float64_with_the_lift(lifted, name):
    model, _, inputs, lift = lifted[name]
    assert torch.float64 in lift.softmax_dtypes
    assert lift.rotary_dtypes == [] or set(lift.rotary_dtypes) == {torch.float64}
    assert not inputs[1].padding.all()  # the second text is padded
    heads = 0
    for li in inputs:
        assert max(layer_errors(li)) <= EXACT, (name, li.layer, layer_errors(li))
        for head in opened(li):
            sc = layer_scenario(li, head)
            assert head_error(li, head, sc) <= EXACT, (name, li.layer, head)
            heads += 1
    assert heads >= 2 * model.config.num_hidden_layers  # two heads of every layer at least


@pytest.mark.parametrize("name", NAMES)
def test_every_layer_and_opened_head_agrees_as_shipped_in_float32(shipped, name):
    model, _, inputs = shipped[name]
    assert next(model.parameters()).dtype == torch.float32
    for li in inputs:
        w, o = layer_errors(li)
        assert w <= SHIPPED and o <= SHIPPED, (name, li.layer, w, o)
        for head in opened(li):
            assert head_error(li, head) <= SHIPPED, (name, li.layer, head)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ALIBI_OPEN])
def test_the_heads_through_w_o_add_up_to_the_blocks_output(lifted, name):
    """Σ_h head_h · W_O[h] + b_O is the block's output: the values, their biases and the
    key/value head each query head reads are the model's too."""
    for li in lifted[name][2]:
        total = sum(np.asarray(run_scenario(sc).attention.output) @ sc.w_o
                    for sc in (layer_scenario(li, h) for h in range(li.n_heads)))
        if li.b_o is not None:
            total = total + li.b_o
        keep = li.padding
        assert np.abs(total - li.model_output)[keep].max() <= EXACT * 10, (name, li.layer)


def test_the_conventions_are_read_as_each_model_has_them(lifted):
    def first(name, layer=0):
        return lifted[name][2][2 * layer]

    gptj = first("gptj")
    assert (gptj.rope.layout, gptj.rope.inv_freq.size, gptj.head_dim) == ("interleaved", 2, 8)
    sc = layer_scenario(gptj, 0)
    assert (sc.params["rope_layout"], sc.params["rope_fraction"]) == ("interleaved", 0.5)
    assert sc.params["rope_base"] == 10000.0
    neox = first("gpt_neox")
    assert (neox.rope.layout, neox.rope.inv_freq.size, neox.head_dim) == ("split_half", 2, 8)
    assert layer_scenario(neox, 1).params["rope_fraction"] == 0.5
    assert first("phi").rope.inv_freq.size == 1 and first("stablelm").rope.inv_freq.size == 1
    neo = first("gpt_neo")  # layer 0 local, layer 1 global, no 1/√d_k
    assert (neo.sliding_window, first("gpt_neo", 1).sliding_window, neo.scale) == (3, None, 1.0)
    sc = layer_scenario(neo, 0)
    assert (sc.variant, sc.scale_mode, sc.custom_scale, sc.mask_kind) == ("causal", "custom",
                                                                           1.0, "custom")
    modern = [first("modernbert", layer) for layer in range(3)]
    assert [li.sliding_window for li in modern] == [None, 2, None]
    assert not modern[1].causal and modern[1].mask[5].tolist() == [
        j in range(3, 8) for j in range(modern[1].x.shape[0])]  # |5 − j| <= 2
    assert modern[0].rope.base == 160000.0 and modern[1].rope.base == 10000.0
    sc = layer_scenario(modern[1], 0)
    assert (sc.variant, sc.mask_kind, sc.params["rope_base"]) == ("rope", "custom", 10000.0)
    bloom = first("bloom")
    assert bloom.causal and bloom.alibi.tolist() == [2.0 ** -k for k in range(1, 9)]
    falcon = first("falcon_alibi")  # bf16(2^-k) / √4
    assert falcon.causal and falcon.alibi.tolist() == [2.0 ** -k / 2 for k in range(1, 9)]
    assert (first("falcon_new").n_kv_heads, first("falcon_mqa").n_kv_heads) == (2, 1)
    assert first("gemma").n_kv_heads == 1
    for name in ("mixtral", "phi3", "starcoder2"):
        assert first(name).sliding_window == 3 and first(name, 1).sliding_window == 3
    albert = [lifted["albert"][2][2 * layer] for layer in range(3)]
    np.testing.assert_array_equal(albert[0].w_q, albert[2].w_q)  # one module, three layers
    assert not np.allclose(albert[0].x, albert[2].x)  # read at each layer's own call
    sc = layer_scenario(lifted["opt"][2][0], 2)
    assert sc.x.shape[1] == 17 and (sc.variant, sc.scale_mode) == ("causal", "sqrt_dk")


# ---------------------------------------------------------------------------------------------
# ALiBi: which heads open, and what the scores shown are
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(ALIBI_OPEN))
def test_an_alibi_head_opens_whatever_its_slope(lifted, name):
    li = lifted[name][2][0]
    open_head = ALIBI_OPEN[name]
    sc = layer_scenario(li, open_head)
    assert (sc.variant, sc.mask_kind) == ("alibi", "none")
    result = run_scenario(sc).attention.head(0)
    # the scaled scores shown: the model's scale·q·k + m·j minus m·i (a constant per row)
    q = li.x @ li.w_q + li.b_q
    g = open_head // (li.n_heads // li.n_kv_heads)
    k = li.x @ li.w_k + li.b_k
    d = li.head_dim
    model_scores = li.scale * (q[:, open_head * d:(open_head + 1) * d]
                               @ k[:, g * d:(g + 1) * d].T) + 2.0 ** -8 * np.arange(len(q))
    shown = np.asarray(result.scaled)
    below = np.tril(np.ones_like(shown, dtype=bool))
    np.testing.assert_allclose((model_scores - shown)[below],
                               (2.0 ** -8 * np.arange(len(q))[:, None] * below)[below],
                               rtol=0, atol=1e-12)
    for head in (0, open_head - 1):  # another slope: a list of steps with the model's m_h·j
        sc = layer_scenario(li, head)
        assert sc.variant == "steps" and head_error(li, head, sc) <= 1e-10
        shown = np.asarray(run_scenario(sc).attention.scaled)
        gh = head // (li.n_heads // li.n_kv_heads)
        model_scores = li.scale * (q[:, head * d:(head + 1) * d] @ k[:, gh * d:(gh + 1) * d].T) \
            + li.alibi[head] * np.arange(len(q))
        np.testing.assert_allclose(shown[below], model_scores[below], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Each convention matters
# ---------------------------------------------------------------------------------------------

def _rope(li: LayerInputs, **changes) -> LayerInputs:
    return dataclasses.replace(li, rope=dataclasses.replace(li.rope, **changes))


def _full_rotary(li: LayerInputs) -> LayerInputs:
    """Partial rotary read as full: every pair of the head rotated, from the same base."""
    d = li.head_dim
    return _rope(li, inv_freq=li.rope.base ** (-np.arange(0, d, 2) / d))


def _swapped_bases(li: LayerInputs) -> LayerInputs:
    """ModernBERT's local layer read with the global layers' base (160000)."""
    d = 2 * li.rope.inv_freq.size
    return _rope(li, inv_freq=160000.0 ** (-np.arange(0, d, 2) / d))


CHANGES = {
    "GPT-J's pairs as split halves": ("gptj", lambda li: _rope(li, layout="split_half")),
    "GPT-J's partial rotary as full": ("gptj", _full_rotary),
    "GPT-NeoX's partial rotary as full": ("gpt_neox", _full_rotary),
    "Phi's partial rotary as full": ("phi", _full_rotary),
    "StableLM's partial rotary as full": ("stablelm", _full_rotary),
    "GPT-Neo scaled by 1/sqrt(d_k)": ("gpt_neo", lambda li: dataclasses.replace(
        li, scale=li.head_dim ** -0.5)),
    "GPT-Neo's local window dropped": ("gpt_neo", lambda li: dataclasses.replace(
        li, sliding_window=None)),
    "ModernBERT's symmetric window dropped": ("modernbert", lambda li: dataclasses.replace(
        li, sliding_window=None)),
    "ModernBERT's window one key narrower": ("modernbert", lambda li: dataclasses.replace(
        li, sliding_window=None if li.sliding_window is None else li.sliding_window - 1)),
    "ModernBERT's local layer with the global base": ("modernbert", _swapped_bases),
    "ModernBERT bidirectional read as causal": ("modernbert", lambda li: dataclasses.replace(
        li, causal=True)),
    "BLOOM read as bidirectional": ("bloom", lambda li: dataclasses.replace(li, causal=False)),
    "BLOOM without ALiBi": ("bloom", lambda li: dataclasses.replace(li, alibi=None)),
    "BLOOM's slopes in reverse": ("bloom", lambda li: dataclasses.replace(
        li, alibi=li.alibi[::-1].copy())),
    "Falcon's ALiBi without 1/sqrt(d_k)": ("falcon_alibi", lambda li: dataclasses.replace(
        li, alibi=li.alibi * np.sqrt(li.head_dim))),
    "Mixtral's window dropped": ("mixtral", lambda li: dataclasses.replace(
        li, sliding_window=None)),
    "Phi-3's window dropped": ("phi3", lambda li: dataclasses.replace(li, sliding_window=None)),
    "StarCoder2's window dropped": ("starcoder2", lambda li: dataclasses.replace(
        li, sliding_window=None)),
    "OPT without biases": ("opt", lambda li: dataclasses.replace(li, b_q=None, b_k=None)),
    "DistilBERT without biases": ("distilbert", lambda li: dataclasses.replace(
        li, b_q=None, b_k=None)),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_convention_matters(lifted, change):
    name, alter = CHANGES[change]
    moved = []
    for li in lifted[name][2]:
        assert max(layer_errors(li)) <= EXACT
        moved.append(layer_errors(li, recompute(alter(li)))[0])
    assert max(moved) > MATTERS, (change, moved)


def _per_head_as_stacked(n, d):
    return hf_layers._stacked_fused((n * d,) * 3)


def _stacked_as_per_head(sizes):
    n_d = sizes[0] // 4 if len(set(sizes)) == 1 else None
    if n_d is None:  # Phi-3's [q | k | v] of different widths: q's heads read in k's place
        q, k, v = sizes
        return [np.arange(q), np.arange(q - k, q), np.arange(q, q + v)]
    return hf_layers._per_head_fused(4, n_d)


def _groups_as_stacked(n, n_kv, d):
    return hf_layers._stacked_fused((n * d, n_kv * d, n_kv * d))


FUSED = {
    "GPT-NeoX per head read as [q | k | v]": ("gpt_neox", "_per_head_fused",
                                               _per_head_as_stacked),
    "BLOOM per head read as [q | k | v]": ("bloom", "_per_head_fused", _per_head_as_stacked),
    "Falcon per head read as [q | k | v]": ("falcon_alibi", "_per_head_fused",
                                            _per_head_as_stacked),
    "ModernBERT's [q | k | v] read per head": ("modernbert", "_stacked_fused",
                                               _stacked_as_per_head),
    "Phi-3's [q | k | v] read with q's last head as k": ("phi3", "_stacked_fused",
                                                          _stacked_as_per_head),
    "Falcon's groups read as [q | k | v]": ("falcon_new", "_grouped_fused", _groups_as_stacked),
}


@pytest.mark.parametrize("change", list(FUSED))
def test_each_fused_layout_matters(lifted, monkeypatch, change):
    """The adapter cuts the fused projection another way: the layer no longer agrees."""
    name, function, other = FUSED[change]
    model, tokenizer, inputs, _ = lifted[name]
    assert max(layer_errors(inputs[0])) <= EXACT
    monkeypatch.setattr(hf_layers, function, other)
    with Float64Lift(model, freqs=True):
        wrong = layer_inputs(model, tokenizer, TEXTS, 0)
    assert layer_errors(wrong)[0] > MATTERS


def test_albert_read_at_the_first_call_of_its_shared_module_does_not_agree(lifted, monkeypatch):
    model, tokenizer, inputs, _ = lifted["albert"]
    right = inputs[4]  # layer 2 of the first text
    assert max(layer_errors(right)) <= EXACT
    adapter = hf_layers.ARCHITECTURES["albert"]
    monkeypatch.setitem(hf_layers.ARCHITECTURES, "albert",
                        lambda base, layer: adapter(base, layer) | {"call": 0})
    with Float64Lift(model, freqs=True):
        wrong = layer_inputs(model, tokenizer, TEXTS, 2)
    assert layer_errors(wrong)[0] > MATTERS


# ---------------------------------------------------------------------------------------------
# What no variant computes: one sentence each
# ---------------------------------------------------------------------------------------------

REFUSALS = {
    "t5": r"t5 is an encoder–decoder model: read a layer of its encoder, its decoder or its "
          r"cross-attention with seq2seq_layer_inputs\(model, tokenizer, source, target, "
          r"layer, kind\)",
    "bart": r"bart is an encoder–decoder model: read a layer of its encoder, its decoder or its "
            r"cross-attention with seq2seq_layer_inputs",
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_architectures_no_variant_computes_are_refused_in_a_sentence(name):
    from transformers import AutoModel

    config = refused_configs()[name][0]
    torch.manual_seed(0)
    model = AutoModel.from_config(config).eval()
    with pytest.raises(ValueError, match=REFUSALS[name]) as raised:
        layer_inputs(model, input_ids=[[4, 5, 6]], layer=0)
    assert str(raised.value).count(". ") == 0  # one sentence


def test_albert_with_several_layers_per_group_is_refused():
    from transformers import AlbertConfig, AlbertModel

    model = AlbertModel(AlbertConfig(hidden_size=16, num_attention_heads=4, embedding_size=8,
                                     intermediate_size=32, num_hidden_layers=2,
                                     inner_group_num=2, vocab_size=20)).eval()
    with pytest.raises(ValueError, match=r"this albert model runs 2 layers inside each shared "
                                         r"group \(inner_group_num\); attnviz reads ALBERT "
                                         r"layers with one layer per group"):
        layer_inputs(model, input_ids=[[4, 5, 6]], layer=0)
