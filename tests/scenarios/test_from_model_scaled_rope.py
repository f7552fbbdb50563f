"""A real head with a scaled RoPE (issue 29 item 4 through item 2): the frequencies decide, not
the rope_type's name. Dynamic NTK RoPE leaves its frequencies base^(−2i/d) on every text a
capture takes (within max_position_embeddings), so such a head opens as the default RoPE with
the model's own probabilities (≤ 1e-10 in float64, Hugging Face's float32 softmax and rotary
steps lifted); a scaling that changes them (linear, YaRN, Llama 3: one factor per frequency)
is refused in a sentence — the RoPE variant's settings are scalars (a base), and carrying a
frequency per pair would need a vector setting the Scenario does not have.

Small random Llama models (tests/hf_models.py's SMALL, weights with std PARITY_INIT, GQA) are
built in memory with the local tokenizer; nothing is downloaded.
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

from attnviz.io.hf_layers import layer_inputs  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

TEXT = "the cat sat on a mat and then the dog ran far away"
SCALED = r"llama layer 0 uses a scaled RoPE \(rope_type '{kind}', attention scaling 1\)"


def llama(rope: dict, *, lifted: bool):
    """Layer 0 of a random Llama with this RoPE, read in float64 (Hugging Face's float32 steps
    lifted when ``lifted``), and the lift."""
    from transformers import AutoModel, LlamaConfig

    torch.manual_seed(0)
    config = LlamaConfig(**SMALL | {"initializer_range": PARITY_INIT}, num_key_value_heads=2,
                         rope_parameters={"rope_theta": 10000.0} | rope)
    model = AutoModel.from_config(config).double().eval()
    tokenizer = make_tokenizer(bert=False, pad=False)
    if not lifted:
        return layer_inputs(model, tokenizer, TEXT, 0), None
    with Float64Lift(model, freqs=True) as lift:
        return layer_inputs(model, tokenizer, TEXT, 0), lift


def test_a_dynamic_ntk_head_opens_with_the_models_own_probabilities():
    li, lift = llama({"rope_type": "dynamic", "factor": 2.0}, lifted=True)
    assert li.rope.rope_type == "dynamic" and set(lift.rotary_dtypes) == {torch.float64}
    for head in range(li.n_heads):
        sc = layer_scenario(li, head)
        assert sc.variant == "rope" and sc.param("rope_base") == 10000.0
        weights = np.asarray(run_scenario(sc).attention.weights)
        assert np.abs(weights - li.model_weights[head]).max() <= 1e-10, head


def test_frequencies_a_scaling_changed_are_refused():
    li, _ = llama({"rope_type": "linear", "factor": 2.0}, lifted=False)
    assert np.allclose(li.rope.inv_freq, 10000.0 ** (-np.arange(0, 4, 2) / 4) / 2)
    with pytest.raises(ValueError, match=SCALED.format(kind="linear")):
        layer_scenario(li, 0)
    # dynamic NTK beyond the model's positions turns by another base: its frequencies decide
    dyn, _ = llama({"rope_type": "dynamic", "factor": 2.0}, lifted=False)
    moved = dataclasses.replace(dyn, rope=dataclasses.replace(dyn.rope,
                                                              inv_freq=dyn.rope.inv_freq ** 1.1))
    with pytest.raises(ValueError, match=SCALED.format(kind="dynamic")):
        layer_scenario(moved, 0)
