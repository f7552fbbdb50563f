"""Phi's and StableLM's heads with ``qk_layernorm=True`` open exactly as a list of attention
steps: a LayerNorm of each head's q and k (mean subtracted, a gain and a bias per dimension;
Phi's one LayerNorm for every head, StableLM's one per head and per key/value head, GQA) before
partial RoPE (half of each head rotated).

Tiny random models saved with save_pretrained and loaded as a user does, the LayerNorms' gains
and every bias drawn at random (transformers starts them at 1 and 0, where they would change
nothing); every head of both layers, both texts (the second padded), through the dashboard's
run path: ≤ 1e-10 against Hugging Face with its float32 steps lifted to float64, ≤ 1e-5 as
shipped. Each part matters: without the LayerNorm, with an RMSNorm of the same gains instead
(no centring), without Phi's bias, or with StableLM's first head's LayerNorm on every head,
the weights move by more than 1e-3.
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
    VOCAB,
    head_error,
    lifted_layers,
    make_tokenizer,
    recompute_errors,
    replaced,
    shipped_layers,
)

from attnviz.core import steps as S  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402


def configs() -> dict:
    from transformers import PhiConfig, StableLmConfig

    small = SMALL | {"initializer_range": PARITY_INIT, "vocab_size": len(VOCAB)}
    partial = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}
    ids = dict(pad_token_id=0, bos_token_id=2, eos_token_id=3)
    return {"phi": PhiConfig(**small, qk_layernorm=True, rope_parameters=partial, **ids),
            "stablelm": StableLmConfig(**small, num_key_value_heads=2, qk_layernorm=True,
                                       use_qkv_bias=True, rope_parameters=partial, **ids)}


def save(config, folder):
    from transformers import AutoModel

    torch.manual_seed(0)
    model = AutoModel.from_config(config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(".bias"):
                param.normal_(0.0, PARITY_INIT)
            elif "layernorm" in name and name.endswith(".weight"):  # q_layernorm, k_layernorm
                param.uniform_(0.5, 2.0)
    model.save_pretrained(folder)
    make_tokenizer(False, True).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    return {name: save(config, tmp_path_factory.mktemp(name))
            for name, config in configs().items()}


@pytest.fixture(scope="module")
def lifted(folders) -> dict:
    return {name: lifted_layers(folder) for name, folder in folders.items()}


@pytest.fixture(scope="module")
def shipped(folders) -> dict:
    return {name: shipped_layers(folder) for name, folder in folders.items()}


@pytest.mark.parametrize("name", ["phi", "stablelm"])
def test_every_head_opens_with_the_models_probabilities(lifted, shipped, name):
    inputs, lift = lifted[name].layers, lifted[name].lift
    assert lift.rotary_dtypes and set(lift.rotary_dtypes) == {torch.float64}
    assert any(not li.padding.all() for li in inputs)  # the second text is padded
    rows = 1 if name == "phi" else inputs[0].n_heads
    assert np.shape(inputs[0].layer_norm["q_gain"]) == (rows, inputs[0].head_dim)
    for layers, bound in ((inputs, EXACT), (shipped[name], SHIPPED)):
        for li in layers:
            assert li.n_heads >= 2 and li.causal
            for head in range(li.n_heads):
                sc = layer_scenario(li, head)
                assert sc.variant == "steps"
                names = [s.name for s in sc.params["steps"]]
                assert names[:3] == ["heads", "qk_layernorm", "rope"]
                assert head_error(li, head, sc) <= bound, (name, li.layer, head)


@pytest.mark.parametrize("name", ["phi", "stablelm"])
def test_the_adapters_recomputation_is_the_models(lifted, name):
    for li in lifted[name].layers:
        w, o = recompute_errors(li)
        assert w <= EXACT and o <= EXACT, (name, li.layer, w, o)


def changed(alter):
    """The list with its QK-LayerNorm step replaced by ``alter``'s step (None: dropped)."""
    return replaced(S.QKLayerNorm, alter)


def other_heads_norm(li):
    """Every head given head 0's LayerNorm (StableLM has one per head)."""
    ln = {k: (np.repeat(np.asarray(v)[:1], len(v), axis=0) if k != "eps" else v)
          for k, v in li.layer_norm.items()}
    return dataclasses.replace(li, layer_norm=ln)


ABLATIONS = {
    "Phi without its QK-LayerNorm": ("phi", changed(lambda s: None)),
    "Phi with an RMSNorm of the same gains": (
        "phi", changed(lambda s: S.QKNorm(s.q_gain[0], s.k_gain[0], s.eps))),
    "Phi without the LayerNorm's bias": (
        "phi", changed(lambda s: dataclasses.replace(s, q_bias=((0.0,),), k_bias=((0.0,),)))),
    "StableLM without its QK-LayerNorm": ("stablelm", changed(lambda s: None)),
}


@pytest.mark.parametrize("change", list(ABLATIONS))
def test_each_part_matters(lifted, change):
    name, alter = ABLATIONS[change]
    moved = [head_error(li, h, alter(layer_scenario(li, h)))
             for li in lifted[name].layers for h in range(li.n_heads)]
    assert max(moved) > MATTERS, (change, max(moved))


def test_stablelms_heads_each_have_their_own_layernorm(lifted):
    moved = [head_error(li, h, layer_scenario(other_heads_norm(li), h))
             for li in lifted["stablelm"][0] for h in range(1, li.n_heads)]
    assert max(moved) > MATTERS
