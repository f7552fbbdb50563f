"""The Playground's lecture view: the controls its foci share, and each focus's charts (a tab of
its own: :mod:`attnviz.ui.playground_view`) — which stage of the computation fills the screen, with
the controls that change it on the same screen (1024×768 and up, no scrolling); cells that the
last change moved are outlined. The weights' and the scaled scores' charts carry
a drag slider (τ, the custom scale) whose frames come from one run
(:func:`attnviz.scenarios.sweep.score_sweep`).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from functools import partial

import numpy as np
import streamlit as st

from attnviz.core.score_mods import SoftCap, split_scale
from attnviz.figures import heatmap
from attnviz.figures.grid import compact
from attnviz.figures.heatmap import (
    CELL_TEXT_LIMIT,
    REF_CHARS,
    UNLABELLED_TOP_PX,
    Sizing,
    with_slider,
)
from attnviz.scenarios import limits, sweep
from attnviz.scenarios.formulas import scaled
from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import ScenarioResult, written
from attnviz.teach.text import common
from attnviz.teach.text import playground as text
from attnviz.ui import controls, layout, state
from attnviz.ui.head_grid import grid, label_room, pooled_heads, scale_words
from attnviz.ui.panels import show_figure, slider_value

LECTURE_SETTINGS = ("temperature", "pe", "heads", "params")  # beside the inputs; scale on top
PREVIOUS = "playground_previous"  # the matrices last shown, to outline what a change moved
M = common.MATRICES
LECTURE_TICK_CHARS = REF_CHARS  # what a lecture chart's labels are cut to (Sizing's "lecture")
SCALE_GRID = sweep.value_grid(limits.CUSTOM_SCALE_STEP, limits.CUSTOM_SCALE_DRAG_MAX,
                              limits.CUSTOM_SCALE_STEP)  # the custom scale's drag steps


def changed_cells(name: str, z: np.ndarray) -> list[tuple[int, int]]:
    """The cells of ``z`` that the last change moved: those that differ from the matrix shown
    under ``name`` on the last run that changed it (none the first time, or when the shape
    changed). A run that changes nothing (a tab switched, a head picked) keeps the outlines,
    so the charts' figures stay the same and are not drawn again."""
    previous = st.session_state.setdefault(PREVIOUS, {})
    old, cells = previous.get(name, (None, []))
    z = np.asarray(z, dtype=float)
    if old is not None and old.shape == z.shape and np.array_equal(z, old, equal_nan=True):
        return cells
    cells = []
    if old is not None and old.shape == z.shape and max(z.shape) <= CELL_TEXT_LIMIT:
        moved = ~np.isclose(z, old, rtol=1e-9, atol=1e-12, equal_nan=True)
        cells = [(int(r), int(c)) for r, c in np.argwhere(moved)]
    previous[name] = (z.copy(), cells)
    return cells


def set_temperature_from_slider(chart_key: str) -> None:
    """The weights' slider was released: its step becomes the scenario's exact temperature
    (and the temperature slider's value), before the rerun computes everything from it."""
    value = slider_value(chart_key, float)
    if value is None:
        return
    state.update(temperature=value)
    st.session_state[state.vkey("playground_temperature")] = value


def set_scale_from_slider(chart_key: str) -> None:
    """The scaled scores' slider was released: its step becomes the scenario's custom scale
    (scale mode "custom", and the scale controls' values), before the rerun."""
    value = slider_value(chart_key, float)
    if value is None:
        return
    state.update(scale_mode="custom", custom_scale=value)
    st.session_state[state.vkey("playground_scale_mode")] = "custom"
    st.session_state[state.vkey("playground_custom_scale")] = value


def scale_frames(fig, scenario, head: int) -> list[dict] | None:
    """Frames of the scaled scores over the custom scale's values, with the figure's slider
    at the scale in use (None when the sequence is too long or the variant fixes its scale)."""
    if scenario.t > CELL_TEXT_LIMIT or scenario.spec.scale_fixed is not None \
            or not scenario.spec.projections:
        return None
    custom = replace(scenario, scale_mode="custom")
    zs = sweep.score_sweep(custom, "custom_scale", SCALE_GRID, "scaled", head=head)
    now = controls.run(scenario).attention.head(head).scale
    active = int(np.argmin([abs(v - now) for v in SCALE_GRID]))
    return with_slider(fig, zs, [f"{v:g}" for v in SCALE_GRID], active,
                       prefix=text.SCALE_PREFIX)


