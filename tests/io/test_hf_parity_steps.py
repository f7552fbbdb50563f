"""Real heads that combine ideas open exactly as a list of attention steps
(attnviz.scenarios.from_model.layer_steps / layer_scenario, the ``steps`` variant): Qwen 3
(QK-norm with a gain per dimension + RoPE), gpt-oss (sink logits + YaRN RoPE + GQA, a sliding
layer), Gemma 3 (QK-norm with gain 1 + w + RoPE with a base per layer type + its
query_pre_attn_scalar + a window on its sliding layer; its config's attn_logit_softcapping,
which its attention does not apply, is not read), and a soft-cap without
RoPE (Gemma 2's layer with its rotation taken out: no Hugging Face model has one, so it is
compared with the adapter's recomputation).

Tiny random models saved with save_pretrained and loaded as a user does (tests/hf_models.py);
every head of every layer, both texts (the second padded), through the dashboard's run path
(``run_scenario``): ≤ 1e-10 against Hugging Face with its float32 steps lifted to float64,
≤ 1e-5 as shipped. Each part matters: the same list without its QK-norm, its sink, its cap or
its window moves the weights by more than 1e-3.
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
    EXACT,
    MATTERS,
    PARITY_INIT,
    SHIPPED,
    SMALL,
    Float64Lift,
    head_error,
    lifted_layers,
    parity_configs,
    recompute_errors,
    replaced,
    save_model,
    shipped_layers,
    without,
)

from attnviz.core import steps as S  # noqa: E402
from attnviz.io.hf_layers import recompute  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402


def gemma3_config():
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(**SMALL | {"initializer_range": PARITY_INIT},
                            num_key_value_heads=2, head_dim=4, sliding_window=3,
                            layer_types=["sliding_attention", "full_attention"],
                            query_pre_attn_scalar=16, attn_logit_softcapping=2.0,
                            pad_token_id=0, bos_token_id=2, eos_token_id=3)


def configs() -> dict:
    parity = parity_configs()
    return {"qwen3": parity["qwen3"], "gpt_oss": parity["gpt_oss"],
            "gemma2": parity["gemma2"], "gemma3": (gemma3_config(), False, True)}


class Lift(Float64Lift):
    """Float64Lift, and Gemma 3's float32 steps in float64: its q/k RMSNorm (``x.float()``)
    and its rotary table per layer type."""

    def __enter__(self):
        super().__enter__()
        for module in self.model.modules():
            kind = type(module).__name__
            if kind == "Gemma3Attention":
                self._patch(module.q_norm, _gemma3_norm64)
                self._patch(module.k_norm, _gemma3_norm64)
            if kind == "Gemma3RotaryEmbedding":
                self._patch(module, self._gemma3_rotary)
        return self

    def _gemma3_rotary(self, module, x, position_ids, layer_type):
        inv_freq = getattr(module, f"{layer_type}_inv_freq").double()
        scaling = getattr(module, f"{layer_type}_attention_scaling")
        freqs = position_ids[..., None].double() * inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        self.rotary_dtypes.append(emb.dtype)
        return (emb.cos() * scaling).to(x.dtype), (emb.sin() * scaling).to(x.dtype)


def _gemma3_norm64(module, x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + module.eps) * (1.0 + module.weight)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    return {name: save_model(config, bert, pad, tmp_path_factory.mktemp(name),
                             bias_std=PARITY_INIT)
            for name, (config, bert, pad) in configs().items()}


@pytest.fixture(scope="module")
def lifted(folders) -> dict:
    return {name: lifted_layers(folder, Lift, eager_experts=name == "gpt_oss")
            for name, folder in folders.items()}


@pytest.fixture(scope="module")
def shipped(folders) -> dict:
    return {name: shipped_layers(folder) for name, folder in folders.items()}


COMBINED = ["qwen3", "gpt_oss", "gemma3"]


@pytest.mark.parametrize("name", COMBINED)
def test_every_head_opens_with_the_models_probabilities(lifted, shipped, name):
    inputs, lift = lifted[name].layers, lifted[name].lift
    assert lift.softmax_dtypes and set(lift.softmax_dtypes) == {torch.float64}
    assert lift.rotary_dtypes and set(lift.rotary_dtypes) == {torch.float64}
    assert any(not li.padding.all() for li in inputs)  # the second text is padded
    for layers, bound in ((inputs, EXACT), (shipped[name], SHIPPED)):
        for li in layers:
            assert li.n_heads >= 2
            for head in range(li.n_heads):
                sc = layer_scenario(li, head)
                assert sc.variant == "steps" and sc.mask_kind == "none"
                assert head_error(li, head, sc) <= bound, (name, li.layer, head)


@pytest.mark.parametrize("name", COMBINED)
def test_the_adapters_recomputation_is_the_models(lifted, name):
    for li in lifted[name].layers:
        w, o = recompute_errors(li)
        assert w <= EXACT and o <= EXACT, (name, li.layer, w, o)


def test_gemma3_is_read_with_its_conventions(lifted):
    first, second = lifted["gemma3"].layers[0], lifted["gemma3"].layers[2]
    assert (first.sliding_window, second.sliding_window) == (3, None)
    assert first.softcap is None and first.scale == 16 ** -0.5 and first.causal
    assert not np.allclose(first.rope.inv_freq, second.rope.inv_freq)  # local and global bases
    names = [s.name for s in layer_scenario(first, 1).params["steps"]]
    assert names == ["heads", "qk_norm", "rope", "causal", "window"]


@pytest.fixture(scope="module")
def capped_without_rope(lifted):
    return [dataclasses.replace(li, rope=None) for li in lifted["gemma2"][0]]


def test_a_soft_cap_without_rope_matches_the_recomputation(capped_without_rope):
    """Gemma 2's layers with their rotation taken out: the list (cap, causal, window) is the
    adapter's recomputation of the layer."""
    for li in capped_without_rope:
        ours = recompute(li)
        for head in range(li.n_heads):
            sc = layer_scenario(li, head)
            assert sc.variant == "steps"
            assert "softcap" in [s.name for s in sc.params["steps"]]
            w = np.asarray(run_scenario(sc).attention.weights)
            np.testing.assert_allclose(w, np.asarray(ours.weights)[head], rtol=0, atol=1e-12)
        assert np.abs(np.asarray(ours.weights) - li.model_weights)[:, li.padding][
            :, :, li.padding].max() > MATTERS  # not the model's: its RoPE is gone


