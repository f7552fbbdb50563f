"""Real browser: the matrix editors' grid (attnviz/ui/grid.py) as a person uses it — Enter
commits and moves down, Escape takes back, a spreadsheet block pastes, a long matrix draws only
the rows in view and still takes an edit anywhere, presenter mode enlarges the numbers.

Values are read back from the drawn X heatmap (the Playground's full view), so each test checks
what the app computed from the keys, not the grid's own text.
"""

from __future__ import annotations

import pytest
from helpers import (
    EDITOR,
    assert_no_exception,
    edit_cell,
    expect_no_rerun,
    expect_rerun,
    goto_page,
    grid_cell,
    playground_focus,
    screenshot,
    track_reruns,
    wait_for_chart,
    wait_for_plots,
)
from playwright.sync_api import Page

X_Z = """() => { const g = document.querySelector('.st-key-playground_fig_x .js-plotly-plot');
  return Array.from(g._fullData[0].z).map(r => Array.from(r)); }"""


def _x(page: Page) -> list[list[float]]:
    wait_for_chart(page, "playground_fig_x")
    return page.evaluate(X_Z)


def _grid_drawn_again_keeps_every_edit(page: Page) -> None:
    """The lecture view and the full view draw X's grid in different places: moved, the grid
    starts again from the edits the server holds, and the next edit keeps the earlier one."""
    wait_for_plots(page, 3)
    edit_cell(page, page.locator(EDITOR).first, 0, 0, "3.5")
    playground_focus(page, "All")
    wait_for_plots(page)
    grid = page.locator(EDITOR).first
    assert grid_cell(grid, 0, 0).input_value() == "3.5"
    edit_cell(page, grid, 1, 1, "4.5")
    x = _x(page)
    assert x[0][0] == 3.5 and x[1][1] == 4.5, x
    assert_no_exception(page)


def _enter_commits_moves_down_and_the_next_cell_takes_keys_at_once(page: Page) -> None:
    edit_cell(page, page.locator(EDITOR).first, 0, 0, "1e-3")
    # the focus went down a row with the text selected: typing replaces it
    assert page.evaluate("() => document.activeElement.dataset.r") == "1"
    page.keyboard.type("-2.5", delay=30)
    with expect_rerun(page):
        page.keyboard.press("Enter")
    x = _x(page)
    assert x[0][0] == 1e-3 and x[1][0] == -2.5, x
    assert_no_exception(page)


def _escape_takes_back_what_is_typed(page: Page) -> None:
    grid = page.locator(EDITOR).first
    before = _x(page)
    cell = grid_cell(grid, 2, 1)
    cell.click()
    page.keyboard.type("99", delay=30)
    page.keyboard.press("Escape")
    assert float(cell.input_value()) == before[2][1]
    page.keyboard.press("Tab")  # leaving the cell sends nothing: nothing changed
    expect_no_rerun(page)  # (nothing to wait for: a bounded look for a run that must not come)
    assert _x(page) == before


def _a_block_copied_from_a_spreadsheet_fills_the_cells(page: Page) -> None:
    grid = page.locator(EDITOR).first
    page.evaluate("() => navigator.clipboard.writeText('5\\t6\\n7\\t8\\t9\\n')")
    cell = grid_cell(grid, 2, 1)
    cell.click()
    with expect_rerun(page):
        page.keyboard.press("Control+v")
    x = _x(page)
    # rows 2-3 from column 1; the 9 falls outside the 3 columns and is dropped
    assert [x[2][1], x[2][2], x[3][1], x[3][2]] == [5, 6, 7, 8], x
    assert_no_exception(page)


def _a_long_matrix_draws_the_rows_in_view_and_takes_an_edit_far_down(page: Page) -> None:
    box = page.get_by_label("Tokens (separated by spaces)", exact=True)
    box.click()
    box.press("Control+a")
    page.keyboard.type(" ".join(f"w{i}" for i in range(60)), delay=2)
    with expect_rerun(page):
        page.keyboard.press("Enter")
    wait_for_plots(page)
    grid = page.locator(EDITOR).first
    drawn = grid.locator("input").count()
    assert 0 < drawn < 60 * 3 / 2, f"{drawn} inputs for 60 rows: not only the rows in view"
    page.evaluate("() => { const b = document.querySelector('.attnviz-grid-box'); "
                  "b.scrollTop = b.scrollHeight; }")
    edit_cell(page, grid, 55, 0, "9.25")
    page.keyboard.type("8.5", delay=30)  # row 56, drawn below it
    with expect_rerun(page):
        page.keyboard.press("Enter")
    x = _x(page)
    assert x[55][0] == 9.25 and x[56][0] == 8.5, (x[55], x[56])
    screenshot(page, "grid_long_matrix")
    assert_no_exception(page)


def test_the_grid_as_a_person_uses_it(page: Page, app_server: str) -> None:
    """One session, each step on what the last left (each edit a value the cell did not
    hold): an edit in the lecture view kept when the full view draws the grid again, Enter
    commits and moves down, Escape takes back, a spreadsheet block pastes, then (last: it
    replaces X) a long matrix draws the rows in view and takes an edit far down."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    goto_page(page, app_server, "playground")
    _grid_drawn_again_keeps_every_edit(page)  # (it ends in the full view)
    _enter_commits_moves_down_and_the_next_cell_takes_keys_at_once(page)
    _escape_takes_back_what_is_typed(page)
    _a_block_copied_from_a_spreadsheet_fills_the_cells(page)
    _a_long_matrix_draws_the_rows_in_view_and_takes_an_edit_far_down(page)


@pytest.mark.parametrize("width, height", [(1024, 768), (1920, 1080)])
def test_presenter_mode_enlarges_the_grid_numbers(browser, app_server: str, width: int,
                                                 height: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    track_reruns(page)
    try:
        goto_page(page, app_server, "playground")
        wait_for_plots(page, 3)
        size = page.locator(f"{EDITOR} input").first.evaluate(
            "e => parseFloat(getComputedStyle(e).fontSize)")
        with expect_rerun(page):
            page.get_by_test_id("stSidebar").get_by_text("Presenter mode").click()
        wait_for_plots(page, 3)
        # presenter mode folds the editor under the controls: open it
        with expect_rerun(page):
            page.locator(".st-key-playground_presenter_editor summary").first.click()
        big = page.locator(f"{EDITOR} input").first.evaluate(
            "e => parseFloat(getComputedStyle(e).fontSize)")
        assert size < 16 and big >= 19 and big >= 1.3 * size, (size, big)  # 14.4 → 19.2 px
    finally:
        context.close()
