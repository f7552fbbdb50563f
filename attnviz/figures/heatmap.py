"""The heatmap builder used by every page (d2l's ``show_heatmaps``, one place for all matrices).

Conventions:

* rows are queries / tokens (top to bottom, like a printed matrix), columns keys / dimensions;
* labels are unique by position ("0:the", "3:the"): Plotly merges duplicate category labels;
* one colour convention per kind of matrix (:mod:`attnviz.figures.colours`): weights on a fixed
  0..1 sequential scale (Viridis, colour-blind safe); signed matrices — the default kind —
  on a diverging scale centred at 0 with a symmetric range (RdBu reversed: blue < 0 < red),
  also while every value is positive;
* masks use two colours; −inf (a masked score) is drawn as a grey cell saying "−∞";
* numbers are written in the cells of matrices up to ``CELL_TEXT_LIMIT`` on each side, one
  format per kind (:func:`cell_text`: weights three decimals, others three significant digits;
  a number below the precision the matrix is written to reads 0), and the hover shows the
  exact value.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.figures.base import axis, figure
from attnviz.figures.colours import DEFAULT, KINDS, colour_scale
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.shared_lru import SharedLru
from attnviz.teach.text import common

CELL_TEXT_LIMIT = 12  # write numbers in cells up to this many rows and columns
FONT_PX = 13  # the type of a heatmap's labels and cell numbers
_FLOAT32_ABOVE = 128 * 128  # send float32 to the browser for matrices larger than this
_GAPLESS_ABOVE = 64  # no white gaps between cells for matrices with more rows or columns
TICK_CHARS = 16  # longer token labels are cut on the axes (hover and downloads keep them whole)
# column labels up to this many characters fit the height a caller gives; longer ones add the
# extra top margin they need to the figure's height, so they never take the cells' room
REF_CHARS = 8
WEIGHTS_SCALE = DEFAULT.weights
SIGNED_SCALE = DEFAULT.signed
SEQUENTIAL_SCALE = DEFAULT.sequential
MASK_COLOURS = ("#b8b8b8", "#1f78b4")  # forbidden, allowed
MINUS_INF_BG = "#d9d9d9"


def matrix_kind(z: np.ndarray) -> str:
    """``"signed"`` when the matrix has negative entries, else ``"sequential"`` (a guess from
    the values; :func:`heatmap` takes the kind of what a matrix *is*, by default "signed")."""
    finite = z[np.isfinite(z)]
    return "signed" if finite.size and finite.min() < 0 else "sequential"


def cell_text(z: np.ndarray, digits: int, *, fixed: bool = False,
              scale: float | None = None) -> np.ndarray:
    """Cell values as written in a heatmap's cells: ``digits`` significant digits, or ``digits``
    decimals when ``fixed`` (weights: every probability the same width, 0.007 beside 0.236);
    "−∞" for masked cells, "+∞" and "NaN" written as such.

    The zero rule: a number below the precision the matrix is written to reads "0" (fixed:
    "0.000"), never "2.55e-17" or "-0.000". Fixed, that precision is half the last decimal;
    with significant digits, half the last digit written of ``scale`` (by default the largest
    magnitude of the matrix): beside 2.00, 0.004 is below what "2" shows and reads "0". The
    hover keeps the exact value (:func:`exact_text`).
    """
    finite = np.where(np.isfinite(z), z, 0.0)
    top = float(np.max(np.abs(finite), initial=0.0)) if scale is None else abs(float(scale))
    if fixed:
        tiny = 0.5 * 10.0 ** -digits
    else:
        tiny = 0.5 * 10.0 ** (np.floor(np.log10(top)) - digits + 1) if top > 0 else 0.0
    finite = np.where((np.abs(finite) < tiny) | (finite == 0), 0.0, finite)  # no "-0"
    text = np.char.mod(f"%.{digits}f" if fixed else f"%.{digits}g", finite)
    return _specials(z, minus_signs(text))


def minus_signs(text: np.ndarray) -> np.ndarray:
    """Numbers written with the minus sign "−" (U+2212), as Plotly writes its colour bars'
    and axes' ticks, instead of the hyphen "-": one sign for one number on the screen."""
    return np.char.replace(text, "-", "−")


def exact_text(z: np.ndarray) -> np.ndarray:
    """Every digit of each value (17 significant: the float64 itself), for the hover, as Python
    writes it (an ASCII "-": copied from the hover, it pastes into any program)."""
    return _specials(z, np.char.mod("%.17g", np.where(np.isfinite(z), z, 0.0)))


def _specials(z: np.ndarray, text: np.ndarray) -> np.ndarray:
    """``text`` with "NaN", "+∞" and "−∞" where ``z`` holds them."""
    text = np.where(np.isnan(z), "NaN", text)
    text = np.where(np.isposinf(z), "+∞", text)
    return np.where(np.isneginf(z), "−∞", text)


