"""Colours that teach, in the browser at 1366×768: ALiBi's four heads drawn on one range look as
different as their slopes; Multi-head opens with several heads on shared ranges; the projector
toggle redraws the charts in its scales. Screenshots: tests/artifacts/screenshots/colours_*.png.
"""

from __future__ import annotations

import io

import numpy as np
from helpers import (
    assert_no_exception,
    expect_rerun,
    goto_page,
    screenshot,
    wait_for_charts,
    wait_for_plots,
)
from PIL import Image
from playwright.sync_api import Page

from attnviz.figures.colours import PROJECTOR, colour_scale
from attnviz.teach.text import common
from attnviz.teach.text import modern as text


def drawn(page: Page, key: str) -> dict:
    """The drawn range and z of the chart with ``key=`` (its first trace)."""
    return page.evaluate(
        """key => {
            const g = document.querySelector(`.st-key-${key} .js-plotly-plot`);
            if (!g || !g._fullData) return null;
            const t = g._fullData[0];
            return {zmin: t.zmin, zmax: t.zmax, colorscale: t.colorscale,
                    z: Array.from(t.z, r => Array.from(r, v => v ?? NaN))};
        }""", key)


def blue_share(page: Page, key: str) -> float:
    """The share of the plot area's pixels that are clearly blue (the scale's negative side)."""
    area = page.locator(f".st-key-{key} .js-plotly-plot .nsewdrag").first
    area.scroll_into_view_if_needed()
    png = area.screenshot()  # what is drawn under the plot area's drag rectangle
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)
    r, b = rgb[..., 0], rgb[..., 2]
    return float(((b - r) > 60).mean())


def alibi_heads_share_one_range_and_look_different(page) -> None:
    page.get_by_role("tab", name=text.ALIBI_TAB).click()
    keys = [f"modern_fig_alibi_{h}" for h in range(4)]
    for key in keys:
        page.locator(f".st-key-{key} .js-plotly-plot").wait_for()
    wait_for_charts(page, 4)  # charts in a tab just opened redraw at their column's width
    ranges = [drawn(page, k) for k in keys]
    assert len({(r["zmin"], r["zmax"]) for r in ranges}) == 1
    assert ranges[0]["zmin"] == -ranges[0]["zmax"] < 0
    shares = [blue_share(page, k) for k in keys]
    screenshot(page, "colours_alibi_1366x768")
    # head 0 (steepest slope) has clearly blue cells, head 3 (gentlest) almost none
    assert shares[0] > 0.1 and shares[3] < 0.5 * shares[0], shares
    assert_no_exception(page)


def multi_head_opens_with_heads_on_shared_ranges(page) -> None:
    wait_for_plots(page, 6)
    outs = [drawn(page, f"multi_head_fig_out_{h}") for h in range(3)]
    assert None not in outs
    assert len({(o["zmin"], o["zmax"]) for o in outs}) == 1
    assert outs[0]["zmin"] == -outs[0]["zmax"] < 0  # centred at 0 (white)
    weights = [drawn(page, f"multi_head_fig_head_{h}") for h in range(3)]
    assert {(w["zmin"], w["zmax"]) for w in weights} == {(0, 1)}
    assert np.abs(np.array(weights[0]["z"]) - np.array(weights[1]["z"])).max() > 0.2
    assert page.locator(".st-key-multi_head_fig_head_3").count() == 0  # seed 000: 3 heads
    screenshot(page, "colours_multi_head_1366x768")
    assert_no_exception(page)


def the_projector_toggle_redraws_in_its_scales(page) -> None:
    wait_for_plots(page, 6)
    with expect_rerun(page):
        page.get_by_text(common.SIDEBAR_PROJECTOR, exact=True).click()
    wait_for_charts(page, 6)
    weights = drawn(page, "multi_head_fig_head_0")
    want = colour_scale(PROJECTOR.weights)
    assert [[float(s), str(c)] for s, c in weights["colorscale"]] == \
        [[float(s), str(c)] for s, c in want]
    screenshot(page, "colours_multi_head_projector_1366x768")
    with expect_rerun(page):  # off again: the next step's colours are the screen's
        page.get_by_text(common.SIDEBAR_PROJECTOR, exact=True).click()
    assert_no_exception(page)


def test_multi_head_opens_on_shared_ranges_the_projector_redraws_and_alibi_heads_differ(
        app_server, page):
    """One session: Multi-head as it opens, the projector's colours on and off again, then
    (by the sidebar) the ALiBi heads of RoPE, ALiBi, GQA & QK-norm."""
    goto_page(page, app_server, "multi_head")
    multi_head_opens_with_heads_on_shared_ranges(page)
    the_projector_toggle_redraws_in_its_scales(page)
    with expect_rerun(page):
        page.get_by_test_id("stSidebarNav").get_by_role(
            "link", name="RoPE, ALiBi, GQA & QK-norm").click()
    alibi_heads_share_one_range_and_look_different(page)