def temperature_frames(fig, scenario, head: int) -> list[dict] | None:
    """Frames of the weights over the temperature slider's values, with the figure's slider
    set to the current temperature (None when the sequence is too long to send them all)."""
    grid = sweep.temperature_grid()
    if scenario.t > CELL_TEXT_LIMIT:
        return None
    zs = sweep.score_sweep(scenario, "temperature", grid, "weights", head=head)
    active = int(np.argmin([abs(v - scenario.temperature) for v in grid]))
    return with_slider(fig, zs, [f"{v:g}" for v in grid], active, prefix=text.TAU_PREFIX,
                       kind="weights", group=TAU_GROUP)


TAU_GROUP = "tau"  # the frames of the charts that follow the weights' τ slider


def tau_on_chart(scenario) -> bool:
    """True when τ's one control is the weights focus's weights chart's own slider (a sequence
    short enough for its frames, and a scenario that computes): no τ slider above the tabs
    (the other foci show τ's effect; the weights focus, where its lesson is, changes it)."""
    if scenario.t > CELL_TEXT_LIMIT:
        return False
    try:
        controls.run(scenario)
    except ValueError:  # no chart: τ stays above (a smaller or larger τ may be the fix)
        return False
    return True


def following_tau(fig, scenario, head: int, matrix: str) -> list[dict] | None:
    """Frames of ``matrix`` ("scaled" or "output") over τ's values, with no slider of their
    own: the chart follows the weights' τ slider in the browser (None where they would take
    a run per value, or the sequence is too long)."""
    if scenario.t > CELL_TEXT_LIMIT or not sweep.reweighable(scenario, "temperature", matrix):
        return None
    grid = sweep.temperature_grid()
    zs = sweep.score_sweep(scenario, "temperature", grid, matrix, head=head)
    active = int(np.argmin([abs(v - scenario.temperature) for v in grid]))
    return with_slider(fig, zs, [f"{v:g}" for v in grid], active, prefix="", slider=False,
                       ranges=True, group=TAU_GROUP)


def scaled_formula(scenario, result: ScenarioResult) -> str:
    """S' as the result computed it: the scale as these settings write it (no √d_k at scale 1,
    the custom factor as its number, no τ at τ = 1), then every other change of the scores the
    result recorded, in order (ALiBi's bias, SSMax's s·log n_i, the cap c·tanh(· / c)): the
    matrix under this title holds exactly that."""
    w = written(scenario, result.mask)
    current = scaled("S", w)
    _, rest = split_scale(getattr(result.attention, "score_mods", ()))  # none: additive
    for i, mod in enumerate(rest):
        if i == 0 and isinstance(mod, SoftCap):  # c·tanh(S / (√d_k c)): one fraction
            current = r"c\,\tanh\!\left(" + scaled("S", w, by="c") + r"\right)"
        else:
            current = mod.written_matrix(current)
    return "S' = " + current


def weights_formula(scenario, result) -> str:
    """A as the weights focus shows it (no masked scores beside it): softmax of S', through the
    mask only when the mask hides a pair."""
    return text.LECTURE_WEIGHTS[written(scenario, result.mask).masked]




def slot_key(slot: int, focus: str = "weights") -> str:
    """The chart key of ``focus``'s ``slot``-th chart (0, 1, 2 from the left): each focus is a
    tab with charts of its own, sent with every run and drawn when its tab is first shown
    (plotly_lazy.js), so a focus switch is the browser's, without a run."""
    return f"playground_fig_{focus}_slot_{slot}"