def _texts(z: np.ndarray, kind: str, digits: int, fixed: bool,
           scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The cells' written numbers and their exact hover values (a mask: ✓/✕ and words)."""
    if kind == "mask":
        return (np.where(z > 0.5, "✓", "✕"),
                np.where(z > 0.5, common.FIGURE_MAY_ATTEND, common.FIGURE_MASKED))
    return cell_text(z, digits, fixed=fixed, scale=scale), exact_text(z)


def _colour_args(z: np.ndarray, kind: str, zmin: float | None, zmax: float | None) -> dict:
    """Colour scale and range for a kind of matrix."""
    if kind == "weights":
        return dict(colorscale=colour_scale(WEIGHTS_SCALE), zmin=0.0 if zmin is None else zmin,
                    zmax=1.0 if zmax is None else zmax)
    if kind == "mask":
        c0, c1 = MASK_COLOURS
        return dict(colorscale=colour_scale(((0, c0), (0.5, c0), (0.5, c1), (1, c1))), zmin=0,
                    zmax=1, showscale=False)
    finite = z[np.isfinite(z)]
    if kind == "signed":
        bound = float(np.max(np.abs(finite))) if finite.size else 1.0
        bound = bound or 1.0
        lo = -bound if zmin is None else zmin
        hi = bound if zmax is None else zmax
        return dict(colorscale=colour_scale(SIGNED_SCALE), zmin=lo, zmax=hi, zmid=0.0)
    lo = float(finite.min()) if zmin is None and finite.size else zmin
    hi = float(finite.max()) if zmax is None and finite.size else zmax
    return dict(colorscale=colour_scale(SEQUENTIAL_SCALE), zmin=lo, zmax=hi)


@dataclass(frozen=True)
class Values:
    """How a :func:`heatmap` shows its values: the colour range and the numbers in its cells.

    zmin, zmax : float, optional
        Shared colour range (e.g. the same scale for every head); a signed matrix's numbers
        then follow the zero rule of :func:`cell_text` for that range, as every head's do (a
        sequential one's for its own largest number: ALiBi's slope 0.0039 on a 0–1 range is
        no 0).
    digits : int
        Significant digits of the numbers written in the cells; decimals for ``"weights"``
        (probabilities: 0.007 and 0.236 have the same width, the hover has every digit).
        Keep the default: one number format per kind of matrix on every page.
    fixed : bool, optional
        Write ``digits`` decimals instead of significant digits; by default only for
        ``"weights"``. Differences of weights or outputs use it too: 0.007 beside −0.131 keeps
        the cells' numbers short enough to be read in a narrow chart.
    show : bool, optional
        Write numbers in cells; by default only for matrices up to CELL_TEXT_LIMIT per side.
    """

    zmin: float | None = None
    zmax: float | None = None
    digits: int = 3
    fixed: bool | None = None
    show: bool | None = None


# What a heatmap's height is made for (Sizing.role): "matrix" grows with its rows; "lecture", a
# chart of the Playground's row of three, has rows of the lecture's height (up to
# CELL_TEXT_LIMIT rows) and labels cut to REF_CHARS; "square" is as high as a page's column is
# wide; "strip" is one row (a row of sums, a single query); "list" has a short row per entry
# (one per head).
ROLES = ("matrix", "lecture", "square", "strip", "list")


@dataclass(frozen=True)
class Sizing:
    """What a :func:`heatmap`'s geometry is for, in words: this module makes the layout from
    it, and the chart component fits it to the screen (attnviz/ui/plotly_fit.js).

    role : str
        One of :data:`ROLES`.
    bar_below : bool, optional
        The colour bar under the matrix instead of at its right: a chart in a narrow column
        (Compare's A − B) keeps that width for its cells and their numbers. By default only
        for one or two rows, whose bar at the right is too short for readable ticks.
    colour_bar : bool
        False: the scale is shared with a chart beside it that draws the bar; this one draws
        none but keeps its room, so that the charts of a row have cells of one width.
    row_labels : bool
        False: the chart on its left labels the same rows; this one draws none and keeps no
        room for them (only the overhang of its first turned column label).
    column_labels : bool
        False: the chart above shows the same columns (a grid of heads); none drawn, and
        the top margin is a gap.
    gaps : bool, optional
        Lines between the cells; by default up to 64 rows and columns, and never on the
        diverging scale (a light line reads as a zero). Off for thumbnails of many cells.
    beside : sequence of label lists, optional
        The column labels of every chart in the row over the same rows, this one's included:
        the charts share one top margin, at least :func:`top_margin` of each at the axis type,
        so that their rows line up; labels that do not fit upright are turned by
        :data:`TURNED`. What that margin exceeds the one :data:`REF_CHARS`-character labels
        take is added to the figure's height.
    presenter : bool
        Drawn in presenter mode's type (the chart component gives it): margins and heights
        for that type.
    thin_columns : bool
        The columns are numbered (0, 1, 2, ...): Plotly writes as many of their labels as the
        plot's width holds instead of every one.
    """

    role: str = "matrix"
    bar_below: bool | None = None
    colour_bar: bool = True
    row_labels: bool = True
    column_labels: bool = True
    gaps: bool | None = None
    beside: Sequence[Sequence[str]] | None = None
    presenter: bool = False
    thin_columns: bool = False


def heatmap(z: ArrayLike, x_labels: Sequence[str] | None = None,
            y_labels: Sequence[str] | None = None, *, kind: str | None = None,
            title: str = "", x_title: str = "", y_title: str = "",
            highlight: Sequence[int | tuple[int, int]] = (), values: Values = Values(),
            sizing: Sizing = Sizing()) -> go.Figure:
    """A labelled heatmap of one matrix.

    Parameters
    ----------
    z : array_like of shape (rows, cols)
        1-D input is drawn as one row. −inf is drawn as a grey "−∞" cell.
    x_labels, y_labels : sequence of str, optional
        Column and row labels; must be unique (use :func:`attnviz.position_labels`).
    kind : {"weights", "signed", "sequential", "mask"}, optional
        Colour convention of what the matrix *is* (:mod:`attnviz.figures.colours`), not of its
        values: by default "signed" (diverging, centred at 0, a symmetric range even while
        every entry is positive); "sequential" only for matrices that cannot be negative.
    title, x_title, y_title : str
        The title (written above the columns, with the x axis's name after it) and the axes'.
    highlight : sequence
        Outlined in orange: a row number outlines that row, a (row, col) pair that cell.
    values : Values
        The colour range and the numbers written in the cells.
    sizing : Sizing
        What the geometry is for (a lecture chart, a strip, a thumbnail without labels...).

    Returns
    -------
    go.Figure
    """
    z = np.atleast_2d(np.asarray(z, dtype=float))
    rows, cols = z.shape
    kind = kind or "signed"
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if sizing.role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {sizing.role!r}")
    x_labels = list(x_labels) if x_labels is not None else [str(j) for j in range(cols)]
    y_labels = list(y_labels) if y_labels is not None else [str(i) for i in range(rows)]
    shown = np.where(np.isneginf(z), np.nan, z)  # −inf: a gap, painted over by _hatch_minus_inf
    if z.size > _FLOAT32_ABOVE:
        shown = shown.astype(np.float32)
    show_text = values.show
    if show_text is None:
        show_text = rows <= CELL_TEXT_LIMIT and cols <= CELL_TEXT_LIMIT
    # 1-px gaps would hide small cells; on a diverging scale a light gap reads as a zero
    gaps = sizing.gaps if sizing.gaps is not None else max(rows, cols) <= _GAPLESS_ABOVE
    gap = 1 if gaps and kind != "signed" else 0
    colour_bar = dict(thickness=12, len=0.9, outlinewidth=0, x=1, xpad=8)
    bar_below = rows <= 2 if sizing.bar_below is None else sizing.bar_below
    if rows <= 3 and not bar_below:  # a short bar: three ticks, not five crowded ones
        colour_bar["nticks"] = 3
    trace = dict(z=shown, x=x_labels, y=y_labels, xgap=gap, ygap=gap, hoverongaps=True,
                 # the bar at a fixed distance from the plot (Plotly's default is 2 % of the
                 # width), so its margin does not depend on the width either
                 colorbar=colour_bar, **_colour_args(z, kind, values.zmin, values.zmax))
    hover_rows = (f"{y_title or common.FIGURE_ROW} %{{y}}<br>"
                  f"{x_title or common.FIGURE_COLUMN} %{{x}}<br>")
    if show_text:
        fixed = kind == "weights" if values.fixed is None else values.fixed
        text, exact = _texts(z, kind, values.digits, fixed,
                             scale=range_scale(trace) if kind == "signed" else None)
        trace.update(text=text, texttemplate="%{text}", customdata=exact,
                     hovertemplate=(hover_rows + common.FIGURE_VALUE
                                    + " %{customdata}<extra></extra>"))
    else:
        # float32 holds ~7 significant digits: show 6, every one of them right
        digits_shown = ".6g" if shown.dtype == np.float32 else ".10g"
        trace.update(hovertemplate=hover_rows
                     + f"{common.FIGURE_VALUE} %{{z:{digits_shown}}}<extra></extra>")
    data = [dict(type="heatmap", **trace)]
    tick_chars = REF_CHARS if sizing.role == "lecture" else TICK_CHARS
    tick_px = PRESENTER_TICK_PX if sizing.presenter else FONT_PX
    height = _height(sizing, rows)
    margin = _margins(x_labels, y_labels, title or x_title, y_title,
                      colour_bar=_colour_bar_chars(trace), tick_chars=tick_chars)
    extra = _extra_top(x_labels, margin["t"], bool(title or x_title))  # long column labels
    shared = sizing.beside is not None
    if shared:
        top = max(top_margin(labels, tick_px, tick_chars=tick_chars) for labels in sizing.beside)
        extra = max(0, top - top_margin([], tick_px, reference=True))
        margin["t"] = top
    if CELL_TEXT_LIMIT < rows <= CELL_TEXT_LIMIT * 4:  # every row labelled, rows < a label
        margin["b"] += _overhang(height - margin["t"] - margin["b"], rows)
    layout = dict(
        height=height + extra,
        margin=margin,
        plot_bgcolor=MINUS_INF_BG,
        xaxis=axis(axis_title(title, x_title), side="top", type="category",
                    automargin=True, **_ticks(x_labels, tick_chars),
                    # turned by 45° where they do not stand side by side (Plotly's own choice,
                    # 30° or 90° by the width, needed margins only a second drawing found)
                    **({"tickangle": TURNED} if not upright(x_labels, tick_chars)
                       and (shared or cols <= CELL_TEXT_LIMIT) else {})),
        yaxis=axis(y_title, autorange="reversed", type="category", automargin=True,
                    **_ticks(y_labels, tick_chars)),
        font=dict(size=FONT_PX),
    )
    layout["title"] = {}  # the title is written as the top axis title: they never overlap
    if bar_below and trace.get("showscale", True):  # (masks have no colour bar)
        colour_bar.update(orientation="h", x=0.5, xanchor="center", y=0, yanchor="top",
                          ypad=8, len=1)
        layout["height"] += BAR_BELOW_PX - layout["margin"]["b"]  # the cells keep their height
        layout["margin"].update(r=10, b=BAR_BELOW_PX)
    if not sizing.colour_bar:
        data[0]["showscale"] = False  # (its room kept: the row's charts keep one width)
    if not sizing.row_labels:
        # without automargin the axis keeps no room for labels it does not draw
        layout["yaxis"] = dict(layout["yaxis"], showticklabels=False, title=dict(text=""),
                               automargin=False)
        margin["l"] = UNLABELLED_LEFT_PX
    if sizing.thin_columns:
        layout["xaxis"]["tickmode"] = "auto"
    if not sizing.column_labels:
        layout["xaxis"] = dict(layout["xaxis"], showticklabels=False)
        margin["t"] = UNLABELLED_TOP_PX
    if np.isneginf(z).any():
        layout["plot_bgcolor"] = "white"
        data.append(_minus_inf_trace(z, x_labels, y_labels, show_text, gap=gap))
    shapes = [_outline(r - 0.5, r + 0.5, -0.5, cols - 0.5) if isinstance(r, int | np.integer)
              else _outline(r[0] - 0.5, r[0] + 0.5, r[1] - 0.5, r[1] + 0.5) for r in highlight]
    if shapes:
        layout["shapes"] = shapes
    return figure(data, layout)


def _height(sizing: Sizing, rows: int) -> int:
    """A heatmap's height before long column labels and a bar below add theirs: by its role."""
    if sizing.role == "lecture" and rows <= CELL_TEXT_LIMIT:
        return LECTURE_PAD_PX + (PRESENTER_ROW_PX if sizing.presenter else LECTURE_ROW_PX) * rows
    if sizing.role == "square":
        return SQUARE_PX
    if sizing.role == "strip":
        return STRIP_PX
    if sizing.role == "list":
        return LIST_PAD_PX + LIST_ROW_PX * rows
    row_px = 34 if rows <= CELL_TEXT_LIMIT else max(4, 420 // rows)
    return int(min(640, max(180, 70 + row_px * rows)))


def axis_title(title: str, x_title: str) -> str:
    """A heatmap's top axis title: its title, with the x axis's name after it in words
    ("head 0 (columns: key)"), or either alone."""
    if title and x_title:
        return common.FIGURE_TITLE_COLUMNS.format(title=title, columns=x_title)
    return title or x_title


# Rough text metrics of the 13 px axis font, for the margins below.
_CHAR_PX = 8  # a generous average character width
LINE_PX = 22  # the y axis title
TITLE_PX = 12  # what the top axis title adds to the tick labels' height
# more than CELL_TEXT_LIMIT columns: Plotly stands their labels upright (90°); measured in
# Chromium, the margin they take beyond 6 px a character, what the axis title adds to it, and
# the last one's half reaching right of the cells without a colour bar (a margin Plotly's
# automargin has to grow draws the chart twice: ~2× the time)
TURNED_UPRIGHT_PX = 35
TURNED_TITLE_PX = 16
TURNED_RIGHT_PX = 14
BAR_BELOW_PX = 46  # a colour bar under the matrix, with its tick labels
# the margins of a figure drawn in presenter mode's axis type (the chart component gives it,
# this size up to a 1280-px page and larger on wider ones: attnviz/ui/plotly_present.js
# presenterTickPx, which grows the top margin with them)
PRESENTER_TICK_PX = 16
UNLABELLED_LEFT_PX = 14  # no row labels: the first turned column label's overhang
UNLABELLED_TOP_PX = 8  # no column labels: the gap above the cells (a grid row of heads)
# the heights of Sizing's roles (ROLES)
LECTURE_ROW_PX = 28  # one matrix row of a lecture chart
PRESENTER_ROW_PX = 44  # the same on a projector: room for 22 px numbers
LECTURE_PAD_PX = 50  # a lecture chart's height beyond its rows (axes, margins)
SQUARE_PX = 420  # a square chart (Positional encoding's PE matrix and similarity)
STRIP_PX = 130  # a one-row chart
LIST_PAD_PX = 160  # a list chart's axes and title ...
LIST_ROW_PX = 24  # ... and each of its rows


def _colour_bar_chars(trace: dict) -> int:
    """The width in characters of the colour bar's tick labels (0: no colour bar)."""
    if not trace.get("showscale", True):
        return 0
    lo, hi = trace.get("zmin"), trace.get("zmax")
    with np.errstate(over="ignore", invalid="ignore"):
        span = float(hi) - float(lo) if lo is not None and hi is not None else np.nan
    if not (np.isfinite(span) and span / 5 > np.finfo(float).tiny):  # (None, ∞, NaN, a span
        # that overflows, or too small to have steps: the ends' own lengths)
        ends = [v for v in (lo, hi) if v is not None and np.isfinite(v)]
        return max((len(f"{v:.3g}") + (2 if v < 0 else 1) for v in ends), default=4)
    return max(len(t) + (1 if t.startswith("-") else 0) for t in _bar_ticks(lo, hi))


def _bar_ticks(lo: float, hi: float) -> list[str]:
    """The tick labels a colour bar from ``lo`` to ``hi`` writes at most: Plotly's steps are
    1, 2 or 5 times a power of ten, about five to a bar (fewer on a short bar: shorter
    labels). Plotly's minus sign is wider than a digit: it counts twice in the caller."""
    raw = (hi - lo) / 5
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9)
    count = int(math.floor(hi / step + 1e-9)) - first + 1
    ticks = ((first + i) * step for i in range(max(count, 1)))
    return [f"{t if abs(t) >= step / 2 else 0.0:.6g}" for t in ticks]  # (no "-0")


def bar_margin(chars: int) -> int:
    """The right margin (px) of a vertical colour bar whose tick labels are ``chars``
    characters wide (:func:`_colour_bar_chars`): the bar (12 px), its pad (8), the ticks and
    the labels at ~7 px a character. Measured in Chromium: "−10" takes 60 px, "0.5" 54, "−5"
    51 — a margin Plotly's automargin has to grow draws the chart twice."""
    return max(58, 36 + chars * 7)


def _margins(x_labels: list[str], y_labels: list[str], x_title: str, y_title: str, *,
             colour_bar: int, tick_chars: int = TICK_CHARS) -> dict:
    """Margins that already fit the tick labels, axis titles and colour bar.

    The axes keep ``automargin``, which would grow too-small margins by itself — but only by
    drawing the chart a second time: in the browser a small heatmap then takes about twice as
    long to appear (measured: benchmarks/RESULTS.md). Estimated from the label lengths, the
    margins are rarely too small, so the second drawing rarely happens.
    """
    y_chars = _longest(y_labels, tick_chars)
    turned = not upright(x_labels, tick_chars)
    many = len(x_labels) > CELL_TEXT_LIMIT and turned
    return dict(l=max(36, 10 + y_chars * _CHAR_PX) + (LINE_PX if y_title else 0),
                r=bar_margin(colour_bar) if colour_bar else TURNED_RIGHT_PX if many
                # the last column's label, turned by 45°, reaches right of the cells
                else max(10, turned_px(_longest(x_labels, tick_chars), FONT_PX) + 6) if turned
                else 10,
                t=top_margin(x_labels, tick_chars=tick_chars)
                + ((TURNED_TITLE_PX if many else TITLE_PX) if x_title else 0),
                b=10)


def _overhang(cells_px: float, rows: int) -> int:
    """How far the last row's label reaches below the cells when rows are lower than a label
    (13 px type: a label ~17 px high, centred on its row): the bottom margin it needs beyond
    its 10 px, so that Plotly's automargin need not draw the chart again."""
    return max(0, int(np.ceil((LABEL_PX - cells_px / rows) / 2)))


LABEL_PX = 17.5  # the height of an axis label in 13 px type, measured


def _longest(labels: Sequence[str], tick_chars: int = TICK_CHARS) -> int:
    """The width, in characters, of the longest label an axis writes, as drawn: cut by
    :func:`short_label`, unescaped (``&`` is one character on screen, not ``&amp;``), a wide
    character (CJK, most emoji) two, a combining or invisible one none. Long axes are thinned
    by Plotly, which may show any of them."""
    return max((display_width(short_label(t, tick_chars)) for t in labels), default=1)


def upright(x_labels: Sequence[str], tick_chars: int = TICK_CHARS) -> bool:
    """True when the column labels (cut to ``tick_chars``) fit side by side in a narrow column
    of the page (about 180 px between the margins); else Plotly turns them."""
    return len(x_labels) * (_longest(x_labels, tick_chars) * _CHAR_PX + 6) <= 180


def top_margin(x_labels: Sequence[str], font_px: float | None = None, *,
               reference: bool = False, tick_chars: int = TICK_CHARS) -> int:
    """The top margin (px) a :func:`heatmap` gives its column labels, the ticks and the colour
    bar's end included: upright labels one line; turned ones as high as the longest.

    ``font_px`` (the tick font's size): a margin that holds the labels turned by 45° at any
    width, so Plotly's automargin never grows it — charts side by side over the same rows
    share it and their rows line up (their labels turned by :data:`TURNED`).
    ``reference``: the margin of turned :data:`REF_CHARS`-character labels instead (what a
    caller's height already holds). ``tick_chars``: what the labels are cut to.
    """
    chars = REF_CHARS if reference else _longest(x_labels, tick_chars)
    if not reference and upright(x_labels, tick_chars):
        return math.ceil(44 * (font_px or FONT_PX) / FONT_PX)
    if font_px is None and not reference and len(x_labels) > CELL_TEXT_LIMIT:
        return chars * 6 + TURNED_UPRIGHT_PX  # many columns: Plotly turns them upright (90°)
    return turned_px(chars, font_px or FONT_PX) + 32


def turned_px(chars: int, font_px: float) -> int:
    """How far a column label of ``chars`` characters in ``font_px`` type reaches up (and
    sideways) when turned by 45°: ~0.62 em a character, times sin 45°."""
    return int(chars * font_px * 0.62 * 0.71)


def _extra_top(x_labels: Sequence[str], top: int, titled: bool) -> int:
    """What a heatmap's own top margin ``top`` exceeds the one :data:`REF_CHARS`-character
    labels get: added to the figure's height."""
    return max(0, top - top_margin([], reference=True) - (TITLE_PX if titled else 0))


TURNED = -45  # the angle of turned column labels when charts share a top margin


def display_width(text: str) -> int:
    """How many character widths ``text`` takes on screen: a wide character (CJK, most emoji)
    and the ellipsis "…" (measured: 13 px at 13 px, where a letter or digit takes 7.5) two, a
    combining mark, joiner, variation selector or direction mark none, others one."""
    width = 0
    for char in text:
        if unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if char == "…" or unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def short_label(label: str, limit: int = TICK_CHARS) -> str:
    """``label`` cut to ``limit`` − 1 character widths (:func:`display_width`) and "…", as an
    axis writes it (the hover keeps it whole); a cut never ends on a joiner or leaves a
    combining mark without its letter."""
    if display_width(label) <= limit:
        return label
    width, end = 0, 0
    for i, char in enumerate(label):
        step = display_width(char)
        if width + step > limit - 1:
            break
        width, end = width + step, i + 1
    while end and unicodedata.category(label[end - 1]) == "Cf":  # a joiner or mark left last
        end -= 1
    return label[:end] + "…"


def tick_text(label: str, limit: int = TICK_CHARS) -> str:
    """How a token label is written on an axis: literally (Plotly would otherwise render
    ``<b>``-style tags in it) and cut by :func:`short_label` to ``limit`` widths."""
    label = short_label(label, limit)
    return label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _ticks(labels: list[str], tick_chars: int = TICK_CHARS) -> dict:
    """Tick labels written by :func:`tick_text`; the category values stay the labels themselves
    (so clicks and overlays still match). Long axes keep Plotly's automatic thinning."""
    if len(labels) > CELL_TEXT_LIMIT * 4:
        return {}
    return dict(tickmode="array", tickvals=labels,
                ticktext=[tick_text(t, tick_chars) for t in labels])


def _outline(y0: float, y1: float, x0: float, x1: float) -> dict:
    """An orange rectangle in data (category index) coordinates."""
    return dict(type="rect", x0=x0, x1=x1, y0=y0, y1=y1, xref="x", yref="y",
                line=dict(color="#ff7f0e", width=3), fillcolor="rgba(0,0,0,0)")


def range_scale(trace) -> float | None:
    """The magnitude a heatmap trace's colour range reaches (what the zero rule of
    :func:`cell_text` measures its cells' precision against), None without a finite range."""
    get = trace.get if isinstance(trace, dict) else lambda name: getattr(trace, name, None)
    ends = [v for v in (get("zmin"), get("zmax")) if v is not None]
    ends = [abs(float(v)) for v in ends if np.isfinite(v)]
    return max(ends) if ends else None


def _minus_inf_trace(z: np.ndarray, x_labels, y_labels, show_text: bool, *,
                     gap: int = 1) -> dict:
    """A grey "−∞" trace over the −inf cells so a masked score never reads as a number (with
    the matrix's own gaps between cells)."""
    trace = dict(
        type="heatmap", z=np.where(np.isneginf(z), 0.0, np.nan), x=x_labels, y=y_labels,
        xgap=gap, ygap=gap, colorscale=colour_scale(((0, MINUS_INF_BG), (1, MINUS_INF_BG))),
        showscale=False, text=np.where(np.isneginf(z), "−∞", ""),
        hovertemplate=f"{common.FIGURE_MINUS_INF}<extra></extra>", hoverongaps=False,
        name=common.FIGURE_MASKED,
    )
    if show_text:
        trace["texttemplate"] = "%{text}"
    return trace


def mask_figure(mask: ArrayLike, x_labels: Sequence[str] | None = None,
                y_labels: Sequence[str] | None = None, **kwargs) -> go.Figure:
    """A boolean mask in two colours: blue ✓ = may attend, grey ✕ = masked."""
    return heatmap(np.asarray(mask, dtype=float), x_labels, y_labels, kind="mask", **kwargs)


def with_slider(fig: go.Figure, matrices, labels: Sequence[str], active: int, *,
                prefix: str, kind: str | None = None, digits: int = 3,
                names: Sequence[str] | None = None,
                x_labels: Sequence[Sequence[str]] | None = None,
                y_labels: Sequence[Sequence[str]] | None = None,
                titles: Sequence[str] | None = None, slider: bool = True,
                ranges: bool = False, group: str | None = None) -> list[dict]:
    """Give a :func:`heatmap` a slider that steps through ``matrices`` (one per label) in the
    browser; returns the Plotly frames to send with it (``attnviz.ui.plotly_view``).

    Each frame replaces the heatmap's z, cell text and exact hover values, and the grey "−∞"
    cells over it (the figure gets that trace when a later step has −∞ and the first has none);
    a step larger than CELL_TEXT_LIMIT per side has no numbers in its cells (hover reads them
    from z) and sends no text.
    The slider starts at ``active`` and writes ``prefix`` + the label of the step it is on. A
    figure may get several sliders (each call adds one below the others); their frames then
    need distinct ``names`` (by default the labels). ``x_labels``, ``y_labels``: each matrix's
    column and row labels, when the shape changes from step to step; ``titles``: each step's top
    axis title, so that the figure's own title follows the slider too.

    ``slider=False``: the frames only, for a chart that follows another chart's slider (the
    charts of one ``group``, the frames' Plotly group, step together in the browser:
    ``attnviz/ui/plotly_sliders.js``); ``ranges``: each frame carries its own matrix's colour
    range (as :func:`heatmap` draws it), where the figure's range follows its numbers. The
    frame at ``active`` is marked ``"active": True`` (what the figure shows; the chart
    component takes the mark off before sending).
    """
    names = [str(n) for n in (labels if names is None else names)]
    zs = [np.atleast_2d(np.asarray(z, dtype=float)) for z in matrices]
    overlay = len(fig.data) > 1 and fig.data[1].name == common.FIGURE_MASKED
    if not overlay and any(np.isneginf(z).any() for z in zs):
        fig.add_trace(_minus_inf_trace(np.zeros((1, 1)), [fig.data[0].x[0]],
                                       [fig.data[0].y[0]], fig.data[0].text is not None))
        overlay = True
    # steps larger than CELL_TEXT_LIMIT per side beside smaller ones: each step says whether
    # its numbers are written (a step without text or hover values sends only its z)
    switch = fig.data[0].text is not None and any(max(z.shape) > CELL_TEXT_LIMIT for z in zs)
    args = (zs, names, kind, digits, overlay, switch, x_labels, y_labels, titles, ranges,
            group)
    if sum(z.size for z in zs) > KEPT_FRAME_CELLS:
        built = _frames(fig, *args)
    else:  # kept: a rerun that changes only the value shown (τ released) builds no frame
        key = _frames_key(fig, *args)
        built = _CACHE.get_or_make(key, lambda: _frames(fig, *args))
    frames = [{**f, "active": True} if i == active else dict(f) for i, f in enumerate(built)]
    if ranges:  # the colour bar's room fits every frame's range: the same at every step
        _fit_bar(fig, [f["data"][0] for f in frames])
    if slider:
        add_step_slider(fig, labels, active, prefix=prefix, names=names)
    return frames


KEPT_FRAME_CELLS = 20_000  # frames of at most this many numbers in all are kept (_CACHE)


_CACHE = SharedLru(48)  # built frames (each ≤ KEPT_FRAME_CELLS numbers with their texts)


def _frames_key(fig: go.Figure, zs, names, kind, digits, overlay, switch, x_labels, y_labels,
                titles, ranges, group) -> str:
    """Everything :func:`_frames` reads, hashed: the matrices, the arguments and what it reads
    of the figure's heatmap (its labels, whether it writes numbers, its templates, and its
    colour range where the frames carry none of their own)."""
    data0 = fig.data[0]
    return fingerprint((zs, names, kind, digits, overlay, switch,
                        [list(x) for x in x_labels] if x_labels is not None else None,
                        [list(y) for y in y_labels] if y_labels is not None else None,
                        list(titles) if titles is not None else None, ranges, group,
                        None if data0.x is None else list(data0.x),
                        None if data0.y is None else list(data0.y), data0.text is not None,
                        str(data0.texttemplate), str(data0.hovertemplate),
                        None if ranges else repr((data0.zmin, data0.zmax, data0.zmid))))


def _frames(fig: go.Figure, zs: list[np.ndarray], names: list[str], kind: str | None,
            digits: int, overlay: bool, switch: bool, x_labels, y_labels, titles,
            ranges: bool, group: str | None) -> tuple[dict, ...]:
    """The frames of :func:`with_slider` (without the mark of the one shown)."""
    frames = []
    for i, (name, z) in enumerate(zip(names, zs, strict=True)):
        xs = list(x_labels[i]) if x_labels is not None else list(fig.data[0].x)
        ys = list(y_labels[i]) if y_labels is not None else list(fig.data[0].y)
        trace = dict(z=np.where(np.isneginf(z), np.nan, z))
        if x_labels is not None:
            trace["x"] = xs
        if y_labels is not None:
            trace["y"] = ys
        written = fig.data[0].text is not None and max(z.shape) <= CELL_TEXT_LIMIT
        own = None  # with ranges, the frame's own colour range (its zero rule measures by it)
        if ranges:
            colours = _colour_args(z, kind or "signed", None, None)  # heatmap's default kind
            own = {k: colours[k] for k in ("zmin", "zmax", "zmid") if k in colours}
        if written:
            kind_i = kind or matrix_kind(z)
            text, exact = _texts(z, kind_i, digits, kind_i == "weights",
                                 scale=range_scale(own if own else fig.data[0])
                                 if kind_i == "signed" else None)
            trace.update(text=text, customdata=exact)
        if switch:  # numbers written in this step's cells, or not (then hover reads z)
            trace.update(texttemplate=fig.data[0].texttemplate if written else "",
                         hovertemplate=fig.data[0].hovertemplate if written else
                         fig.data[0].hovertemplate.replace("%{customdata}", "%{z:.10g}"))
        data, traces = [trace], [0]
        if overlay:
            grey = _minus_inf_trace(z, xs, ys, show_text=False)
            data.append(dict(z=grey["z"].astype(np.float32), x=xs, y=ys))  # 0 or NaN: exact
            if written:
                data[-1]["text"] = grey["text"]
            if switch:
                data[-1]["texttemplate"] = "%{text}" if written else ""
            traces.append(1)
        if own:
            trace.update(own)
        frame = dict(name=name, data=data, traces=traces)
        if group is not None:
            frame["group"] = group
        xaxis = {}
        if x_labels is not None:  # the axis spans this step's columns, not the first drawing's
            xaxis["range"] = [-0.5, len(xs) - 0.5]
            xaxis.update(_ticks(xs) or {"tickmode": "auto"})  # and its ticks
        if titles is not None:
            xaxis["title"] = {"text": titles[i]}
        if xaxis:
            frame["layout"] = {"xaxis": xaxis}
        if y_labels is not None:  # first row at the top, as the heatmap draws it
            frame.setdefault("layout", {})["yaxis"] = {
                "range": [len(ys) - 0.5, -0.5], **(_ticks(ys) or {"tickmode": "auto"})}
        frames.append(frame)
    return tuple(frames)


def _fit_bar(fig: go.Figure, traces: Sequence[dict]) -> None:
    """Widen a vertical colour bar's right margin to the widest range among ``traces`` (the
    frames' zmin and zmax), so the figure is laid out alike whichever frame it starts at."""
    bar = getattr(fig.data[0], "colorbar", None)
    if fig.data[0].showscale is False or getattr(bar, "orientation", None) == "h":
        return
    widest = max(_colour_bar_chars(dict(zmin=t.get("zmin"), zmax=t.get("zmax"))) for t in traces)
    fig.update_layout(margin_r=max(fig.layout.margin.r or 0, bar_margin(widest)))


def add_step_slider(fig: go.Figure, labels: Sequence[str], active: int, *, prefix: str,
                    names: Sequence[str] | None = None, clear: int = 0) -> None:
    """Give ``fig`` a slider (below any it has) whose steps show the frames named ``names``
    (by default the ``labels``; no tick labels: there may be 100 steps; the current value is
    written after ``prefix``); the figure and its bottom margin grow by :data:`SLIDER_PX`, so
    the cells keep their size (Plotly would otherwise take the slider's room from them).
    ``clear``: px kept free above the slider for tick labels under the plot (a bar chart's
    categories; a heatmap's column labels are on top)."""
    names = labels if names is None else names
    steps = [dict(label=str(label), method="animate",
                  args=[[str(name)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                          transition=dict(duration=0))])
             for label, name in zip(labels, names, strict=True)]
    below = len(fig.layout.sliders)
    bar = any(getattr(getattr(t, "colorbar", None), "orientation", None) == "h" for t in fig.data)
    top = 4 + clear + below * SLIDER_PX + (BAR_BELOW_PX if bar else 0)  # under a bar below
    fig.update_layout(
        sliders=[*fig.layout.sliders,
                 dict(active=active, steps=steps, pad=dict(t=top, b=0),
                      len=1.0, x=0,
                      currentvalue=dict(prefix=prefix, xanchor="left",
                                        font=dict(size=15, color="#31333F")),
                      ticklen=0, minorticklen=0, tickwidth=0,
                      font=dict(size=1, color="rgba(0,0,0,0)"))],
        height=(fig.layout.height or 300) + SLIDER_PX + clear,
        margin_b=(fig.layout.margin.b or 0) + SLIDER_PX + clear)


SLIDER_PX = 62  # what a slider adds below the heatmap (it needs 52–59: pad, value, rail, grip;
# a bottom margin Plotly's automargin has to grow draws the chart twice)

