"""Real browser: presenter mode's axis labels grow with the screen (at least 18 px on
a 1920×1080 projector, 16 px at 1024×768 where the cells need the room), also when the window
is resized under a drawn chart (attnviz/ui/plotly_present.js presenterTickPx)."""

from __future__ import annotations

from helpers import goto_page
from presenter_helpers import new_page, presenter_on, settle

# the tick labels' sizes (px) of every drawn chart
TICKS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(g => g.getBoundingClientRect().width > 0)
  .map(g => [...g.querySelectorAll('.xtick text, .ytick text')]
    .map(t => parseFloat(getComputedStyle(t).fontSize)))"""


def tick_sizes(page) -> set[float]:
    settle(page)
    return {px for chart in page.evaluate(TICKS) for px in chart}


def test_presenter_tick_labels_follow_the_windows_width(browser, app_server) -> None:
    page = new_page(browser, (1024, 768))
    try:
        goto_page(page, app_server, "masks")
        presenter_on(page)
        assert tick_sizes(page) == {16}
        page.set_viewport_size({"width": 1920, "height": 1080})
        assert tick_sizes(page) == {18}
        page.set_viewport_size({"width": 1024, "height": 768})
        assert tick_sizes(page) == {16}
    finally:
        page.context.close()
