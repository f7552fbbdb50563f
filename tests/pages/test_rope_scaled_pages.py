"""A head of a real YaRN model on the pages: it opens on the Playground
and Step by step with the model's own probabilities; its frequencies are shown read-only, the
RoPE base box is disabled and says why, the formula says θ_i comes from the model and writes the
attention scaling; dropping the frequencies brings the base back (and the weights move).

The head comes from a small random Llama with YaRN (tests/hf_models.py), built in memory with
the local tokenizer; nothing is downloaded.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from apptest_helpers import chart_z_by_key, open_page, switch_to

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hf_models import PARITY_INIT, SMALL, Float64Lift, make_tokenizer  # noqa: E402

from attnviz.io.hf_layers import layer_inputs  # noqa: E402
from attnviz.scenarios.from_model import layer_scenario  # noqa: E402
from attnviz.scenarios.scenario import run_scenario  # noqa: E402
from attnviz.teach.text import common  # noqa: E402
from attnviz.ui import state  # noqa: E402

TEXT = "the cat sat on a mat and then the dog ran far away"
HEAD = 2
LABEL = "θ_i from the model"  # the label of rope_inv_freq


@pytest.fixture(scope="module")
def yarn():
    """Layer 0 of a random float64 Llama with YaRN (factor 4), HF's float32 steps lifted."""
    from transformers import AutoModel, LlamaConfig

    torch.manual_seed(0)
    config = LlamaConfig(**SMALL | {"initializer_range": PARITY_INIT}, num_key_value_heads=2,
                         rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0,
                                          "factor": 4.0, "original_max_position_embeddings": 16})
    model = AutoModel.from_config(config).double().eval()
    with Float64Lift(model):
        return layer_inputs(model, make_tokenizer(bert=False, pad=False), TEXT, 0)


def _widget(at, kind: str, name: str):
    key = f"playground_param_{name}_v{at.session_state['editor_version']}"
    found = [w for w in at.get(kind) if getattr(w, "key", None) == key]
    assert found, key
    return found[0]


def _opened(yarn, page: str):
    at = open_page(None, timeout=120)
    at.session_state[state.SCENARIO] = layer_scenario(yarn, HEAD, title="llama layer 0, head 2")
    switch_to(at, page)
    assert not at.exception, [e.message[:300] for e in at.exception]
    return at


def _captions(at) -> list[tuple[str, str]]:
    """(text, help) of every caption."""
    return [(c.value, c.proto.help) for c in at.caption]


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("caption", "latex", "markdown")
                     for e in at.get(kind))


def test_a_yarn_head_opens_on_the_playground_with_the_models_probabilities(yarn):
    at = _opened(yarn, "playground")
    z = chart_z_by_key(at, "playground_fig_weights")
    np.testing.assert_allclose(z, yarn.model_weights[HEAD], rtol=0, atol=1e-10)
    sc = at.session_state[state.SCENARIO]
    # the base box shows the model's base, disabled, and says why it does not apply
    base = _widget(at, "number_input", "rope_base")
    assert base.value == 10000.0 and base.disabled
    why = common.PARAM_OVERRIDDEN_HELP.format(label=LABEL)
    assert why == "Not used: the setting “θ_i from the model” replaces it."
    assert base.help == why
    assert (common.PARAM_OVERRIDDEN.format(label=LABEL), why) in _captions(at)
    # the frequencies are shown, not edited; the attention scaling is a number box
    freq = sc.params["rope_inv_freq"]
    assert (f"θ_i from the model: {freq[0]:.4g}, {freq[1]:.4g}",
            common.PARAM_VECTOR_GIVEN_HELP.format(n=2)) in _captions(at)
    scaling = _widget(at, "number_input", "rope_attention_scaling")
    assert scaling.value == pytest.approx(0.1 * np.log(4.0) + 1.0) and not scaling.disabled
    # the formula: θ_i from the model, not b^(−2i/d), and the scaling a
    texts = _texts(at)
    assert r"\theta_i\ \text{from the model (not from the base } b\text{)}" in texts
    assert r"\theta_i = b^{-2i/d}" not in texts
    assert r"(a\,R_{\Theta,m}\,q_m)" in texts and r"a = 1.139" in texts


