"""Real browser: a shared link opens the same scenario elsewhere; the HTML report works offline.

Screenshots (tests/artifacts/screenshots/):
- share_page.png — Save & share with the cat-sat scenario: file download/upload, the link,
  the matrix downloads and the PNG/SVG choice;
- share_link_fresh_context.png — the link opened in a fresh browser context (no cookies, no
  session): the Playground shows the cat-sat scenario's weights heatmap;
- share_bad_link.png — a tampered link: a message, the default scenario, no traceback;
- share_report_offline.png — the downloaded HTML report opened with every network request
  blocked: all figures drawn.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
from helpers import (
    VIEWPORT,
    assert_no_exception,
    chart_z,
    goto_page,
    load_preset,
    playground_focus,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
    wait_for_plots,
)
from playwright.sync_api import Browser, Page

from attnviz import PRESETS, run_scenario
from attnviz.figures.heatmap import TICK_CHARS
from attnviz.io import scenario_io

TIMEOUT = 90_000  # the first Plotly bundle load is slow on a busy 2-core machine
PRESET = "cat_sat"


def wait_for_chart(page: Page, key: str) -> None:
    page.wait_for_function(
        """key => { const g = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
                    return g && g._fullData && g._fullData.length > 0 }""",
        arg=key, timeout=TIMEOUT,
    )


def open_in_app(page: Page, title: str) -> None:
    """Go to a page through the sidebar navigation (same session, state kept)."""
    nav = page.get_by_test_id("stSidebarNav")
    more = nav.get_by_text("View", exact=False)
    if not nav.get_by_role("link", name=title).count() and more.count():
        more.first.click()
    nav.get_by_role("link", name=title).click()
    wait_for_app_run(page)


def test_shared_link_opens_the_same_weights_in_a_fresh_context_and_the_report_offline(
        app_server: str, page: Page, browser: Browser, tmp_path: Path):
    scenario = PRESETS[PRESET].build()
    expected = run_scenario(scenario).attention.weights

    # 1) one user: load a non-default scenario, look at its weights, open Save & share
    goto_page(page, app_server, "playground")
    wait_for_chart(page, "playground_fig_weights_slot_1")
    load_preset(page, PRESETS[PRESET].title)
    wait_for_chart(page, "playground_fig_weights_slot_1")
    mine = chart_z(page, "playground_fig_weights_slot_1")
    np.testing.assert_allclose(mine, expected, rtol=0, atol=1e-15)
    open_in_app(page, "Save & share")
    code = page.get_by_test_id("stCode").filter(has_text="?scenario=").first
    code.wait_for(timeout=TIMEOUT)
    link = code.inner_text().replace("\n", "").strip()
    assert_no_exception(page)
    screenshot(page, "share_page")
    url = urlparse(link)
    assert f"{url.scheme}://{url.netloc}" == app_server and url.path == "/playground"
    assert len(link) < 8100

    # 2) someone else: a fresh browser context (no session, no cookies) opens the link
    other = browser.new_context(viewport=VIEWPORT)
    try:
        fresh = other.new_page()
        fresh.goto(link)
        wait_for_app_run(fresh, timeout=TIMEOUT)
        wait_for_chart(fresh, "playground_fig_weights_slot_1")
        theirs = chart_z(fresh, "playground_fig_weights_slot_1")
        assert_no_exception(fresh)
        assert fresh.get_by_test_id("stSidebar").get_by_text(scenario.title).count()
        screenshot(fresh, "share_link_fresh_context")
    finally:
        other.close()
    np.testing.assert_array_equal(theirs, mine)  # the same numbers, bit for bit
    decoded = scenario_io.from_link_param(parse_qs(url.query)["scenario"][0])
    assert decoded.tokens == scenario.tokens

    # 3) the first user, back on the Playground: its HTML report opens offline
    open_in_app(page, "Playground")
    html_report_opens_offline(page, browser, tmp_path)


def test_tampered_link_shows_a_message_and_the_default(app_server: str, browser: Browser):
    good = scenario_io.to_link_param(PRESETS[PRESET].build())
    tampered = good[:40] + ("A" if good[40] != "A" else "B") + good[41:]
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(f"{app_server}/playground?scenario={tampered}")
        wait_for_app_run(page, timeout=TIMEOUT)
        wait_for_chart(page, "playground_fig_weights_slot_1")
        alert = page.get_by_test_id("stAlert").filter(has_text="This link could not be opened")
        assert alert.count() == 1
        assert_no_exception(page)
        default = run_scenario(PRESETS["seed_000"].build()).attention.weights
        np.testing.assert_allclose(chart_z(page, "playground_fig_weights_slot_1"), default, rtol=0,
                                   atol=1e-15)
        screenshot(page, "share_bad_link")
    finally:
        context.close()


def html_report_opens_offline(page: Page, browser: Browser, tmp_path: Path) -> None:
    """The Playground's HTML report of the scenario the session holds, opened with the
    network off: every figure drawn, nothing fetched."""
    playground_focus(page, "All")  # the full view holds the downloads
    wait_for_chart(page, "playground_fig_weights")
    n_charts = page.locator(".js-plotly-plot").count()
    page.get_by_text("Download these matrices and figures").click()
    wait_for_app_run(page)
    with page.expect_download(timeout=TIMEOUT) as info:
        page.get_by_role("button", name="Download an HTML report of these figures").click()
    download = info.value
    assert download.suggested_filename.endswith("_playground.html")
    path = tmp_path / "report.html"
    download.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert ("cdn.plot.ly" in text) is False
    assert text.count("Plotly.newPlot(") >= 10

    offline = browser.new_context(viewport=VIEWPORT, offline=True)
    requests: list[str] = []
    try:
        report = offline.new_page()
        report.on("request", lambda r: requests.append(r.url))
        report.goto(path.as_uri())
        wait_for_plots(report, text.count("Plotly.newPlot("), timeout=TIMEOUT)
        drawn = report.locator(".js-plotly-plot").count()
        screenshot(report, "share_report_offline")
    finally:
        offline.close()
    assert drawn == text.count("Plotly.newPlot(")
    assert n_charts >= drawn - 2  # the page's heatmaps (the report may skip diagnostics)
    assert [u for u in requests if not u.startswith("file://")] == []


def test_html_in_uploaded_token_labels_stays_text(app_server: str, page: Page, tmp_path: Path):
    """Token labels from an upload never run script, add elements or fetch anything."""
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("<img src=x onerror=alert(1)>\n<script>alert(2)</script>\n"
                      "<a href=\"javascript:alert(3)\">click</a>\n<b>bold</b>\n**md**\n"
                      "![i](http://example.invalid/i.png)\n", encoding="utf-8")
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    goto_page(page, app_server, "your_attention")
    wait_for_chart(page, "your_attention_fig_weights")
    page.get_by_test_id("stFileUploaderDropzoneInput").nth(1).set_input_files(str(tokens))
    wait_for_app_run(page)
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll(
                     '.st-key-your_attention_fig_weights .xtick text'))
                 .some(t => t.textContent.startsWith('0:<img'))""", timeout=TIMEOUT)
    ticks = page.evaluate("""() => Array.from(
        document.querySelectorAll('.st-key-your_attention_fig_weights .xtick text'),
        t => t.textContent)""")
    hrefs = page.evaluate("""() => Array.from(document.querySelectorAll('a[href^="javascript"]'))
                             .length""")
    injected = page.evaluate("() => document.querySelectorAll('img[src=\"x\"]').length")
    wait_for_charts(page)
    screenshot(page, "your_attention_html_labels")
    assert_no_exception(page)
    assert dialogs == [] and injected == 0 and hrefs == 0
    # written literally, cut to TICK_CHARS characters like every axis label
    assert ticks[0] == tick_text_shown("0:<img src=x onerror=alert(1)>")
    assert ticks[1] == tick_text_shown("1:<script>alert(2)</script>")
    # only this server (a blob: URL of its origin is the chart component's script in memory)
    assert [u for u in requests
            if not u.startswith(app_server) and not u.startswith(f"blob:{app_server}/")] == []


def tick_text_shown(label: str) -> str:
    """What the browser shows for an axis label: the label itself, cut with "…"."""
    return label if len(label) <= TICK_CHARS else label[: TICK_CHARS - 1] + "…"
