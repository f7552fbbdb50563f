"""Real browser (issue 29 item 2): a GPT-2-small-sized real head (hidden size 768, 12 heads of
64) opens on the Playground, and a cell far to the right of its 769-wide x is reached — with
the keyboard through columns not drawn, and by scrolling — typed into, and the weights follow;
so does a cell of W_Q (769 × 64) far down and right.

The grid draws only the cells in view of so wide a matrix (attnviz/ui/grid.js: virtual rows and
columns); the test counts the inputs in the page (numbers, not time: the speed is
benchmarks/bench_wide_head.py's). A random one-layer GPT-2 of that shape is saved with
save_pretrained beside the local tokenizer (tests/hf_models.py) in a tmp models folder (the
server's ATTNVIZ_MODELS_DIR) and opened the way a user does: Model view, the model (the list's
only one), a 32-token text, Capture, "Open layer 0, head 0 on
every page". The expected weights come from the same layer read in this process
(:func:`attnviz.io.hf_layers.layer_inputs` and ``layer_scenario``) with the typed numbers put in.

Screenshot (tests/artifacts/screenshots/): wide_head_edited.png — the Playground after the
edits, the grid scrolled to its last columns.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest
from helpers import (
    ARTIFACTS,
    EDITOR,
    assert_no_exception,
    expect_rerun,
    playground_focus,
    plot_z,
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

TIMEOUT = 120_000  # a model load and a 769-wide scenario on a busy 2-core machine
D_MODEL, HEADS = 768, 12
WORDS = "the cat sat on a mat and then slept in sun".split()
TEXT = " ".join(WORDS[i % len(WORDS)] for i in range(32))  # 32 tokens of the local tokenizer
KEYED = (0, 40)  # reached with Tab from (0, 5): not drawn when the grid opens
SCROLLED = (0, D_MODEL - 1)  # the hidden states' last column (the bias column's ones follow)
W_Q_CELL = (D_MODEL - 1, 63)  # W_Q's last hidden row (its bias row follows), last column
SERVER_LOG = ARTIFACTS / "streamlit-server-wide-head.log"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    """The saved GPT-2-small-shaped model's folder and its layer 0, read here."""
    from hf_models import VOCAB, save_model
    from transformers import GPT2Config

    from attnviz.io.capture import load_model
    from attnviz.io.hf_layers import layer_inputs

    config = GPT2Config(n_embd=D_MODEL, n_head=HEADS, n_layer=1, n_positions=64,
                        vocab_size=len(VOCAB), bos_token_id=2, eos_token_id=3)
    folder = save_model(config, False, True, tmp_path_factory.mktemp("models") / "wide_head",
                        bias_std=0.02)
    net, tokenizer = load_model(folder)
    return dict(folder=folder, inputs=layer_inputs(net, tokenizer, TEXT, 0))


def _focused(page: Page) -> tuple[int, int] | None:
    cell = page.evaluate("() => { const d = document.activeElement?.dataset;"
                         " return d && d.r !== undefined ? [Number(d.r), Number(d.c)] : null }")
    return None if cell is None else tuple(cell)


def _commit(page: Page, typed: str) -> None:
    """Select what the focused cell holds, type ``typed``, press Enter; wait for the rerun."""
    page.keyboard.press("Control+a")
    page.keyboard.type(typed)
    with expect_rerun(page, TIMEOUT):
        page.keyboard.press("Enter")


def _weights_chart(page: Page, expected: np.ndarray) -> np.ndarray:
    """The drawn chart whose z has the weights' shape and is closest to ``expected``, once the
    charts have redrawn to it (or the last drawing after the timeout)."""
    page.wait_for_function(
        """([want, tol]) => Array.from(document.querySelectorAll('.js-plotly-plot')).some(g => {
            if (!g._fullData || !g._fullData[0] || !g._fullData[0].z) return false;
            const z = Array.from(g._fullData[0].z, r => Array.from(r));
            return z.length === want.length && z.every((row, i) => row.every(
                (v, j) => Math.abs(v - want[i][j]) <= tol));
        })""", arg=[expected.tolist(), 1e-9], timeout=TIMEOUT)
    n = page.locator(".js-plotly-plot").count()
    shaped = [np.array(plot_z(page, i), dtype=float) for i in range(n)]
    shaped = [z for z in shaped if z.shape == expected.shape]
    return min(shaped, key=lambda z: float(np.nanmax(np.abs(z - expected))))


