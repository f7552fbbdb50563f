"""DeBERTa's and DeBERTa-v2's heads open exactly as a list of attention steps: the scores
q·k, plus each query dotted with the projected relative position embedding of its distance to
the key (content-to-position) and each key with that of the query's distance to it
(position-to-content), all over √(3 d_k) — the ``disentangled`` step.

Tiny random models saved with save_pretrained and loaded as a user does: DeBERTa-v2 as
DeBERTa-v3 is configured (log buckets, ``position_buckets`` 4 of ``max_relative_positions``
8, so distances from 2 on share buckets; q and k projections shared with the positions,
``share_att_key``; the position embeddings' LayerNorm), DeBERTa-v2 with projections of its
own for positions and no buckets (``max_relative_positions`` 4, so long distances clamp), and
DeBERTa (fused per-head ``in_proj``, ``q_bias`` and ``v_bias``, ``max_relative_positions`` 6 of
a 13-token text). Every head of both layers, both texts (the second padded), through the
dashboard's run path: ≤ 1e-10 against Hugging Face with its float32 scale lifted to float64,
≤ 1e-5 as shipped; the adapter's recomputation of the whole layer too. Each part matters:
without the step, without its content-to-position or its position-to-content term, or with
the distances not bucketed, the weights move by more than 1e-3.
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

from hf_models import PARITY_INIT, SMALL, Float64Lift, save_model  # noqa: E402

from attnviz.core import steps as S  # noqa: E402
from attnviz.io import hf_layers  # noqa: E402
from attnviz.io.capture import load_model  # noqa: E402
from attnviz.io.hf_layers import layer_inputs, recompute  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402

TEXTS = ["the cat sat on a mat and then the dog ran far away", "a dog ran in sun"]
EXACT = 1e-10
SHIPPED = 1e-5
MATTERS = 1e-3


def configs() -> dict:
    from transformers import DebertaConfig, DebertaV2Config

    small = SMALL | {"initializer_range": PARITY_INIT, "pad_token_id": 0}
    both = dict(relative_attention=True, pos_att_type=["c2p", "p2c"])
    return {
        "deberta_v3": DebertaV2Config(**small, **both, position_buckets=4,
                                      max_relative_positions=8, share_att_key=True,
                                      norm_rel_ebd="layer_norm"),
        "deberta_v2": DebertaV2Config(**small, **both, position_buckets=-1,
                                      max_relative_positions=4, share_att_key=False),
        "deberta": DebertaConfig(**small, **both, max_relative_positions=6),
    }


class Lift(Float64Lift):
    """Float64Lift, and DeBERTa's scale √(d_k · 3), which Hugging Face computes in float32
    whatever the model's dtype, in float64."""

    def __enter__(self):
        super().__enter__()
        from transformers.models.deberta import modeling_deberta
        from transformers.models.deberta_v2 import modeling_deberta_v2

        def sqrt64(layer, factor):
            return torch.sqrt(torch.tensor(layer.size(-1), dtype=torch.float64) * factor)

        for module in (modeling_deberta, modeling_deberta_v2):
            self._patch_attr(module, "scaled_size_sqrt", sqrt64)
        return self


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    return {name: save_model(config, True, True, tmp_path_factory.mktemp(name),
                             bias_std=PARITY_INIT)
            for name, config in configs().items()}


def every_layer(model, tokenizer) -> list:
    return [layer_inputs(model, tokenizer, TEXTS, layer, sequence=b)
            for layer in range(model.config.num_hidden_layers) for b in range(len(TEXTS))]


@pytest.fixture(scope="module")
def lifted(folders) -> dict:
    out = {}
    for name, folder in folders.items():
        model, tokenizer = load_model(folder)
        model = model.double()
        with Lift(model):
            out[name] = every_layer(model, tokenizer)
    return out


@pytest.fixture(scope="module")
def shipped(folders) -> dict:
    return {name: every_layer(*load_model(folder)) for name, folder in folders.items()}


