"""The one heatmap builder: colour conventions, labels, cell text, −∞, highlights, payload."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.figures import CELL_TEXT_LIMIT, heatmap, mask_figure, matrix_kind
from attnviz.figures.heatmap import SIGNED_SCALE, TICK_CHARS, WEIGHTS_SCALE, Sizing, Values

LABELS = ["0:the", "1:cat", "2:the"]


def test_weights_use_a_fixed_zero_to_one_scale():
    fig = heatmap(np.full((3, 3), 0.2), LABELS, LABELS, kind="weights")
    trace = fig.data[0]
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert trace.colorscale == heatmap(np.eye(2), kind="weights").data[0].colorscale
    assert WEIGHTS_SCALE == "Viridis"


def test_signed_matrices_are_diverging_and_centred_at_zero():
    z = np.array([[-2.0, 1.0], [0.5, 0.0]])
    assert matrix_kind(z) == "signed"
    trace = heatmap(z).data[0]
    assert trace.zmid == 0.0 and (trace.zmin, trace.zmax) == (-2.0, 2.0)
    assert SIGNED_SCALE == "RdBu_r"


def test_sequential_matrices_are_drawn_over_their_range():
    trace = heatmap(np.array([[1.0, 3.0]]), kind="sequential").data[0]
    assert matrix_kind(np.array([[1.0, 3.0]])) == "sequential"
    assert (trace.zmin, trace.zmax) == (1.0, 3.0)


def test_a_matrix_of_positive_numbers_is_still_signed_by_default():
    trace = heatmap(np.array([[1.0, 3.0]])).data[0]  # scores that happen to be positive
    assert trace.zmid == 0.0 and (trace.zmin, trace.zmax) == (-3.0, 3.0)


def test_shared_range_overrides():
    trace = heatmap(np.array([[0.1, 0.2]]), kind="weights",
                    values=Values(zmin=0.0, zmax=0.5)).data[0]
    assert trace.zmax == 0.5


def test_labels_are_kept_and_rows_read_top_down():
    fig = heatmap(np.eye(3), LABELS, LABELS)
    assert list(fig.data[0].x) == LABELS and list(fig.data[0].y) == LABELS
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.xaxis.type == "category"


def test_small_matrices_show_numbers_and_exact_hover():
    z = np.array([[1 / 3, 2.0]])
    trace = heatmap(z).data[0]
    assert list(trace.text[0]) == ["0.333", "2"]
    assert float(trace.customdata[0][0]) == 1 / 3  # hover shows the exact float64


def test_weights_are_written_with_three_decimals_and_exact_hover():
    z = np.array([[0.00739, 0.236, 0.75661, 0.0]])
    trace = heatmap(z, kind="weights").data[0]
    assert list(trace.text[0]) == ["0.007", "0.236", "0.757", "0.000"]
    assert float(trace.customdata[0][0]) == 0.00739


def test_fixed_writes_decimals_for_any_kind():
    z = np.array([[0.11739, -0.0362, 0.000738, -0.131]])
    # the minus sign "−" (U+2212), as the colour bar's ticks write it
    assert list(heatmap(z).data[0].text[0]) == ["0.117", "−0.0362", "0.000738", "−0.131"]
    trace = heatmap(z, values=Values(fixed=True)).data[0]
    assert list(trace.text[0]) == ["0.117", "−0.036", "0.001", "−0.131"]
    assert float(trace.customdata[0][2]) == 0.000738  # every digit on hover


def test_a_colour_bar_below_gives_the_cells_the_right_margin():
    z = np.array([[0.1, -0.2], [0.3, 0.0], [0.2, 0.1]])
    right, below = heatmap(z, LABELS[:2], LABELS), heatmap(z, LABELS[:2], LABELS,
                                                           sizing=Sizing(bar_below=True))
    bar = below.data[0].colorbar
    assert bar.orientation == "h" and bar.yanchor == "top"
    assert below.layout.margin.r == 10 < right.layout.margin.r
    assert below.layout.margin.b > right.layout.margin.b
    assert below.layout.height == right.layout.height + (below.layout.margin.b
                                                         - right.layout.margin.b)


def test_one_and_two_row_heatmaps_put_their_colour_bar_below():
    """A bar beside one row is ~30 px tall: its ticks overlapped. Below, it has the width."""
    for rows in (1, 2):
        assert heatmap(np.arange(4.0 * rows).reshape(rows, 4)).data[0].colorbar.orientation == "h"
    assert heatmap(np.eye(3)).data[0].colorbar.orientation in (None, "v")
    assert heatmap(np.ones((1, 3)), sizing=Sizing(bar_below=False)).data[0].colorbar.orientation \
        in (None, "v")
    mask = heatmap(np.ones((1, 3)), kind="mask")
    assert mask.layout.margin.b == heatmap(np.ones((3, 3)), kind="mask").layout.margin.b


def test_large_matrices_have_no_cell_text_and_send_float32():
    n = 200
    assert n > CELL_TEXT_LIMIT
    trace = heatmap(np.random.default_rng(0).random((n, n)), kind="weights").data[0]
    assert trace.text is None
    assert np.asarray(trace.z).dtype == np.float32


def test_minus_infinity_is_drawn_as_a_labelled_grey_cell_not_a_number():
    z = np.array([[0.5, -np.inf], [1.0, 2.0]])
    fig = heatmap(z, kind="signed")
    assert np.isnan(np.asarray(fig.data[0].z, dtype=float)[0, 1])  # no colour from the scale
    overlay = fig.data[1]
    assert overlay.text[0][1] == "−∞" and overlay.showscale is False
    assert fig.data[0].text[0][1] == "−∞"


def test_nan_and_plus_infinity_are_written_as_such():
    trace = heatmap(np.array([[np.nan, np.inf, 1.0]])).data[0]
    assert list(trace.text[0]) == ["NaN", "+∞", "1"]


def test_highlighted_rows_and_cells_are_outlined():
    fig = heatmap(np.eye(3), highlight=[1, (2, 0)])
    shapes = fig.layout.shapes
    assert len(shapes) == 2
    assert (shapes[0].y0, shapes[0].y1, shapes[0].x0, shapes[0].x1) == (0.5, 1.5, -0.5, 2.5)
    assert (shapes[1].y0, shapes[1].x0) == (1.5, -0.5)


def test_title_is_written_with_the_top_axis_title():
    fig = heatmap(np.eye(2), title="head 0", x_title="key")
    assert fig.layout.xaxis.title.text == "head 0 (columns: key)"


def test_mask_figure_uses_two_colours_and_ticks():
    fig = mask_figure(np.array([[True, False]]))
    trace = fig.data[0]
    assert trace.showscale is False
    assert list(trace.text[0]) == ["✓", "✕"]
    colours = {c for _, c in trace.colorscale}
    assert len(colours) == 2


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        heatmap(np.eye(2), kind="rainbow")


def test_cells_have_gaps_only_while_they_are_big_enough():
    assert heatmap(np.eye(4), kind="weights").data[0].xgap == 1
    assert heatmap(np.eye(100), kind="weights").data[0].xgap == 0


def test_tick_labels_are_literal_and_short():
    labels = ["0:<b>x</b>", "1:" + "w" * 40]
    fig = heatmap(np.eye(2), labels, labels)
    assert list(fig.layout.xaxis.tickvals) == labels  # categories unchanged
    assert fig.layout.xaxis.ticktext[0] == "0:&lt;b&gt;x&lt;/b&gt;"
    assert len(fig.layout.yaxis.ticktext[1]) == TICK_CHARS
    assert fig.layout.yaxis.ticktext[1].endswith("…")


def test_heatmap_margins_are_set_from_labels_titles_and_colour_bar():
    """The margins fit the labels up front (automargin would otherwise draw twice)."""
    from attnviz.figures import heatmap

    short = heatmap(np.eye(3), ["a", "b", "c"], ["c", "d", "e"]).layout.margin
    long = heatmap(np.eye(3), ["a", "b", "c"], ["a long label", "d", "e"],
                   y_title="query").layout.margin
    assert long.l > short.l + 60  # 10 more characters and an axis title
    mask = heatmap(np.eye(3), kind="mask").layout.margin
    assert mask.r < short.r  # no colour bar, no room for one
    many = heatmap(np.zeros((3, 30)), [f"key_{j:02d}" for j in range(30)]).layout.margin
    assert many.t > short.t  # 30 long column labels turn vertical: taller top margin
    fig = heatmap(np.eye(2))
    assert fig.layout.xaxis.automargin and fig.layout.yaxis.automargin  # still the safety net


def _cells_height(fig) -> float:
    """The plot area's height: the figure's height less its top and bottom margins."""
    return fig.layout.height - fig.layout.margin.t - fig.layout.margin.b


@pytest.mark.parametrize("rows", [1, 4])
def test_a_drag_slider_takes_its_room_below_the_cells_not_from_them(rows):
    """Two sliders under a heatmap (with its colour bar at the right or below): the figure and
    its bottom margin grow together, so the cells keep the height of the chart beside it."""
    from attnviz.figures.heatmap import SLIDER_PX, with_slider

    z = np.arange(rows * 4, dtype=float).reshape(rows, 4)
    plain, dragged = heatmap(z), heatmap(z)
    with_slider(dragged, [z, z + 1], ["a", "b"], 0, prefix="x = ")
    with_slider(dragged, [z, z + 2], ["c", "d"], 0, prefix="y = ", names=["c", "d"])
    assert dragged.layout.height == plain.layout.height + 2 * SLIDER_PX
    assert _cells_height(dragged) == _cells_height(plain)


def test_charts_over_the_same_rows_can_share_a_top_margin_that_holds_turned_labels():
    """Upright labels one line; turned ones more room the longer they are and the bigger
    their type, enough for labels turned by 45° (measured in Chromium: 64 px for
    "0:word_1" at 13 px, where this gives 73)."""
    from attnviz.figures.heatmap import FONT_PX, top_margin, upright

    short, words = ["o0", "o1", "o2"], [f"{i}:word_{i + 1}" for i in range(4)]
    assert upright(short) and not upright(words)
    assert top_margin(short, FONT_PX) == top_margin(short) == 44
    assert 64 < top_margin(words, FONT_PX) < top_margin(words, 16)
    assert top_margin(words + ["12:international"], FONT_PX) > top_margin(words, FONT_PX)
