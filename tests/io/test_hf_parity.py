"""Exactness as a test: every layer of small random-initialised transformers
models, recomputed by attnviz's core from the weights (attnviz.io.hf_layers), against Hugging
Face's own probabilities (``output_attentions``, eager) and the attention block's output.

The models (tests/hf_models.py ``parity_configs``: BERT with a padded second sequence, GPT-2,
Llama with RoPE + GQA, Llama with YaRN, linear and Llama 3 RoPE scaling, Mistral with a
window shorter than the text, Gemma 2 with soft-capping, a sliding layer and
query_pre_attn_scalar, Qwen 2 with biases, Qwen 3 with QK-norm, gpt-oss with per-head sink
logits) are saved with save_pretrained beside a local tokenizer and loaded through
``attnviz.io.capture.load_model``, as a user does; nothing is downloaded.

* float64: ``model.double()`` and HF's float32 steps lifted to float64 — the eager softmax's
  ``dtype=torch.float32``, the rotary table (``position_ids.float() * inv_freq.float()``) and
  Qwen 3's QK RMSNorm (``.to(torch.float32)``) — agree to 1e-10 (measured ~1e-16); that
  the lift ran is checked (every softmax and rotary table of the forward was float64), and
  without it the same models differ by ~1e-8, so the lift is what closes the gap;
* float32, as shipped: 1e-5 (measured ~1e-7);
* each feature matters: recomputing without it (no RoPE, the interleaved layout, GQA's
  mapping tiled instead of repeat_interleave, no window or a window one key wider, no cap,
  1/sqrt(head_dim) instead of query_pre_attn_scalar, no QK-norm, no biases, no YaRN scaling,
  no sinks, a scaled RoPE's frequencies from the plain base)
  moves the result above 1e-3.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_models import PARITY_INIT, Float64Lift, parity_configs, save_model  # noqa: E402

from attnviz.io.capture import load_model  # noqa: E402
from attnviz.io.hf_layers import (  # noqa: E402
    SUPPORTED_MODEL_TYPES,
    LayerInputs,
    layer_inputs,
    recompute,
)

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["the cat sat on a mat and then the dog ran far away", "a dog ran in sun"]
NAMES = ["bert", "gpt2", "llama", "llama_yarn", "llama_linear", "llama3", "mistral", "gemma2",
         "qwen2", "qwen3", "gpt_oss"]
EXACT = 1e-10  # float64 with the lift
SHIPPED = 1e-5  # float32
MATTERS = 1e-3  # a dropped feature moves the result by more


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    return {name: save_model(config, bert, pad, tmp_path_factory.mktemp(name),
                             bias_std=PARITY_INIT)
            for name, (config, bert, pad) in parity_configs().items()}


@pytest.fixture(scope="module")
def shipped(folders) -> dict:
    """Each model as load_model gives it: float32, eager."""
    return {name: load_model(folder) for name, folder in folders.items()}


@pytest.fixture(scope="module")
def lifted(folders) -> dict:
    """Each model loaded again and turned to float64 (``model.double()``; gpt-oss's experts
    with their eager implementation: the default grouped_mm takes no float64)."""
    out = {}
    for name, folder in folders.items():
        model, tokenizer = load_model(folder)
        if name == "gpt_oss":
            model.set_experts_implementation("eager")
        out[name] = (model.double(), tokenizer)
    return out


# ---------------------------------------------------------------------------------------------
# Comparing every layer
# ---------------------------------------------------------------------------------------------

def every_layer(model, tokenizer, name: str) -> list[LayerInputs]:
    """The inputs of every layer for each sequence (the second padded where the tokenizer has
    a pad token; BERT's second is a sentence pair's worth shorter)."""
    texts = TEXTS if tokenizer.pad_token is not None else TEXTS[:1]
    return [layer_inputs(model, tokenizer, texts, layer, sequence=b)
            for layer in range(model.config.num_hidden_layers) for b in range(len(texts))]


def errors(li: LayerInputs, result=None) -> tuple[float, float]:
    """Largest |ours − HF| of the probabilities and of the block's output (real tokens)."""
    result = recompute(li) if result is None else result
    keep = li.padding
    w = np.abs(np.asarray(result.weights) - li.model_weights)[:, keep][:, :, keep]
    o = np.abs(np.asarray(result.output) - li.model_output)[keep]
    return float(w.max()), float(o.max())


