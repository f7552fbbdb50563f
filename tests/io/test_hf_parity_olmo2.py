"""OLMo 2's heads open exactly as a list of attention steps: one RMSNorm over every head's q
together (and one over every key/value head's k), before the split into heads and RoPE — the
``qk_norm_across`` step, each head holding its slice of the gains and the other heads' share
of each row's mean square as recorded from the layer's input.

A tiny random OLMo 2 (GQA: 4 query heads on 2 key/value heads) saved with save_pretrained and
loaded as a user does, its norms' gains drawn at random (transformers starts them at 1); every
head of both layers, both texts (the second padded), through the dashboard's run path: ≤ 1e-10
against Hugging Face with its float32 steps lifted to float64, ≤ 1e-5 as shipped; the adapter's
recomputation of the whole layer too. Each part matters: without the norm, with a per-head
RMSNorm of the same gains (the other heads left out), or with the other heads' share but the
head's own width as the mean's, the weights move by more than 1e-3. An edit of W_Q in the
opened head equals the same edit of the model's q_proj rows while the other heads' share is
held (their q unchanged), as the step says.
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
    make_tokenizer,
    recompute_errors,
    replaced,
    shipped_layers,
)

from attnviz.core import steps as S  # noqa: E402
from attnviz.io.hf_layers import REFUSED, SUPPORTED_MODEL_TYPES, recompute  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from transformers import AutoModel, Olmo2Config

    config = Olmo2Config(**SMALL | {"initializer_range": PARITY_INIT}, num_key_value_heads=2,
                         pad_token_id=0, bos_token_id=2, eos_token_id=3)
    torch.manual_seed(0)
    model = AutoModel.from_config(config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith(("q_norm.weight", "k_norm.weight")):
                param.uniform_(0.5, 2.0)
    out = tmp_path_factory.mktemp("olmo2")
    model.save_pretrained(out)
    make_tokenizer(False, True).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def lifted(folder):
    return lifted_layers(folder)


@pytest.fixture(scope="module")
def shipped(folder):
    return shipped_layers(folder)


def test_olmo2_is_read_not_refused():
    assert "olmo2" in SUPPORTED_MODEL_TYPES and "olmo2" not in REFUSED


def test_every_head_opens_with_the_models_probabilities(lifted, shipped):
    inputs, lift, _, _ = lifted
    assert lift.rotary_dtypes and set(lift.rotary_dtypes) == {torch.float64}
    assert any(not li.padding.all() for li in inputs)  # the second text is padded
    li = inputs[0]
    assert li.norm_across and li.n_heads == 4 and li.n_kv_heads == 2
    assert li.q_norm.shape == (li.n_heads * li.head_dim,)
    assert li.k_norm.shape == (li.n_kv_heads * li.head_dim,)
    for layers, bound in ((inputs, EXACT), (shipped, SHIPPED)):
        for li in layers:
            for head in range(li.n_heads):
                sc = layer_scenario(li, head)
                assert sc.variant == "steps"
                names = [s.name for s in sc.params["steps"]]
                assert names[:3] == ["heads", "qk_norm_across", "rope"]
                assert head_error(li, head, sc) <= bound, (li.layer, head, bound)


def test_the_adapters_recomputation_is_the_models(lifted):
    for li in lifted.layers:
        w, o = recompute_errors(li)
        assert w <= EXACT and o <= EXACT, (li.layer, w, o)


def changed(alter):
    """The list with its QK-norm-across step replaced by ``alter``'s step (None: dropped)."""
    return replaced(S.QKNormAcross, alter)


ABLATIONS = {
    "without the norm": changed(lambda s: None),
    "a per-head RMSNorm of the same gains": changed(
        lambda s: S.QKNorm(s.q_gain[0], s.k_gain[0], s.eps)),
    "the other heads' share over the head's own width": changed(
        lambda s: dataclasses.replace(s, q_width=None, k_width=None)),
}


@pytest.mark.parametrize("change", list(ABLATIONS))
def test_each_part_matters(lifted, change):
    moved = [head_error(li, h, ABLATIONS[change](layer_scenario(li, h)))
             for li in lifted.layers for h in range(li.n_heads)]
    assert max(moved) > MATTERS, (change, max(moved))


def test_an_edit_of_w_q_holds_the_other_heads_share(lifted):
    """Head 1's W_Q scaled by 1.5 in the opened head equals the model run with its q_proj rows
    of head 1 scaled, each other head's q as it was: the joint norm then sees the edited
    head's own share and the others' recorded one."""
    inputs, _, model, tokenizer = lifted
    li, head = inputs[0], 1
    d = li.head_dim
    sc = layer_scenario(li, head)
    edited = dataclasses.replace(sc, w_q=sc.w_q * 1.5)
    weights = np.asarray(run_scenario(edited).attention.weights)
    cut = slice(head * d, (head + 1) * d)
    w_q = li.w_q.copy()
    w_q[:, cut] *= 1.5
    again = recompute(dataclasses.replace(li, w_q=w_q))
    keep = li.padding
    np.testing.assert_allclose(weights[keep][:, keep],
                               np.asarray(again.weights)[head][keep][:, keep], rtol=0,
                               atol=1e-12)
    assert np.abs(weights - np.asarray(run_scenario(sc).attention.weights)).max() > MATTERS
