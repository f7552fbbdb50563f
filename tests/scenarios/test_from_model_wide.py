"""A real head wider than the editing limit opens (GPT-2 small's 768): up to
MAX_REAL_D_MODEL, its run is the model's probabilities, and the address bar does not try to
carry it.

A GPT-2 with GPT-2 small's attention shape (n_embd 768, 12 heads of 64, one layer, random
weights drawn with tests/hf_models.py's PARITY_INIT, biases too) is built in memory with the
local tokenizer (nothing is downloaded) and run in float64 (the softmax lifted).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_models import PARITY_INIT, VOCAB, Float64Lift, make_tokenizer  # noqa: E402

from attnviz.io import scenario_io  # noqa: E402
from attnviz.io.hf_layers import layer_inputs  # noqa: E402
from attnviz.scenarios import limits  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

TEXT = "the cat sat on a mat and then the dog ran far away"
D_MODEL, HEADS = 768, 12


@pytest.fixture(scope="module")
def wide():
    """The layer's inputs, read from the float64 model with the softmax lifted."""
    from transformers import AutoModel, GPT2Config

    torch.manual_seed(0)
    config = GPT2Config(n_embd=D_MODEL, n_head=HEADS, n_layer=1, n_positions=64,
                        vocab_size=len(VOCAB), bos_token_id=2, eos_token_id=3,
                        initializer_range=PARITY_INIT)
    model = AutoModel.from_config(config).double().eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(".bias"):
                param.normal_(0.0, PARITY_INIT)
    with Float64Lift(model):
        return layer_inputs(model, make_tokenizer(bert=False), TEXT, 0)


def test_a_gpt2_small_sized_head_opens_with_the_models_own_probabilities(wide):
    assert wide.x.shape == (13, D_MODEL) and limits.MAX_D_MODEL < D_MODEL
    for head in (0, HEADS - 1):
        sc = layer_scenario(wide, head)
        assert sc.d_model == D_MODEL + 1  # the bias trick's column of ones
        assert sc.w_q.shape == (D_MODEL + 1, 64)
        weights = np.asarray(run_scenario(sc).attention.weights)
        assert np.abs(weights - wide.model_weights[head]).max() <= 1e-10
        assert np.abs(weights - wide.model_weights[(head + 1) % HEADS]).max() > 1e-3


def test_a_wide_scenario_is_refused_for_a_link_before_it_is_written(wide):
    sc = layer_scenario(wide, 0)
    with pytest.raises(ValueError, match=rf"this scenario's d_model \({D_MODEL + 1}\) is above "
                                         rf"the {limits.MAX_D_MODEL} a link holds"):
        scenario_io.to_link_param(sc)
