"""Token labels of any length or content never take a heatmap's cells' room.

Long labels are cut on the axis (the hover keeps them whole); the margins are sized from what
is drawn (the unescaped text, a wide character two widths, a combining or invisible one none);
and the figure's height grows with the top margin instead of taking it from the cells.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import position_labels
from attnviz.figures.heatmap import (
    FONT_PX,
    REF_CHARS,
    TICK_CHARS,
    TURNED,
    Sizing,
    Values,
    display_width,
    heatmap,
    short_label,
    tick_text,
    top_margin,
)

WORDS = {
    "short": ["the", "cat", "sat", "on"],
    "eight": ["word_1", "word_2", "word_3", "word_4"],  # "0:word_1": REF_CHARS characters
    "words16": ["internationalise", "representations", "characteristics", "responsibilities"],
    "markup": ["<a&b>", "x<y>&z", "<b>bold</b>", "&amp;&lt;"],
    "emoji": ["😀😀😀", "👩‍👩‍👧‍👦", "🎉party🎉", "ok👍🏽"],
    "cjk": ["日本語のことばです", "中文", "한국어", "ｆｕｌｌ"],
    "rtl": ["مرحبا_بالعالم", "שלום_עולם", "كلمة", "ab\u0301cdé"],
    "huge": ["x" * 500, "<" * 300, "&" * 300, "🎉" * 200],
}


def cells_height(fig) -> int:
    """The plot area's height: the figure's less its top and bottom margins."""
    return fig.layout.height - fig.layout.margin.t - fig.layout.margin.b


def figure_for(words, **kw):
    labels = position_labels(words)
    return heatmap(np.arange(16.0).reshape(4, 4), labels, labels, **kw)


def test_display_width_counts_what_is_drawn():
    assert display_width("abc") == 3
    assert display_width("<a&b>") == 5  # not "&lt;a&amp;b&gt;"
    assert display_width("日本") == 4 and display_width("ｆ") == 2  # wide and fullwidth
    assert display_width("😀") == 2 and display_width("…") == 2  # the ellipsis is wide too
    assert display_width("e\u0301") == 1  # a combining accent takes no room
    assert display_width("a\u200db\u200fc\ufe0f") == 3  # joiner, RTL mark, variation selector


@pytest.mark.parametrize("label", ["x" * 40, "日本語" * 10, "🎉" * 30, "مرحبا" * 8,
                                   "<&>" * 20, "e\u0301" * 30, "👩‍👩‍👧‍👦" * 10])
def test_a_long_label_is_cut_to_tick_chars_widths_with_an_ellipsis(label):
    short = short_label(label)
    assert short.endswith("…") and label.startswith(short[:-1])
    assert display_width(short[:-1]) <= TICK_CHARS - 1  # and the ellipsis (two widths)
    assert not short[:-1].endswith("\u200d")  # a cut never ends on a joiner


def test_ascii_labels_are_cut_as_before():
    assert short_label("x" * 20) == "x" * (TICK_CHARS - 1) + "…"
    assert short_label("x" * TICK_CHARS) == "x" * TICK_CHARS


def test_a_combining_mark_stays_with_its_letter():
    label = "a" * (TICK_CHARS - 2) + "e\u0301" + "zzz"
    assert short_label(label) == "a" * (TICK_CHARS - 2) + "e\u0301…"


def test_tick_text_escapes_after_cutting_and_the_hover_keeps_the_label_whole():
    label = "0:" + "<b>" * 10
    fig = heatmap(np.eye(1), [label], [label])
    assert fig.layout.xaxis.ticktext[0] == tick_text(label)
    assert "<" not in tick_text(label) and tick_text(label).endswith("…")
    assert fig.data[0].x[0] == label  # the category (and so the hover's %{x}) is whole


@pytest.mark.parametrize("kind", ["markup", "emoji", "cjk", "rtl", "words16", "huge"])
def test_labels_never_shrink_the_cells(kind):
    reference = cells_height(figure_for(WORDS["eight"]))
    fig = figure_for(WORDS[kind])
    assert cells_height(fig) >= reference
    assert cells_height(figure_for(WORDS[kind], sizing=Sizing(role="lecture"))) >= cells_height(
        figure_for(WORDS["eight"], sizing=Sizing(role="lecture")))


@pytest.mark.parametrize("kind", list(WORDS))
def test_margins_come_from_the_drawn_text(kind):
    labels = position_labels(WORDS[kind])
    widest = max(display_width(short_label(t)) for t in labels)
    margin = heatmap(np.eye(4), labels, labels).layout.margin
    assert margin.l == max(36, 10 + widest * 8)  # 8 px a character width
    assert margin.t <= 32 + (TICK_CHARS + 1) * 6  # even for the longest labels: they are cut


def test_markup_is_measured_unescaped():
    """"<a&b>" is five characters on screen: its margins are those of "abcde" (the escaped
    "&lt;a&amp;b&gt;" gave 15 and a 2 px tall lecture chart)."""
    odd = heatmap(np.eye(2), ["0:<a&b>", "1:<&>&<"], ["0:<a&b>", "1:<&>&<"])
    plain = heatmap(np.eye(2), ["0:abcde", "1:abcde"], ["0:abcde", "1:abcde"])
    assert odd.layout.margin == plain.layout.margin
    assert odd.layout.height == plain.layout.height
    assert top_margin(["0:<a&b>"], FONT_PX) == top_margin(["0:abcde"], FONT_PX)


def test_short_labels_keep_the_height_they_had():
    """Labels of up to REF_CHARS characters: the figure is as high as the caller asked."""
    assert figure_for(WORDS["short"], sizing=Sizing(role="lecture")).layout.height == 162
    assert figure_for(WORDS["eight"], sizing=Sizing(role="lecture")).layout.height == 162
    assert len("0:word_1") == REF_CHARS


@pytest.mark.parametrize("font", [FONT_PX, 16])
def test_a_shared_top_margin_grows_the_figure_not_the_cells(font):
    """The lecture view: three charts over the same rows share one top margin (the one their
    longest column labels need); the part beyond what 8-character labels need is added to the
    figure, so every chart keeps the default labels' cells."""
    def shared(words):
        labels = position_labels(words)
        top = top_margin(labels, font, tick_chars=REF_CHARS)
        sizing = Sizing(role="lecture", beside=[labels], presenter=font != FONT_PX)
        return heatmap(np.eye(4), labels, labels, sizing=sizing), top

    default, top_default = shared(WORDS["eight"])
    rows_px = 162 if font == FONT_PX else 226  # a lecture chart's 4 rows (44 px on a projector)
    assert default.layout.height == rows_px and default.layout.margin.t == top_default
    for kind in ("words16", "markup", "emoji", "cjk", "rtl", "huge"):
        fig, top = shared(WORDS[kind])
        assert fig.layout.margin.t == top
        assert cells_height(fig) == cells_height(default), kind
        if top > top_default:
            assert fig.layout.xaxis.tickangle == TURNED


