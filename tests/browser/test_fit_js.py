"""The chart component's geometry, function by function: attnviz/ui/plotly_fit.js and
plotly_present.js loaded on their own into a blank page of the suite's Chromium (no server, no
Plotly), each pure function called with inputs whose outputs are worked out by hand. The whole
file takes about a second."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

UI = Path(__file__).resolve().parents[2] / "attnviz" / "ui"
FIT_JS = (UI / "plotly_fit.js", UI / "plotly_present.js")


@pytest.fixture(scope="module")
def fit(browser: Browser) -> Page:
    """A blank page with plotly_fit.js's and plotly_present.js's functions and constants as
    globals."""
    page = browser.new_page()
    page.set_content("<!doctype html><html><body></body></html>")
    for path in FIT_JS:
        page.add_script_tag(content=path.read_text(encoding="utf-8"))
    yield page
    page.close()


def js(page: Page, expression: str, arg=None):
    """The value of ``expression``, a function of one argument, in the fit module's page."""
    return page.evaluate(expression, arg)


FIT = {"bottom": 20, "rows": 4, "minRow": 10, "maxRow": 100}


def heat(text, **more) -> dict:
    """A heatmap trace whose cells write ``text``."""
    return {"type": "heatmap", "text": text, "texttemplate": "%{text}", **more}


# ---- measuring text ----------------------------------------------------------------------------

def test_widest_em_is_the_widest_string_in_em(fit):
    one, three, both = js(fit, """() => [widestEm(["0"]), widestEm(["0.000"]),
                                         widestEm(["0", "0.000"])]""")
    assert 0.3 < one < 0.8  # a digit is about half an em
    assert three > 3 * one and both == three


def test_widest_em_of_nothing_is_zero(fit):
    assert js(fit, "() => widestEm([])") == 0


def test_text_is_measured_in_the_traces_font(fit):
    assert js(fit, """() => [widestEm(["iiii"], "monospace") === widestEm(["MMMM"], "monospace"),
                             widestEm(["iiii"], "serif") < widestEm(["MMMM"], "serif")]""") == [
        True, True]


# ---- reading a figure --------------------------------------------------------------------------

def test_axis_keys_and_subplots(fit):
    assert js(fit, """() => [axisKey("x2", "x"), axisKey(undefined, "y"), subplotOf({}),
                             subplotOf({xaxis: "x3", yaxis: "y3"})]""") == [
        "xaxis2", "yaxis", "xy", "x3y3"]


def test_margins_are_plotlys_where_the_layout_sets_none(fit):
    assert js(fit, "() => margins({margin: {l: 5, t: 7}})") == {"l": 5, "r": 80, "t": 7,
                                                                "b": 80}
    assert js(fit, "() => margins(undefined)") == {"l": 80, "r": 80, "t": 100, "b": 80}


def test_bar_sides_name_each_colour_bars_orientation(fit):
    assert js(fit, """() => barSides([{colorbar: {orientation: "h"}}, {}, {colorbar: {}}])""") \
        == "h,v,v"


def test_the_meta_is_read_from_layout_meta_attnviz(fit):
    assert js(fit, """() => [attnvizMeta({meta: {attnviz: {lazy: true}}}), attnvizMeta({}),
                             attnvizMeta(null)]""") == [{"lazy": True}, {}, {}]


def test_cell_strings_count_rows_columns_lines_and_distinct_strings(fit):
    cells = js(fit, "t => cellStrings(t, '%{text}')",
               heat([["0.1", "a<br>b"], ["0.1", ""], [None, "0.25"]]))
    assert {k: cells[k] for k in ("rows", "cols", "lines")} == {"rows": 3, "cols": 2, "lines": 2}
    assert sorted(cells["strings"]) == ["0.1", "0.25", "a", "b"]


def test_cell_strings_only_for_a_heatmap_that_writes_its_text(fit):
    assert js(fit, """t => [cellStrings({...t, type: "scatter"}, "%{text}"),
                            cellStrings(t, ""), cellStrings({...t, text: undefined}, "%{text}"),
                            cellStrings({...t, text: []}, "%{text}")]""",
              heat([["1"]])) == [None, None, None, None]


# ---- the numbers in the cells ------------------------------------------------------------------

def test_a_cell_font_fills_the_width_less_its_padding(fit):
    # 100 px wide, 1.7 em of text + 0.3 em of padding: 50 px
    assert js(fit, "() => cellFont({w: 100, h: 1000}, 1.7, 1, {}, 10, 99)") == 50


def test_a_cell_font_fits_its_lines_in_the_height(fit):
    # 2 lines of 1.3 em in 52 px: 20 px
    assert js(fit, "() => cellFont({w: 1000, h: 52}, 1, 2, {}, 10, 99)") == 20


