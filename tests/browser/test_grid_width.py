"""Real browser (issue 28, session 18): the X editor's cells show their whole number. With 16
columns the grid's cells were 3.5em wide and cut "-0.1234" (a preset-like matrix rounded to four
decimals) or a real head's "-0.12260960787534714" (its cells write each float whole, so an
Enter never rounds it). grid.js now makes each column at least as wide as its longest text (a
wide grid, more than 48 columns: all columns as wide as the longest); the grid scrolls sideways
where they do not fit. Measured: every drawn cell's ``scrollWidth <= clientWidth``, at 1024×768
and 1366×768 with the sidebar open, and in presenter mode (bigger type) with the editor opened.

Screenshots (tests/artifacts/screenshots/): grid_width_<case>_<size>.png.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import EDITOR, assert_no_exception, goto_page, screenshot, wait_for_app_run
from presenter_helpers import new_page, presenter_on

from attnviz.io.scenario_io import to_link_param
from attnviz.scenarios.scenario import projected
from attnviz.teach.text import playground as text

SIZES = [(1024, 768), (1366, 768)]
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]

# every drawn cell of the X editor: its text, and whether it shows whole
CUT = """() => [...document.querySelectorAll('table.attnviz-grid input')]
  .map(i => ({text: i.value, scroll: i.scrollWidth, client: i.clientWidth}))"""


def _scenario(d_model: int, digits: int | None):
    """Six tokens, x of ``d_model`` columns (rounded to ``digits`` decimals, or whole floats as a
    real head's are), negative numbers among them; one head of width 4."""
    rng = np.random.default_rng(28)
    x = rng.normal(0, 1, (len(TOKENS), d_model))
    x = -np.abs(x) if digits is None else np.round(-np.abs(x) / 8, digits)  # "-0.1234"
    w = np.round(rng.normal(0, 0.3, (3, d_model, 4)), 2)  # short: a link holds 64 columns
    return projected(TOKENS, x, *w, title="wide numbers")


CASES = {
    "four_decimals_16": _scenario(16, 4),
    "whole_floats_16": _scenario(16, None),
}


def _cells(page) -> list[dict]:
    wait_for_app_run(page)
    # grid.js draws the rows in view as the component mounts: their inputs are there
    page.locator(f"{EDITOR} input").first.wait_for()
    return page.evaluate(CUT)


def _assert_whole(cells: list[dict], where: str) -> None:
    assert cells, f"no grid cell drawn ({where})"
    cut = [c for c in cells if c["scroll"] > c["client"]]
    assert not cut, f"{len(cut)} of {len(cells)} cells cut ({where}), e.g. {cut[:3]}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("case", list(CASES))
def test_every_cell_of_a_16_wide_x_shows_its_whole_number(app_server, browser, case, size):
    page = new_page(browser, size)
    try:
        goto_page(page, app_server, f"playground?scenario={to_link_param(CASES[case])}")
        assert_no_exception(page)
        cells = _cells(page)
        assert len({c["text"] for c in cells}) > 16  # the matrix's numbers, not empty cells
        assert any(c["text"].startswith("-0.") for c in cells)
        screenshot(page, f"grid_width_{case}_{size[0]}")
        _assert_whole(cells, f"{case}, {size}, sidebar open")
        if size[0] == 1024:  # presenter mode: bigger type, the editor folded under the charts
            presenter_on(page)
            page.get_by_text(text.PRESENTER_EDIT_X).click()
            wait_for_app_run(page)
            _assert_whole(_cells(page), f"{case}, {size}, presenter mode")
            screenshot(page, f"grid_width_{case}_{size[0]}_presenter")
    finally:
        page.context.close()


def test_a_wide_grid_of_64_columns_keeps_its_whole_floats_whole(app_server, browser):
    """More than 48 columns: the grid draws the columns in view, all of one width (the
    longest text's: whole floats, as a real head's; 5.5rem had cut them)."""
    page = new_page(browser, (1366, 768))
    try:
        goto_page(page, app_server, f"playground?scenario={to_link_param(_scenario(64, None))}")
        assert_no_exception(page)
        assert page.locator("table.attnviz-grid-wide").count() == 1
        _assert_whole(_cells(page), "64 columns")
        # scrolled to its last columns, those drawn then are whole too
        page.locator(".attnviz-grid-box").first.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        page.wait_for_function("() => document.querySelector("
                               "'table.attnviz-grid input[data-c=\"63\"]') !== null")
        _assert_whole(_cells(page), "64 columns, scrolled to the end")
    finally:
        page.context.close()
