"""Real browser: the Induction page opens on the shipped model and its slider steps every head's
attention through the recorded training in the browser; a short live run trains and replays;
a head opened on the page is what Step by step shows. At 1024×768, 1366×768 and 1920×1080, in
and out of presenter mode, the page opens on the lesson: the whole replay figure (loss curve,
slider, every head's pattern) on the first screen, grown to fill it, and every experiment
button's label whole.

Screenshots of the grid before, during and after the phase change (the shipped model at steps
0, at the phase change and at the end) are saved as tests/artifacts/screenshots/induction_*.png
(1366×768); the page as it opens and during Play at each size as
induction_open_<w>x<h>[_presenter].png and induction_play_<w>x<h>.png.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    SCREENSHOTS,
    TIMEOUT_MS,
    assert_no_exception,
    expect_rerun,
    goto_page,
    painted,
    slider_step,
    track_reruns,
    wait_for_charts,
    wait_for_plots,
    wait_for_slider,
)
from playwright.sync_api import Browser, Page

from attnviz.core.transformer import init_params
from attnviz.io.examples.make_induction_model import load_induction_model
from attnviz.scenarios.induction import InductionSettings, heldout_forward, train_induction
from attnviz.teach.text import induction as text

GRID = ".st-key-induction_fig_grid"
STEP_LABEL = f"{GRID} .slider-group > .slider-label"  # "step 120"


def grid_z(page: Page, n_heads: int, t: int = 24) -> np.ndarray:
    """The attention every head of the grid shows now, (n_heads_total, t, t): cut from the
    grid's one heatmap where its axes' position labels put each head (layer by layer)."""
    z, cols, rows = page.evaluate(
        """(sel) => {
            const g = document.querySelector(`${sel} .js-plotly-plot`);
            return [Array.from(g._fullData[1].z, r => Array.from(r, v => v ?? NaN)),
                    Array.from(g._fullLayout.xaxis2.tickvals),
                    Array.from(g._fullLayout.yaxis2.tickvals)];
        }""", GRID)
    z = np.array(z, dtype=float)
    cols, rows = np.reshape(cols, (-1, t)), np.reshape(rows, (-1, t))
    heads = [z[np.ix_(r, c)] for r in rows for c in cols]
    assert len(heads) == n_heads
    return np.array(heads)


def go_to_frame(page: Page, index: int, n_frames: int) -> int:
    """Click the grid's slider rail at recorded frame ``index``; return the step it shows."""
    rail = page.locator(f"{GRID} .slider-rail-rect")
    rail.scroll_into_view_if_needed()
    box = rail.bounding_box()
    chart = f"{GRID} .js-plotly-plot"
    before = slider_step(page, chart)
    page.mouse.click(box["x"] + box["width"] * index / (n_frames - 1),
                     box["y"] + box["height"] / 2)
    # the clicked step's frame drawn (the slider moved, unless it stood there already)
    wait_for_slider(page, chart, moved_from=None if index == before else before)
    return int(page.locator(STEP_LABEL).text_content().split()[-1])


def shot_grid(page: Page, path) -> None:
    """The whole grid figure as one PNG: the viewport (1366 wide) made tall enough for it
    while the shot is taken (an element taller than the viewport is not drawn whole)."""
    page.set_viewport_size({"width": 1366, "height": 1300})
    try:
        page.locator(GRID).scroll_into_view_if_needed()
        painted(page)
        page.locator(GRID).screenshot(path=str(path))
    finally:
        page.set_viewport_size({"width": 1366, "height": 768})


