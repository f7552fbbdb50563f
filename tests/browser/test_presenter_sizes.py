"""Real browser: presenter mode at classroom sizes, on every page (issue 28 item 1).

Measured in Chromium, as a class sees it:

- the Playground's lecture view in presenter mode with 4, 6, 8 and 10 tokens (typed sentences
  with words of up to 12 characters, and the presets of those lengths) at 1024×768, 1280×800,
  1366×768 and 1920×1080: the token box and the three charts (the weights' τ slider included)
  on one screen, their rows lined up, the weights' numbers written and every number in a cell
  at least 14 px; at 1920×1080 the weights' cells at least 45 % of the screen's height and
  their numbers at least 24 px. Outside presenter mode (1024 and 1366 wide) no number below
  10 px;
- every page with charts (each tab shown) in presenter mode at 1024×768 and outside it at
  1366×768: no number drawn in a cell below 14 px / 10 px (where a cell is too small none is
  written; the hover gives it).

The sizes are decided in the browser from the drawn cells (attnviz/ui/plotly_view.js); a chart
is measured once it says so (``data-sized``) at its column's width. Screenshots:
tests/artifacts/screenshots/presenter_sizes_*.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import (
    SCREENSHOTS,
    TIMEOUT_MS,
    assert_no_exception,
    expect_rerun,
    goto_page,
    screenshot,
    track_reruns,
    wait_for_app_run,
)
from playwright.sync_api import Browser, Page

from attnviz.io import scenario_io
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import common
from attnviz.teach.text import inference as inference_text
from attnviz.teach.text import modern as modern_text

PRESENTER_MIN_PX = 14
NORMAL_MIN_PX = 10
WIDE = (1920, 1080)
WIDE_MIN_PX = 24
WIDE_CELLS_SHARE = 0.45
# typed sentences, words of up to 12 characters (the first sentence is the default's length)
SENTENCES = {
    6: "attention mixes values weighted by similarity",
    8: "every query compares itself with all previous keys",
    10: "transformers read sentences wholesale: queries, keys, values, softmax, weights, outputs",
}
# presets of classroom lengths, opened by link (6, 8, 8 with four heads and 10 tokens)
PRESET_KEYS = ("cat_sat", "sinks_streaming", "alibi_local", "ssmax_long")

# every drawn chart: where it is, its plot area, its cell numbers' sizes, and whether it is
# settled (drawn at its column's width, sized by plotly_view.js)
CHARTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(g => {
  const r = g.getBoundingClientRect();
  const cells = g.querySelector('.nsewdrag')?.getBoundingClientRect();
  const key = [...(g.closest('[class*=st-key-]')?.classList || [])]
    .find(c => c.startsWith('st-key-')) || '';
  return {key, top: r.top, bottom: r.bottom, width: r.width,
          visible: r.width > 0 && r.height > 0,
          settled: g.dataset.sized === '1'
            && Math.abs((g._fullLayout?.width || 0) - r.width) <= 2,
          rows: g._fullData?.[0]?.z?.length ?? 0,
          cellsTop: cells ? cells.top : null, cellsBottom: cells ? cells.bottom : null,
          fonts: [...g.querySelectorAll('.heatmaplayer text')]
            .map(t => parseFloat(getComputedStyle(t).fontSize))};
})"""
SETTLED = """(rows) => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].filter(p => {
    const r = p.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
  return g.every(p => p.dataset.sized === '1'
                 && Math.abs((p._fullLayout?.width || 0) - p.getBoundingClientRect().width) <= 2)
    && (rows === null || (g.length >= 3 && g.slice(0, 3).every(p => p._fullData?.[0]?.z?.length
                                                               === rows)));
}"""


def settle(page: Page, rows: int | None = None) -> list[dict]:
    """Wait until every visible chart is drawn at its width and sized (the lecture's three with
    ``rows`` rows), then measure the visible ones."""
    wait_for_app_run(page)
    page.wait_for_function(SETTLED, arg=rows)  # (a chart's settle pass clears data-sized)
    page.wait_for_timeout(100)
    page.wait_for_function(SETTLED, arg=rows)
    return [c for c in page.evaluate(CHARTS) if c["visible"]]