def test_a_cell_font_is_at_most_the_largest_size(fit):
    assert js(fit, "() => cellFont({w: 1000, h: 1000}, 1, 1, {}, 10, 32)") == 32


def test_a_cell_font_below_the_smallest_size_writes_nothing(fit):
    assert js(fit, "() => cellFont({w: 20, h: 1000}, 1.7, 1, {}, 14, 32)") == 0


def test_the_gaps_between_cells_take_their_room(fit):
    assert js(fit, "() => cellFont({w: 101, h: 1000}, 1.7, 1, {x: 1, y: 1}, 10, 99)") == 50


def test_cell_fonts_take_the_figures_sizes_and_the_smallest_per_subplot(fit):
    fonts = js(fit, """([a, b]) => {
        const layout = {meta: {attnviz: {cellText: [5, 40]}}};
        const size = (t) => ({w: t.name === "wide" ? 400 : 40, h: 400});
        return cellFonts([a, b], ["%{text}", "%{text}"], layout, size); }""",
               [heat([["0.5"]], name="wide"), heat([["0.5"]], name="narrow")])
    em = js(fit, '() => widestEm(["0.5"])')
    assert fonts == {"xy": min(40, math.floor(40 / (em + 0.3)))}


def test_cell_fonts_default_to_ten_up_to_thirteen_px(fit):
    fonts = js(fit, """t => cellFonts([t], ["%{text}"], {font: {size: 17}},
                                      () => ({w: 500, h: 500}))""", heat([["1"]]))
    assert fonts == {"xy": 13}  # the heatmaps' own type, whatever the layout's
    none = js(fit, """t => cellFonts([t], ["%{text}"], {}, () => ({w: 12, h: 500}))""",
              heat([["0.000"]]))
    assert none == {"xy": 0}  # 12 px cannot hold "0.000" at 10 px


def test_applied_fonts_are_written_into_the_traces_with_their_restyle(fit):
    out = js(fit, """t => { const data = [t, {type: "scatter"}];
        const restyle = applyFonts(data, ["%{text}", undefined], {xy: 21});
        return [restyle, data[0].textfont.size, data[0].texttemplate]; }""",
             heat([["1"]], texttemplate=""))
    assert out == [[{"textfont.size": [21], "texttemplate": ["%{text}"]}, [0]], 21, "%{text}"]


def test_no_font_hides_the_numbers_and_an_unchanged_one_needs_no_restyle(fit):
    out = js(fit, """t => { const hidden = [{...t}], kept = [{...t, textfont: {size: 12}}];
        return [applyFonts(hidden, ["%{text}"], {xy: 0}), hidden[0].texttemplate,
                applyFonts(kept, ["%{text}"], {xy: 12})]; }""", heat([["1"]]))
    assert out[0][0]["texttemplate"] == [""] and out[1] == "" and out[2] is None


# ---- cells and heights -------------------------------------------------------------------------

def test_expected_cells_split_the_plot_area_by_the_axis_domain(fit):
    size = js(fit, """() => expectedCells({height: 300, margin: {l: 10, r: 10, t: 50, b: 50},
                                           xaxis2: {domain: [0.5, 1]}}, 420)(
                        {xaxis: "x2"}, {rows: 4, cols: 5})""")
    assert size == {"w": 40, "h": 50}  # (420 - 20) / 2 / 5, (300 - 100) / 4


def test_a_figures_own_width_wins_and_no_width_gives_no_cells(fit):
    assert js(fit, """() => expectedCells({width: 220, height: 200, margin: {l: 10, r: 10,
                       t: 0, b: 0}}, 999)({}, {rows: 2, cols: 2})""") == {"w": 100, "h": 100}
    assert js(fit, "() => expectedCells({}, 0)({}, {rows: 2, cols: 2})") is None


def test_drawn_cells_read_plotlys_axis_lengths(fit):
    full = {"xaxis": {"_length": 300}, "yaxis": {"_length": 120}}
    assert js(fit, "f => drawnCells(f)({}, {rows: 4, cols: 6})", full) == {"w": 50, "h": 30}
    assert js(fit, "() => drawnCells(undefined)({}, {rows: 4, cols: 6})") is None


def test_no_fit_no_height(fit):
    assert js(fit, "() => [fitHeight({}, 800), fitHeight({meta: {attnviz: {fit: {}}}}, 800)]") \
        == [None, None]


def test_a_fitted_height_shares_the_room_among_the_rows(fit):
    # room 600 - top 40 - bottom 20 = 540 over 4 rows: 135, at most 100 -> 40 + 400 + 10
    layout = {"margin": {"t": 40, "b": 10}, "meta": {"attnviz": {"fit": FIT}}}
    assert js(fit, "l => fitHeight(l, 600)", layout) == 450
    assert js(fit, "l => fitHeight(l, 300)", layout) == round(40 + 60 * 4 + 10)  # 240 / 4
    assert js(fit, "l => fitHeight(l, 60)", layout) == 40 + 10 * 4 + 10  # at least minRow