@pytest.fixture(scope="module")
def lifted_inputs(lifted) -> dict:
    """name -> (every layer's inputs read from the float64 model with the lift, the lift,
    the dtypes of the attentions HF returned)."""
    out = {}
    for name, (model, tokenizer) in lifted.items():
        with Float64Lift(model) as lift:
            inputs = every_layer(model, tokenizer, name)
            with torch.no_grad():
                ids = torch.tensor([tokenizer(TEXTS[0])["input_ids"]])
                returned = model(input_ids=ids, output_attentions=True).attentions
        out[name] = (inputs, lift, {a.dtype for a in returned})
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_layer_agrees_in_float64_with_the_lift(lifted, lifted_inputs, name):
    model, tokenizer = lifted[name]
    inputs, lift, returned = lifted_inputs[name]
    assert returned == {torch.float64}  # the attentions HF returns are float64
    # the lift ran: every softmax of the forward passes, every rotary table, in float64
    assert lift.softmax_dtypes and set(lift.softmax_dtypes) == {torch.float64}
    rotary = [m for m in model.modules() if hasattr(m, "inv_freq")]
    if name in ("bert", "gpt2"):
        assert not rotary and not lift.rotary_dtypes
    else:
        assert rotary and all(m.inv_freq.dtype == torch.float64 for m in rotary)
        assert lift.rotary_dtypes and set(lift.rotary_dtypes) == {torch.float64}
    if tokenizer.pad_token is not None:
        assert not inputs[1].padding.all()  # the second sequence is padded
    for li in inputs:
        assert li.x.dtype == np.float64 and li.model_weights.dtype == np.float64
        w, o = errors(li)
        assert w <= EXACT and o <= EXACT, (name, li.layer, w, o)


def test_the_lift_is_what_closes_the_gap(lifted):
    """Without the lift, a float64 Llama still runs its softmax and rotary table in float32:
    the same comparison then misses 1e-10 (the lift is what the test above relies on)."""
    model, tokenizer = lifted["llama"]
    worst = max(errors(li)[0] for li in every_layer(model, tokenizer, "llama"))
    assert 1e-10 < worst < 1e-5


def test_padded_rows_that_hf_leaves_nan_are_zeroed(lifted):
    """Unlifted float64 Mistral: a padded query whose window holds only padding gets NaN
    from HF's float32 softmax (its float64 mask's minimum becomes −inf), which reaches that
    row of the next layer's input and, through NaN · 0, every row of HF's next layer. The
    adapter zeroes padded rows that are not finite (never a real token's): it still reads
    that layer, and its recomputation stays finite."""
    model, tokenizer = lifted["mistral"]
    first = layer_inputs(model, tokenizer, TEXTS, 0, sequence=1)
    assert errors(first)[0] < 1e-5  # the real rows of layer 0 still agree
    second = layer_inputs(model, tokenizer, TEXTS, 1, sequence=1)
    assert np.isnan(second.model_weights[:, second.padding]).all()  # HF: NaN everywhere
    assert np.isfinite(second.x).all() and (second.x[~second.padding] == 0).all(axis=1).any()
    weights = np.asarray(recompute(second).weights)[:, second.padding]
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)


