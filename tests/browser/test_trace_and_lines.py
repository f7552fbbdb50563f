"""Real browser: click a heatmap cell to trace it; the line view's opacities and token focus.

Screenshots (tests/artifacts/screenshots/):
- trace_clicked_cell.png — Trace a cell after clicking cell (query 2:word_3, key 1:word_2):
  both select boxes show that cell, the chain on the right ends in its weight, and the clicked
  cell of the weights heatmap (plus row 2 of Q, row 1 of K and V) is outlined in orange;
- line_view_all.png — the line view of seed 000: one blue line per query–key pair, as opaque
  as its weight, beside the weights heatmap;
- line_view_focus.png — after clicking query 1:word_2: only its four lines remain and its row
  of the heatmap is outlined;
- line_view_two_heads.png — seed 004's two heads in two colours (Okabe–Ito blue and orange).
"""

from __future__ import annotations

from helpers import (
    assert_no_exception,
    expect_rerun,
    goto_page,
    load_preset,
    plot_z,
    screenshot,
    wait_for_app_run,
    wait_for_hover,
    wait_for_plots,
)
from playwright.sync_api import Page

TIMEOUT = 90_000  # the first Plotly bundle load is slow on a busy 2-core machine


def _point_xy(page: Page, index: int, x, y, yaxis: str = "yaxis") -> tuple[float, float]:
    """Page coordinates of data point (x, y) in the ``index``-th Plotly chart."""
    return page.evaluate(
        """([index, x, y, yaxis]) => {
            const g = document.querySelectorAll('.js-plotly-plot')[index];
            const L = g._fullLayout, r = g.getBoundingClientRect();
            return [r.left + L._size.l + L.xaxis.d2p(x), r.top + L._size.t + L[yaxis].d2p(y)];
        }""",
        [index, x, y, yaxis],
    )


def _click(page: Page, xy) -> None:
    page.mouse.move(xy[0], xy[1])
    wait_for_hover(page, xy)  # Plotly turns the hover into the click
    page.mouse.click(xy[0], xy[1])
    wait_for_app_run(page)


def _line_traces(page: Page, index: int) -> list[dict]:
    """{opacity, head, starts, ends} of every line trace of the line view."""
    return page.evaluate(
        """index => {
            const g = document.querySelectorAll('.js-plotly-plot')[index];
            return g._fullData.filter(t => t.meta && t.meta.level).map(t => {
                const y = Array.from(t.y);
                return {opacity: t.opacity, head: t.meta.head,
                        starts: y.filter((_, k) => k % 3 === 0),
                        ends: y.filter((_, k) => k % 3 === 1)};
            });
        }""",
        index,
    )


def _selected(page: Page, label: str) -> str:
    """The value a select box shows (its combobox input), found by its label."""
    return page.get_by_role("combobox", name=label).input_value()


def click_a_weights_cell_traces_it(page: Page) -> None:
    wait_for_plots(page, 1, timeout=TIMEOUT)
    assert_no_exception(page)
    labels = page.evaluate(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot')[0]._fullData[0].x)"
    )
    rows = page.evaluate(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot')[0]._fullData[0].y)"
    )
    assert labels == ["0:word_1", "1:word_2", "2:word_3", "3:word_4"]
    _click(page, _point_xy(page, 0, labels[1], rows[2]))
    page.wait_for_function(
        "() => document.body.innerText.includes('query i = 2:word_3')", timeout=TIMEOUT
    )
    wait_for_plots(page, 1, timeout=TIMEOUT)
    assert_no_exception(page)
    assert (_selected(page, "Query i"), _selected(page, "Key j")) == ("2:word_3", "1:word_2")
    weight = plot_z(page, 0)[2][1]
    body = page.locator("[data-testid='stMain']").inner_text()
    recomputed = float(body.split("recomputed here:")[1].split()[0])
    assert abs(recomputed - weight) < 1e-12
    shapes = page.evaluate(
        "() => document.querySelectorAll('.js-plotly-plot')[0].layout.shapes.map(s => [s.x0, s.y0])"
    )
    assert [0.5, 1.5] in shapes  # the clicked cell is outlined
    screenshot(page, "trace_clicked_cell")


def line_view_opacity_focus_and_heads(page: Page) -> None:
    wait_for_plots(page, 2, timeout=TIMEOUT)
    assert_no_exception(page)
    weights = plot_z(page, 1)  # the heatmap beside the lines
    lines = _line_traces(page, 0)
    assert lines, "no line drawn"
    n_drawn = 0
    for t in lines:
        for i, j in zip(t["starts"], t["ends"], strict=True):
            assert abs(t["opacity"] - weights[int(i)][int(j)]) <= 1 / 80
            n_drawn += 1
    expected = sum(1 for row in weights for w in row if round(w * 40) > 0)
    assert n_drawn == expected
    screenshot(page, "line_view_all")

    # click query 1's marker: only its lines remain
    _click(page, _point_xy(page, 0, 0, 1))
    page.wait_for_function(
        "() => document.querySelector('input[aria-label=\"Focus on a token\"]')?.value"
        " === 'query 1:word_2'",
        timeout=TIMEOUT,
    )
    wait_for_plots(page, 2, timeout=TIMEOUT)
    starts = {int(s) for t in _line_traces(page, 0) for s in t["starts"]}
    assert starts == {1}
    assert_no_exception(page)
    screenshot(page, "line_view_focus")

    # two heads, two colours
    load_preset(page, "Two heads mixed by weights (seed 004)")
    page.wait_for_function(  # the new scenario's tokens are on the line view's axis
        "() => { const g = document.querySelectorAll('.js-plotly-plot')[0];"
        " return g && g._fullLayout && g._fullLayout.yaxis.ticktext.includes('1:sleepy') }",
        timeout=TIMEOUT,
    )
    assert _selected(page, "Focus on a token") == "all tokens"  # a new scenario: no focus
    assert_no_exception(page)
    colours = page.evaluate(
        "() => Array.from(new Set(document.querySelectorAll('.js-plotly-plot')[0]._fullData"
        ".filter(t => t.meta && t.meta.level).map(t => t.line.color)))"
    )
    assert len(colours) == 2
    assert {t["head"] for t in _line_traces(page, 0)} == {0, 1}
    page.mouse.move(5, 5)  # no tooltip in the picture
    screenshot(page, "line_view_two_heads")


def test_a_clicked_weights_cell_is_traced_and_the_line_view_draws_opacity_focus_and_heads(
        app_server: str, page: Page) -> None:
    """One session: Trace a cell, then Line view by the sidebar (the traced cell is Trace's
    own setting)."""
    goto_page(page, app_server, "trace")
    click_a_weights_cell_traces_it(page)
    with expect_rerun(page):
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Line view").click()
    line_view_opacity_focus_and_heads(page)