def test_grid_rows_below_share_the_room(fit):
    layout = {"margin": {"t": 40, "b": 10},
              "meta": {"attnviz": {"fit": {**FIT, "below": 4}}}}
    assert js(fit, "l => fitHeight(l, 300)", layout) == 40 + 30 * 4 + 10  # 240 / 8 rows


# ---- axis labels -------------------------------------------------------------------------------

def test_row_labels_take_the_size_their_rows_leave_room_for(fit):
    layout = {"margin": {"t": 40, "b": 10}, "meta": {"attnviz": {"fit": FIT}}}
    # 4 rows in 250 - 50 px: 50 px a row, room for 43 px labels: the figure's own 16
    assert js(fit, "l => rowLabels(l, 250, 16)", layout) == {
        "yaxis.showticklabels": True, "yaxis.tickfont.size": 16}
    # 12 px rows: 10 px labels; 8 px rows: none
    assert js(fit, "l => rowLabels(l, 98, 16)", layout)["yaxis.tickfont.size"] == 10
    assert js(fit, "l => rowLabels(l, 82, 16)", layout) == {"yaxis.showticklabels": False}
    assert js(fit, "l => rowLabels(l, 250, false)", layout) is None  # it writes none


def test_upright_column_labels_fit_their_characters_in_a_column(fit):
    layout = {"xaxis": {"ticktext": ["o0", "o1", "o2", "o3"]}, "meta": {"attnviz": {"fit": FIT}}}
    data = [{"x": ["a", "b", "c", "d"]}]
    # 4 columns over 200 px: (50 - 2) / (2 chars * 0.62) = 38.7 -> the figure's own 16
    assert js(fit, "([l, d]) => columnLabels(l, d, 200, 16)", [layout, data]) == {
        "xaxis.showticklabels": True, "xaxis.tickfont.size": 16}
    # over 60 px: (15 - 2) / 1.24 = 10.48 -> 10 px
    assert js(fit, "([l, d]) => columnLabels(l, d, 60, 16)", [layout, data])[
        "xaxis.tickfont.size"] == 10


def test_turned_column_labels_need_only_their_line_across_a_column(fit):
    layout = {"xaxis": {"tickangle": -45, "ticktext": ["a long label"] * 10},
              "meta": {"attnviz": {"fit": FIT}}}
    data = [{"x": [str(i) for i in range(10)]}]
    # 10 columns over 90 px: 9 * 0.707 / 1.15 = 5.5 px: none written
    assert js(fit, "([l, d]) => columnLabels(l, d, 90, 16)", [layout, data]) == {
        "xaxis.showticklabels": False}
    assert js(fit, "([l, d]) => columnLabels(l, d, 300, 40)", [layout, data])[
        "xaxis.tickfont.size"] == math.floor(30 * math.sqrt(0.5) / 1.15)


def test_a_figures_own_labels(fit):
    assert js(fit, """() => [ownLabels({xaxis: {tickfont: {size: 9}}}, "xaxis"),
                             ownLabels({font: {size: 22}}, "yaxis"), ownLabels({}, "xaxis"),
                             ownLabels({yaxis: {showticklabels: false}}, "yaxis")]""") == [
        9, 22, 12, False]


def test_label_changes_are_applied_to_a_copy_and_compared(fit):
    out = js(fit, """() => { const layout = {xaxis: {tickfont: {color: "red"}}};
        const changes = {"xaxis.tickfont.size": 11, "yaxis.showticklabels": false};
        const copy = withLabels(layout, changes);
        return [copy, layout.xaxis.tickfont.size === undefined, changesLayout(layout, changes),
                changesLayout(copy, changes)]; }""")
    assert out == [{"xaxis": {"tickfont": {"color": "red", "size": 11}},
                    "yaxis": {"showticklabels": False}}, True, True, False]


# ---- the page's view: presenter mode -------------------------------------------------------

PRESENTED = """([data, layout, grow]) => {
    presented(data, layout, grow); return [data, layout]; }"""


def test_presented_figures_take_bigger_type_and_wider_side_margins(fit):
    data, layout = js(fit, PRESENTED, [
        [{"type": "heatmap", "colorbar": {"len": 0.9}}, {"type": "scatter"}],
        {"height": 200, "margin": {"l": 13, "r": 26, "t": 40}, "xaxis2": {"title": "k"},
         "sliders": [{"currentvalue": {"prefix": "τ = ", "font": {"size": 15}}}]}, True])
    assert layout["font"]["size"] == 22 and layout["height"] == 260  # 200 × 1.3
    assert [layout[a]["tickfont"]["size"] for a in ("xaxis", "yaxis", "xaxis2")] == [16] * 3
    assert layout["margin"] == {"l": 16, "r": 32, "t": 40}  # × 16 / 13, rounded up
    assert data[0]["colorbar"] == {"len": 0.9, "tickfont": {"size": 16}}
    assert "colorbar" not in data[1]
    assert layout["sliders"][0]["currentvalue"] == {"prefix": "τ = ", "font": {"size": 18}}


