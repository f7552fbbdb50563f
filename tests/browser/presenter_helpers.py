"""What the presenter-size tests measure in the browser: the drawn charts' cell numbers and
plot areas once every chart has settled (tests/browser/test_presenter_sizes.py, the lecture
view; test_presenter_pages.py, every page)."""

from __future__ import annotations

from helpers import TIMEOUT_MS, expect_rerun, track_reruns, wait_for_app_run, wait_for_charts
from playwright.sync_api import Browser, Page

from attnviz.teach.text import common

PRESENTER_MIN_PX = 14
NORMAL_MIN_PX = 10

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
# the lecture's first three visible charts show `rows` rows
ROWS = """(rows) => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].filter(p => {
    const r = p.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
  return g.length >= 3 && g.slice(0, 3).every(p => p._fullData?.[0]?.z?.length === rows);
}"""


def settle(page: Page, rows: int | None = None) -> list[dict]:
    """Wait until every visible chart has its final drawing (``helpers.wait_for_charts``: drawn,
    sized, at its width and fitted where it stands; the lecture's three with ``rows`` rows),
    then measure the visible ones."""
    if rows is not None:
        wait_for_app_run(page)
        page.wait_for_function(ROWS, arg=rows)
    wait_for_charts(page)
    return [c for c in page.evaluate(CHARTS) if c["visible"]]


def new_page(browser: Browser, size: tuple[int, int]) -> Page:
    """A new session's page (a context of its own) with this window size."""
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


def small_numbers(charts: list[dict], least: float) -> list[tuple[str, float]]:
    """The charts with a number in a cell drawn below ``least`` px: (key, smallest px)."""
    return [(c["key"], min(c["fonts"])) for c in charts if c["fonts"] and min(c["fonts"]) < least]
