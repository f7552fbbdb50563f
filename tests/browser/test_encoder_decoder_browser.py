"""Real browser, end to end: a saved encoder–decoder model (a small random BART) is captured on
Model view with a source and a target typed in, and one of its cross-attention heads is opened
from the Encoder–decoder page.

The BART (tests/hf_models.py ``seq2seq_configs``: 2 + 2 layers of 4 heads, projection
biases) is saved with save_pretrained beside its tokenizer in a tmp models folder; the app runs
with that folder as ATTNVIZ_MODELS_DIR and HF_HUB_OFFLINE=1 (its own server). The expected
probabilities come from the model itself, run in this process
(``attnviz.io.capture.capture_seq2seq``: eager attention, float32).

Every wait is for a state: a script run finished (``expect_rerun``), the charts drawn.

Screenshots (tests/artifacts/screenshots/):
- encoder_decoder_real_head.png — the Encoder–decoder page after "Open layer 1, head 2 on every
  page": the toy cross-attention section now computes that head, the real model's section below
  with the head's weights (target × source) and the success message.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest
from helpers import (
    ARTIFACTS,
    assert_no_exception,
    chart_z,
    expect_rerun,
    screenshot,
    wait_for_app_run,
    wait_for_plots,
)
from playwright.sync_api import Page

from attnviz.teach.text import model_view as text

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

TIMEOUT = 120_000  # the first Plotly bundle and a model load on a busy 2-core machine
SOURCE = "the cat sat on a mat"
TARGET = "a dog ran far"
LAYER, HEAD = 1, 2
ROUNDING = 1e-5  # float32, one thread against several, and the chart's float32 cells
SERVER_LOG = ARTIFACTS / "streamlit-server-encoder-decoder.log"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    """The saved folder and the model's own cross-attention on the two texts."""
    from hf_models import save_model, seq2seq_configs

    from attnviz.io.capture import capture_seq2seq, load_model

    folder = save_model(*seq2seq_configs()["bart"], tmp_path_factory.mktemp("models") / "bart",
                        seed=1, bias_std=0.5)
    net, tokenizer = load_model(folder)
    cap = capture_seq2seq(net, tokenizer, SOURCE, TARGET)
    return dict(folder=folder, cap=cap)


@pytest.fixture(scope="module")
def server(serve_app, model: dict) -> Iterator[str]:
    """``streamlit run app.py`` with models allowed and the model's folder as the models
    folder, offline."""
    env = {"HF_HUB_OFFLINE": "1", "ATTNVIZ_NO_MODELS": None,
           "ATTNVIZ_MODELS_DIR": str(model["folder"].parent)}
    with serve_app(env, SERVER_LOG) as base:
        yield base


def _type_into(page: Page, label: str, typed: str) -> None:
    """Click a text box, select what is there, type ``typed`` key by key, press Enter."""
    box = page.get_by_label(label, exact=True)
    box.click()
    box.press("Control+a")
    page.keyboard.type(typed)
    with expect_rerun(page):
        page.keyboard.press("Enter")


def _choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` of the select box labelled ``label`` (in the page's main area)."""
    box = page.get_by_test_id("stMain").get_by_role("combobox", name=label)
    box.scroll_into_view_if_needed()
    box.click()
    with expect_rerun(page):
        page.get_by_role("option", name=option, exact=True).click()
    wait_for_app_run(page)


def test_a_cross_attention_head_of_a_saved_bart_opens(server: str, page: Page,
                                                      model: dict) -> None:
    page.set_default_timeout(TIMEOUT)
    cap = model["cap"]
    # 1) Model view: the model of the models folder, a source and a target typed in
    with expect_rerun(page):
        page.goto(f"{server}/model_view")
    wait_for_app_run(page)
    with expect_rerun(page):
        page.get_by_text(text.SOURCES["directory"], exact=True).click()
    assert page.locator(".st-key-model_view_model input").input_value() == "bart"
    _type_into(page, text.TEXT_LABEL, SOURCE)
    _type_into(page, text.TEXT_B_LABEL, TARGET)
    with expect_rerun(page):
        page.get_by_role("button", name=text.CAPTURE_BUTTON).click()
    wait_for_plots(page, 3, timeout=TIMEOUT)
    assert_no_exception(page)
    assert not page.get_by_test_id("stAlertContentError").count()
    assert page.get_by_text(text.KINDS["cross"], exact=True).count() == 1  # the kind picker
    # 2) the Encoder–decoder page, through the navigation (the same session)
    with expect_rerun(page):
        page.get_by_test_id("stSidebar").get_by_role(
            "link", name="Encoder–decoder & additive", exact=True).click()
    wait_for_app_run(page)
    assert_no_exception(page)
    _choose(page, text.OPEN_LAYER_LABEL, str(LAYER))
    _choose(page, text.OPEN_HEAD_LABEL, str(HEAD))
    page.locator(".st-key-encoder_decoder_fig_cross_head").scroll_into_view_if_needed()
    page.wait_for_function("() => { const g = document.querySelector("
                           "'.st-key-encoder_decoder_fig_cross_head .js-plotly-plot');"
                           " return g && g._fullData && g._fullData.length > 0 }")
    shown = chart_z(page, "encoder_decoder_fig_cross_head")
    assert shown.shape == (len(TARGET.split()) + 1, len(SOURCE.split()))
    np.testing.assert_allclose(shown, cap.cross[LAYER, HEAD], atol=ROUNDING)
    # 3) open it on every page: the page's own cross-attention computes that head now
    button = page.get_by_role("button", name=text.REAL_OPEN_BUTTON.format(layer=LAYER, h=HEAD))
    button.scroll_into_view_if_needed()
    with expect_rerun(page):
        button.click()
    wait_for_app_run(page)
    assert_no_exception(page)
    success = page.get_by_test_id("stAlertContentSuccess").inner_text()
    assert success.strip() == text.REAL_OPENED.format(layer=LAYER, h=HEAD)
    assert page.get_by_text(text.REAL_CROSS_TITLE.format(model_type="bart", layer=LAYER,
                                                         h=HEAD)).count() >= 1
    page.locator(".st-key-encoder_decoder_fig_cross_weights").scroll_into_view_if_needed()
    page.wait_for_function("() => { const g = document.querySelector("
                           "'.st-key-encoder_decoder_fig_cross_weights .js-plotly-plot');"
                           " return g && g._fullData && g._fullData.length > 0 }")
    toy = chart_z(page, "encoder_decoder_fig_cross_weights")
    np.testing.assert_allclose(toy, cap.cross[LAYER, HEAD], atol=ROUNDING)
    screenshot(page, "encoder_decoder_real_head")
