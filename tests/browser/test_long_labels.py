"""Real browser: long or odd token labels never squash the lecture view's heatmaps (issue 26,
item 3).

Four tokens at 1400×1000 (and 1024×768): the three Playground charts' plot areas were 79 px
high with the default labels, 33 px with 16-character words and 2 px with labels holding
``<``, ``>`` or ``&`` (the margin was sized from the escaped text, ``&lt;`` four characters).
Measured here: each chart's plot area (Plotly's ``.nsewdrag``) must be at least as high as
with the default labels and as wide (the first chart, which draws the cut row labels, at least
85 % as wide: at 1024×768 its cells had also been squeezed to 9 px by 16-character labels), and
the three charts' rows still line up. Screenshots:
tests/artifacts/screenshots/long_labels_*.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import (
    TIMEOUT_MS,
    assert_no_exception,
    goto_page,
    painted,
    screenshot,
    track_reruns,
    wait_for_charts,
)

from attnviz import position_labels
from attnviz.figures.heatmap import tick_text
from attnviz.io import scenario_io
from attnviz.scenarios.presets import PRESETS
from attnviz.ui.lecture import LECTURE_TICK_CHARS

LABELS = {
    "default": None,  # the preset's own words
    "words16": ["internationalise", "representations", "characteristics", "responsibilities"],
    "markup": ["<a&b>", "x<y>&z", "<b>bold</b>", "&amp;&lt;"],
    "mixed": ["日本語のことばです", "👩‍👩‍👧‍👦family", "مرحبا_بالعالم", "ab\u0301cdé"],
}
SCREENS = [(1400, 1000), (1024, 768)]
# the column labels the weights chart writes
TICKS = """() => document.querySelector("[class*='st-key-playground_fig_weights_slot_1']"
    + " .js-plotly-plot")._fullLayout.xaxis.ticktext"""
# the plot area of each lecture chart (Plotly's drag rectangle over the cells)
PLOT_HEIGHTS = """() => [...document.querySelectorAll(
    "[class*='st-key-playground_fig_weights_slot_'] .js-plotly-plot")]
  .map(g => { const r = g.querySelector('.nsewdrag').getBoundingClientRect();
              return [Math.round(r.top), Math.round(r.bottom), Math.round(r.width)]; })"""


def lecture_with(context, app_server: str, tokens):
    """A new page (a new session) on the Playground's lecture view (the weights focus) of the
    Four words preset with these token words (None: its own)."""
    scenario = PRESETS["seed_000"].build()
    if tokens is not None:
        scenario = replace(scenario, tokens=list(tokens))
    page = context.new_page()
    track_reruns(page)
    goto_page(page, app_server,
              f"playground?{scenario_io.LINK_PARAM}={scenario_io.to_link_param(scenario)}")
    wait_for_charts(page, 3)  # drawn and settled at their column's width
    return page


def plot_areas(page) -> list[tuple[int, int]]:
    areas = page.evaluate(PLOT_HEIGHTS)
    assert len(areas) == 3, areas
    return areas


@pytest.fixture(scope="module")
def measured(browser, app_server) -> dict:
    """{(size, labels): [(top, bottom, width) of each chart's plot area]}, a session for each
    labels, shown on each screen size in turn (the layout the server sends does not depend on
    the screen; the browser fits the charts to it)."""
    out = {}
    first = SCREENS[0]
    context = browser.new_context(viewport={"width": first[0], "height": first[1]})
    context.set_default_timeout(TIMEOUT_MS)  # one context: plotly.js is fetched once
    try:
        for name, tokens in LABELS.items():
            page = lecture_with(context, app_server, tokens)
            assert_no_exception(page)
            if tokens is not None:  # the link was opened: the charts show these labels
                assert page.evaluate(TICKS) == [tick_text(t, LECTURE_TICK_CHARS)
                                                for t in position_labels(tokens)], name
            for size in SCREENS:
                if size != first:
                    page.set_viewport_size({"width": size[0], "height": size[1]})
                    painted(page)  # laid out at the new size: the charts' watchers saw it
                    wait_for_charts(page, 3)  # redrawn and settled at their new width
                out[size, name] = plot_areas(page)
                screenshot(page, f"long_labels_{name}_{size[0]}x{size[1]}")
            page.close()
    finally:
        context.close()
    return out


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", [n for n in LABELS if n != "default"])
def test_labels_never_shrink_the_cells(measured, size, name):
    default = [(bottom - top, width) for top, bottom, width in measured[size, "default"]]
    cells = [(bottom - top, width) for top, bottom, width in measured[size, name]]
    assert min(h for h, _ in default) >= 60, default  # the lecture view's own cells, as drawn
    assert all(h >= dh - 1 for (h, _), (dh, _) in zip(cells, default, strict=True)), (
        cells, default)
    # widths: the second and third charts' as with the default labels; the first one's row
    # labels, cut, take one character width more than 8-character labels (the "…")
    assert all(w >= dw - 2 for (_, w), (_, dw) in zip(cells[1:], default[1:], strict=True)), (
        cells, default)
    assert cells[0][1] >= 0.85 * default[0][1], (cells, default)


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", list(LABELS))
def test_the_rows_still_line_up(measured, size, name):
    tops = [top for top, _, _ in measured[size, name]]
    bottoms = [bottom for _, bottom, _ in measured[size, name]]
    assert max(tops) - min(tops) <= 1 and max(bottoms) - min(bottoms) <= 1, measured[size, name]