ABLATIONS = {
    "Qwen 3 without QK-norm": ("qwen3", without(S.QKNorm)),
    "Qwen 3 without RoPE": ("qwen3", without(S.RoPE)),
    "gpt-oss without its sink": ("gpt_oss", without(S.SinkSoftmax)),
    "gpt-oss without its window": ("gpt_oss", without(S.Window)),
    "Gemma 3 without QK-norm": ("gemma3", without(S.QKNorm)),
    "Gemma 3 with its config's cap, which its attention does not apply": (
        "gemma3", lambda sc: dataclasses.replace(sc, params={"steps": (
            *sc.params["steps"], S.SoftCap(2.0))})),
    "Gemma 3 without its window": ("gemma3", without(S.Window)),
    "Gemma 3 with QK-norm's gain w instead of 1 + w": ("gemma3", replaced(
        S.QKNorm, lambda s: S.QKNorm(tuple(g - 1 for g in s.q_gain),
                                     tuple(g - 1 for g in s.k_gain), s.eps))),
}


@pytest.mark.parametrize("change", list(ABLATIONS))
def test_each_step_matters(lifted, change):
    name, alter = ABLATIONS[change]
    moved = [head_error(li, h, alter(layer_scenario(li, h)))
             for li in lifted[name].layers for h in range(li.n_heads)]
    assert max(moved) > MATTERS, (change, max(moved))