def test_dropping_the_models_frequencies_brings_the_base_back(yarn):
    at = _opened(yarn, "playground")
    before = chart_z_by_key(at, "playground_fig_weights")
    key = f"playground_param_rope_inv_freq_v{at.session_state['editor_version']}_drop"
    at.button(key=key).click().run()
    assert not at.exception, [e.message[:300] for e in at.exception]
    sc = at.session_state[state.SCENARIO]
    assert sc.param("rope_inv_freq") == () and "rope_inv_freq" not in sc.params
    assert not _widget(at, "number_input", "rope_base").disabled
    none = common.PARAM_VECTOR_NONE.format(label=LABEL)
    assert (none, common.PARAM_VECTOR_NONE_HELP) in _captions(at)
    assert common.PARAM_OVERRIDDEN.format(label=LABEL) not in [c for c, _ in _captions(at)]
    after = chart_z_by_key(at, "playground_fig_weights")
    np.testing.assert_allclose(after, run_scenario(sc).attention.weights, rtol=0, atol=1e-12)
    assert np.abs(after - before).max() > 1e-3
    assert r"\theta_i = b^{-2i/d}" in _texts(at)


def test_a_yarn_head_opens_on_step_by_step(yarn):
    at = _opened(yarn, "step_by_step")
    # the rotated query, times YaRN's attention scaling a, reaches the scores
    assert r"q_i = a\,R(p_i)\,(x_i W_Q),\quad k_j = a\,R(p_j)\,(x_j W_K)" in _texts(at)
    assert r"q_i = R(p_i)\,(x_i W_Q),\quad k_j = R(p_j)\,(x_j W_K)" not in _texts(at)
    z = chart_z_by_key(at, "step_by_step_fig_weights")
    np.testing.assert_allclose(z, yarn.model_weights[HEAD], rtol=0, atol=1e-10)


def test_a_yarn_head_opens_from_the_model_view_and_runs_on_every_page(tmp_path, monkeypatch):
    """The user's path: a saved YaRN Llama picked from the models folder, captured, "Open this
    head": the scenario carries the model's frequencies and scaling and computes the
    probabilities the page captured (float32: 1e-5); the pages that read RoPE run on it."""
    from hf_models import parity_configs, save_model

    from attnviz.ui import model_view as mv

    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(mv.MODELS_DIR_ENV, str(tmp_path))
    save_model(*parity_configs()["llama_yarn"], tmp_path / "yarn")
    at = open_page("model_view")
    at.radio(key="model_view_source").set_value("directory").run()
    at.selectbox(key="model_view_model").set_value("yarn")
    at.text_input(key="model_view_text").set_value(TEXT)
    at.button(key="model_view_capture").click().run()
    at.selectbox(key="model_view_layer").set_value(1)
    at.selectbox(key="model_view_head").set_value(3)
    at.run()
    at.button(key="model_view_open").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    sc = at.session_state[state.SCENARIO]
    assert sc.variant == "rope" and len(sc.param("rope_inv_freq")) == 2
    assert sc.param("rope_attention_scaling") == pytest.approx(0.1 * np.log(4.0) + 1.0)
    data = at.session_state[mv.DATA_KEY]
    np.testing.assert_allclose(run_scenario(sc).attention.weights, data.weights[1, 3], rtol=0,
                               atol=1e-5)
    for page in ("playground", "step_by_step", "gradients", "trace", "compare"):
        switch_to(at, page)
        assert not at.exception, (page, [e.message[:200] for e in at.exception])
        assert not at.error, (page, [e.value[:200] for e in at.error])


def test_the_modern_pages_rope_tab_says_it_uses_its_own_base_not_the_models(yarn):
    """The RoPE tab turns pairs by its own base (its drag slider): with a real head's
    frequencies in the scenario it says so; with a plain RoPE preset it has nothing to say."""
    from attnviz.scenarios.presets import PRESETS
    from attnviz.teach.text import modern

    at = _opened(yarn, "modern")
    assert modern.OWN_BASE in [e.value for e in at.info]
    at.session_state[state.SCENARIO] = PRESETS["rope_shift"].build()
    at.run()
    assert not at.exception
    assert modern.OWN_BASE not in [e.value for e in at.info]