def new_page(browser: Browser, size: tuple[int, int]) -> Page:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    track_reruns(page)
    return page


def presenter_on(page: Page) -> None:
    """Switch presenter mode on in the sidebar and wait until the sidebar has collapsed."""
    with expect_rerun(page):
        page.get_by_test_id("stSidebar").get_by_text(common.SIDEBAR_PRESENTER).click()
    page.wait_for_function("() => !(document.querySelector('[data-testid=stSidebar]')"
                           "?.getBoundingClientRect().width)")


def type_tokens(page: Page, sentence: str) -> None:
    box = page.get_by_role("textbox", name=common.TOKENS_LABEL)
    box.fill(sentence)
    with expect_rerun(page):
        box.press("Enter")


def viewport_shot(page: Page, name: str) -> Path:
    """The screen as the class sees it (helpers.screenshot stretches the window to the page's
    height, and charts fitted to the window would follow it)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    return SCREENSHOTS / f"{name}.png"


def small_numbers(charts: list[dict], least: float) -> list[tuple[str, float]]:
    """The charts with a number in a cell drawn below ``least`` px: (key, smallest px)."""
    return [(c["key"], min(c["fonts"])) for c in charts if c["fonts"] and min(c["fonts"]) < least]


def check_lecture(page: Page, size: tuple[int, int], n: int, label: str) -> None:
    """The presenter-mode checks of the lecture view with ``n`` tokens (see the module)."""
    charts = settle(page, n)
    shot = viewport_shot(page, f"presenter_sizes_{label}_{size[0]}x{size[1]}")
    assert_no_exception(page)
    lecture = [c for c in charts if "playground_fig_slot_" in c["key"]]
    assert len(lecture) == 3, (label, [c["key"] for c in charts])
    tops = {round(c["cellsTop"]) for c in lecture}
    bottoms = {round(c["cellsBottom"]) for c in lecture}
    assert max(tops) - min(tops) <= 1 and max(bottoms) - min(bottoms) <= 1, (label, tops, bottoms)
    for c in lecture:
        assert c["bottom"] <= size[1] + 1, f"{label}: {c['key']} ends at {c['bottom']} ({shot})"
    tokens = page.get_by_role("textbox", name=common.TOKENS_LABEL).bounding_box()
    assert tokens is not None and tokens["y"] >= 0 and tokens["y"] + tokens["height"] <= size[1]
    weights = next(c for c in lecture if c["key"].endswith("_weights_weights"))
    assert len(weights["fonts"]) == n * n, f"{label}: the weights' numbers are not all written"
    assert not small_numbers(lecture, PRESENTER_MIN_PX), (label, small_numbers(lecture, 14))
    if size == WIDE:
        cells = weights["cellsBottom"] - weights["cellsTop"]
        assert cells >= WIDE_CELLS_SHARE * size[1], (label, cells)
        assert min(weights["fonts"]) >= WIDE_MIN_PX, (label, min(weights["fonts"]))


SCREENS = [(1024, 768), (1280, 800), (1366, 768), WIDE]


def resize(page: Page, size: tuple[int, int]) -> None:
    """Show the page on another screen size (the charts follow it in the browser)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_timeout(200)  # the charts' size watchers see the new size


def test_presenter_lecture_fits_one_screen_with_4_to_10_typed_tokens(browser,
                                                                      app_server) -> None:
    """One session: each sentence typed once, then shown on each screen size (the layout
    the server sends does not depend on the screen; the browser fits it)."""
    page = new_page(browser, SCREENS[0])
    try:
        goto_page(page, app_server, "playground")
        presenter_on(page)
        for n, sentence in [(4, None), *SENTENCES.items()]:
            if sentence is not None:
                assert len(sentence.split()) == n and max(map(len, sentence.split())) <= 12
                resize(page, SCREENS[0])
                type_tokens(page, sentence)
            for size in SCREENS:
                resize(page, size)
                check_lecture(page, size, n, f"typed{n}")
    finally:
        page.context.close()


