"""Model view: "Open this head on every page" through AppTest.

A tiny Llama (RoPE + GQA) and GPT-2 (biases) saved with save_pretrained in a tmp models folder
(ATTNVIZ_MODELS_DIR) are picked from the page's list and captured; the button makes the chosen
head the current scenario through the app's one way of setting it (``state.set_scenario``): the
scenario is the one ``layer_scenario`` builds, its run gives the probabilities the page shows
for that head, the page links to Step by step, Trace a cell, Gradients and Compare, and those
pages run on it.
A captured file (or the example) says why its heads cannot be opened; a refusal leaves the
scenario as it was. Skips only where torch/transformers are not installed; nothing is
downloaded.
"""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest
from apptest_helpers import open_page, switch_to

from attnviz.io import models_dir as md
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import model_view as text
from attnviz.ui import model_view as mv
from attnviz.ui import state

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may go online
TEXT = "the cat sat on a mat and the dog ran"


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from hf_models import configs, save_model

    models = tmp_path_factory.mktemp("models")
    return {name: save_model(*configs()[name], models / name, bias_std=0.1)
            for name in ("llama", "gpt2", "qwen3", "gemma2")}


@pytest.fixture
def at(monkeypatch, folders):
    monkeypatch.delenv(mv.NO_MODELS_ENV, raising=False)
    monkeypatch.setenv(md.MODELS_DIR_ENV, str(folders["llama"].parent))
    return open_page("model_view")