def lecture_panel(name: str, z, x_labels, y_labels, *, key: str, chart_key: str, title_box,
                  row_labels: bool = True, beside=None, live=None,
                  on_release=set_temperature_from_slider, formula: str = "", **kw):
    """One matrix of the lecture view: its title and formula (``formula``, else the text's) in
    ``title_box``, the heatmap with the cells the last change moved outlined;
    ``key``: the matrix's name in this focus (what the last change moved is kept under it);
    ``chart_key``: the chart's (:func:`slot_key`); ``row_labels=False`` leaves
    the row labels to the panel on its left (the same queries), giving the cells their room;
    ``beside``: the column labels of the row's charts, which share one top margin (their
    rows line up; :class:`attnviz.figures.heatmap.Sizing`). Returns a function
    that shows the chart, given the room the row's charts keep below their cells (``bottom``,
    px: in presenter mode their heights follow the screen and their cells end at the same
    height)."""
    title, general, _ = M[name]
    formula = formula or text.LECTURE_FORMULAS.get(name, general)
    title = text.LECTURE_TITLES.get(name, title)
    title_box.markdown(text.LECTURE_PANEL_TITLE.format(title=title, formula=formula))
    rows = np.atleast_2d(z).shape[0]
    rows_sized = rows <= CELL_TEXT_LIMIT  # a lecture chart's rows; more: one screen, grown
    fig = heatmap(z, x_labels, y_labels, highlight=changed_cells(key, z),
                  sizing=Sizing(role="lecture", row_labels=row_labels, beside=beside,
                                presenter=state.presenter()), **kw)
    frames = live(fig) if live else None

    def show(bottom: int | None = None) -> None:
        fit = None
        if bottom is not None and state.presenter() and rows_sized:
            fit = dict(bottom=bottom, rows=rows, minRow=layout.PRESENTER_MIN_ROW_PX,
                       maxRow=layout.PRESENTER_MAX_ROW_PX)
        show_figure(fig, key=chart_key, filename=title, frames=frames,
                    on_slider=partial(on_release, chart_key) if frames else None,
                    grow=not rows_sized, fit=fit)

    show.bottom = fig.layout.margin.b or 0  # what this chart keeps below its cells
    return show


def x_editor(scenario):
    """The editor of the embeddings X (what every focus starts from); a note for a scenario
    that gives its scores directly."""
    if scenario.direct:
        st.info(text.DIRECT)
        return scenario
    return controls.embedding_editor("playground", scenario)


def weights_box(scenario, *, expanded: bool = True, folded: bool = False,
                label: str = text.WEIGHTS_EXPANDER, key: str = "playground_wide_weights"):
    """The weight matrices' editors (W_Q, W_K, W_V; W_O for a multi-head variant) in an
    expander; folded and drawn only once opened (``key``: its open state) when ``folded`` or
    for a real head wider than the editable widths (GPT-2 small: three 769 × 64 grids, ~150,000
    cells), so that a run that does not show them does not send them."""
    def editors(scenario):
        return controls.weight_editors("playground", scenario,
                                       with_w_o=scenario.always_heads)

    if scenario.d_model <= limits.MAX_D_MODEL and not folded:
        with st.expander(label, expanded=expanded):
            return editors(scenario)
    box = st.expander(label, key=key, on_change="rerun")
    if not box.open:
        return scenario
    with box:
        return editors(scenario)


def w_editor(scenario):
    """The Q K V focus's weight editors under its charts: open (unless a real head's:
    :func:`weights_box`); in presenter mode folded, so the charts keep the screen."""
    if state.presenter():
        return weights_box(scenario, folded=True, label=text.PRESENTER_EDIT_W,
                           key="playground_presenter_w_editor")
    return weights_box(scenario)


def inputs_row(scenario):
    """The controls the lecture view's foci share: the editor of X, the tokens and the
    settings (τ only where the weights chart's slider cannot be its control)."""
    left, right = st.columns(layout.LECTURE_INPUTS, gap="medium")
    with left:
        scenario = x_editor(scenario)
    with right:
        if not scenario.direct:
            scenario = controls.token_controls("playground", scenario)
        only = tuple(k for k in LECTURE_SETTINGS
                     if k != "temperature" or not tau_on_chart(scenario))
        scenario = controls.settings_controls("playground", scenario, compact=True, only=only)
    return scenario


def presenter_settings(scenario) -> tuple[str, ...]:
    """The settings presenter mode's row shows beside the tokens, each in a column of its own
    (of :data:`LECTURE_SETTINGS`: those the scenario has; τ unless the weights chart's own
    slider is its control)."""
    has = {"temperature": not tau_on_chart(scenario), "pe": not scenario.direct,
           "heads": scenario.always_heads, "params": bool(scenario.spec.params)}
    return tuple(k for k in LECTURE_SETTINGS if has[k])


