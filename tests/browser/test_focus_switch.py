"""Real browser: the Playground's focus tabs (issue 28 items 1 and 7).

- Every focus is a tab whose charts come with every run (:func:`attnviz.ui.lecture.slot_key`):
  a chart in a hidden tab is not drawn until its tab is shown; a switch then draws the new
  tab's three matrices, and a switch back to a tab drawn before draws nothing again (its
  Plotly ``<div>``s keep their drawing: the speed, benchmarks/bench_clicks.py --only focus).
- Every chart of the Scores, Q K V and Weights foci is drawn once: margins Plotly's automargin
  does not grow (normal and presenter mode).
- The heads focus in presenter mode: GQA's 8 heads all on the first screen at 1024×768 and at
  1920×1080, row labels that do not run into each other, a number in a cell only at 14 px or
  more (at 1024×768 the cells are ~30 px wide: none, the hover gives them; at 1920×1080 every
  head's). Screenshots:
  tests/artifacts/screenshots/focus_switch_heads_*.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import (
    TIMEOUT_MS,
    assert_no_exception,
    edit_cell,
    expect_rerun,
    goto_page,
    playground_focus,
    screenshot,
    track_reruns,
    wait_for_app_run,
    wait_for_charts,
)
from playwright.sync_api import Browser, Page
from presenter_helpers import new_page, presenter_on, settle

from attnviz.io import scenario_io
from attnviz.scenarios.presets import DEFAULT_PRESET, PRESETS, default_scenario
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach.text import playground as playground_text

FOCI = {  # the focus tab's label -> its key and its matrices, left to right
    "Scores": ("scores", ("scores", "scaled", "masked")),
    "Q K V": ("projections", ("q", "k", "v")),
    "Weights": ("weights", ("scaled", "weights", "output")),
}
# a tab's three charts: their drawn z and whether the drawing is still the one marked by MARK
# (null until each is drawn and sized)
TAB_NOW = """focus => { const gs = [0, 1, 2].map(i => document.querySelector(
    `.st-key-playground_fig_${focus}_slot_${i} .js-plotly-plot`));
  return gs.map(g => (!g || !g._fullData || !g._fullData[0] || !g.closest('[data-sized]'))
    ? null : {same: g.__focusMark === g._fullData,
              z: Array.from(g._fullData[0].z, r => Array.from(r, v => v ?? NaN))});
}"""
MARK = """focus => [0, 1, 2].forEach(i => { const g = document.querySelector(
  `.st-key-playground_fig_${focus}_slot_${i} .js-plotly-plot`); g.__focusMark = g._fullData; })"""
# a tab's charts that have been drawn (a Plotly <div> inside them)
DRAWN = """focus => document.querySelectorAll(
  `[class*='st-key-playground_fig_${focus}_slot_'] .js-plotly-plot`).length"""


def tab_now(page: Page, focus: str) -> list[dict]:
    """The tab's three charts once each is drawn and sized."""
    page.wait_for_function(f"f => ({TAB_NOW})(f).every(x => x)", arg=focus)
    return page.evaluate(TAB_NOW, focus)


def test_a_focus_switch_draws_a_tab_once_and_keeps_its_drawing(
        page: Page, app_server: str) -> None:
    att = run_scenario(default_scenario()).attention
    goto_page(page, app_server, "playground")
    tab_now(page, "weights")
    assert page.evaluate(DRAWN, "scores") == 0  # hidden tabs: sent, not drawn
    assert page.evaluate(DRAWN, "projections") == 0
    page.evaluate(MARK, "weights")
    for label, (focus, names) in FOCI.items():
        playground_focus(page, label)
        expected = [np.asarray(att.output if n == "output" else getattr(att.head(0), n),
                               dtype=float) for n in names]
        now = tab_now(page, focus)
        for chart, z, name in zip(now, expected, names, strict=True):
            np.testing.assert_allclose(np.array(chart["z"], dtype=float), z, rtol=0,
                                       atol=1e-12, err_msg=f"{label}: {name}")
        if label == "Weights":  # shown again: the drawing it had, not a new one
            assert all(chart["same"] for chart in now), now
        assert_no_exception(page)
    page.evaluate(MARK, "scores")
    playground_focus(page, "Scores")
    assert all(chart["same"] for chart in tab_now(page, "scores"))
    screenshot(page, "focus_switch_scores_again")
    # the default scenario (seed 000) at 1366×768 outside presenter mode: every focus's
    # charts drawn once (test_every_focus_draws_its_charts_once, here on this session)
    assert_every_focus_drawn_once(page, DEFAULT_PRESET, (1366, 768), presenter=False)


FILL = ".st-key-playground_fill_tabs"  # the browser's ask for the run filling every tab
SENT = """focus => [0, 1, 2].filter(i => document.querySelector(
  `.st-key-playground_fig_${focus}_slot_${i}`)).length"""


def test_an_edit_fills_the_hidden_tabs_once_the_open_one_is_drawn(
        page: Page, app_server: str) -> None:
    """The run after an edit fills the open tab alone; once its charts are drawn the browser
    asks for one more run (``fill_tabs.js``), which fills every tab: a tab clicked after it has
    the edited matrices without a run to wait for."""
    edited = default_scenario()
    x = edited.x.copy()
    x[0, 0] = 0.3125
    att = run_scenario(dataclasses.replace(edited, x=x)).attention
    goto_page(page, app_server, "playground")
    tab_now(page, "weights")
    edit_cell(page, page.locator(".st-key-playground_x_v0"), 0, 0, "0.3125")
    # no click: the hidden Scores and Q K V tabs get their charts, the ask goes with the run
    page.wait_for_function(f"() => ({SENT})('scores') === 3 && ({SENT})('projections') === 3 "
                           f"&& !document.querySelector('{FILL}')")
    assert page.get_by_text(playground_text.TAB_ON_OPEN).count() == 0
    wait_for_app_run(page)
    playground_focus(page, "Scores")
    for chart, name in zip(tab_now(page, "scores"), FOCI["Scores"][1], strict=True):
        np.testing.assert_allclose(np.array(chart["z"], dtype=float),
                                   np.asarray(getattr(att.head(0), name), dtype=float),
                                   rtol=0, atol=1e-12, err_msg=name)
    assert_no_exception(page)


