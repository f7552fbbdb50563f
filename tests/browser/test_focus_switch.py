"""Real browser: the Playground's focus switch updates the lecture view's three charts in place
(issue 28 item 7: focus switch <= 300 ms, benchmarks/bench_clicks.py --only focus).

Every focus draws its three matrices in the same three chart slots
(:func:`attnviz.ui.lecture.slot_key`), so a switch hands each slot's Plotly ``<div>`` a new
figure (``Plotly.react``) instead of making three new charts: a mark set on each ``<div>``
before the switch is still there after it, and the slots show the new focus's matrices.
"""

from __future__ import annotations

import numpy as np
from helpers import assert_no_exception, goto_page, playground_focus, screenshot
from playwright.sync_api import Page

from attnviz.scenarios.presets import default_scenario
from attnviz.scenarios.scenario import run_scenario
from attnviz.ui.lecture import slot_key

SLOTS = [slot_key(i) for i in range(3)]
FOCI = {  # the focus switch's label -> the matrices of the slots, left to right
    "Scores": ("scores", "scaled", "masked"),
    "Q K V": ("q", "k", "v"),
    "Weights": ("scaled", "weights", "output"),
}
# each slot's Plotly <div>: its mark (set by MARK) and its drawn z, once drawn and sized
CHARTS = "[class*='st-key-playground_fig_'] .js-plotly-plot"  # the lecture view's, in order
SLOTS_NOW = """sel => { const gs = [...document.querySelectorAll(sel)];
  if (gs.length !== 3) return null;
  return gs.map(g => (!g._fullData || !g._fullData[0] || !g.closest('[data-sized]')) ? null : {
    mark: g.dataset.focusMark || null,
    key: [...g.closest('[class*="st-key-"]').classList].find(c => c.startsWith('st-key-')),
    z: Array.from(g._fullData[0].z, r => Array.from(r, v => v ?? NaN))});
}"""
MARK = """sel => document.querySelectorAll(sel).forEach((g, i) => {
  g.dataset.focusMark = 'slot' + i; })"""


def slots_now(page: Page) -> list[dict]:
    """Each slot's mark and drawn z, once every slot has a drawn, sized chart."""
    page.wait_for_function(f"sel => {{ const s = ({SLOTS_NOW})(sel); return s && "
                           "s.every(x => x); }", arg=CHARTS)
    return page.evaluate(SLOTS_NOW, CHARTS)


def drawn(page: Page, expected: list[np.ndarray], tries: int = 50) -> list[dict]:
    """The slots once they show ``expected`` (or after ``tries`` looks, 0.2 s apart)."""
    for _ in range(tries):
        now = slots_now(page)
        if all(np.shape(s["z"]) == z.shape and np.allclose(s["z"], z, rtol=0, atol=1e-12)
               for s, z in zip(now, expected, strict=True)):
            return now
        page.wait_for_timeout(200)
    return now


def test_a_focus_switch_redraws_the_same_three_charts_with_the_new_matrices(
        page: Page, app_server: str) -> None:
    att = run_scenario(default_scenario()).attention
    goto_page(page, app_server, "playground")
    slots_now(page)
    page.evaluate(MARK, CHARTS)
    for label, names in FOCI.items():
        playground_focus(page, label)
        expected = [np.asarray(att.output if n == "output" else getattr(att.head(0), n),
                               dtype=float) for n in names]
        now = drawn(page, expected)
        assert [s["mark"] for s in now] == ["slot0", "slot1", "slot2"], label  # same <div>s
        assert [s["key"] for s in now] == [f"st-key-{k}" for k in SLOTS], label
        for slot, z, name in zip(now, expected, names, strict=True):
            np.testing.assert_allclose(np.array(slot["z"], dtype=float), z, rtol=0, atol=1e-12,
                                       err_msg=f"{label}: {name}")
        assert_no_exception(page)
    screenshot(page, "focus_switch_weights_after")