@functools.cache
def preset_params(variant: str) -> frozenset[str]:
    """The variant's own settings that one of its presets sets (the ones its lesson uses)."""
    return frozenset(name for preset in VARIANTS[variant].presets
                     for name in PRESETS[preset.key].build().params)


def folded_params(scenario) -> tuple[str, ...]:
    """The variant's own settings presenter mode keeps behind its "More" button rather than
    in a column of the row: for a variant with more than :data:`layout.PRESENTER_OWN_MOST`
    settings (RoPE's seven, in columns, cut each other's values at 1024 px), each one that a given
    setting replaces (not used), or that is at its default and set by none of the variant's
    presets. A real head's frequencies and attention scaling (not defaults) keep their
    columns."""
    params = scenario.spec.params
    if len(params) <= layout.PRESENTER_OWN_MOST:
        return ()
    named = preset_params(scenario.variant)

    def folded(p) -> bool:
        if p.overridden_by and scenario.param(p.overridden_by):
            return True
        return scenario.param(p.name) == p.default and p.name not in named

    return tuple(p.name for p in params if folded(p))


def presenter_inputs(scenario):
    """Presenter mode's controls: the tokens and each setting (each of the variant's own
    too, but those :func:`folded_params` names, which share a "More" button at the row's end)
    in one row above the charts (short, so the charts keep the screen), the editor folded
    in an expander under them (drawn first, so an edit is in the charts of the same run; the
    page fits one screen while it is closed). Returns the scenario and the container the
    charts go in."""
    settings = presenter_settings(scenario)
    plain = [s for s in settings if s != "params"]
    params = scenario.spec.params if "params" in settings else ()
    folded = folded_params(scenario) if params else ()
    own = [p for p in params if p.name not in folded]  # a column each
    heads = [] if not scenario.always_heads \
        else [layout.PRESENTER_HEAD_SWITCH] if scenario.n_heads <= layout.HEADS_IN_ROW \
        else [layout.PRESENTER_HEAD_SELECT]
    more = [layout.PRESENTER_MORE] if folded else []
    row = st.container(key="playground_presenter_controls")  # one-line labels: presenter.py
    widths = [tokens_width(scenario)] + [1] * len(plain) \
        + [param_width(p, scenario.param(p.name)) for p in own] + more + heads
    tokens, *boxes = row.columns(widths, gap="small")
    head_box = boxes.pop() if heads else None  # the head switch, drawn with the charts
    more_box = boxes.pop().popover(text.PRESENTER_MORE_SETTINGS,
                                   help=text.PRESENTER_MORE_SETTINGS_HELP) if folded else None
    with tokens:
        if not scenario.direct:
            scenario = controls.token_controls("playground", scenario)
    for box, setting in zip(boxes, plain, strict=False):
        with box:
            scenario = controls.settings_controls("playground", scenario, compact=True,
                                                  only=(setting,))
    if params:
        columns = iter(boxes[len(plain):])
        param_boxes = [more_box if p.name in folded else next(columns) for p in params]
        scenario = controls.settings_controls("playground", scenario, only=("params",),
                                              param_boxes=param_boxes)
    charts = st.container()
    if not scenario.direct:
        box = st.expander(text.PRESENTER_EDIT_X, key="playground_presenter_editor",
                          on_change="rerun")
        if box.open:
            with box:
                scenario = x_editor(scenario)
    return scenario, charts, head_box


def param_width(p, value) -> float:
    """The width of a variant setting's column in presenter mode's row (a plain setting's is
    1, :data:`layout.PRESENTER_UNIT_PX`): a number box as wide as its number is written (a real
    head's attention scaling has 16 digits) with its − and + buttons, a model's frequencies as
    wide as their caption needs on three lines and their button."""
    if p.structured:
        return max(1.0, len(p.describe(value)) * layout.PRESENTER_CAPTION_CHAR_PX
                   / layout.PRESENTER_CAPTION_LINES / layout.PRESENTER_UNIT_PX)
    if isinstance(p.default, tuple):
        if not value:
            return 1.0
        px = len(controls.vector_caption(p, value)) * layout.PRESENTER_CAPTION_CHAR_PX \
            / layout.PRESENTER_CAPTION_LINES
        return max(layout.PRESENTER_DROP, px / layout.PRESENTER_UNIT_PX)
    if isinstance(p.default, bool) or not isinstance(p.default, (int, float)):
        return 1.0
    chars = len(repr(value).removesuffix(".0"))  # as the box writes it (JavaScript)
    px = chars * layout.PRESENTER_DIGIT_PX + layout.PRESENTER_BOX_PX + layout.PRESENTER_STEPPERS_PX
    return max(1.0, px / layout.PRESENTER_UNIT_PX)


