"""Real browser: Gradients' loss select reruns the loss's part of the page alone (issue 28
item 7). What the loss does not change — the forward matrices, their titles, the formulas but
the loss's and dP's — is neither sent again nor marked stale while the select's run is under
way (Streamlit fades a stale element), and the gradients on screen show the new loss's
numbers."""

from __future__ import annotations

import numpy as np
from helpers import (
    assert_no_exception,
    chart_z,
    expect_rerun,
    goto_page,
    wait_for_app_run,
    wait_for_charts,
)
from presenter_helpers import new_page

from attnviz.scenarios.gradients import Loss, gradients
from attnviz.scenarios.presets import default_scenario
from attnviz.teach.text import gradients as text

# every change in the main column from now on, by the element's key (st-key-...) or its
# data-watch name (given below to a title and a formula), else "(other)"
_WATCH = """() => {
  window.__changes = {};
  const main = document.querySelector('[data-testid=stMain]');
  new MutationObserver(records => {
    for (const r of records) {
      if (r.attributeName === 'aria-hidden') continue;  // the open select's list hides the rest
      const el = r.target.closest && r.target.closest('[data-watch], [class*="st-key-"]');
      const key = !el ? '(other)' : el.dataset.watch ||
        [...el.classList].find(c => c.startsWith('st-key-')).slice(7);
      const what = r.type === 'attributes' ? r.attributeName : r.type;
      window.__changes[key] = [...(window.__changes[key] || []), what];
    }
  }).observe(main, {subtree: true, attributes: true, childList: true});
}"""

# the element containers of the forward output's title and of dS̃'s formula
_NAME = """([title, formula]) => {
  const boxes = [...document.querySelectorAll('[data-testid=stElementContainer]')];
  const md = boxes.find(b => b.querySelector('[data-testid=stMarkdown]')
                             && b.textContent.trim() === title);
  const tex = boxes.find(b => b.querySelector('.katex') && b.textContent.includes('rowsum'));
  md.dataset.watch = 'title'; tex.dataset.watch = 'formula';
}"""

UNCHANGED = ("gradients_output_fwd", "gradients_weights_fwd", "gradients_scaled_fwd")


def test_a_loss_select_leaves_what_the_loss_does_not_change_alone(browser, app_server):
    page = new_page(browser, (1366, 768))
    context = page.context
    try:
        goto_page(page, app_server, "gradients")
        wait_for_charts(page, 10)  # (a chart's own resizing after its first drawing done)
        page.evaluate(_NAME, [text.OUTPUT, "rowsum"])
        page.evaluate(_WATCH)
        page.get_by_test_id("stMain").get_by_test_id("stSelectbox").filter(
            has_text=text.LOSS_LABEL).first.click()
        with expect_rerun(page):
            page.get_by_role("option", name=text.LOSS_NAMES["given"], exact=True).click()
        wait_for_app_run(page)
        page.wait_for_function(
            "s => { const d = document.querySelector(s); return d && d.dataset.sized === '1'"
            " && d.dataset.stale !== '1'; }", arg=".st-key-gradients_output_grad .attnviz-chart")
        wait_for_charts(page)  # every other chart final too: a redraw would be under way
        assert_no_exception(page)
        changes = page.evaluate("() => window.__changes")
        for key in (*UNCHANGED, "title", "formula"):  # not faded, not redrawn: not touched
            assert key not in changes, (key, changes.get(key))
        assert "gradients_output_grad" in changes  # dO: redrawn with the new loss
        sc = default_scenario()
        g = gradients(sc, Loss("given", np.ones_like(chart_z(page, "gradients_output_fwd"))))
        np.testing.assert_allclose(chart_z(page, "gradients_output_grad"), g.attention.d_output,
                                   rtol=1e-12)
        np.testing.assert_allclose(chart_z(page, "gradients_weights_grad"),
                                   g.attention.d_weights[0], rtol=1e-12)
    finally:
        context.close()