def errors(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def capture_from(at, folder, text_a: str = TEXT):
    at.radio(key="model_view_source").set_value("directory")
    at.run()
    at.selectbox(key="model_view_model").set_value(folder.name)
    at.text_input(key="model_view_text").set_value(text_a)
    at.button(key="model_view_capture").click()
    return at.run()


def open_head(at, layer: int, head: int):
    at.selectbox(key="model_view_layer").set_value(layer)
    at.selectbox(key="model_view_head").set_value(head)
    at.run()
    at.button(key="model_view_open").click()
    return at.run()


def test_a_llama_head_opens_as_the_current_scenario(at, folders):
    at = capture_from(at, folders["llama"])
    assert not at.exception and not errors(at)
    data = at.session_state[mv.DATA_KEY]
    assert data.folder == str(folders["llama"]) and data.texts == TEXT
    before = at.session_state[state.SCENARIO]
    button = at.button(key="model_view_open")
    assert button.label == text.REAL_OPEN_BUTTON.format(layer=0, h=0)
    at = open_head(at, 1, 3)
    assert not at.exception and not errors(at)
    sc = at.session_state[state.SCENARIO]
    assert sc is not before and sc.title == text.REAL_HEAD_TITLE.format(model_type="llama",
                                                                        layer=1, h=3)
    assert (sc.variant, sc.mask_kind, sc.t) == ("rope", "causal", len(data.tokens))
    assert "key/value head 1" in sc.description  # GQA: 4 heads on 2 key/value heads
    # the scenario computes what the model gave for that head (captured in float32)
    weights = np.asarray(run_scenario(sc).attention.weights)
    np.testing.assert_allclose(weights, data.weights[1, 3], rtol=0, atol=1e-5)
    assert np.abs(weights - data.weights[1, 2]).max() > 1e-3  # not another head's
    assert [s.value for s in at.success] == [text.REAL_OPENED.format(layer=1, h=3)]
    links = [(link.proto.page, link.proto.label) for link in at.get("page_link")]
    assert links == [(page.removeprefix("pages/").removesuffix(".py"), label)
                     for page, label in text.REAL_OPEN_PAGES.items()]
    # the editors start again from the new scenario, and the pages run on it
    for page in ("step_by_step", "trace", "gradients", "compare", "modern", "masks",
                 "multi_head", "playground"):
        switch_to(at, page)
        assert not at.exception, (page, [e.message for e in at.exception])
        assert not errors(at), (page, errors(at))
        assert at.session_state[state.SCENARIO] is sc


def test_a_gpt2_head_opens_with_the_bias_trick_said_on_the_page(at, folders):
    at = capture_from(at, folders["gpt2"])
    at = open_head(at, 0, 2)
    assert not at.exception and not errors(at)
    sc = at.session_state[state.SCENARIO]
    d_model = 16
    assert sc.d_model == d_model + 1 and (sc.x[:, -1] == 1).all()
    assert text.REAL_BIAS_NOTE.format(d_model=d_model) in sc.description
    assert sc.variant == "causal"
    data = at.session_state[mv.DATA_KEY]
    np.testing.assert_allclose(run_scenario(sc).attention.weights, data.weights[0, 2],
                               rtol=0, atol=1e-5)
    for page in ("step_by_step", "playground"):  # where X and W are shown, the trick is said
        switch_to(at, page)
        assert not at.exception
        captions = [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]  # escapes out
        assert any(text.REAL_BIAS_NOTE.format(d_model=d_model) in c for c in captions), page


def test_a_gemma2_head_opens_with_its_window_and_cap(at, folders):
    """Layer 0 slides (a window of 3 keys), every layer soft-caps (query_pre_attn_scalar is
    the head width here, so the scale is 1/√d_k): the pages that show the mask and the steps
    run on it."""
    at = capture_from(at, folders["gemma2"])
    at = open_head(at, 0, 1)
    assert not at.exception and not errors(at)
    sc = at.session_state[state.SCENARIO]
    assert (sc.variant, sc.mask_kind, sc.scale_mode) == ("rope", "custom", "sqrt_dk")
    assert sc.params["rope_softcap"] == 5.0
    assert not sc.custom_mask[5, :3].any() and sc.custom_mask[5, 3:6].all()  # 3 keys
    data = at.session_state[mv.DATA_KEY]
    np.testing.assert_allclose(run_scenario(sc).attention.weights, data.weights[0, 1],
                               rtol=0, atol=1e-5)
    for page in ("step_by_step", "trace", "masks", "modern"):
        switch_to(at, page)
        assert not at.exception, (page, [e.message for e in at.exception])
        assert not errors(at), (page, errors(at))


def test_a_qwen3_head_opens_as_a_list_of_steps_on_every_page(at, folders):
    """QK-norm with a gain per dimension and RoPE: the head opens as a list of steps, its run
    is the model's, and the pages that show the formula, the steps, a cell and the gradients
    run on it."""
    at = capture_from(at, folders["qwen3"])
    at = open_head(at, 0, 1)
    assert not at.exception and not errors(at)
    sc = at.session_state[state.SCENARIO]
    assert sc.variant == "steps"
    assert [s.name for s in sc.params["steps"]] == ["heads", "qk_norm", "rope", "causal"]
    data = at.session_state[mv.DATA_KEY]
    np.testing.assert_allclose(run_scenario(sc).attention.weights, data.weights[0, 1],
                               rtol=0, atol=1e-5)
    for page in ("playground", "step_by_step", "trace", "gradients", "compare", "masks",
                 "modern"):
        switch_to(at, page)
        assert not at.exception, (page, [e.message for e in at.exception])
        assert not errors(at), (page, errors(at))
        assert at.session_state[state.SCENARIO] is sc
    # Multi-head splits the head into narrower ones: its gains per dimension no longer fit
    switch_to(at, "multi_head")
    assert not at.exception
    assert any("gain of QK-norm holds 4 numbers" in e for e in errors(at)), errors(at)


def test_a_folder_gone_since_the_capture_is_refused(at, folders):
    copy = shutil.copytree(folders["llama"], folders["llama"].parent / "llama_gone")
    at = capture_from(at, copy)
    before = at.session_state[state.SCENARIO]
    shutil.rmtree(copy)
    at = open_head(at, 0, 0)
    assert not at.exception and len(errors(at)) == 1
    assert at.session_state[state.SCENARIO] is before


def test_the_example_and_a_captured_file_say_why_they_cannot_be_opened(at):
    assert not at.exception
    assert "model_view_open" not in [b.key for b in at.button]
    assert text.NO_INPUTS in [i.value for i in at.info]
    data = mv.example()
    assert data.folder is None
    with pytest.raises(ValueError, match="holds the attention probabilities only"):
        mv.real_head_scenario(data, 0, 0)


def test_an_edited_real_head_reads_edited_from_its_name(at, folders):
    """After an edit of W_Q of an opened GPT-2 head, the captions and the sidebar say "Edited
    from gpt2 layer 0, head 2" (they kept describing the model's own head)."""
    from apptest_helpers import edit_cells

    from attnviz.scenarios.presets import EDITED_FROM

    at = open_head(capture_from(at, folders["gpt2"]), 0, 2)
    title = at.session_state[state.SCENARIO].title
    assert any(title == t.value for t in at.sidebar.text)
    at = switch_to(at, "playground")
    version = at.session_state["editor_version"]
    at = edit_cells(at, f"playground_x_v{version}", {0: {"d0": "0.5"}}).run()
    assert not at.exception
    assert any(EDITED_FROM.format(title=title) == t.value for t in at.sidebar.text)
