"""Real browser, end to end: a saved causal model generates ten tokens, the slider steps back
through them, a click on a strip chooses a head, and that step's head opens on every page.

A small random Llama with its language-model head (tests/hf_causal.py: 2 layers, 4 heads on 2
key/value heads, RoPE, weights large enough for peaked attention) is saved with its tokenizer in
a tmp models folder; the app runs with that folder as ATTNVIZ_MODELS_DIR and HF_HUB_OFFLINE=1
(its own server). The expected numbers come from the same model run here through
attnviz.io.generate (checked against Hugging Face's generate in tests/io/test_generate.py); the
server's torch runs one thread, this process's may run more: float32 rounding apart, equal.

Every wait is for a state: a script run finished (``expect_rerun``), the charts drawn
(``wait_for_charts``: the chart component's ``data-sized="1"``), a hover shown.

Screenshots (tests/artifacts/screenshots/):
- generate_ten_tokens.png — the page after Generate: the text with the tenth token marked, the
  strips of every layer and head, the candidates, the chosen head's row;
- generate_step_3_head.png — step 3 after a click on strip L1 H2 and "Open layer 1, head 2 on
  every page": the strip outlined, the success message and the links;
- generate_step_by_step.png — Step by step on that head.
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
    wait_for_app_run,
    wait_for_charts,
    wait_for_hover,
)
from playwright.sync_api import Page

from attnviz.teach.text import generate as text
from attnviz.teach.text import model_view as mv_text

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers (huggingface_hub reads it on import)
pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

TIMEOUT = 180_000  # a model load and ten decoding steps on a busy 2-core machine
N = 10
STEP, LAYER, HEAD = 3, 1, 2
ROUNDING = 1e-5  # float32, one thread against several, and the chart's float32 cells
SERVER_LOG = ARTIFACTS / "streamlit-server-generate.log"

# the strips' click targets of the grid: each strip's centre in page pixels, and the selected
# strip's outline (the orange trace), if any
STRIPS = """() => {
    const g = document.querySelector('.st-key-generate_fig_grid .js-plotly-plot');
    if (!g || !g._fullData || !g._fullData.length) return null;
    const picker = g._fullData[g._fullData.length - 1];
    if (picker.name !== 'strips') return null;
    const L = g._fullLayout, r = g.getBoundingClientRect();
    return {xy: Array.from(picker.x, (x, k) => [r.left + L._size.l + L.xaxis.d2p(x),
                                                r.top + L._size.t + L.yaxis.d2p(picker.y[k])]),
            selected: g._fullData.filter(t => t.line && t.line.color === '#ff7f0e')
                        .map(t => Array.from(t.x))};
}"""
BARS = """() => {
    const g = document.querySelector('.st-key-generate_fig_top .js-plotly-plot');
    return g && g._fullData && g._fullData.length
        ? {x: Array.from(g._fullData[0].x), y: Array.from(g._fullData[0].y)} : null;
}"""


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    """The saved folder and the generation the page should show."""
    from hf_causal import PROMPT, save_causal_lm

    from attnviz.io.generate import generate, load_causal_lm

    folder = save_causal_lm("llama", tmp_path_factory.mktemp("models") / "llama")
    net, tokenizer = load_causal_lm(folder, root=folder.parent)
    gen = generate(net, tokenizer, PROMPT, N)
    assert gen.generated == N and text.DEFAULT_PROMPT == PROMPT  # no end-of-sequence token
    return dict(folder=folder, gen=gen)


def strips(page: Page, n_layers: int, n_heads: int) -> np.ndarray:
    """The grid's strips as drawn: (n_layers, n_heads, t), each strip's first heatmap row."""
    z = chart_z(page, "generate_fig_grid")
    gaps = np.isnan(z).all(axis=0)
    t = int(np.argmax(gaps)) if gaps.any() else z.shape[1]
    step = t + max(1, t // 8)
    return np.array([[z[layer * 5, h * step:h * step + t] for h in range(n_heads)]
                     for layer in range(n_layers)])


def slider_value(page: Page) -> int:
    """The step the page's slider shows (its thumb's value)."""
    return int(page.locator(".st-key-generate_step [data-testid=stSliderThumbValue]")
               .inner_text())


def test_ten_tokens_a_slider_and_a_head_opened(models_server: str, page: Page,
                                               model: dict) -> None:
    page.set_default_timeout(TIMEOUT)
    gen = model["gen"]
    # 1) the page, the model of the models folder (the list's only one), ten tokens by default
    with expect_rerun(page, TIMEOUT):
        page.goto(f"{models_server}/generate")
    wait_for_app_run(page, TIMEOUT)
    assert_no_exception(page)
    assert page.locator(".st-key-generate_model input").input_value() == "llama"
    assert page.locator(".st-key-generate_n input").input_value() == str(N)
    # 2) Generate: the model loads, ten tokens are decoded with the cache, the page shows them
    with expect_rerun(page, TIMEOUT):
        page.get_by_role("button", name=text.GENERATE_BUTTON, exact=True).click()
    wait_for_charts(page, 3, timeout=TIMEOUT)
    assert_no_exception(page)
    assert not page.get_by_test_id("stAlertContentError").count()
    assert slider_value(page) == N
    assert page.get_by_text(text.STEP_NEW.format(k=N, n=N, position=gen.steps[N].position),
                            exact=True).count() == 1
    _, new = gen.text(N)
    marked = page.get_by_test_id("stMain").locator("span", has_text=new.strip()).last
    assert marked.is_visible()
    np.testing.assert_allclose(strips(page, 2, 4), gen.steps[N].rows, atol=ROUNDING)
    screenshot(page, "generate_ten_tokens")
    # 3) the slider steps back to step 3 with the keyboard: its rows and candidates
    page.locator(".st-key-generate_step").get_by_role("slider").focus()
    for _ in range(N - STEP):
        page.keyboard.press("ArrowLeft")
    wait_for_app_run(page, TIMEOUT)
    wait_for_charts(page, 3, timeout=TIMEOUT)
    assert slider_value(page) == STEP
    step = gen.steps[STEP]
    np.testing.assert_allclose(strips(page, 2, 4), step.rows, atol=ROUNDING)
    bars = page.evaluate(BARS)
    np.testing.assert_allclose(bars["x"], step.top_probs, atol=ROUNDING)
    assert bars["y"] == list(gen.top_tokens[STEP])
    cache = text.CACHE.format(tokens=step.position + 1, layers=2,
                              kib=f"{step.cache_bytes / 1024:,.1f}")
    assert page.get_by_text(cache, exact=False).count() == 1
    # 4) a click on strip L1 H2 chooses that head: its row below, its button
    page.locator(".st-key-generate_fig_grid").scroll_into_view_if_needed()
    grid = page.evaluate(STRIPS)
    assert grid is not None and len(grid["xy"]) == 8
    x, y = grid["xy"][LAYER * 4 + HEAD]
    page.mouse.move(x, y)
    wait_for_hover(page, (x, y))  # Plotly turns the hover into the click
    tooltip = page.locator(".st-key-generate_fig_grid .hoverlayer").text_content()
    assert tooltip.startswith(f"L{LAYER} H{HEAD}")
    with expect_rerun(page, TIMEOUT):
        page.mouse.click(x, y)
    wait_for_charts(page, 3, timeout=TIMEOUT)
    assert page.get_by_role("combobox", name=text.LAYER_LABEL).input_value() == str(LAYER)
    assert page.get_by_role("combobox", name=text.HEAD_LABEL).input_value() == str(HEAD)
    assert page.evaluate(STRIPS)["selected"], "the chosen strip is outlined"
    row = chart_z(page, "generate_fig_row")
    np.testing.assert_allclose(row[0], step.rows[LAYER, HEAD], atol=ROUNDING)
    # 5) open that head on every page: the sequence up to step 3, the new token last
    button = page.get_by_role("button", name=mv_text.REAL_OPEN_BUTTON.format(layer=LAYER,
                                                                            h=HEAD))
    button.scroll_into_view_if_needed()
    with expect_rerun(page, TIMEOUT):
        button.click()
    wait_for_app_run(page, TIMEOUT)
    assert_no_exception(page)
    success = page.get_by_test_id("stAlertContentSuccess").inner_text()
    assert success.strip() == mv_text.REAL_OPENED.format(layer=LAYER, h=HEAD)
    screenshot(page, "generate_step_3_head")
    with expect_rerun(page, TIMEOUT):
        page.get_by_test_id("stMain").get_by_role(
            "link", name=mv_text.REAL_OPEN_PAGES["pages/step_by_step.py"], exact=True).click()
    wait_for_charts(page, 1, timeout=TIMEOUT)
    assert_no_exception(page)
    weights = chart_z(page, "step_by_step_fig_weights")
    t = step.position + 1
    assert weights.shape == (t, t)
    np.testing.assert_allclose(weights[-1], step.rows[LAYER, HEAD], atol=ROUNDING)
    assert page.get_by_text(mv_text.REAL_HEAD_TITLE.format(model_type="llama", layer=LAYER,
                                                           h=HEAD)).count() >= 1
    screenshot(page, "generate_step_by_step")