def test_presenter_tick_labels_grow_with_the_pages_width(fit):
    """16 px up to a 1280-px page (1024 × 768 and unknown widths), 18 px on a 1920-px page
    (with or without a scroll bar), at most 20 px."""
    widths = [None, 0, 1024, 1280, 1600, 1905, 1920, 2560, 3840]
    sizes = js(fit, "ws => ws.map((w) => presenterTickPx(w))", widths)
    assert sizes == [16, 16, 16, 16, 17, 18, 18, 20, 20]


def test_a_wide_page_presents_bigger_tick_labels_and_wider_side_margins(fit):
    data, layout = js(fit, """([data, layout]) => {
        presented(data, layout, false, 1920); return [data, layout]; }""", [
        [{"type": "heatmap"}], {"margin": {"l": 13, "r": 26}, "yaxis": {"title": "q"}}])
    assert [layout[a]["tickfont"]["size"] for a in ("xaxis", "yaxis")] == [18, 18]
    assert data[0]["colorbar"]["tickfont"]["size"] == 18
    assert layout["margin"] == {"l": 18, "r": 36}  # × 18 / 13
    assert layout["font"]["size"] == 22  # the figure's own type does not change
    wide = js(fit, """s => { const v = withView(s, 1920); return [v.layout.xaxis.tickfont.size,
                                                                 v.tickPx]; }""",
              {"data": [], "layout": {}, "view": {"presenter": True}})
    assert wide == [18, 18]  # and noted: the chart is presented again at another width
    assert "tickPx" not in js(fit, "s => withView(s, 1920)", {"data": [], "layout": {}})


def test_the_top_margin_grows_with_labels_beyond_presenter_modes_smallest(fit):
    """The figures give their top margin for 16-px labels: kept up to a 1280-px page, grown
    in proportion beyond (× 18 / 16 at 1920, rounded up), the height by as much (the cells
    keep theirs); one function of the margin, so charts sharing one keep sharing it."""
    assert js(fit, "ts => ts.map(([t, px]) => presentedTop(t, px))",
              [[88, 16], [88, 18], [67, 18], [67, 20], [8, 16]]) == [88, 99, 76, 84, 8]
    for width, top, height in [(1024, 88, 400), (1920, 99, 411)]:
        _, layout = js(fit, """([data, layout, w]) => {
            presented(data, layout, false, w); return [data, layout]; }""",
                       [[], {"height": 400, "margin": {"l": 13, "t": 88}}, width])
        assert (layout["margin"]["t"], layout["height"]) == (top, height), width


def test_a_figure_the_page_sized_itself_keeps_its_height(fit):
    _, layout = js(fit, PRESENTED, [[], {"height": 200}, False])
    assert layout["height"] == 200 and "sliders" not in layout and "margin" not in layout


def test_the_view_is_merged_into_the_figures_intent(fit):
    spec = js(fit, """s => withView(s)""", {
        "data": [], "layout": {"meta": {"attnviz": {"cellText": [9, 9]}, "other": 1},
                               "height": 100},
        "view": {"fit": {"rows": 2}, "lazy": True}})
    assert spec["layout"]["meta"] == {"attnviz": {"cellText": [9, 9], "fit": {"rows": 2},
                                                  "lazy": True}, "other": 1}
    assert spec["layout"]["height"] == 100  # not presenter: as built
    grown = js(fit, "s => withView(s).layout", {"data": [], "layout": {"height": 100},
                                                "view": {"presenter": True}})
    assert grown["height"] == 130 and grown["meta"]["attnviz"]["presenter"] is True


def test_presenter_cell_numbers_are_14_to_32_px_and_10_to_13_otherwise(fit):
    sizes = js(fit, """t => [false, true].map((presenter) => cellFonts([t], ["%{text}"],
                 {meta: {attnviz: {presenter}}}, () => ({w: 1000, h: 1000}))["xy"])""",
               heat([["1"]]))
    assert sizes == [13, 32]
    small = js(fit, """t => [false, true].map((presenter) => cellFonts([t], ["%{text}"],
                 {meta: {attnviz: {presenter}}}, () => ({w: 1000, h: 16}))["xy"])""",
               heat([["1"]]))
    assert small == [12, 0]  # 16 / 1.3 = 12 px: enough on a laptop, too small projected