def test_induction_opens_replays_trains_and_opens_a_head(browser: Browser, app_server: str):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    track_reruns(page)
    shipped = load_induction_model()
    settings, frames = shipped.settings, list(shipped.record["frames"])
    try:
        goto_page(page, app_server, "induction")
        wait_for_plots(page, 4)
        assert_no_exception(page)
        # 1) the shipped model, replayed in the browser: before, during, after the phase change
        np.testing.assert_allclose(grid_z(page, 4), shipped.record["final_weights"].reshape(
            4, 24, 24), atol=1e-6)
        untrained = heldout_forward(init_params(settings.config(), seed=settings.seed),
                                    settings).weights[:, 0].reshape(4, 24, 24)
        phase_frame = int(np.argmin(np.abs(np.array(frames) - shipped.record["phase_change"][0])))
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for name, index in (("start", 0), ("phase", phase_frame), ("end", len(frames) - 1)):
            step = go_to_frame(page, index, len(frames))
            assert step == frames[index], (name, step)
            if index == 0:
                np.testing.assert_allclose(grid_z(page, 4), untrained, atol=1e-6)
            shot_grid(page, SCREENSHOTS / f"induction_{name}.png")
        np.testing.assert_allclose(grid_z(page, 4), shipped.record["final_weights"].reshape(
            4, 24, 24), atol=1e-6)
        # 2) train a short run live, then replay it
        steps = page.locator(".st-key-induction_steps input")
        steps.fill("40")
        with expect_rerun(page):
            steps.press("Enter")
        with expect_rerun(page):
            page.get_by_role("button", name=text.TRAIN_BUTTON, exact=True).click()
        wait_for_plots(page, 4)
        assert_no_exception(page)
        assert "Showing your run: 40 steps" in page.locator("[data-testid=stMain]").inner_text()
        run = train_induction(InductionSettings(steps=40))
        step = go_to_frame(page, len(run.frames) // 2, len(run.frames))
        index = list(run.frames).index(step)
        assert 0 < step < 40
        np.testing.assert_allclose(grid_z(page, 4), run.weights[index].reshape(4, 24, 24),
                                   atol=1e-6)
        # 3) open the run's induction-head candidate and see it on Step by step
        with expect_rerun(page):
            page.get_by_role("button", name=text.OPEN_BUTTON, exact=True).click()
        layer, head = run.roles.induction
        opened = text.OPENED.format(head=f"L{layer} H{head}")
        assert opened in page.locator("[data-testid=stMain]").inner_text()
        with expect_rerun(page):
            page.locator("[data-testid=stMain] [data-testid=stPageLink]").first.click()
        assert page.url.rstrip("/").endswith("step_by_step")
        wait_for_plots(page, 1)
        assert_no_exception(page)
        first = f"0:t{run.heldout.tokens[0, 0]}"
        assert first in page.locator("[data-testid=stMain]").inner_text()
    finally:
        context.close()


# (width, height) -> presenter mode checked too
SCREENS = {(1024, 768): True, (1366, 768): False, (1920, 1080): True}
BUTTON_TEXT = "[data-testid=stMain] [class*='st-key-induction_exp_'] button " \
              "[data-testid=stMarkdownContainer]"


def lesson_box(page: Page) -> dict:
    """The replay figure's box on the screen, and every experiment button's label's drawn
    width against its room (a label is cut when it needs more: scrollWidth > clientWidth)."""
    return page.evaluate(
        """([grid, buttons]) => {
            const box = document.querySelector(grid).getBoundingClientRect();
            const labels = Array.from(document.querySelectorAll(buttons), el =>
                [el.textContent, el.scrollWidth, el.clientWidth]);
            return {top: box.top, bottom: box.bottom, labels};
        }""", [GRID, BUTTON_TEXT])


def assert_lesson_on_first_screen(page: Page, width: int, height: int, mode: str) -> None:
    box = lesson_box(page)
    assert 0 < box["top"] < height, (mode, box)
    # slider, Play and every head: no scrolling; and the figure grows to what the screen
    # leaves (its height follows the window in the browser: bigger cells at 1920 × 1080)
    assert height - 40 <= box["bottom"] <= height, (mode, box)
    assert [label for label, *_ in box["labels"]] == list(text.EXPERIMENTS.values())
    for label, needed, room in box["labels"]:
        assert 0 < needed <= room, (mode, label, needed, room)


@pytest.mark.parametrize("width, height", list(SCREENS))
def test_the_page_opens_on_the_lesson_at_classroom_sizes(browser: Browser, app_server: str,
                                                        width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    track_reruns(page)
    size = f"{width}x{height}"
    try:
        goto_page(page, app_server, "induction")
        wait_for_plots(page, 1)
        assert_no_exception(page)
        assert_lesson_on_first_screen(page, width, height, "sidebar open")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"induction_open_{size}.png"))
        # Play steps the grid from the start in the browser (no rerun)
        page.locator(f"{GRID} .updatemenu-button").first.click()
        page.wait_for_function(
            """(sel) => { const l = document.querySelector(sel);
                          const s = Number(l.textContent.split(' ').pop());
                          return s > 60 && s < 240; }""", arg=STEP_LABEL)
        page.screenshot(path=str(SCREENSHOTS / f"induction_play_{size}.png"))
        page.locator(f"{GRID} .updatemenu-button").nth(1).click()  # Pause
        if not SCREENS[(width, height)]:
            return
        with expect_rerun(page):
            page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
        page.wait_for_function(  # redrawn with the loss curve beside the grid
            """(sel) => { const g = document.querySelector(`${sel} .js-plotly-plot`);
                          return g && g._fullLayout && g._fullLayout.xaxis.domain[1] < 0.5; }""",
            arg=GRID)
        page.wait_for_function("() => !(document.querySelector('[data-testid=stSidebar]')"
                               "?.getBoundingClientRect().width)")
        wait_for_charts(page)  # the sidebar's closing moves the page: its charts follow
        assert_no_exception(page)
        assert_lesson_on_first_screen(page, width, height, "presenter mode")
        page.screenshot(path=str(SCREENSHOTS / f"induction_open_{size}_presenter.png"))
    finally:
        context.close()
