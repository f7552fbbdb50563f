"""Browser: each guided lecture walked end to end with the keyboard at 1024×768 — → through
every step, ← once — in presenter mode; every step shows its page (the navigation's current
page and the address), the bar's "step n of N" and no exception. The → key does nothing while
the focus is in a text box or on a slider, and moves the lecture after a focus tab was clicked.

One test for the three lectures (one browser page, each lecture started from its link), so the
app's first load is paid once; its wall time is printed, not asserted (a timed test fails
under load; speed lives in benchmarks/).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from helpers import (
    REPO_ROOT,
    assert_no_exception,
    expect_rerun,
    focus_tab,
    track_reruns,
    wait_for_app_run,
)
from playwright.sync_api import Browser, Page

from attnviz.teach.lectures import LECTURES
from attnviz.teach.text import common
from attnviz.teach.text import lectures as text

VIEWPORT = {"width": 1024, "height": 768}
BAR = ".st-key-lecture_bar"


def page_titles() -> dict[str, str]:
    """app.py's pages: path -> the title the navigation shows."""
    tree = ast.parse((REPO_ROOT / "app.py").read_text(encoding="utf-8"))
    titles = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            title = next(k.value.value for k in node.keywords if k.arg == "title")
            titles[node.args[0].value] = title
    return titles


def current_page_title(page: Page) -> str:
    """The navigation's current page (its link carries aria-current="page")."""
    return page.locator("[data-testid='stSidebarNav'] a[aria-current='page']").inner_text()


def bar_place(page: Page) -> str:
    return page.locator(BAR).locator("strong").first.inner_text()


def on_step(page: Page, key: str, index: int) -> None:
    lecture = LECTURES[key]
    step = lecture.steps[index]
    assert_no_exception(page)
    assert bar_place(page) == text.BAR_TITLE.format(title=lecture.title, n=index + 1,
                                                    total=len(lecture.steps))
    assert current_page_title(page) == page_titles()[step.page], (key, index + 1)
    assert f"/{Path(step.page).stem}?" in page.url
    assert f"lecture={key}&step={index + 1}" in page.url
    presenter = page.get_by_role("switch", name=common.SIDEBAR_PRESENTER)
    assert presenter.is_checked(), "presenter mode is on during a lecture"


@pytest.fixture
def small_page(browser: Browser, app_server: str):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(60_000)
    page = context.new_page()
    track_reruns(page)
    yield page
    context.close()


def test_each_lecture_walked_with_the_keyboard(small_page: Page, app_server: str):
    page = small_page
    started = time.monotonic()
    for key, lecture in LECTURES.items():
        with expect_rerun(page):
            page.goto(f"{app_server}/?lecture={key}&step=1")
        for index in range(len(lecture.steps)):
            on_step(page, key, index)
            if index + 1 < len(lecture.steps):
                with expect_rerun(page):
                    page.keyboard.press("ArrowRight")
        with expect_rerun(page):
            page.keyboard.press("ArrowLeft")
        on_step(page, key, len(lecture.steps) - 2)
        print(f"{key}: {time.monotonic() - started:.1f} s")
    print(f"three lectures walked in {time.monotonic() - started:.1f} s")  # speed: benchmarks


def test_the_keys_leave_text_boxes_and_sliders_alone(small_page: Page, app_server: str):
    page = small_page
    with expect_rerun(page):
        page.goto(f"{app_server}/?lecture=scratch&step=6")  # Playground, τ = 0.3
    on_step(page, "scratch", 5)
    tokens = page.locator("[data-testid='stMain'] [data-testid='stTextInput'] input").first
    tokens.click()
    page.keyboard.press("ArrowRight")  # moves the caret, not the lecture
    page.locator("[data-testid='stMain']").get_by_role("slider").first.focus()
    with expect_rerun(page):
        page.keyboard.press("ArrowRight")  # moves τ (a rerun), not the lecture
    on_step(page, "scratch", 5)
    page.locator(BAR).click(position={"x": 5, "y": 5})  # the focus leaves the inputs
    with expect_rerun(page):
        page.keyboard.press("ArrowRight")
    on_step(page, "scratch", 6)
    wait_for_app_run(page)


def test_a_focus_tab_clicked_with_the_mouse_leaves_the_arrows_to_the_lecture(
        small_page: Page, app_server: str):
    """A lecturer clicks another focus tab, then → : the next step (the tab does not keep the
    keyboard, whose arrows would move along the tabs)."""
    page = small_page
    with expect_rerun(page):
        page.goto(f"{app_server}/?lecture=scratch&step=1")  # Playground, the Q K V focus
    on_step(page, "scratch", 0)
    with expect_rerun(page):
        focus_tab(page, "Weights").click()
    wait_for_app_run(page)
    assert focus_tab(page, "Weights").get_attribute("aria-selected") == "true"
    with expect_rerun(page):
        page.keyboard.press("ArrowRight")
    on_step(page, "scratch", 1)
    wait_for_app_run(page)


IN_VIEW = """(key) => {
  const bar = document.querySelector('.st-key-lecture_bar').getBoundingClientRect();
  const chart = document.querySelector(`.st-key-${key}`)?.getBoundingClientRect();
  return chart ? {barTop: bar.top, barBottom: bar.bottom, top: chart.top,
                  bottom: chart.bottom} : null;
}"""


def test_a_step_brings_its_chart_up_under_the_bar(small_page: Page, app_server: str):
    """At 1024×768 in presenter mode the Masks page's title, caption and controls filled the
    screen and the causal mask the talking point is about sat below it; the step names the
    chart, the browser scrolls it up under the bar, which stays in view."""
    page = small_page
    index = next(i for i, s in enumerate(LECTURES["scratch"].steps)
                 if s.page == "pages/masks.py")
    key = LECTURES["scratch"].steps[index].show
    assert key
    with expect_rerun(page):
        page.goto(f"{app_server}/?lecture=scratch&step={index + 1}")
    on_step(page, "scratch", index)
    brought_up = ("r && r.bottom > r.top && r.barBottom < r.top && r.top < innerHeight / 2"
                  " && r.barTop >= 0")
    try:
        page.wait_for_function(f"() => {{ const r = ({IN_VIEW})('{key}'); return {brought_up}; }}",
                               timeout=20_000)
    except Exception:  # say where it is
        raise AssertionError(page.evaluate(IN_VIEW, key)) from None
