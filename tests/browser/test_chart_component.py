"""Real browser: charts are updated in place after an edit (same element, new numbers), and
plotly.js comes from this server (the installed plotly package's own file)."""

from __future__ import annotations

from helpers import (
    EDITOR,
    assert_no_exception,
    edit_cell,
    goto_page,
    playground_focus,
    screenshot,
    wait_for_app_run,
    wait_for_plots,
)

from attnviz.ui import plotly_view

_MARK = """key => { const g = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
                   g.__attnvizMark = 'kept'; return g._fullData[0].z.length; }"""
_STATE = """key => { const g = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
                    return [g.__attnvizMark || null, Array.from(g._fullData[0].z[0])]; }"""


def test_an_edit_redraws_the_same_chart_element_with_the_new_numbers(page, app_server):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    served: dict[str, int] = {}
    page.on("response", lambda r: served.__setitem__(r.url, r.status))
    goto_page(page, app_server, "playground")
    playground_focus(page, "All")  # the full view draws X
    wait_for_plots(page, 10)
    wait_for_app_run(page)
    assert page.evaluate(_MARK, "playground_fig_x") == 4
    _, before = page.evaluate(_STATE, "playground_fig_x")
    editor = page.locator(EDITOR).first  # X, the token embeddings
    edit_cell(page, editor, row=0, col=0, text="7.5")
    page.wait_for_function(
        """key => Array.from(document.querySelector('.st-key-' + key + ' .js-plotly-plot')
                 ._fullData[0].z[0])[0] === 7.5""", arg="playground_fig_x")
    mark, after = page.evaluate(_STATE, "playground_fig_x")
    assert mark == "kept"  # not a new element: Plotly.react on the chart already there
    assert after[0] == 7.5 and after[1:] == before[1:]
    screenshot(page, "playground_after_edit_in_place")
    assert_no_exception(page)
    plotly_js = f"{app_server}/{plotly_view.plotly_js_url()}"  # the installed plotly's file
    assert served.get(plotly_js) == 200
    size = page.evaluate("url => fetch(url).then(r => r.arrayBuffer()).then(b => b.byteLength)",
                         plotly_js)
    assert size == plotly_view.PLOTLY_JS.stat().st_size
    assert not [u for u in requests if "cdn" in u or not (
        u.startswith(app_server) or u.startswith(f"blob:{app_server}/"))]
