"""Presenter mode's CSS still finds Streamlit's elements (their ``data-testid`` names are no
public API): every selector :func:`attnviz.ui.presenter.streamlit_selectors` lists must match an
element of the app in presenter mode, on the pages that show each kind of element, and the CSS
must take effect (the main area's type and the Quiz's score grow).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import assert_no_exception, expect_rerun, goto_page, track_reruns, wait_for_app_run
from playwright.sync_api import BrowserContext, Page

from attnviz.teach.text import common
from attnviz.teach.text import quiz as quiz_text
from attnviz.ui import presenter

# pages that together show every kind of element the CSS styles (the Quiz after "Reveal": the
# score's st.metric; Masks: st.text)
PAGES = ("playground", "masks", "quiz")
COUNT = "sel => document.querySelectorAll(sel).length"
FONT_PX = "sel => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize)"


def presenter_on(page: Page) -> None:
    """Switch presenter mode on in the sidebar (shown while it is off) and wait for the rerun."""
    with expect_rerun(page):
        page.get_by_test_id("stSidebar").get_by_text(common.SIDEBAR_PRESENTER).click()
    page.wait_for_function(  # the sidebar collapses in presenter mode
        "() => !(document.querySelector('[data-testid=stSidebar]')"
        "?.getBoundingClientRect().width)")


@pytest.fixture(scope="module")
def matches(app_server: str, presenter_page: Page) -> dict[str, int]:
    """How many elements each selector matched, summed over :data:`PAGES` in presenter mode."""
    page = presenter_page
    selectors = presenter.streamlit_selectors()
    found = dict.fromkeys(selectors, 0)
    for url_path in PAGES:
        goto_page(page, app_server, url_path)
        presenter_on(page)
        if url_path == "quiz":
            with expect_rerun(page):
                page.get_by_role("button", name=quiz_text.REVEAL, exact=True).click()
            # 3rem: the CSS applies
            assert page.evaluate(FONT_PX, '[data-testid="stMetricValue"]') == pytest.approx(48.0)
        wait_for_app_run(page)
        assert_no_exception(page)
        main = '[data-testid="stMain"]'
        assert page.evaluate(FONT_PX, main) == pytest.approx(20.8)  # 1.3rem: the CSS applies
        for sel in selectors:
            found[sel] += page.evaluate(COUNT, sel)
    return found


@pytest.fixture(scope="module")
def presenter_page(context: BrowserContext) -> Iterator[Page]:
    """One page for this module's checks (its session ends with the module)."""
    page = context.new_page()
    track_reruns(page)
    yield page
    page.close()


def test_the_list_covers_the_rules():
    selectors = presenter.streamlit_selectors()
    assert '[data-testid="stMain"]' in selectors and len(selectors) == len(set(selectors))
    for css in (presenter.PRESENTER_CSS, presenter.COMPACT_CSS, presenter.COMPACT_PRESENTER_CSS):
        assert "data-testid" in css
        assert css.count("[data-") == sum(css.count(sel) for sel in selectors)


@pytest.mark.parametrize("selector", presenter.streamlit_selectors())
def test_every_selector_matches_an_element_in_presenter_mode(matches: dict[str, int],
                                                              selector: str):
    assert matches[selector] > 0, f"{selector} matches no element: Streamlit renamed it?"
