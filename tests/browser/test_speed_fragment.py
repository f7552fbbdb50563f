"""Real browser: the Playground's initialiser/seed fragment reruns only itself; Regenerate
reruns the page with new weights, and the charts show them."""

from __future__ import annotations

import numpy as np
from helpers import (
    assert_no_exception,
    goto_page,
    playground_focus,
    wait_for_app_run,
    wait_for_charts,
)

from attnviz.teach.text import common

# counts every (re)draw of any Plotly chart on the page
_WATCH = """() => {
    window.__draws = 0;
    const plots = document.getElementsByClassName('js-plotly-plot');
    const loop = () => {
        for (const g of plots) {
            if (g._fullData && g.__seen !== g._fullData) {
                g.__seen = g._fullData;
                window.__draws++;
            }
        }
        requestAnimationFrame(loop);
    };
    loop();
}"""


def _q(page) -> np.ndarray:
    rows = page.evaluate("() => Array.from(document.querySelector('.st-key-playground_fig_q "
                         ".js-plotly-plot')._fullData[0].z, r => Array.from(r))")
    return np.array(rows, dtype=float)


def test_seed_change_reruns_only_the_fragment_and_regenerate_redraws(page, app_server):
    goto_page(page, app_server, "playground")
    playground_focus(page, "All")  # the full view draws Q
    wait_for_charts(page, 5)  # the responsive charts settled
    page.evaluate(_WATCH)
    page.evaluate("() => { window.__draws = 0; }")
    before = _q(page)
    seed = page.locator(".st-key-playground_init_seed input")
    seed.fill("7")
    seed.press("Enter")
    wait_for_charts(page, 5)  # the fragment's run shown (a redraw, were there one, under way)
    assert page.evaluate("() => window.__draws") == 0  # no chart was redrawn: no page rerun
    np.testing.assert_array_equal(_q(page), before)
    page.get_by_role("button", name=common.REGENERATE).first.click()
    wait_for_app_run(page)
    page.wait_for_function("() => window.__draws > 0")
    wait_for_charts(page, 5)
    assert not np.array_equal(_q(page), before)  # seed 7's weights, not seed 42's
    assert_no_exception(page)
