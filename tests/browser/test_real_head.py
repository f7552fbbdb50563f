"""Real browser, end to end as a newcomer (issue 29, "Done when"): a real Hugging Face model
from a local folder, its model view, layer 1 head 3 opened on every page, its numbers in Step
by step and Trace a cell, and one of its weights edited by typing.

A small random Llama (tests/hf_models.py ``parity_configs``: 2 layers, 4 heads on 2 key/value
heads, RoPE, weights large enough for peaked attention) is saved with save_pretrained beside
its tokenizer in a tmp models folder; the app runs with that folder as ATTNVIZ_MODELS_DIR and
HF_HUB_OFFLINE=1 (its own server: the session's ``app_server`` is started without them). The
expected probabilities come from the model itself, run in this process
(``attnviz.io.capture.capture``: eager attention, float32).

Screenshots (tests/artifacts/screenshots/):
- real_head_model_view.png — the folder's model view after "Open layer 1, head 3 on every
  page": the grid with L1 H3 outlined, the head's lines and heatmap, the success message and
  the links to the pages;
- real_head_step_by_step.png — Step by step on that head (its weights with three decimals,
  the query's steps);
- real_head_trace.png — Trace a cell on query 6, key 5;
- real_head_edited.png — Step by step after W_Q[0, 0] was typed on the Playground.

Skips only where torch or transformers is not installed.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

import numpy as np
import pytest
from helpers import (
    ARTIFACTS,
    EDITOR,
    assert_no_exception,
    choose,
    edit_cell,
    expect_rerun,
    playground_focus,
    screenshot,
    type_into,
    wait_for_app_run,
    wait_for_plots,
)
from playwright.sync_api import Page

from attnviz.scenarios.from_model import layer_scenario
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import model_view as text

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

TIMEOUT = 120_000  # the first Plotly bundle and a model load on a busy 2-core machine
SENTENCE = "the cat sat on a mat and slept"  # 8 tokens of the local tokenizer
LAYER, HEAD = 1, 3
QUERY, KEY = 6, 5  # the cell traced: "6:and" looking at "5:mat"
TYPED = "3"  # typed into W_Q[0, 0] on the Playground
SERVER_LOG = ARTIFACTS / "streamlit-server-real-head.log"

CELL_LABELS = """() => {
    const g = document.querySelector('.st-key-step_by_step_fig_weights .js-plotly-plot');
    if (!g || !g._fullData || !g._fullData.length) return null;
    return {z: Array.from(g._fullData[0].z, r => Array.from(r)),
            text: Array.from(g.querySelectorAll('.heatmap-label text, .textpoint text'),
                             t => t.textContent)};
}"""


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    """The saved folder, and layer 1's probabilities and inputs from the model itself."""
    from hf_models import parity_configs, save_model

    from attnviz.io.capture import capture, load_model
    from attnviz.io.hf_layers import layer_inputs

    folder = save_model(*parity_configs()["llama"], tmp_path_factory.mktemp("models") / "llama")
    net, tokenizer = load_model(folder)
    cap = capture(net, tokenizer, text=SENTENCE)
    li = layer_inputs(net, tokenizer, SENTENCE, LAYER)
    assert net.config.num_hidden_layers >= 2 and net.config.num_attention_heads >= 4
    return dict(folder=folder, weights=cap.attentions[0][LAYER, HEAD],
                tokens=cap.tokens[0], inputs=li)


def _go(page: Page, where, name: str) -> None:
    """Follow a link to another page of the same session, wait for its charts."""
    with expect_rerun(page):
        where.get_by_role("link", name=name, exact=True).click()
    wait_for_app_run(page)
    wait_for_plots(page, 1, timeout=TIMEOUT)
    assert_no_exception(page)


def _step_weights(page: Page) -> tuple[np.ndarray, list[str]]:
    """Step by step's weights heatmap: its values and the numbers written in its cells."""
    page.wait_for_function(f"() => ({CELL_LABELS})() !== null")
    drawn = page.evaluate(CELL_LABELS)
    z = np.array(drawn["z"], dtype=float)
    numbers = [s for s in drawn["text"] if re.fullmatch(r"-?\d+\.\d+", s)]
    return z, numbers


