"""Colours that teach: one convention per kind of matrix, the zero rule of the cells' numbers,
one number format per kind, and the projector theme (attnviz/figures/colours.py)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.figures import colours
from attnviz.figures.colours import DEFAULT, PROJECTOR, colour_scale, themed
from attnviz.figures.heatmap import Values, cell_text, exact_text, heatmap, mask_figure

SIGNED_CASES = {
    "all positive": np.array([[1.0, 3.0], [0.5, 2.0]]),
    "all negative (a causal ALiBi bias)": np.array([[0.0, -np.inf], [-0.5, 0.0]]),
    "mixed": np.array([[-2.0, 1.0], [0.5, 0.0]]),
    "all zero": np.zeros((2, 2)),
    "one row": np.array([0.1, 0.2, 0.3]),
}


@pytest.mark.parametrize("name", SIGNED_CASES)
def test_every_signed_matrix_is_diverging_centred_at_zero_with_a_symmetric_range(name):
    z = SIGNED_CASES[name]
    for fig in (heatmap(z, kind="signed"), heatmap(z)):  # "signed" is the default kind
        trace = fig.data[0]
        assert trace.zmid == 0.0
        assert trace.zmin == -trace.zmax and trace.zmax > 0
        finite = np.abs(z[np.isfinite(z)])
        assert trace.zmax == (finite.max() or 1.0)
        assert trace.colorscale == heatmap(-np.eye(2), kind="signed").data[0].colorscale


def test_a_shared_range_is_kept_and_centred():
    trace = heatmap(np.array([[0.1, 0.2]]), kind="signed",
                    values=Values(zmin=-5.0, zmax=5.0)).data[0]
    assert (trace.zmin, trace.zmax, trace.zmid) == (-5.0, 5.0, 0.0)


def test_weights_stay_on_zero_to_one_and_sequential_on_their_range():
    w = heatmap(np.full((2, 2), 0.5), kind="weights").data[0]
    assert (w.zmin, w.zmax) == (0.0, 1.0) and w.zmid is None
    s = heatmap(np.array([[1.0, 3.0]]), kind="sequential").data[0]
    assert (s.zmin, s.zmax) == (1.0, 3.0) and s.zmid is None


def test_signed_matrices_have_no_gaps_that_read_as_zeros():
    signed = heatmap(np.eye(4) - 0.5)
    assert signed.data[0].xgap == signed.data[0].ygap == 0
    masked = heatmap(np.array([[1.0, -np.inf], [2.0, 3.0]]))  # masked scores: the grey −∞ too
    assert [(t.xgap, t.ygap) for t in masked.data] == [(0, 0), (0, 0)]
    weights = heatmap(np.eye(4), kind="weights").data[0]  # grey gaps: on no weights scale
    assert weights.xgap == 1


# --- the zero rule -------------------------------------------------------------------------------

def test_a_number_below_the_precision_shown_reads_zero():
    z = np.array([[1.25, 2.55e-17], [-3.1e-17, 0.75]])  # a RoPE score cell's rounding
    assert cell_text(z, 3).tolist() == [["1.25", "0"], ["0", "0.75"]]
    assert exact_text(z)[0, 1] == "2.5500000000000001e-17"  # the hover keeps the value


def test_the_precision_is_the_last_digit_of_the_largest_number():
    z = np.array([2.0, 0.004, 0.006, -0.0049])
    assert cell_text(z, 3).tolist() == ["2", "0", "0.006", "0"]
    assert cell_text(np.array([100.0, 0.4, 0.6]), 3).tolist() == ["100", "0", "0.6"]


def test_fixed_decimals_write_no_minus_zero():
    z = np.array([0.25, -1e-17, 0.0004, -0.0, 0.0006])
    assert cell_text(z, 3, fixed=True).tolist() == ["0.250", "0.000", "0.000", "0.000", "0.001"]


def test_zero_and_minus_zero_are_written_0_and_specials_kept():
    z = np.array([0.0, -0.0, -np.inf, np.inf, np.nan])
    assert cell_text(z, 3).tolist() == ["0", "0", "−∞", "+∞", "NaN"]


def test_the_heatmap_writes_by_the_rule_and_hovers_exactly():
    z = np.array([[1.0, 2.55e-17], [-0.5, 0.2]])
    trace = heatmap(z).data[0]
    assert trace.text[0][1] == "0"
    assert float(trace.customdata[0][1]) == 2.55e-17


def test_one_number_format_for_the_same_number_per_head_and_concatenated():
    """Multi-head wrote 0.9994 as "1" per head and "0.999" concatenated: the heads' charts and
    the concatenation now write every number alike (one shared range, one rule)."""
    heads = np.array([[[0.9994, -0.2], [0.00031, 0.5]], [[0.75, 0.1], [-0.3, 0.0004]]])
    bound = float(np.abs(heads).max())
    concat = np.concatenate(list(heads), axis=1)
    whole = heatmap(concat).data[0].text
    for h in range(2):
        part = heatmap(heads[h], kind="signed", values=Values(zmin=-bound, zmax=bound)).data[0].text
        assert np.array_equal(part, whole[:, 2 * h: 2 * h + 2])
    assert whole[0, 0] == "0.999" and whole[1, 0] == "0"


# --- the projector theme ------------------------------------------------------------------------

def test_the_projector_theme_swaps_every_kinds_scale_and_keeps_masks():
    figs = {kind: heatmap(np.array([[0.2, 0.7], [0.1, 0.4]]), kind=kind)
            for kind in ("weights", "signed", "sequential")}
    for kind, fig in figs.items():
        themed(fig)
        assert fig.data[0].colorscale == tuple(
            tuple(step) for step in colour_scale(getattr(PROJECTOR, kind)))
        assert fig.data[0].xgap == 0 and fig.data[0].textfont.weight == "bold"
        assert fig.layout.font.weight == "bold"
    mask = mask_figure(np.array([[True, False]]))
    before = mask.data[0].colorscale
    assert themed(mask).data[0].colorscale == before


def test_the_themes_scales_differ_and_are_valid():
    for kind in ("weights", "signed", "sequential"):
        assert colour_scale(getattr(DEFAULT, kind)) != colour_scale(getattr(PROJECTOR, kind))
    signed = colour_scale(PROJECTOR.signed)
    assert signed[0][0] == 0.0 and signed[-1][0] == 1.0
    assert dict((s, c) for s, c in signed)[0.5] == "#ffffff"  # white means 0, as by default
    assert set(colours.THEMES) == {"default", "projector"}


def test_a_sequential_range_does_not_zero_small_true_values():
    """ALiBi's slopes on their 0–1 range: 2⁻⁸ is a slope, not a rounding, and is written."""
    slopes = np.array([[0.25, 0.0625, 0.015625, 0.00390625]])
    text = heatmap(slopes, kind="sequential", values=Values(zmin=0.0, zmax=1.0)).data[0].text
    assert list(text[0]) == ["0.25", "0.0625", "0.0156", "0.00391"]


def test_cells_write_the_minus_sign_the_colour_bar_writes():
    """Cells wrote "-0.02" (a hyphen) where the colour bar beside them writes "−0.02" (U+2212,
    Plotly's ticks); the hover keeps Python's "-" (an exact value to copy)."""
    z = np.array([[-0.0234, 0.05], [-1e-5, -0.012]])
    text = cell_text(z, 3).tolist()
    assert text == [["−0.0234", "0.05"], ["0", "−0.012"]]
    assert not any("-" in t for row in text for t in row)
    assert cell_text(np.array([-0.25]), 3, fixed=True).tolist() == ["−0.250"]
    assert exact_text(z)[0, 0] == "-0.023400000000000001"
