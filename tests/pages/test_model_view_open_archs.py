"""Model view: heads of the architectures that open as a list of steps with a part of their
own — MPNet's learned relative position bias, Phi's LayerNorm of q and k (qk_layernorm),
OLMo 2's one RMSNorm over all heads (qk_norm_across), DeBERTa-v2's disentangled relative
terms (disentangled), the last two with descriptions saying what is held fixed — open on the
Playground through AppTest.

A tiny MPNet, Phi, OLMo 2 and DeBERTa-v2 saved with save_pretrained in a tmp models folder
(ATTNVIZ_MODELS_DIR) are each picked from the page's list and captured; "Open this head on
every page" makes the head the current scenario; its run gives the probabilities the page
shows for that head, and the Playground runs on it. Nothing is downloaded.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from apptest_helpers import open_page, switch_to
from test_model_view_open import capture_from, errors, open_head

from attnviz.io import models_dir as md
from attnviz.scenarios.scenario import run_scenario
from attnviz.ui import model_view as mv
from attnviz.ui import state

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may go online


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_models import PARITY_INIT, SMALL, save_model
    from transformers import DebertaV2Config, MPNetConfig, Olmo2Config, PhiConfig

    models = tmp_path_factory.mktemp("models")
    ids = dict(pad_token_id=0, bos_token_id=2, eos_token_id=3)
    small = SMALL | {"initializer_range": PARITY_INIT}
    made = {"mpnet": (MPNetConfig(**small, **ids), True, True),
            "phi": (PhiConfig(**small, qk_layernorm=True, **ids), False, True),
            "olmo2": (Olmo2Config(**small, num_key_value_heads=2, **ids), False, True),
            "deberta_v2": (DebertaV2Config(**small, pad_token_id=0, relative_attention=True,
                                           pos_att_type=["c2p", "p2c"], position_buckets=4,
                                           max_relative_positions=8, share_att_key=True),
                           True, True)}
    return {name: save_model(*made[name], models / name, bias_std=0.1) for name in made}


@pytest.fixture
def at(monkeypatch, folders):
    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(next(iter(folders.values())).parent))
    return open_page("model_view")


@pytest.mark.parametrize(("name", "part"), [("mpnet", "bias"), ("phi", "qk_layernorm"),
                                            ("olmo2", "qk_norm_across"),
                                            ("deberta_v2", "disentangled")])
def test_a_head_opens_on_the_playground(at, folders, name, part):
    at = capture_from(at, folders[name])
    assert not at.exception and not errors(at)
    at = open_head(at, 1, 2)
    assert not at.exception and not errors(at)
    sc = at.session_state[state.SCENARIO]
    assert sc.variant == "steps" and part in [s.name for s in sc.params["steps"]]
    data = at.session_state[mv.DATA_KEY]
    weights = np.asarray(run_scenario(sc).attention.weights)
    np.testing.assert_allclose(weights, data.weights[1, 2], rtol=0, atol=1e-5)
    assert np.abs(weights - data.weights[1, 1]).max() > 1e-3  # not another head's
    held = "The other heads' share of each row's mean square is held fixed"
    assert (held in sc.description) == (name == "olmo2"), sc.description
    held = "They are held as the model computed them"
    assert (held in sc.description) == (name == "deberta_v2"), sc.description
    switch_to(at, "playground")
    assert not at.exception, [e.message for e in at.exception]
    assert not errors(at), errors(at)
    assert at.session_state[state.SCENARIO] is sc
