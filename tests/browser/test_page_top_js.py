"""attnviz/ui/page_top.js on its own: a page entered from the sidebar is held at its top for
2 s against a scroll position kept from the page before, until the user takes over. Loaded into
a stand-in page (a sidebar and a scrolled main area, no server) whose clock the test drives, so
the hold's 100-ms ticks and its 2 s run when the test says, not in real time."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

PAGE_TOP_JS = Path(__file__).resolve().parents[2] / "attnviz" / "ui" / "page_top.js"
ORIGIN = "http://attnviz.test"
STAND_IN = """<!doctype html><html><body style="margin:0; display:flex">
<section data-testid="stSidebar" style="width:200px; height:400px">
  <a id="link" href="#">Masks</a></section>
<section data-testid="stMain" id="main" style="width:600px; height:400px; overflow:auto">
  <div style="height:4000px"><button id="control">sliding window</button></div></section>
</body></html>"""


@pytest.fixture
def held(browser: Browser) -> Page:
    """The stand-in page with page_top.js running under a clock the test drives."""
    page = browser.new_page()
    page.clock.install()
    page.route(f"{ORIGIN}/**", lambda route: route.fulfill(content_type="text/html",
                                                            body=STAND_IN))
    page.goto(f"{ORIGIN}/gradients")
    page.evaluate("""async src => (await import(
        'data:text/javascript,' + encodeURIComponent(src))).default()""",
                  PAGE_TOP_JS.read_text(encoding="utf-8"))
    yield page
    page.close()


def enter_masks_scrolled(page: Page) -> None:
    """The address changes to another page whose main area kept a scroll position."""
    page.evaluate("""() => { history.pushState({}, '', '/masks');
                             document.getElementById('main').scrollTop = 800; }""")
    page.clock.run_for(300)


def scroll_main(page: Page, top: int) -> None:
    page.evaluate("top => { document.getElementById('main').scrollTop = top; }", top)


def scroll_top(page: Page) -> float:
    return page.evaluate("() => document.getElementById('main').scrollTop")


def press(page: Page, selector: str) -> None:
    """A mouse press and release on ``selector``'s middle (real input events)."""
    box = page.locator(selector).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.up()


def test_a_page_entered_starts_at_its_top_and_is_held_there(held):
    enter_masks_scrolled(held)
    assert scroll_top(held) == 0
    scroll_main(held, 800)  # the kept position comes back while the page is drawn
    held.clock.run_for(300)
    assert scroll_top(held) == 0


def test_a_press_in_the_new_page_ends_the_hold(held):
    """A click on one of the page's controls (or its scroll bar dragged): a scroll that follows
    stays, by the bar or brought by the page to where the user works."""
    enter_masks_scrolled(held)
    press(held, "#control")
    scroll_main(held, 800)
    held.clock.run_for(3000)  # past the hold's 2 s
    assert scroll_top(held) == 800


def test_a_press_outside_the_page_keeps_the_hold(held):
    """Presenter mode closes the sidebar after the link's click: the page is still held."""
    enter_masks_scrolled(held)
    press(held, "#link")
    scroll_main(held, 800)
    held.clock.run_for(300)
    assert scroll_top(held) == 0


def test_the_wheel_ends_the_hold(held):
    """As a person scrolls (tests/browser/helpers.py wheel_into_view relies on it)."""
    enter_masks_scrolled(held)
    held.evaluate("() => window.addEventListener('wheel', () => { window.wheeled = true; })")
    box = held.locator("#main").bounding_box()
    held.mouse.move(box["x"] + 100, box["y"] + 100)
    held.mouse.wheel(0, 800)
    held.wait_for_function("() => window.wheeled === true", polling=50)  # the wheel arrived
    scroll_main(held, 800)
    held.clock.run_for(3000)
    assert scroll_top(held) == 800
