"""Real browser: where a lecturer clicks (issue 28 item 7). Gradients' loss select redraws only
what it changed and what is on screen: the forward matrices it does not change keep their
drawing, a gradient far below the screen keeps its last drawing (marked stale) until it is
scrolled into view, then shows the new loss's numbers."""

from __future__ import annotations

import numpy as np
from helpers import (
    assert_no_exception,
    chart_z,
    expect_rerun,
    goto_page,
    wait_for_app_run,
    wait_for_charts,
    wait_for_plots,
)
from playwright.sync_api import Page
from presenter_helpers import new_page

from attnviz.scenarios.gradients import Loss, gradients
from attnviz.scenarios.presets import default_scenario
from attnviz.teach.text import gradients as text

ON_SCREEN = ("gradients_output_fwd", "gradients_output_grad")  # just under the loss select
BELOW = "gradients_q_grad"  # dQ: several screens further down at 1366×768


def _chart(key: str) -> str:
    return f".st-key-{key} .js-plotly-plot"


def _mark(page: Page, key: str) -> None:
    """Remember the chart's current drawing (Plotly makes a new _fullData on every redraw)."""
    page.evaluate("s => { const g = document.querySelector(s); g.__testSeen = g._fullData; }",
                  _chart(key))


def _redrawn(page: Page, key: str) -> bool:
    return page.evaluate("s => { const g = document.querySelector(s); "
                         "return g._fullData !== g.__testSeen; }", _chart(key))


def _stale(page: Page, key: str) -> bool:
    return page.evaluate("s => document.querySelector(s).closest('.attnviz-chart')"
                         ".dataset.stale === '1'", _chart(key))


def _pick_loss(page: Page, kind: str) -> None:
    box = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").filter(
        has_text=text.LOSS_LABEL).first
    box.click()
    with expect_rerun(page):
        page.get_by_role("option", name=text.LOSS_NAMES[kind], exact=True).click()
    wait_for_app_run(page)


def _settled(page: Page, key: str) -> None:
    """Until the chart has its final drawing, and so has every other chart on the page (a
    redraw, were there one, would be under way: its chart not marked drawn)."""
    page.wait_for_function("s => document.querySelector(s)?.dataset.sized === '1'",
                           arg=f".st-key-{key} .attnviz-chart")
    wait_for_charts(page)


def test_a_loss_select_redraws_what_changed_on_screen_and_the_rest_once_seen(browser,
                                                                             app_server):
    page = new_page(browser, (1366, 768))
    context = page.context
    try:
        goto_page(page, app_server, "gradients")
        wait_for_plots(page, 10)
        assert_no_exception(page)
        sc = default_scenario()
        # the first drawing is never put off: dQ is drawn at once, far below the screen
        below = page.locator(f".st-key-{BELOW}").bounding_box()
        assert below["y"] > 2 * 768, "dQ is expected far below the screen at 1366×768"
        before_q = chart_z(page, BELOW)
        for key in (*ON_SCREEN, BELOW):
            _mark(page, key)

        # the pattern loss: its pattern box replaces the MSE's target grid above the charts
        _pick_loss(page, "pattern_ce")
        _settled(page, ON_SCREEN[1])
        assert_no_exception(page)
        assert _redrawn(page, ON_SCREEN[1])
        assert not _redrawn(page, ON_SCREEN[0]), "a chart the loss does not change was redrawn"
        assert _stale(page, BELOW) and not _redrawn(page, BELOW)

        _pick_loss(page, "given")  # dO = the target: ones
        _settled(page, ON_SCREEN[1])
        assert_no_exception(page)
        g = gradients(sc, Loss("given", np.ones_like(chart_z(page, ON_SCREEN[0]))))
        # on screen: the gradient drawn with the new loss's numbers, the forward matrix not
        # drawn again; far below: the first drawing still, marked stale, until it is seen
        np.testing.assert_allclose(chart_z(page, ON_SCREEN[1]), g.attention.d_output, rtol=1e-12)
        assert not _redrawn(page, ON_SCREEN[0]), "a chart the loss does not change was redrawn"
        assert _stale(page, BELOW) and not _redrawn(page, BELOW)
        np.testing.assert_allclose(chart_z(page, BELOW), before_q, rtol=1e-12)
        assert not np.allclose(before_q, g.attention.d_q[0]), "the loss must change dQ"

        page.locator(f".st-key-{BELOW}").scroll_into_view_if_needed()
        page.wait_for_function(
            "s => { const d = document.querySelector(s); "
            "return d && d.dataset.stale !== '1' && d.dataset.sized === '1'; }",
            arg=f".st-key-{BELOW} .attnviz-chart")
        assert _redrawn(page, BELOW)
        np.testing.assert_allclose(chart_z(page, BELOW), g.attention.d_q[0], rtol=1e-12)
        assert_no_exception(page)
    finally:
        context.close()