def test_a_newcomer_opens_a_real_head_and_edits_it(models_server: str, page: Page,
                                                    model: dict) -> None:
    page.set_default_timeout(TIMEOUT)
    expected = np.asarray(model["weights"], dtype=float)  # (t, t), the model's own
    t = expected.shape[0]
    assert t == 8 and model["tokens"][QUERY] == "and" and model["tokens"][KEY] == "mat"
    # 1) Model view: the model of the models folder (the list's only one) and a sentence
    with expect_rerun(page):
        page.goto(f"{models_server}/model_view")
    wait_for_app_run(page)
    with expect_rerun(page):
        page.get_by_text(text.SOURCES["directory"], exact=True).click()
    assert page.locator(".st-key-model_view_model input").input_value() == "llama"
    type_into(page, text.TEXT_LABEL, SENTENCE)
    with expect_rerun(page):
        page.get_by_role("button", name=text.CAPTURE_BUTTON).click()
    wait_for_plots(page, 5, timeout=TIMEOUT)
    assert_no_exception(page)
    assert not page.get_by_test_id("stAlertContentError").count()
    shown = text.SHOWING.format(source=text.DIRECTORY_NAME.format(name="llama"),
                                layers=2, heads=4, t=t, kind=text.CAUSAL)
    assert page.get_by_text(shown, exact=True).count() == 1
    # 2) layer 1, head 3, opened on every page
    choose(page, text.OPEN_LAYER_LABEL, str(LAYER))
    choose(page, text.OPEN_HEAD_LABEL, str(HEAD))
    button = page.get_by_role("button", name=text.REAL_OPEN_BUTTON.format(layer=LAYER, h=HEAD))
    button.scroll_into_view_if_needed()
    with expect_rerun(page):
        button.click()
    wait_for_app_run(page)
    assert_no_exception(page)
    success = page.get_by_test_id("stAlertContentSuccess").inner_text()
    assert success.strip() == text.REAL_OPENED.format(layer=LAYER, h=HEAD)
    screenshot(page, "real_head_model_view")
    # 3) Step by step: the head's weights are the model's, to the three decimals written
    _go(page, page.get_by_test_id("stMain"), text.REAL_OPEN_PAGES["pages/step_by_step.py"])
    z, numbers = _step_weights(page)
    np.testing.assert_allclose(z, expected, rtol=0, atol=1e-5)
    assert numbers == [f"{w:.3f}" for w in expected.ravel()], numbers
    assert page.get_by_text(text.REAL_HEAD_TITLE.format(model_type="llama", layer=LAYER,
                                                        h=HEAD)).count() >= 1
    screenshot(page, "real_head_step_by_step")
    # 4) Trace a cell: query 6 ("and"), key 5 ("mat"): α as the model gave it
    _go(page, page.get_by_test_id("stSidebar"), "Trace a cell")
    choose(page, "Query i", f"{QUERY}:and")
    choose(page, "Key j", f"{KEY}:mat")
    tex = page.evaluate("() => Array.from(document.querySelectorAll('annotation'),"
                        " a => a.textContent)")
    alpha = [s for s in tex if s.startswith(rf"\alpha_{{{QUERY},{KEY}}}")]
    assert len(alpha) == 1, tex
    written = alpha[0].rsplit("=", 1)[1].strip()  # as many digits as the page writes (8)
    digits = len(written.split(".")[1]) if "." in written else 0
    # every digit written is the scenario's (float64, from the model's inputs and weights) ...
    opened = np.asarray(run_scenario(layer_scenario(model["inputs"], HEAD)).attention.weights)
    assert digits >= 3 and float(written) == pytest.approx(opened[QUERY, KEY],
                                                           abs=0.6 * 10 ** -digits), written
    # ... and the model's own float32 probability, to a float32 model's precision (~1e-7)
    assert float(written) == pytest.approx(expected[QUERY, KEY], abs=1e-6), written
    assert abs(expected[QUERY, KEY] - 0.5) < 0.45  # a cell that is neither 0 nor 1
    screenshot(page, "real_head_trace")
    # 5) Playground: type a new W_Q[0, 0] with the keyboard; the weights follow
    _go(page, page.get_by_test_id("stSidebar"), "Playground")
    playground_focus(page, "All")
    editor = page.locator("[class*='st-key-playground_w_q'] " + EDITOR).first
    editor.scroll_into_view_if_needed()
    edit_cell(page, editor, 0, 0, TYPED)
    assert_no_exception(page)
    _go(page, page.get_by_test_id("stSidebar"), "Step by step")
    edited_z, edited_numbers = _step_weights(page)
    assert np.abs(edited_z - z).max() > 1e-3  # the weights changed
    sc = layer_scenario(model["inputs"], HEAD)
    w_q = sc.w_q.copy()
    assert w_q[0, 0] != float(TYPED)
    w_q[0, 0] = float(TYPED)
    want = np.asarray(run_scenario(replace(sc, w_q=w_q)).attention.weights)
    np.testing.assert_allclose(edited_z, want, rtol=0, atol=1e-9)
    assert edited_numbers == [f"{w:.3f}" for w in want.ravel()]
    screenshot(page, "real_head_edited")
