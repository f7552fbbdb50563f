"""Real browser: presenter mode at classroom sizes, the lecture view (issue 28 item 1).

Measured in Chromium, as a class sees it:

- the Playground's lecture view in presenter mode with 4, 6, 8 and 10 tokens (typed sentences
  with words of up to 12 characters, and the presets of those lengths) at 1024×768, 1280×800,
  1366×768 and 1920×1080: the token box and the three charts (the weights' τ slider included)
  on one screen, their rows lined up, the weights' numbers written and every number in a cell
  at least 14 px, no axis label written into the next; at 1920×1080 the weights' cells at least
  45 % of the screen's height and their numbers at least 24 px. Outside presenter mode (1024
  and 1366 wide) no number below 10 px;
- every page with charts: test_presenter_pages.py.

The sizes are decided in the browser from the drawn cells (attnviz/ui/plotly_view.js); a chart
is measured once it says so (``data-sized``) at its column's width. Screenshots:
tests/artifacts/screenshots/presenter_sizes_*.
"""

from __future__ import annotations

from pathlib import Path

from helpers import (
    SCREENSHOTS,
    assert_no_exception,
    expect_rerun,
    goto_page,
    painted,
)
from playwright.sync_api import Page
from presenter_helpers import (
    NORMAL_MIN_PX,
    PRESENTER_MIN_PX,
    new_page,
    presenter_on,
    settle,
    small_numbers,
)

from attnviz.io import scenario_io
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import common
from attnviz.ui.lecture import slot_key

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


# each lecture chart's written axis labels: the column labels' centres, anchors (at their
# ticks), sizes and widths and whether they are turned, the row labels' top and bottom
LABELS = r"""() => [0, 1, 2].map(i => {
  const g = document.querySelector(`.st-key-playground_fig_weights_slot_${i} .js-plotly-plot`);
  const cols = [...g.querySelectorAll('.xtick text')].filter(t => t.textContent).map(t => {
    const r = t.getBoundingClientRect();
    const tick = /translate\(([-\d.e]+)/.exec(t.getAttribute('transform') || '');
    return {x: (r.left + r.right) / 2, w: r.width, at: tick ? parseFloat(tick[1]) : null,
            font: parseFloat(getComputedStyle(t).fontSize),
            turned: /rotate/.test(t.getAttribute('transform') || '')};
  }).sort((a, b) => a.x - b.x);
  const rows = [...g.querySelectorAll('.ytick text')].filter(t => t.textContent).map(t => {
    const r = t.getBoundingClientRect(); return [r.top, r.bottom]; }).sort((a, b) => a[0] - b[0]);
  return {cols, rows};
})"""


def labels_apart(page: Page, label: str) -> None:
    """No axis label of the lecture's charts written into the next: row labels one above the
    other; column labels side by side, or turned ones (45°) no larger than their distance
    across (ten turned labels over a 90-px chart had been written into each other)."""
    for i, chart in enumerate(page.evaluate(LABELS)):
        rows, cols = chart["rows"], chart["cols"]
        assert all(b[0] >= a[1] - 0.5 for a, b in zip(rows, rows[1:], strict=False)), (label, i)
        for a, b in zip(cols, cols[1:], strict=False):
            if a["turned"]:
                assert a["at"] is not None and b["at"] is not None, (label, i, a)
                assert (b["at"] - a["at"]) * 0.7071 >= a["font"] - 0.5, (label, i, a, b)
            else:
                assert b["x"] - b["w"] / 2 >= a["x"] + a["w"] / 2 - 0.5, (label, i, a, b)


def check_lecture(page: Page, size: tuple[int, int], n: int, label: str) -> None:
    """The presenter-mode checks of the lecture view with ``n`` tokens (see the module)."""
    charts = settle(page, n)
    shot = viewport_shot(page, f"presenter_sizes_{label}_{size[0]}x{size[1]}")
    assert_no_exception(page)
    lecture = [c for c in charts if "playground_fig_weights_slot_" in c["key"]]
    assert len(lecture) == 3, (label, [c["key"] for c in charts])
    tops = {round(c["cellsTop"]) for c in lecture}
    bottoms = {round(c["cellsBottom"]) for c in lecture}
    assert max(tops) - min(tops) <= 1 and max(bottoms) - min(bottoms) <= 1, (label, tops, bottoms)
    for c in lecture:
        assert c["bottom"] <= size[1] + 1, f"{label}: {c['key']} ends at {c['bottom']} ({shot})"
    tokens = page.get_by_role("textbox", name=common.TOKENS_LABEL).bounding_box()
    assert tokens is not None and tokens["y"] >= 0 and tokens["y"] + tokens["height"] <= size[1]
    weights = next(c for c in lecture if c["key"] == f"st-key-{slot_key(1)}")  # the middle one
    assert len(weights["fonts"]) == n * n, f"{label}: the weights' numbers are not all written"
    assert not small_numbers(lecture, PRESENTER_MIN_PX), (label, small_numbers(lecture, 14))
    labels_apart(page, f"{label} {size[0]}x{size[1]}")
    if size == WIDE:
        cells = weights["cellsBottom"] - weights["cellsTop"]
        assert cells >= WIDE_CELLS_SHARE * size[1], (label, cells)
        assert min(weights["fonts"]) >= WIDE_MIN_PX, (label, min(weights["fonts"]))


SCREENS = [(1024, 768), (1280, 800), (1366, 768), WIDE]


def resize(page: Page, size: tuple[int, int]) -> None:
    """Show the page on another screen size (the charts follow it in the browser: ``settle``
    waits until each is drawn at its new width and fitted to the new height)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    painted(page)  # laid out at the new size: the charts' size watchers have seen it


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
