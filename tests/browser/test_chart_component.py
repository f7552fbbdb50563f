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


def test_an_edit_redraws_the_same_chart_element_and_the_drawn_flag_tells_the_newest(
        page, app_server):
    """One session: an edit redraws X's chart in place, then the drawn flag's states on a
    chart of the test's own on the same page (plotly.js loaded)."""
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
    the_drawn_flag_says_the_newest_figure_is_drawn(page)


# plotly_view.js loaded a second time as a module of its own, on a page that has plotly.js,
# drawing into a 400-px box of the test's (window.__box); window.__show(json) hands the box's
# chart a figure as Streamlit does and returns the drawn flag just after
_MOUNT = """async js => {
    const view = (await import(URL.createObjectURL(new Blob([js], {type: 'text/javascript'}))))
        .default;
    const box = window.__box = document.createElement('div');
    box.style.cssText = 'position:fixed;top:0;left:0;width:400px;z-index:99999;background:#fff';
    document.body.appendChild(box);
    window.__show = json => {
        view({data: json, parentElement: box, setTriggerValue: () => {}});
        return box.querySelector('.attnviz-chart').dataset.sized ?? null;
    };
}"""
_BOX_DRAWN = """z => { const g = window.__box.querySelector('.attnviz-chart');
    return g.dataset.sized === '1' && g._fullData?.[0]?.z?.[0]?.[0] === z; }"""


def the_drawn_flag_says_the_newest_figure_is_drawn(page) -> None:
    """``data-sized="1"`` (what the browser tests wait for) is cleared the moment a new figure
    arrives, is not set on a hidden chart whose newest figure waits to be seen (not even by
    the settle pass its hiding starts), and comes back once that figure is drawn."""
    import plotly.graph_objects as go

    def figure(z: float) -> str:
        return plotly_view.figure_json(go.Figure(go.Heatmap(z=[[z, 1.0], [2.0, 3.0]])), {})

    wait_for_plots(page)  # plotly.js is loaded
    page.evaluate(_MOUNT, plotly_view._JS)
    page.evaluate("json => window.__show(json)", figure(0.5))
    page.wait_for_function(_BOX_DRAWN, arg=0.5)
    # a new figure: not marked drawn from the moment it is handed over until it is drawn
    assert page.evaluate("json => window.__show(json)", figure(1.5)) is None
    page.wait_for_function(_BOX_DRAWN, arg=1.5)
    # hidden (a tab closed) with a new figure waiting: the settle pass that the hiding starts
    # (150 ms after the size change) runs, and leaves the chart unmarked
    since = page.evaluate("""json => { window.__box.style.display = 'none';
        const t = performance.now(); window.__show(json); return t; }""", figure(2.5))
    page.wait_for_function("t => window.__attnvizDraws.busy === 0 && "
                           "window.__attnvizDraws.last >= t + 150", arg=since)
    assert page.evaluate("() => window.__box.querySelector('.attnviz-chart').dataset") == {
        "stale": "1"}
    page.evaluate("() => { window.__box.style.display = 'block'; }")
    page.wait_for_function(_BOX_DRAWN, arg=2.5)  # shown: drawn, and marked so
