"""Presenter mode moves between pages without the sidebar, in a real browser
(attnviz/ui/page_nav.py, page_keys.js): the links sit in Streamlit's top bar, take no room from
the page, and PageDown / PageUp (a presentation clicker's keys) follow them; a key pressed in a
text box stays the box's."""

from __future__ import annotations

from helpers import goto_page, screenshot, wait_for_app_run
from playwright.sync_api import Browser
from presenter_helpers import new_page, presenter_on

from attnviz.teach.text import common

ON_TOP = """(sel) => { const a = document.querySelector(sel); const r = a.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return r.width > 0 && r.height > 0 && !!hit && a.contains(hit); }"""
NAV_BOX = """() => { const b = document.querySelector('.st-key-page_nav');
  if (!b) return null; const r = b.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
          position: getComputedStyle(b).position}; }"""


def test_page_down_and_up_move_between_pages_in_presenter_mode(browser: Browser,
                                                                app_server: str) -> None:
    page = new_page(browser, (1024, 768))
    try:
        goto_page(page, app_server, "masks")
        presenter_on(page)
        wait_for_app_run(page)
        page.locator(".st-key-page_nav_next a").first.wait_for()
        box = page.evaluate(NAV_BOX)
        # in the top bar, out of the page's flow: no room taken from the charts below
        assert box["position"] == "fixed" and box["bottom"] <= 60 and box["right"] <= 1024
        assert page.locator(".st-key-page_nav_next").inner_text().strip() == \
            common.PAGE_NEXT.format(title="Multi-head")
        # drawn on top: the point at each link's centre is the link (not Streamlit's header)
        assert page.evaluate(ON_TOP, ".st-key-page_nav_next a")
        assert page.evaluate(ON_TOP, ".st-key-page_nav_back a")
        screenshot(page, "page_nav_masks_1024")
        page.locator("[data-testid=stMain]").click(position={"x": 5, "y": 300})
        page.keyboard.press("PageDown")
        page.wait_for_function("() => location.pathname.endsWith('/multi_head')")
        wait_for_app_run(page)
        page.locator(".st-key-page_nav_back a").first.wait_for()
        assert page.locator(".st-key-page_nav_back").inner_text().strip() == \
            common.PAGE_BACK.format(title="Masks")
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.pathname.endsWith('/masks')")
        wait_for_app_run(page)
        # a PageDown typed in a text box is the box's: the page stays (the Playground's tokens)
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.pathname.endsWith('/step_by_step')")
        # the next key follows Step by step's own link, not Masks' one still drawn while the
        # new page's script runs
        wait_for_app_run(page)
        page.wait_for_function("() => document.querySelector('.st-key-page_nav_back a[href]')"
                               "?.getAttribute('href').endsWith('playground')")
        page.keyboard.press("PageUp")
        page.wait_for_function("() => location.pathname.endsWith('/playground')")
        wait_for_app_run(page)
        tokens = page.locator(".st-key-playground_tokens input")
        tokens.focus()
        page.keyboard.press("PageDown")
        wait_for_app_run(page)
        assert page.evaluate("() => location.pathname").endswith("/playground")
        # the sidebar stays closed throughout
        assert not page.evaluate("() => document.querySelector('[data-testid=stSidebar]')"
                                 "?.getBoundingClientRect().width")
    finally:
        page.context.close()