def tokens_width(scenario) -> float:
    """The width of the tokens' column in presenter mode's row: as wide as the sentence needs,
    between :data:`layout.PRESENTER_TOKENS` and :data:`layout.PRESENTER_TOKENS_MOST`."""
    px = len(" ".join(scenario.tokens)) * layout.PRESENTER_TEXT_CHAR_PX + layout.PRESENTER_BOX_PX
    return min(max(layout.PRESENTER_TOKENS, px / layout.PRESENTER_UNIT_PX),
               layout.PRESENTER_TOKENS_MOST)


def presenter_widths(focus: str, t: int, d_v: int) -> list[float] | int:
    """The charts' widths in presenter mode: the weights' chart (``t`` columns) as wide as its
    numbers need at 14 px on a 1024-px screen (at least a third, at most
    :data:`layout.WEIGHTS_MOST`); the scaled scores (``t`` columns) and the output (``d_v``)
    share the rest by their columns, each at least :data:`layout.OTHERS_LEAST` (on a wide
    screen their numbers then fit too); an output wider than the scores (a real model's head:
    d_v = 64) counts as wide as they are, its many narrow columns a strip of colours (counted
    in full, they would leave the scaled scores, which carry the row labels and a colour bar,
    two pixels for their cells at 1024×768). Equal thirds for the other foci."""
    if focus != "weights":
        return layout.EQUAL_THIRDS
    need = (t * layout.WEIGHTS_COLUMN_PX + layout.WEIGHTS_FRAME_PX) / layout.PRESENTER_ROW_WIDTH_PX
    share = min(max(need, 1 / 3), layout.WEIGHTS_MOST)
    rest = 1 - share
    d_v = min(d_v, t)
    output = min(max(rest * d_v / (t + d_v), layout.OTHERS_LEAST), rest - layout.OTHERS_LEAST)
    return [rest - output, share, output]


def lecture_charts(scenario, result, focus: str, h: int) -> None:
    """The three matrices of ``focus`` (the weights, scores or projections) side by side, of
    head ``h`` of ``result`` (the scenario's)."""
    att, q_lab, k_lab = result.attention, result.q_labels, result.k_labels
    axes = {}  # rows are queries, columns keys: said by the formula, not by axis titles
    out_cols = [f"o{j}" for j in range(att.output.shape[-1])]
    head = att.head(h)
    if focus == "projections" and scenario.spec.projections:
        panels = [(n, getattr(head, n), [f"{n}{j}" for j in range(getattr(head, n).shape[1])],
                   q_lab if n == "q" else k_lab, {}) for n in ("q", "k", "v")]
    elif focus == "scores":
        score_name = "scores" if scenario.spec.projections else "additive_scores"
        panels = [(score_name, head.scores, k_lab, q_lab, axes),
                  ("scaled", head.scaled, k_lab, q_lab, axes),
                  ("masked", head.masked, k_lab, q_lab, axes)]
    else:
        panels = [("scaled", head.scaled, k_lab, q_lab, axes),
                  ("weights", head.weights, k_lab, q_lab, dict(kind="weights", **axes)),
                  ("multi_head_output" if att.n_heads > 1 else "output", att.output, out_cols,
                   q_lab, {})]
    same_rows = focus != "projections"  # Q has the queries' rows, K and V the keys'
    widths = presenter_widths(focus, head.weights.shape[-1], att.output.shape[-1]) \
        if state.presenter() \
        else layout.LABELLED_FIRST if same_rows else layout.EQUAL_THIRDS
    # titles in a row of their own, aligned at the bottom (one may wrap), and one top margin
    # for the charts: the three charts' rows line up, the row labels drawn by the first only
    titles = st.columns(widths, gap="small", vertical_alignment="bottom")
    beside = [x_labels for _, _, x_labels, _, _ in panels] if same_rows else None
    shows = []
    for i, (title_box, (name, z, x_labels, y_labels, kw)) in enumerate(
            zip(titles, panels, strict=True)):
        chart = "output" if name == "multi_head_output" else name  # one key per slot
        live, on_release = None, set_temperature_from_slider
        if focus == "weights" and name == "weights":  # τ dragged in the browser
            live = partial(temperature_frames, scenario=scenario, head=h)
        if focus == "weights" and name in ("scaled", "output"):  # and these follow it
            live = partial(following_tau, scenario=scenario, head=h, matrix=name)
        if focus == "scores" and name == "scaled":  # the custom scale dragged likewise
            live = partial(scale_frames, scenario=scenario, head=h)
            on_release = set_scale_from_slider
        shows.append(lecture_panel(
            name, z, x_labels, y_labels, key=f"{focus}_{chart}", chart_key=slot_key(i, focus),
            title_box=title_box,
            row_labels=i == 0 or not same_rows, beside=beside, live=live, on_release=on_release,
            formula=scaled_formula(scenario, result) if name == "scaled"
            else weights_formula(scenario, result) if focus == "weights"
            and name == "weights" else "", **kw))
    # the row's cells end at one height: every chart keeps the room the tallest keeps below
    bottom = max(show.bottom for show in shows) if same_rows else None
    for col, show in zip(st.columns(widths, gap="small"), shows, strict=True):
        with col:
            show(bottom if same_rows else show.bottom)