def test_presenter_lecture_fits_the_presets_of_6_8_and_10_tokens(browser, app_server) -> None:
    size = (1024, 768)
    page = new_page(browser, size)
    try:
        for key in PRESET_KEYS:
            scenario = PRESETS[key].build()
            goto_page(page, app_server, f"playground?{scenario_io.LINK_PARAM}="
                                        f"{scenario_io.to_link_param(scenario)}")
            presenter_on(page)
            check_lecture(page, size, scenario.t, key)
    finally:
        page.context.close()


def test_outside_presenter_mode_no_lecture_number_is_below_10_px(browser, app_server) -> None:
    page = new_page(browser, (1366, 768))
    try:
        goto_page(page, app_server, "playground")
        charts = settle(page, 4)
        assert all(c["fonts"] for c in charts), "four tokens: every chart writes its numbers"
        for n, sentence in [(4, None), *SENTENCES.items()]:
            if sentence is not None:
                resize(page, (1366, 768))
                type_tokens(page, sentence)
            for size in [(1366, 768), (1024, 768)]:  # 1024: the sidebar leaves ~700 px
                resize(page, size)
                charts = settle(page, n)
                assert not small_numbers(charts, NORMAL_MIN_PX), (n, size,
                                                                  small_numbers(charts, 10))
        viewport_shot(page, "presenter_sizes_normal10_1024x768")
    finally:
        page.context.close()


# every page with heatmaps, by its title in the navigation, and the tabs to show on it
PAGES = {
    "Playground": (), "Step by step": (), "Masks": (), "Multi-head": (),
    "Positional encoding": (), "Encoder–decoder & additive": (),
    "KV cache & online softmax": (inference_text.KV_TAB, inference_text.ONLINE_TAB,
                                  inference_text.SINKS_TAB),
    "RoPE, ALiBi, GQA & QK-norm": (modern_text.ROPE_TAB, modern_text.ALIBI_TAB,
                                   modern_text.GQA_TAB, modern_text.NORM_TAB),
    "Trace a cell": (), "Compare": (), "Pitfalls": (), "Why √d_k": (), "Gradients": (),
    "Learn": (), "Induction heads": (), "Line view": (), "Your own attention": (),
    "Model view": (),
}


def open_from_nav(page: Page, title: str, presenter: bool) -> None:
    """Open a page through the sidebar's navigation in this session (presenter mode: open the
    collapsed sidebar first, and close it again)."""
    expand = page.get_by_test_id("stExpandSidebarButton")
    if presenter and expand.count() and expand.is_visible():
        expand.click()
    with expect_rerun(page):
        page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    collapse = page.get_by_test_id("stSidebarCollapseButton")
    if presenter and collapse.count():
        collapse.first.click(force=True)
        page.wait_for_function("() => !(document.querySelector('[data-testid=stSidebar]')"
                               "?.getBoundingClientRect().width)")


@pytest.mark.parametrize("size, presenter, least", [
    ((1024, 768), True, PRESENTER_MIN_PX), ((1366, 768), False, NORMAL_MIN_PX)],
    ids=["presenter-1024x768", "normal-1366x768"])
def test_no_page_draws_a_number_below_the_readable_size(browser, app_server, size, presenter,
                                                        least) -> None:
    page = new_page(browser, size)
    seen, small = {}, {}
    try:
        goto_page(page, app_server, "")
        if presenter:
            presenter_on(page)
        for title, tabs in PAGES.items():
            open_from_nav(page, title, presenter)
            views = [None, *tabs[1:]]  # the first tab is open when the page opens
            for tab in views:
                if tab is not None:
                    page.get_by_role("tab", name=tab, exact=True).click()
                charts = settle(page)
                name = title if tab is None else f"{title} / {tab}"
                seen[name] = sum(len(c["fonts"]) for c in charts)
                if small_numbers(charts, least):
                    small[name] = small_numbers(charts, least)
                assert_no_exception(page)
            if presenter:  # what a class sees on each page (the numbers are measured above)
                screenshot(page, f"presenter_sizes_page_{title.split()[0].strip(',')}")
        assert not small, small
        # the sweep saw numbers: most pages write some at these sizes
        assert sum(1 for v in seen.values() if v) >= len(seen) // 2, seen
    finally:
        page.context.close()
