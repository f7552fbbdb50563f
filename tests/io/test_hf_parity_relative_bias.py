"""MPNet's heads open exactly as a list of attention steps: its learned relative position bias
(one number per head for each bucket of distances j − i, the encoder's
``relative_attention_bias`` table) is computed by attnviz (attnviz.core.relative_bias) and
added to the scaled scores as a bias step.

A tiny random MPNet saved with save_pretrained and loaded as a user does (tests/hf_models.py);
every head of both layers, both texts (the second padded), through the dashboard's run path:
≤ 1e-10 against Hugging Face run in float64, ≤ 1e-5 as shipped. The bias matters: without it
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
    head_error,
    lifted_layers,
    recompute_errors,
    save_model,
    shipped_layers,
    without,
)

from attnviz.core import steps as S  # noqa: E402
from attnviz.core.relative_bias import relative_position_bucket  # noqa: E402
from attnviz.io.capture import load_model  # noqa: E402
from attnviz.io.hf_layers import layer_inputs, recompute  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402


def mpnet_config():
    from transformers import MPNetConfig

    return MPNetConfig(**SMALL | {"initializer_range": PARITY_INIT}, pad_token_id=0,
                       bos_token_id=2, eos_token_id=3)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return save_model(mpnet_config(), True, True, tmp_path_factory.mktemp("mpnet"),
                      bias_std=PARITY_INIT)


@pytest.fixture(scope="module")
def lifted(folder):
    return lifted_layers(folder).layers


@pytest.fixture(scope="module")
def shipped(folder):
    return shipped_layers(folder)


def test_the_bucket_function_is_hugging_faces():
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

    relative = np.arange(-3000, 3000)
    for buckets, distance in ((32, 128), (64, 256), (16, 64)):
        theirs = MPNetEncoder.relative_position_bucket(torch.tensor(relative), buckets,
                                                       distance).numpy()
        np.testing.assert_array_equal(relative_position_bucket(relative, buckets, distance),
                                      theirs)


def test_the_bias_is_the_models(folder):
    model, _ = load_model(folder)
    ids = torch.tensor([[4, 5, 6, 7, 8, 9, 10]])
    theirs = model.base_model.encoder.compute_position_bias(
        model.base_model.embeddings(input_ids=ids))[0].detach().double().numpy()
    li = layer_inputs(model, input_ids=ids.tolist(), layer=1)
    np.testing.assert_array_equal(li.position_bias, theirs)


def test_every_mpnet_head_opens_with_the_models_probabilities(lifted, shipped):
    assert any(not li.padding.all() for li in lifted)  # the second text is padded
    for layers, bound in ((lifted, EXACT), (shipped, SHIPPED)):
        for li in layers:
            assert li.n_heads >= 2 and not li.causal
            for head in range(li.n_heads):
                sc = layer_scenario(li, head)
                assert sc.variant == "steps"
                assert [s.name for s in sc.params["steps"]][:2] == ["heads", "bias"]
                assert head_error(li, head, sc) <= bound, (li.layer, head)


def test_the_adapters_recomputation_is_the_models(lifted):
    for li in lifted:
        w, o = recompute_errors(li)
        assert w <= EXACT and o <= EXACT, (li.layer, w, o)


def test_the_bias_matters(lifted):
    unbias = without(S.AddBias)
    moved = [head_error(li, head, unbias(layer_scenario(li, head)))
             for li in lifted for head in range(li.n_heads)]
    assert max(moved) > MATTERS
    unbiased = recompute(dataclasses.replace(lifted[0], position_bias=None)).weights
    assert np.abs(np.asarray(unbiased) - lifted[0].model_weights)[
        :, lifted[0].padding][:, :, lifted[0].padding].max() > MATTERS