def heads_row(att, q_lab, k_lab) -> None:
    """Every head's weights on one shared 0–1 scale, pooled for long sequences: the scale said
    once in words and the row labels on the first head of a row, as on Multi-head (a colour
    bar and the labels beside every head leave cells too small for a number at 1024 px).
    In presenter mode every head is on the first screen (:func:`heads_fit`)."""
    pooled = pooled_heads(q_lab, k_lab, text.HEADS_EXACT)
    per_row = min(att.n_heads, layout.HEADS_PER_ROW)
    grid_rows = -(-att.n_heads // per_row)
    st.caption(scale_words())
    cols = grid(att.n_heads, per_row, first_extra=label_room(pooled.q_labels, per_row))
    for h, col in enumerate(cols):
        with col:
            st.markdown(f"**{common.HEAD_NAME.format(h=h)}**")  # (compact drops the title)
            z = pooled(att.weights[h])
            # presenter mode: the column labels on the first grid row only (the heads under
            # it have the same columns)
            labelled = not state.presenter() or h < per_row
            fig = heatmap(z, pooled.k_labels, pooled.q_labels, kind="weights",
                          title=common.HEAD_NAME.format(h=h) if labelled else "",
                          highlight=changed_cells(f"heads_{h}", z),
                          sizing=Sizing(column_labels=labelled))
            compact(fig, y_labels=h % per_row == 0, colour_bar=False)
            fit = heads_fit(fig, z.shape[0], below=grid_rows - 1 - h // per_row) \
                if state.presenter() else None
            show_figure(fig, key=f"playground_fig_lecture_head_{h}",
                        filename=common.HEAD_NAME.format(h=h), grow=not state.presenter(),
                        fit=fit)


def heads_fit(fig, rows: int, *, below: int) -> dict:
    """Presenter mode: the ``fit`` that makes a head's thumbnail as high as lets every grid row
    of heads end on the first screen (``below``: the grid rows under this one; their rows of
    cells share the room, as high as this one's: plotly_fit.js's ``fit``). The numbers are
    written where the drawn cells hold them at 14 px, else left to the hover (GQA's 8 heads of
    7 tokens at 1024×768: cells ~30 px wide)."""
    bottom = fig.layout.margin.b or 0
    under = below * (layout.HEAD_TITLE_PX + UNLABELLED_TOP_PX + bottom)
    return dict(bottom=bottom + under, rows=rows, below=below * rows,
                minRow=layout.PRESENTER_HEADS_MIN_ROW_PX, maxRow=layout.PRESENTER_MAX_ROW_PX)