def head_error(li, head, sc=None) -> float:
    sc = layer_scenario(li, head) if sc is None else sc
    weights = np.asarray(run_scenario(sc).attention.weights)
    keep = li.padding
    return float(np.abs(weights - li.model_weights[head])[keep][:, keep].max())


def test_deberta_is_read_not_refused():
    for name in ("deberta", "deberta-v2"):
        assert name in hf_layers.SUPPORTED_MODEL_TYPES and name not in hf_layers.REFUSED


@pytest.mark.parametrize("name", list(configs()))
def test_every_head_opens_with_the_models_probabilities(lifted, shipped, name):
    inputs = lifted[name]
    assert any(not li.padding.all() for li in inputs)  # the second text is padded
    assert inputs[0].relative["pos_key"].shape[0] == inputs[0].n_heads >= 2
    for layers, bound in ((inputs, EXACT), (shipped[name], SHIPPED)):
        for li in layers:
            assert not li.causal and li.scale == pytest.approx((3 * li.head_dim) ** -0.5)
            for head in range(li.n_heads):
                sc = layer_scenario(li, head)
                assert sc.variant == "steps"
                assert "disentangled" in [s.name for s in sc.params["steps"]]
                assert head_error(li, head, sc) <= bound, (name, li.layer, head, bound)


@pytest.mark.parametrize("name", list(configs()))
def test_the_adapters_recomputation_is_the_models(lifted, name):
    for li in lifted[name]:
        result = recompute(li)
        keep = li.padding
        w = np.abs(np.asarray(result.weights) - li.model_weights)[:, keep][:, :, keep].max()
        o = np.abs(np.asarray(result.output) - li.model_output)[keep].max()
        assert w <= EXACT and o <= EXACT, (name, li.layer, w, o)


def changed(alter):
    """The list with its disentangled step replaced by ``alter``'s step (None: dropped)."""
    def change(sc):
        listed = (alter(s) if isinstance(s, S.Disentangled) else s for s in sc.params["steps"])
        return dataclasses.replace(sc, params={"steps": tuple(s for s in listed if s)})
    return change


ABLATIONS = {
    "without the relative terms": changed(lambda s: None),
    "without content-to-position": changed(lambda s: dataclasses.replace(s, pos_key=(), c2p=())),
    "without position-to-content": changed(
        lambda s: dataclasses.replace(s, pos_query=(), p2c=())),
}


@pytest.mark.parametrize("name", list(configs()))
@pytest.mark.parametrize("change", list(ABLATIONS))
def test_each_part_matters(lifted, name, change):
    moved = [head_error(li, h, ABLATIONS[change](layer_scenario(li, h)))
             for li in lifted[name] for h in range(li.n_heads)]
    assert max(moved) > MATTERS, (name, change, max(moved))


def test_the_buckets_matter(lifted):
    """DeBERTa-v3's distances read without log buckets (each distance its own row, clamped at
    the span of 4) give other weights: the buckets are read, not assumed."""
    moved = []
    for li in lifted["deberta_v3"]:
        t = li.x.shape[0]
        rel_pos = np.arange(t)[:, None] - np.arange(t)[None, :]
        plain = dict(c2p=np.clip(rel_pos + 4, 0, 7), p2c=np.clip(-rel_pos.T + 4, 0, 7))
        assert not np.array_equal(plain["c2p"], li.relative["c2p"])
        wrong = dataclasses.replace(li, relative=li.relative | plain)
        moved += [head_error(wrong, h) for h in range(li.n_heads)]
    assert max(moved) > MATTERS


def test_a_deberta_whose_heads_talk_is_refused_in_a_sentence():
    from transformers import DebertaConfig, DebertaModel

    model = DebertaModel(DebertaConfig(**SMALL, talking_head=True, relative_attention=True,
                                       pos_att_type=["c2p", "p2c"])).eval()
    with pytest.raises(ValueError, match=r"this deberta model mixes its heads' scores and "
                                         r"weights \(talking_head\)"):
        layer_inputs(model, input_ids=[[4, 5, 6]], layer=0)
