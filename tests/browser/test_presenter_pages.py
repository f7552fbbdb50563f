"""Real browser: presenter mode on every page (issue 28 item 1): every page with charts (each
tab shown) in presenter mode at 1024×768 and outside it at 1366×768 draws no number in a cell
below 14 px / 10 px (where a cell is too small none is written; the hover gives it).
The lecture view at each screen size and token count: test_presenter_sizes.py (this walk was
part of it; a file of its own so that two processes share the two files' work). Screenshots:
tests/artifacts/screenshots/presenter_sizes_page_*.
"""

from __future__ import annotations

import pytest
from helpers import assert_no_exception, expect_rerun, goto_page, screenshot
from playwright.sync_api import Page
from presenter_helpers import (
    NORMAL_MIN_PX,
    PRESENTER_MIN_PX,
    new_page,
    presenter_on,
    settle,
    small_numbers,
)

from attnviz.teach.text import inference as inference_text
from attnviz.teach.text import modern as modern_text

# every page with heatmaps, by its title in the navigation, and the tabs to show on it
PAGES = {
    "Playground": (), "Step by step": (), "Masks": (), "Multi-head": (),
    "Positional encoding": (), "Encoder–decoder & additive": (),
    "KV cache & online softmax": (inference_text.KV_TAB, inference_text.ONLINE_TAB,
                                  inference_text.SINKS_TAB),
    "RoPE, ALiBi, GQA & QK-norm": (modern_text.ROPE_TAB, modern_text.ALIBI_TAB,
                                   modern_text.GQA_TAB, modern_text.NORM_TAB),
    "Trace a cell": (), "Compare": (), "Pitfalls": (), "Why √d_k": (), "Gradients": (),
    "Learn": (), "Induction heads": (), "Line view": (), "Your own attention": (),
    "Model view": (),
}


def open_from_nav(page: Page, title: str, presenter: bool) -> None:
    """Open a page through the sidebar's navigation in this session (presenter mode: open the
    collapsed sidebar first, and close it again)."""
    expand = page.get_by_test_id("stExpandSidebarButton")
    if presenter and expand.count() and expand.is_visible():
        expand.click()
    with expect_rerun(page):
        page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    collapse = page.get_by_test_id("stSidebarCollapseButton")
    if presenter and collapse.count():
        collapse.first.click(force=True)
        page.wait_for_function("() => !(document.querySelector('[data-testid=stSidebar]')"
                               "?.getBoundingClientRect().width)")


@pytest.mark.parametrize("size, presenter, least", [
    ((1024, 768), True, PRESENTER_MIN_PX), ((1366, 768), False, NORMAL_MIN_PX)],
    ids=["presenter-1024x768", "normal-1366x768"])
def test_no_page_draws_a_number_below_the_readable_size(browser, app_server, size, presenter,
                                                        least) -> None:
    page = new_page(browser, size)
    seen, small = {}, {}
    try:
        goto_page(page, app_server, "")
        if presenter:
            presenter_on(page)
        for title, tabs in PAGES.items():
            open_from_nav(page, title, presenter)
            views = [None, *tabs[1:]]  # the first tab is open when the page opens
            for tab in views:
                if tab is not None:
                    page.get_by_role("tab", name=tab, exact=True).click()
                charts = settle(page)
                name = title if tab is None else f"{title} / {tab}"
                # every page opens with its charts drawn (the default scenario)
                assert charts or tab is not None, f"no chart drawn on {title}"
                seen[name] = sum(len(c["fonts"]) for c in charts)
                if small_numbers(charts, least):
                    small[name] = small_numbers(charts, least)
                assert_no_exception(page)
            if presenter:  # what a class sees on each page (the numbers are measured above)
                screenshot(page, f"presenter_sizes_page_{title.split()[0].strip(',')}")
        assert not small, small
        # the sweep saw numbers: most pages write some at these sizes
        assert sum(1 for v in seen.values() if v) >= len(seen) // 2, seen
    finally:
        page.context.close()
