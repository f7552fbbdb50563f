"""Real browser, end to end: a saved encoder–decoder model is captured on Model view with a
source and a target typed in, and the Encoder–decoder page draws its cross-attention.

What only a browser shows is checked here: the two texts typed key by key reach the capture,
the capture survives the navigation to another page of the same session, and the chart
component draws the non-square cross-attention (target tokens × source tokens) with the
model's own probabilities and token labels. Picking another layer and head, opening the head
on every page and the pages that then compute it are AppTests
(tests/pages/test_encoder_decoder_real.py).

The model is the smallest BART that shows it: one encoder and one decoder layer of two heads
(projection biases drawn), saved with save_pretrained beside its tokenizer in a tmp models
folder; the app runs with that folder as ATTNVIZ_MODELS_DIR and HF_HUB_OFFLINE=1 (its own
server). The expected probabilities come from the model itself, run in this process
(``attnviz.io.capture.capture_seq2seq``: eager attention, float32). One page load; every wait
is for a state (a script run finished, the chart's drawn flag).

Screenshot (tests/artifacts/screenshots/): encoder_decoder_real_head.png — the Encoder–decoder
page's real-model section with layer 0, head 0 of the cross-attention.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import (
    ARTIFACTS,
    assert_no_exception,
    chart_z,
    expect_rerun,
    screenshot,
    type_into,
    wait_for_app_run,
    wait_for_chart,
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
ROUNDING = 1e-5  # float32, one thread against several, and the chart's float32 cells
SERVER_LOG = ARTIFACTS / "streamlit-server-encoder-decoder.log"
CHART = "encoder_decoder_fig_cross_head"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    """The saved folder and the model's own cross-attention on the two texts."""
    from hf_models import save_model, seq2seq_configs

    from attnviz.io.capture import capture_seq2seq, load_model

    config, bert, pad = seq2seq_configs()["bart"]
    config.encoder_layers = config.decoder_layers = config.num_hidden_layers = 1
    config.encoder_attention_heads = config.decoder_attention_heads = 2
    folder = save_model(config, bert, pad, tmp_path_factory.mktemp("models") / "bart", seed=1,
                        bias_std=0.5)
    net, tokenizer = load_model(folder)
    cap = capture_seq2seq(net, tokenizer, SOURCE, TARGET)
    assert cap.cross.shape == (1, 2, len(TARGET.split()) + 1, len(SOURCE.split()))
    return dict(folder=folder, cap=cap)


def test_a_typed_source_and_target_draw_a_saved_barts_cross_attention(
        models_server: str, page: Page, model: dict) -> None:
    page.set_default_timeout(TIMEOUT)
    cross = model["cap"].cross[0, 0]
    # 1) Model view: the model of the models folder, a source and a target typed in
    with expect_rerun(page):
        page.goto(f"{models_server}/model_view")
    wait_for_app_run(page)
    with expect_rerun(page):
        page.get_by_text(text.SOURCES["directory"], exact=True).click()
    assert page.locator(".st-key-model_view_model input").input_value() == "bart"
    type_into(page, text.TEXT_LABEL, SOURCE)
    type_into(page, text.TEXT_B_LABEL, TARGET)
    with expect_rerun(page, timeout=TIMEOUT):
        page.get_by_role("button", name=text.CAPTURE_BUTTON).click()
    assert_no_exception(page)
    assert not page.get_by_test_id("stAlertContentError").count()
    assert page.get_by_text(text.KINDS["cross"], exact=True).count() == 1  # the kind picker
    # 2) the Encoder–decoder page, through the navigation (the same session, no page load)
    with expect_rerun(page):
        page.get_by_test_id("stSidebar").get_by_role(
            "link", name="Encoder–decoder & additive", exact=True).click()
    page.locator(f".st-key-{CHART}").scroll_into_view_if_needed()
    wait_for_chart(page, CHART, timeout=TIMEOUT)
    assert_no_exception(page)
    np.testing.assert_allclose(chart_z(page, CHART), cross, atol=ROUNDING)
    ticks = page.evaluate(
        """key => ['x', 'y'].map(axis => Array.from(document.querySelectorAll(
            `.st-key-${key} .js-plotly-plot .${axis}tick text`), t => t.textContent))""", CHART)
    assert ticks[0] == [f"{i}:{w}" for i, w in enumerate(SOURCE.split())]  # keys: the source
    assert ticks[1][1:] == [f"{i}:{w}" for i, w in enumerate(TARGET.split(), start=1)]
    screenshot(page, "encoder_decoder_real_head")
