"""Real browser: the Model view opens on the example, a click on a thumbnail opens its head.

Screenshots (tests/artifacts/screenshots/):
- model_view_1366.png — the example (2 layers × 4 heads, 6 tokens) at 1366×768 after clicking
  layer 1, head 2: the grid with that thumbnail outlined in orange, the head's lines and heatmap
  below, the fused heads and the rollout;
- model_view_1024.png — the same at 1024×768.
"""

from __future__ import annotations

from helpers import (
    assert_no_exception,
    expect_rerun,
    goto_page,
    screenshot,
    wait_for_charts,
    wait_for_hover,
    wait_for_plots,
)
from playwright.sync_api import Page

from attnviz.teach.text import model_view as text

TIMEOUT = 90_000  # the first Plotly bundle load is slow on a busy 2-core machine

GRID_INFO = """() => {
    const charts = Array.from(document.querySelectorAll('.js-plotly-plot'));
    const index = charts.findIndex(g => g._fullData && g._fullData.length &&
                                        g._fullData[g._fullData.length - 1].name === 'tiles');
    if (index < 0) return null;
    const g = charts[index], picker = g._fullData[g._fullData.length - 1];
    const L = g._fullLayout, r = g.getBoundingClientRect();
    const xy = Array.from(picker.x, (x, k) => [r.left + L._size.l + L.xaxis.d2p(x),
                                             r.top + L._size.t + L.yaxis.d2p(picker.y[k])]);
    return {index, xy, ticks: [L.yaxis.ticktext.length, L.xaxis.ticktext.length],
            selected: g._fullData.filter(t => t.line && t.line.color === '#ff7f0e')
                        .map(t => Array.from(t.x))};
}"""


def test_the_example_grid_opens_a_head_on_click(app_server: str, page: Page) -> None:
    page.set_default_timeout(TIMEOUT)
    goto_page(page, app_server, "model_view")
    wait_for_plots(page, 6, timeout=TIMEOUT)
    assert_no_exception(page)
    page.locator(".st-key-model_view_fig_grid").scroll_into_view_if_needed()
    grid = page.evaluate(GRID_INFO)
    assert grid is not None and grid["ticks"] == [2, 4] and len(grid["xy"]) == 8
    x, y = grid["xy"][6]  # layer 1, head 2
    page.mouse.move(x, y)
    wait_for_hover(page, (x, y))  # Plotly turns the hover into the click
    tooltip = page.locator(".st-key-model_view_fig_grid .hoverlayer").text_content()
    assert "layer 1 · head 2" in tooltip and "strongest" in tooltip
    with expect_rerun(page):
        page.mouse.click(x, y)
    wait_for_plots(page, 6, timeout=TIMEOUT)
    assert_no_exception(page)
    heading = text.OPENED_TITLE.format(layer=1, h=2)
    assert page.get_by_role("heading", name=heading).count() == 1
    assert page.get_by_role("combobox", name=text.OPEN_LAYER_LABEL).input_value() == "1"
    assert page.get_by_role("combobox", name=text.OPEN_HEAD_LABEL).input_value() == "2"
    after = page.evaluate(GRID_INFO)
    assert after["selected"], "the opened thumbnail is outlined"
    screenshot(page, "model_view_1366")
    page.set_viewport_size({"width": 1024, "height": 768})
    wait_for_charts(page, 6)  # the charts follow the column's width
    assert_no_exception(page)
    screenshot(page, "model_view_1024")
    page.set_viewport_size({"width": 1366, "height": 768})
