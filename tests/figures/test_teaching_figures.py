"""Figure builders of the teaching pages: read the figures directly."""

import numpy as np
import pytest

from attnviz.figures import heatmap
from attnviz.figures.charts import entropy_figure, grouped_bars, variance_figure
from attnviz.figures.clickable import add_cell_picker, cell_from_selection, point_from_selection
from attnviz.figures.line_view import LEVELS, head_colour, head_view, line_segments
from attnviz.figures.pitfall_view import cell_labels, panel_figure, shared_range
from attnviz.teach.pitfalls import PITFALLS
from attnviz.teach.sqrt_dk import sqrt_dk_experiment

W = np.array([[0.7, 0.3, 0.0], [0.05, 0.005, 0.945]])


def line_traces(fig):
    return [t for t in fig.data if t.meta and "level" in t.meta]


def test_line_segments_round_opacity_and_skip_tiny_weights():
    rows, cols, level = line_segments(W)
    pairs = {(int(r), int(c)): int(lv) for r, c, lv in zip(rows, cols, level, strict=True)}
    assert pairs == {(0, 0): 28, (0, 1): 12, (1, 0): 2, (1, 2): 38}  # 0.005·40 rounds to 0


def test_head_view_one_line_per_pair_with_opacity_weight():
    fig = head_view(W, ["a", "b"], ["x", "y", "z"])
    drawn = {}
    for t in line_traces(fig):
        xs = np.asarray(t.x, dtype=float)
        ys = np.asarray(t.y, dtype=float)
        for k in range(0, xs.size, 3):
            assert (xs[k], xs[k + 1]) == (0.0, 1.0) and np.isnan(xs[k + 2])
            drawn[(int(ys[k]), int(ys[k + 1]))] = t.opacity
        assert t.line.color == head_colour(0)
    assert set(drawn) == {(0, 0), (0, 1), (1, 0), (1, 2)}
    for (i, j), opacity in drawn.items():
        assert abs(opacity - W[i, j]) <= 0.5 / LEVELS
    # labels only on the axes: queries left, keys right
    assert list(fig.layout.yaxis.ticktext) == ["a", "b"]
    assert list(fig.layout.yaxis2.ticktext) == ["x", "y", "z"]
    assert fig.layout.yaxis2.side == "right"
    assert [t.name for t in fig.data[-2:]] == ["queries", "keys"]


def test_focus_keeps_only_that_tokens_lines_and_marks_it():
    fig = head_view(W, ["a", "b"], ["x", "y", "z"], focus=("query", 1))
    ys = np.concatenate([np.asarray(t.y, dtype=float)[0::3] for t in line_traces(fig)])
    assert set(ys.astype(int)) == {1}
    queries = fig.data[-2]
    assert queries.marker.color[1] != queries.marker.color[0]
    fig = head_view(W, ["a", "b"], ["x", "y", "z"], focus=("key", 0))
    ends = np.concatenate([np.asarray(t.y, dtype=float)[1::3] for t in line_traces(fig)])
    assert set(ends.astype(int)) == {0}
    with pytest.raises(ValueError):
        line_segments(W, focus=("nowhere", 0))


def test_multi_head_colours_and_head_choice():
    stack = np.stack([W, W[::-1]])
    fig = head_view(stack, ["a", "b"], ["x", "y", "z"], heads=[1])
    assert {t.meta["head"] for t in line_traces(fig)} == {1}
    assert {t.line.color for t in line_traces(fig)} == {head_colour(1)}
    fig = head_view(stack, ["a", "b"], ["x", "y", "z"])
    assert [t.name for t in fig.data if t.showlegend is not False][:2] == ["head 0", "head 1"]
    assert head_colour(0) != head_colour(1)
    with pytest.raises(ValueError, match="need 2 query labels"):
        head_view(stack, ["a"], ["x", "y", "z"])


