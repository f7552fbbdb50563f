"""Real browser: the Gradients and Learn pages at classroom sizes and on every preset; the Learn
playback steps the weights heatmap through the recorded frames in the browser."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    TIMEOUT_MS,
    assert_no_exception,
    expect_rerun,
    goto_page,
    load_preset,
    screenshot,
    slider_step,
    track_reruns,
    wait_for_chart,
    wait_for_plots,
    wait_for_slider,
)
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from attnviz.scenarios.gradients import Loss, gradients, self_output
from attnviz.scenarios.learn import train
from attnviz.scenarios.presets import DEFAULT_PRESET, PRESETS, default_scenario

SIZES = [(1024, 768), (1920, 1080)]
STEP_LABEL = ".st-key-learn_fig_training .slider-group > .slider-label"  # "step 120"
TRAINING = ".st-key-learn_fig_training .js-plotly-plot"


def open_at(browser: Browser, app_server: str, path: str, width: int, height: int) -> Page:
    """A new session at this size on ``path``."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    track_reruns(page)
    goto_page(page, app_server, path)
    return page


def keyed(page: Page, key: str, trace: int = 0) -> dict:
    """The drawn z (and the chart's width) of the chart with ``key=``."""
    return page.evaluate(
        """([key, trace]) => {
            const g = document.querySelector(`.st-key-${key} .js-plotly-plot`);
            if (!g || !g._fullData) return null;
            return {z: Array.from(g._fullData[trace].z, r => Array.from(r)),
                    width: g.getBoundingClientRect().width};
        }""", [key, trace])


def quick_click(page: Page, x: float, y: float) -> None:
    """A quick click on the training chart's slider: pressed, released after one round trip
    to the page. A release while the chart drew the step its press chose left the slider
    marked as dragged in plotly.js, and Play's frames then no longer moved it (seen in
    full-suite runs; this click did it in trials on a busy machine, not in every one)."""
    page.mouse.move(x, y)
    page.mouse.down()
    page.evaluate("() => 0")  # one round trip
    page.mouse.up()


def watch_playback(page: Page) -> None:
    """Record, in ``window.__playback``, what the training chart does from now on: the frames
    played, interrupted or finished animations, redraws (said when Play stalls)."""
    page.evaluate("""() => {
        const g = document.querySelector('.st-key-learn_fig_training .js-plotly-plot');
        const seen = window.__playback = [];
        const t0 = performance.now();
        for (const ev of ['animatingframe', 'animationinterrupted', 'animated', 'relayout',
                          'restyle', 'redraw', 'purge']) {
            g.on('plotly_' + ev, e => seen.push(
                [ev, e && e.name, Math.round(performance.now() - t0), document.visibilityState]));
        }
    }""")


def train_on(page: Page) -> None:
    with expect_rerun(page):
        page.get_by_role("button", name="Train", exact=True).click()
    wait_for_chart(page, "learn_fig_training")


def gradients_page_draws_the_exact_gradients(page: Page, width: int, height: int) -> None:
    wait_for_plots(page, 10)
    assert_no_exception(page)
    sc = default_scenario()
    g = gradients(sc, Loss("output_mse", self_output(sc)))
    drawn = keyed(page, "gradients_scaled_grad")
    np.testing.assert_allclose(drawn["z"], g.attention.d_scaled[0], rtol=1e-12)
    assert drawn["width"] >= 240, "a gradient heatmap is too narrow to read"
    screenshot(page, f"gradients_{width}x{height}")


@pytest.mark.parametrize("width, height", SIZES)
def test_gradients_draws_the_exact_gradients_and_learn_trains_and_steps_the_weights(
        browser, app_server, width, height):
    """One session at each size: Gradients as it opens, then Learn (by the sidebar) trains
    and its slider steps the weights in the browser."""
    page = open_at(browser, app_server, "gradients", width, height)
    try:
        gradients_page_draws_the_exact_gradients(page, width, height)
        with expect_rerun(page):
            page.get_by_test_id("stSidebarNav").get_by_role("link", name="Learn").click()
        train_on(page)
        assert_no_exception(page)
        sc = default_scenario()
        run = train(sc, Loss("pattern_ce", np.eye(4)), steps=200, lr=0.05)  # the default: self
        drawn = keyed(page, "learn_fig_training", trace=1)
        np.testing.assert_allclose(drawn["z"], run.weights[-1], rtol=1e-12)
        screenshot(page, f"learn_{width}x{height}")
        # a click on the slider's rail: no script run, the heatmap shows that recorded step
        page.locator(".st-key-learn_fig_training .slider-rail-rect").scroll_into_view_if_needed()
        rail = page.locator(".st-key-learn_fig_training .slider-rail-rect").bounding_box()
        last = slider_step(page, TRAINING)
        quick_click(page, rail["x"] + 0.25 * rail["width"], rail["y"] + rail["height"] / 2)
        wait_for_slider(page, TRAINING, moved_from=last)  # the clicked step's frame drawn
        label = page.locator(STEP_LABEL).text_content()
        step = int(label.split()[-1])
        assert 0 < step < 200
        frame = list(run.frames).index(step)
        np.testing.assert_allclose(keyed(page, "learn_fig_training", trace=1)["z"],
                                   run.weights[frame], rtol=1e-12)
        chart = page.locator(".st-key-learn_fig_training")
        watch_playback(page)
        chart.get_by_text("Play", exact=True).click()  # plays on from the recorded step shown
        try:
            page.wait_for_function(
                "s => document.querySelector(s)?.textContent.trim().endsWith(' 200')",
                arg=STEP_LABEL, timeout=60_000)
        except PlaywrightTimeout:
            shown = page.locator(STEP_LABEL).text_content()
            screenshot(page, f"FAILED-learn_play_{width}x{height}")
            raise AssertionError(f"Play did not reach step 200 ({shown}): "
                                 f"{page.evaluate('window.__playback')}") from None
        wait_for_slider(page, TRAINING)  # the last frame drawn
        np.testing.assert_allclose(keyed(page, "learn_fig_training", trace=1)["z"],
                                   run.weights[-1], rtol=1e-12)
        assert_no_exception(page)
    finally:
        page.context.close()


def first_preset_of_each_variant() -> list[str]:
    """One preset per variant: the ones trained in the browser (training every preset took two
    minutes of the suite; AppTests train every preset: tests/pages/test_page_learn.py)."""
    first: dict[str, str] = {}
    for key, preset in PRESETS.items():
        first.setdefault(preset.build().variant, key)
    return list(first.values())


def test_one_preset_of_each_variant_trains_and_draws(browser, app_server):
    """Each loaded on Learn and trained there: the run is said and every chart drawn. (Every
    preset's Gradients, loss or why not: tests/pages/test_every_preset_apptest.py; every
    preset trains or says why not: tests/pages/test_page_learn.py.)"""
    page = open_at(browser, app_server, "learn", 1366, 768)
    try:
        for key in first_preset_of_each_variant():
            if key != DEFAULT_PRESET:  # the default is loaded already
                load_preset(page, PRESETS[key].title)
            assert_no_exception(page)
            trains = page.get_by_role("button", name="Train", exact=True).count() > 0
            if trains:  # (else the page says there is nothing to train: no chart)
                train_on(page)
                assert_no_exception(page)
                assert "Trained" in page.locator("[data-testid=stMain]").inner_text(), key
            page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                                   ".every(g => g._fullData?.length)", timeout=20_000)
            assert page.locator(".js-plotly-plot").count() >= (1 if trains else 0), key
    finally:
        page.context.close()