def test_a_real_token_that_is_not_finite_is_refused():
    from attnviz.io.hf_layers import _hidden

    x = torch.ones((3, 2), dtype=torch.float64)
    x[2, 0] = float("nan")
    np.testing.assert_array_equal(_hidden(x, np.array([True, True, False])),
                                  [[1, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="not finite for a real token"):
        _hidden(x, np.array([True, True, True]))


@pytest.mark.parametrize("name", NAMES)
def test_every_layer_agrees_as_shipped_in_float32(shipped, name):
    model, tokenizer = shipped[name]
    assert next(model.parameters()).dtype == torch.float32
    for li in every_layer(model, tokenizer, name):
        w, o = errors(li)
        assert w <= SHIPPED and o <= SHIPPED, (name, li.layer, w, o)


SCALED_ROPES = ["llama_yarn", "llama_linear", "llama3"]


@pytest.mark.parametrize("name", SCALED_ROPES)
def test_a_scaled_rope_head_opens_as_a_scenario_with_the_models_probabilities(
        lifted_inputs, shipped, name):
    """Every head of every layer through the dashboard's own run path
    (from_model.layer_scenario -> run_scenario: the RoPE variant with the model's frequencies
    and attention scaling): 1e-10 in float64 with the lift, 1e-5 as shipped."""
    from attnviz.scenarios.from_model import layer_scenario
    from attnviz.scenarios.scenario import run_scenario

    model, tokenizer = shipped[name]
    for inputs, bound in ((lifted_inputs[name][0], EXACT),
                          (every_layer(model, tokenizer, name), SHIPPED)):
        for li in inputs:
            keep = li.padding
            for head in range(li.n_heads):
                sc = layer_scenario(li, head)
                assert sc.params["rope_inv_freq"] == tuple(li.rope.inv_freq.tolist())
                weights = np.asarray(run_scenario(sc).attention.weights)
                error = np.abs(weights - li.model_weights[head])[keep][:, keep].max()
                assert error <= bound, (name, li.layer, head, error)


# ---------------------------------------------------------------------------------------------
# Each feature matters
# ---------------------------------------------------------------------------------------------

def tiled(li: LayerInputs) -> LayerInputs:
    """GQA read the wrong way: query head h on key/value head h % n_kv (tile) instead of
    h // (n_heads / n_kv) (repeat_interleave), written as full multi-head weights."""
    d = li.head_dim
    order = [h % li.n_kv_heads for h in range(li.n_heads)]
    expand = lambda w: np.hstack([w[:, g * d:(g + 1) * d] for g in order])  # noqa: E731
    expand_b = lambda b: None if b is None else np.concatenate(  # noqa: E731
        [b[g * d:(g + 1) * d] for g in order])
    return dataclasses.replace(li, w_k=expand(li.w_k), w_v=expand(li.w_v), b_k=expand_b(li.b_k),
                               b_v=expand_b(li.b_v), n_kv_heads=li.n_heads)


def plain_base(li: LayerInputs) -> LayerInputs:
    """A scaled RoPE read as the default one: its frequencies base^(−2i/d) again."""
    d_rot = 2 * li.rope.inv_freq.size
    plain = li.rope.base ** (-np.arange(0, d_rot, 2) / d_rot)
    assert not np.allclose(plain, li.rope.inv_freq, rtol=1e-3)  # the scaling changed them
    return dataclasses.replace(li, rope=dataclasses.replace(li.rope, inv_freq=plain))


CHANGES = {
    "no RoPE": ("llama", lambda li: dataclasses.replace(li, rope=None)),
    "interleaved RoPE layout": ("llama", lambda li: dataclasses.replace(
        li, rope=dataclasses.replace(li.rope, layout="interleaved"))),
    "GQA tiled": ("llama", tiled),
    "no YaRN scaling": ("llama_yarn", lambda li: dataclasses.replace(
        li, rope=dataclasses.replace(li.rope, attention_scaling=1.0))),
    "YaRN's frequencies from the plain base": ("llama_yarn", lambda li: plain_base(li)),
    "linear scaling's frequencies from the plain base": ("llama_linear", lambda li: plain_base(li)),
    "Llama 3's frequencies from the plain base": ("llama3", lambda li: plain_base(li)),
    "no window": ("mistral", lambda li: dataclasses.replace(li, sliding_window=None)),
    "window one key wider": ("mistral", lambda li: dataclasses.replace(
        li, sliding_window=li.sliding_window + 1)),
    "no soft-cap": ("gemma2", lambda li: dataclasses.replace(li, softcap=None)),
    "scale 1/sqrt(head_dim)": ("gemma2", lambda li: dataclasses.replace(
        li, scale=li.head_dim ** -0.5)),
    "no QK-norm": ("qwen3", lambda li: dataclasses.replace(li, q_norm=None, k_norm=None)),
    "no biases (Qwen 2)": ("qwen2", lambda li: dataclasses.replace(li, b_q=None, b_k=None)),
    "no biases (GPT-2)": ("gpt2", lambda li: dataclasses.replace(li, b_q=None, b_k=None,
                                                                  b_v=None, b_o=None)),
    "no padding mask": ("bert", lambda li: dataclasses.replace(
        li, padding=np.ones_like(li.padding))),
    "no sinks (gpt-oss)": ("gpt_oss", lambda li: dataclasses.replace(li, sinks=None)),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_feature_matters(lifted_inputs, change):
    name, alter = CHANGES[change]
    inputs = lifted_inputs[name][0]
    if change == "no padding mask":  # only the padded sequence has padding to drop
        inputs = [li for li in inputs if not li.padding.all()]
    if name == "gemma2" and change == "no window":
        inputs = [li for li in inputs if li.sliding_window is not None]
    assert inputs
    moved = []
    for li in inputs:
        assert max(errors(li)) <= EXACT
        wrong = alter(li)
        result = recompute(wrong)
        if change == "no padding mask":  # compare on the real tokens, as the model sees them
            result_w = np.asarray(result.weights)[:, li.padding][:, :, li.padding]
            moved.append(np.abs(result_w - li.model_weights[:, li.padding][:, :, li.padding])
                         .max())
        else:
            moved.append(max(errors(li, result)))
    assert max(moved) > MATTERS, (change, moved)


def test_the_window_and_the_cap_are_read_per_layer(lifted):
    model, tokenizer = lifted["gemma2"]
    first, second = (layer_inputs(model, tokenizer, TEXTS[0], layer) for layer in (0, 1))
    assert (first.sliding_window, second.sliding_window) == (3, None)
    assert first.softcap == second.softcap == 1.0 and first.scale == 16 ** -0.5
    assert first.rope.layout == "split_half" and first.causal
    mistral = layer_inputs(*lifted["mistral"], TEXTS[0], 1)
    assert mistral.sliding_window == 3 < mistral.x.shape[0]
    yarn = layer_inputs(*lifted["llama_yarn"], TEXTS[0], 0)
    assert yarn.rope.attention_scaling == pytest.approx(0.1 * np.log(4.0) + 1.0)
    bert = layer_inputs(*lifted["bert"], TEXTS, 0, sequence=1)
    assert not bert.causal and bert.rope is None and bert.b_q is not None
    assert bert.tokens[:2] == ("[CLS]", "a") and bert.tokens[-1] == "[PAD]"


def test_a_model_with_a_head_and_left_padding():
    """A task model (LlamaForCausalLM: its base model is read) and a left-padded batch given
    as input_ids: the padded queries and keys are masked, the real rows agree."""
    from transformers import LlamaForCausalLM

    torch.manual_seed(1)
    model = LlamaForCausalLM(parity_configs()["llama"][0]).eval()
    li = layer_inputs(model, input_ids=np.array([[0, 0, 4, 5, 6], [4, 5, 6, 7, 8]]),
                      attention_mask=np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]), layer=1)
    assert li.padding.tolist() == [False, False, True, True, True]
    assert li.tokens == ("<pad>", "<pad>", "4", "5", "6")
    assert max(errors(li)) <= SHIPPED
    np.testing.assert_array_equal(np.asarray(recompute(li).weights)[:, :2], 0.0)  # no key


# ---------------------------------------------------------------------------------------------
# Refusals and the import
# ---------------------------------------------------------------------------------------------

def test_an_unknown_architecture_is_refused_naming_the_known_ones(shipped):
    from transformers import CTRLConfig, CTRLModel

    model = CTRLModel(CTRLConfig(vocab_size=20, n_embd=16, n_layer=1, n_head=4, dff=32,
                                 n_positions=16)).eval()
    known = ", ".join(SUPPORTED_MODEL_TYPES)
    with pytest.raises(ValueError, match=re.escape(f"model_type 'ctrl' is not an architecture "
                                                   f"whose layers attnviz reads; it reads "
                                                   f"{known}")):
        layer_inputs(model, input_ids=[4, 5, 6])
    assert SUPPORTED_MODEL_TYPES[:8] == ("bert", "gpt2", "llama", "mistral", "gemma2", "qwen2",
                                         "qwen3", "gpt_oss")
    model, tokenizer = shipped["gpt2"]
    with pytest.raises(ValueError, match=r"layer must be a whole number from 0 to 1 \(the model "
                                         r"has 2 layers\), got 2"):
        layer_inputs(model, tokenizer, "the cat", 2)
    with pytest.raises(ValueError, match=r"sequence must be a whole number from 0 to 0 \(the "
                                         r"batch holds 1\), got 1"):
        layer_inputs(model, tokenizer, "the cat", 0, sequence=1)
    with pytest.raises(ValueError, match="text needs the model's tokenizer"):
        layer_inputs(model, None, "the cat", 0)


def test_importing_the_adapter_loads_no_torch():
    code = ("import sys\nimport attnviz.io.hf_layers\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'transformers')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