# every head's chart's cells (Plotly's drag rectangle) and the sizes of the numbers written in
# them, once every chart is drawn and sized at its column's width
HEADS_NOW = """() => [...document.querySelectorAll(
    "[class*='st-key-playground_fig_lecture_head_'] .js-plotly-plot")].map(g => {
  const c = g.querySelector('.nsewdrag').getBoundingClientRect();
  return {top: c.top, bottom: c.bottom, width: c.width,
          sized: Boolean(g.closest('[data-sized]')),
          labels: [...g.querySelectorAll('.ytick text')].filter(t => t.textContent)
            .map(t => { const r = t.getBoundingClientRect(); return [r.top, r.bottom]; })
            .sort((a, b) => a[0] - b[0]),
          fonts: [...g.querySelectorAll('.heatmaplayer text')]
            .filter(t => t.textContent).map(t => parseFloat(getComputedStyle(t).fontSize))};
})"""


@pytest.mark.parametrize("width, height", [(1024, 768), (1920, 1080)])
def test_presenter_heads_focus_shows_every_head_of_gqa_on_the_first_screen(
        browser: Browser, app_server: str, width: int, height: int) -> None:
    scenario = PRESETS["gqa_8_2"].build()  # 8 query heads, 7 tokens
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    track_reruns(page)
    try:
        goto_page(page, app_server, f"playground?{scenario_io.LINK_PARAM}="
                                    f"{scenario_io.to_link_param(scenario)}")
        with expect_rerun(page):
            page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
        wait_for_app_run(page)
        playground_focus(page, "Heads")
        page.wait_for_function(f"() => {{ const h = ({HEADS_NOW})(); return h.length === "
                               f"{scenario.n_heads} && h.every(c => c.sized); }}")
        wait_for_charts(page)  # the heights follow the screen: settled
        page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
        heads = page.evaluate(HEADS_NOW)
        screenshot(page, f"focus_switch_heads_{width}x{height}")
        assert_no_exception(page)
        assert len(heads) == scenario.n_heads
        for h, cells in enumerate(heads):
            assert cells["bottom"] <= height, f"head {h} ends below the first screen: {cells}"
            assert cells["bottom"] - cells["top"] >= 7 * 8, (h, cells)  # rows of 8 px at least
            assert not cells["fonts"] or min(cells["fonts"]) >= 14, (h, cells)
            # row labels, where written, each on its own line (16-px labels had run into each
            # other on 12-px rows)
            tops = cells["labels"]
            assert all(b[0] >= a[1] - 0.5 for a, b in zip(tops, tops[1:], strict=False)), (h, tops)
        assert heads[0]["labels"], "the first head's row labels"
        if width >= 1920:  # ~60-px cells: every head writes its numbers
            assert all(len(c["fonts"]) == 7 * 7 for c in heads), [len(c["fonts"]) for c in heads]
    finally:
        context.close()


# every drawn chart whose margins Plotly's automargin grew beyond the figure's own (it grows
# them by drawing the chart a second time: a focus switch then drew each chart twice)
GROWN = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap((g, i) => {
  const m = g._fullLayout && g._fullLayout.margin, s = g._fullLayout && g._fullLayout._size;
  if (!m || !s) return [];
  const sides = ['l', 'r', 't', 'b'].filter(k => Math.abs(s[k] - m[k]) > 0.5);
  return sides.length ? [{chart: i, grown: sides.map(k => `${k}: ${m[k]} -> ${s[k]}`)}] : [];
})"""


def assert_every_focus_drawn_once(page: Page, preset: str, size: tuple[int, int],
                                  presenter: bool) -> None:
    """Each chart of every focus is drawn with margins that already hold its labels and its
    colour bar: none grown by Plotly's automargin (a grown margin is a second drawing of the
    chart, ~half of what a focus switch spent drawing). Not yet in presenter mode's "All" tab:
    its charts' top margins are given for 13-px column labels, drawn at 16 px there."""
    grown = {}
    for label in ("Scores", "Q K V", "Weights") + (() if presenter else ("All",)):
        playground_focus(page, label)
        settle(page)
        grown[label] = page.evaluate(GROWN)
    assert all(not g for g in grown.values()), f"{preset} {size}: {grown}"
    assert_no_exception(page)


@pytest.mark.parametrize("preset, size, presenter", [
    ("alibi_local", (1024, 768), True), ("cat_sat", (1920, 1080), True)])
def test_every_focus_draws_its_charts_once(browser: Browser, app_server: str, preset: str,
                                           size: tuple[int, int], presenter: bool) -> None:
    """(The default scenario at 1366×768: the end of the first test here.)"""
    scenario = PRESETS[preset].build()
    page = new_page(browser, size)
    try:
        goto_page(page, app_server, f"playground?{scenario_io.LINK_PARAM}="
                                    f"{scenario_io.to_link_param(scenario)}")
        if presenter:
            presenter_on(page)
        assert_every_focus_drawn_once(page, preset, size, presenter)
    finally:
        page.context.close()