def test_an_output_chart_beside_gets_the_rows_shared_margin_and_the_same_cells():
    """The third lecture chart (short column labels "o0".."o2") takes the row's shared top
    margin from the first two and keeps the same cells' height."""
    keys = position_labels(WORDS["words16"])
    top = top_margin(keys, FONT_PX, tick_chars=REF_CHARS)
    row = Sizing(role="lecture", beside=[keys, keys, ["o0", "o1", "o2"]])
    weights = heatmap(np.eye(4), keys, keys, sizing=row)
    output = heatmap(np.ones((4, 3)), ["o0", "o1", "o2"], keys, sizing=row)
    assert output.layout.margin.t == weights.layout.margin.t == top
    assert cells_height(output) == cells_height(weights)
    assert output.layout.xaxis.tickangle is None  # upright labels stay upright


@pytest.mark.parametrize("lo, hi, least", [
    (-14, 14, 60),  # ticks −10, 0, 10: measured 60 px in Chromium
    (-1, 1, 64),  # −1, −0.5, …: 64 px
    (0, 1, 54),  # 0, 0.5, 1: 54 px
    (-8.08, 8.08, 51),  # −5, 0, 5: 51 px
])
def test_a_colour_bars_margin_holds_the_ticks_plotly_writes(lo, hi, least):
    """The margin a vertical colour bar is given holds its tick labels as Chromium draws them
    (smaller, and Plotly's automargin draws the chart a second time)."""
    margin = heatmap(np.array([[lo, hi]] * 3, dtype=float), ["a", "b"], ["x", "y", "z"],
                     values=Values(zmin=lo, zmax=hi), sizing=Sizing(bar_below=False)).layout.margin
    assert least <= margin.r <= least + 24


@pytest.mark.parametrize("lo, hi", [(-1e308, 1e308), (-5e-324, 5e-324), (0.0, 0.0),
                                    (float("nan"), 1.0), (1e300, 1.5e300)])
def test_a_colour_bars_margin_survives_extreme_ranges(lo, hi):
    """Ranges whose span overflows, underflows or is empty still get a finite margin."""
    margin = heatmap(np.array([[1.0, 2.0]] * 3), ["a", "b"], ["x", "y", "z"],
                     values=Values(zmin=lo, zmax=hi), sizing=Sizing(bar_below=False)).layout.margin
    assert 58 <= margin.r < 200
