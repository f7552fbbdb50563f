"""attnviz.io.capture.is_causal: decoder-only models are causal, encoders bidirectional, for
every architecture the capture tests build (and BLOOM, whose attention carries no flag).

A tiny BLOOM is built from a config, saved with save_pretrained beside a local tokenizer and
captured through load_model (tests/hf_models.py; nothing downloaded): its capture says causal
and its weights are — nothing above the diagonal. The other architectures are built on torch's
meta device from their default configs (no memory, no weights): only the modules and the
config are read.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_models import VOCAB, save_model  # noqa: E402 - the shared builders

from attnviz.io.capture import capture, capture_arrays, is_causal, load_model  # noqa: E402

# model_type -> causal, for the architectures of the capture and parity tests
DECODERS = ("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text",
            "gpt_neo", "gptj", "gpt_neox", "mixtral", "phi", "phi3", "opt", "falcon",
            "stablelm", "starcoder2", "olmo2", "bloom", "gpt_oss")
ENCODERS = ("bert", "roberta", "xlm-roberta", "distilbert", "albert", "electra", "mpnet",
            "deberta-v2", "modernbert")
ENCODER_DECODERS = ("t5", "bart")


def on_meta(model_type: str, **config):
    """``AutoModel`` of the default config of ``model_type`` on the meta device."""
    cfg = transformers.AutoConfig.for_model(model_type, **config)
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoModel.from_config(cfg)


@pytest.fixture(scope="module")
def bloom(tmp_path_factory):
    """A 2-layer, 4-head BLOOM with random weights, saved and loaded as a user would."""
    config = transformers.BloomConfig(hidden_size=16, n_layer=2, n_head=4,
                                      vocab_size=len(VOCAB), initializer_range=0.5)
    folder = save_model(config, bert=False, pad=True, folder=tmp_path_factory.mktemp("bloom"))
    return load_model(folder)


def test_bloom_attention_carries_no_flag(bloom):
    """Why BLOOM needs more than the modules' flags: none of its modules has is_causal, and
    its config is not marked as a decoder."""
    model, _ = bloom
    assert not any(isinstance(getattr(m, "is_causal", None), bool) for m in model.modules())
    assert not getattr(model.config, "is_decoder", False)


def test_a_bloom_capture_is_causal_as_its_weights_are(bloom):
    model, tokenizer = bloom
    assert is_causal(model)
    cap = capture(model, tokenizer, text="the cat sat on a mat and then slept")
    w = cap.attentions[0]  # (layers, heads, t, t)
    t = w.shape[-1]
    assert t == 9 and cap.is_causal
    assert np.all(w[..., np.triu_indices(t, 1)[0], np.triu_indices(t, 1)[1]] == 0)
    assert w[..., np.tril_indices(t, -1)[0], np.tril_indices(t, -1)[1]].min() > 0
    assert bool(capture_arrays(cap)["is_causal"])  # what the saved file tells the page


@pytest.mark.parametrize("model_type", DECODERS)
def test_decoder_only_models_are_causal(model_type):
    assert is_causal(on_meta(model_type)) is True


@pytest.mark.parametrize("model_type", ENCODERS)
def test_encoders_stay_bidirectional(model_type):
    assert is_causal(on_meta(model_type)) is False


@pytest.mark.parametrize("model_type", ENCODER_DECODERS)
def test_an_encoder_decoder_stack_by_stack(model_type):
    model = on_meta(model_type)
    assert is_causal(model.get_encoder()) is False
    assert is_causal(model.get_decoder()) is True


@pytest.mark.parametrize("model_type", ("bert", "roberta", "electra"))
def test_an_encoder_built_as_a_decoder_is_causal(model_type):
    assert is_causal(on_meta(model_type, is_decoder=True)) is True


def test_xlnet_attends_both_ways_unless_told_otherwise():
    """XLNet has a causal-LM class and no masked-LM class, yet its default attention is
    two-way (attn_type "bi")."""
    assert is_causal(on_meta("xlnet")) is False
    assert is_causal(on_meta("xlnet", attn_type="uni")) is True