def test_cell_picker_points_and_selection_round_trip():
    z = np.arange(6.0).reshape(2, 3) / 10
    fig = heatmap(z, ["x", "y", "z"], ["a", "b"], kind="weights")
    curve = add_cell_picker(fig, z, ["x", "y", "z"], ["a", "b"])
    picker = fig.data[curve]
    assert list(picker.x) == ["x", "y", "z", "x", "y", "z"]
    assert list(picker.y) == ["a", "a", "a", "b", "b", "b"]
    np.testing.assert_array_equal(picker.customdata, z.ravel())
    assert fig.data[0].hoverinfo == "skip"
    assert fig.layout.hoverdistance == -1
    event = {"selection": {"points": [{"curve_number": curve, "point_index": 4}]}}
    assert cell_from_selection(event, curve, 3) == (1, 1)
    assert cell_from_selection({"selection": {"points": []}}, curve, 3) is None
    assert cell_from_selection({"selection": {"points": [{"curve_number": 0,
                                                          "point_index": 1}]}}, curve, 3) is None
    assert cell_from_selection(None, curve, 3) is None
    assert point_from_selection(event, [curve]) == (curve, 4)


def test_pitfall_panels_label_nan_cells():
    case = PITFALLS["naive_overflow"]()
    wrong = case.panel("wrong", "weights")
    fig = panel_figure(wrong)
    assert list(np.asarray(fig.data[0].text)[1]) == ["0", "NaN", "0"]
    overlay = fig.data[-1]
    assert overlay.name == "not a number"
    assert list(np.asarray(overlay.text)[2]) == ["NaN", "NaN", "NaN"]
    assert cell_labels(np.array([[np.inf, -np.inf, 1.5]]), 3).tolist() == [["∞", "−∞", "1.5"]]
    sums = [case.panel("wrong", "row sums"), case.panel("right", "row sums")]
    assert shared_range(sums) == {"zmin": 0.0, "zmax": 1.0}
    # finite wrong panels get no overlay
    ok = PITFALLS["softmax_over_queries"]().panel("wrong", "output")
    assert len(panel_figure(ok).data) == 1


def test_sqrt_dk_charts():
    res = sqrt_dk_experiment((1, 4, 16), t_k=8, n_queries=50)
    fig = variance_figure(res)
    np.testing.assert_allclose(fig.data[0].y, res.var_unscaled)
    np.testing.assert_allclose(fig.data[2].y, [1, 4, 16])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    fig = entropy_figure(res)
    np.testing.assert_allclose(fig.data[1].y, res.entropy_scaled)
    np.testing.assert_allclose(fig.data[2].y, np.log(8))
    assert fig.data[2].name == "uniform over 8 keys: 2.08"  # ln 8, as a number
    bars = grouped_bars(["k0", "k1"], {"a": [0.2, 0.8], "b": [0.5, 0.5]})
    assert [t.name for t in bars.data] == ["a", "b"] and bars.layout.barmode == "group"


def test_line_view_labels_every_token_on_short_axes_and_every_kth_on_long_ones():
    """256 tick labels per axis took Plotly seconds to lay out: long axes are thinned."""
    from attnviz.figures.line_view import MAX_TICKS, head_view

    short = head_view(np.full((5, 5), 0.2), [f"q{i}" for i in range(5)],
                      [f"k{i}" for i in range(5)])
    assert list(short.layout.yaxis.tickvals) == list(range(5))
    assert list(short.layout.yaxis2.ticktext) == [f"k{i}" for i in range(5)]
    t = 256
    long = head_view(np.full((t, t), 1 / t), [f"q{i}" for i in range(t)],
                     [f"k{i}" for i in range(t)], focus=("query", 3))
    vals = list(long.layout.yaxis.tickvals)
    assert len(vals) <= MAX_TICKS and vals[0] == 0 and vals == list(range(0, t, vals[1]))
    assert list(long.layout.yaxis.ticktext) == [f"q{i}" for i in vals]
