"""Real browser: the scenario stays in the address bar, so a reload (a new session) keeps it,
and a page switch keeps the link in the URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from helpers import assert_no_exception, expect_rerun, goto_page, load_preset, wait_for_plots

from attnviz import PRESETS
from attnviz.io import scenario_io


def sidebar_text(page) -> str:
    return page.get_by_test_id("stSidebar").inner_text()


def test_a_reload_keeps_the_loaded_scenario(app_server, page):
    goto_page(page, app_server, "playground")
    title = PRESETS["cat_sat"].title
    load_preset(page, title)
    page.wait_for_function(  # the address bar now carries the scenario
        "p => new URL(location.href).searchParams.has(p)", arg=scenario_io.LINK_PARAM)
    param = parse_qs(urlparse(page.url).query)[scenario_io.LINK_PARAM][0]
    assert scenario_io.from_link_param(param).tokens == PRESETS["cat_sat"].build().tokens
    with expect_rerun(page):
        page.get_by_test_id("stSidebarNav").get_by_text("Masks", exact=True).click()
    assert scenario_io.LINK_PARAM in urlparse(page.url).query  # kept across a page switch
    with expect_rerun(page):
        page.reload()
    wait_for_plots(page, 1)
    assert_no_exception(page)
    assert "The cat sat on the mat" in sidebar_text(page)