def test_a_gpt2_small_sized_head_takes_an_edit_far_right(models_server: str, page: Page,
                                                          model: dict) -> None:
    page.set_default_timeout(TIMEOUT)
    sc = layer_scenario(model["inputs"], 0)
    t = len(sc.tokens)
    assert t == 32 and sc.x.shape == (t, D_MODEL + 1)
    # 1) Model view: the folder and the text, captured; layer 0, head 0 opened
    with expect_rerun(page, TIMEOUT):
        page.goto(f"{models_server}/model_view")
    wait_for_app_run(page, TIMEOUT)
    with expect_rerun(page, TIMEOUT):
        page.get_by_text(text.SOURCES["directory"], exact=True).click()
    assert page.locator(".st-key-model_view_model input").input_value() == "wide_head"
    type_into(page, text.TEXT_LABEL, TEXT, TIMEOUT)
    with expect_rerun(page, TIMEOUT):
        page.get_by_role("button", name=text.CAPTURE_BUTTON).click()
    wait_for_plots(page, 1, timeout=TIMEOUT)
    button = page.get_by_role("button", name=text.REAL_OPEN_BUTTON.format(layer=0, h=0))
    button.scroll_into_view_if_needed()
    with expect_rerun(page, TIMEOUT):
        button.click()
    assert_no_exception(page)
    assert page.get_by_test_id("stAlertContentSuccess").inner_text().strip() == \
        text.REAL_OPENED.format(layer=0, h=0)
    # 2) the Playground: x's grid draws the cells in view only
    with expect_rerun(page, TIMEOUT):
        page.get_by_test_id("stSidebar").get_by_role("link", name="Playground",
                                                     exact=True).click()
    wait_for_app_run(page, TIMEOUT)
    wait_for_plots(page, 1, timeout=TIMEOUT)
    assert_no_exception(page)
    grid = page.locator("[class*='st-key-playground_x'] " + EDITOR).first
    grid.scroll_into_view_if_needed()
    spec = grid.evaluate("g => [g.__spec.rows.length, g.__spec.cols.length]")
    assert spec == [t, D_MODEL + 1]
    drawn = grid.locator("input").count()
    assert 0 < drawn <= 1000, drawn  # of 32 × 769 = 24,608 cells
    assert grid.locator(f"input[data-r='0'][data-c='{KEYED[1]}']").count() == 0
    before = np.asarray(run_scenario(sc).attention.weights)
    # 3) the keyboard: Tab from (0, 5) through columns not drawn to (0, 40)
    grid.locator("input[data-r='0'][data-c='5']").click()
    for _ in range(KEYED[1] - 5):
        page.keyboard.press("Tab")
    assert _focused(page) == KEYED
    _commit(page, "3.5")
    x = sc.x.copy()
    x[KEYED] = 3.5
    want = np.asarray(run_scenario(replace(sc, x=x)).attention.weights)
    assert np.abs(want - before).max() > 1e-4  # the edit moves the weights
    np.testing.assert_allclose(_weights_chart(page, want), want, rtol=0, atol=1e-9)
    # 4) scrolling: the grid's last columns, then a click on x[0, 767]
    grid = page.locator("[class*='st-key-playground_x'] " + EDITOR).first
    grid.locator("xpath=..").evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    cell = grid.locator(f"input[data-r='{SCROLLED[0]}'][data-c='{SCROLLED[1]}']")
    cell.click()
    assert _focused(page) == SCROLLED
    _commit(page, "-4.25")
    x[SCROLLED] = -4.25
    again = np.asarray(run_scenario(replace(sc, x=x)).attention.weights)
    assert np.abs(again - want).max() > 1e-4
    np.testing.assert_allclose(_weights_chart(page, again), again, rtol=0, atol=1e-9)
    assert grid.locator("input").count() <= 1000
    assert_no_exception(page)
    screenshot(page, "wide_head_edited")
    # 5) W_Q (769 × 64) on the Q K V focus, its editors folded (sent only once opened): its
    # cell far down and right, scrolled to
    playground_focus(page, "Q K V")
    assert page.locator("[class*='st-key-playground_w_q'] " + EDITOR).count() == 0
    with expect_rerun(page, TIMEOUT):
        page.locator(".st-key-playground_wide_weights summary").click()
    wait_for_app_run(page, TIMEOUT)
    w_grid = page.locator("[class*='st-key-playground_w_q'] " + EDITOR).first
    w_grid.scroll_into_view_if_needed()
    assert w_grid.evaluate("g => [g.__spec.rows.length, g.__spec.cols.length]") == [D_MODEL + 1,
                                                                                   64]
    assert w_grid.locator("input").count() <= 1000
    w_grid.locator("xpath=..").evaluate(
        "box => { box.scrollTop = box.scrollHeight; box.scrollLeft = box.scrollWidth; }")
    w_cell = w_grid.locator(f"input[data-r='{W_Q_CELL[0]}'][data-c='{W_Q_CELL[1]}']")
    w_cell.click()
    assert _focused(page) == W_Q_CELL
    _commit(page, "1.5")
    w_q = sc.w_q.copy()
    w_q[W_Q_CELL] = 1.5
    last = np.asarray(run_scenario(replace(sc, x=x, w_q=w_q)).attention.weights)
    assert np.abs(last - again).max() > 1e-4
    playground_focus(page, "Weights")
    np.testing.assert_allclose(_weights_chart(page, last), last, rtol=0, atol=1e-9)
    assert_no_exception(page)
