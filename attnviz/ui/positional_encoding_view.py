"""The figures of the Positional encoding page: the PE matrix with its drag sliders (base,
d_model), its curves and the similarity of positions, attention with and without PE on the
scenario, and what shuffling the tokens does to the outputs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.figures import heatmap
from attnviz.figures.heatmap import Sizing, Values, axis_title, with_slider
from attnviz.figures.lines import line_chart
from attnviz.scenarios import limits
from attnviz.scenarios.scenario import permutation_check, position_labels
from attnviz.teach.text import common
from attnviz.teach.text import positional_encoding as text
from attnviz.ui import controls, layout, one_map, state
from attnviz.ui.panels import matrix_panel, show_figure, slider_value

BASES = [10, 100, 1000, 10000, 100000]
D_MODELS = [2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]  # the d_model slider's drag steps
DRAG_CELLS = 40_960  # PE values one drag slider may carry (its frames together)
FIG_PE = "positional_encoding_fig_pe"


def set_setting_from_slider() -> None:
    """One of the PE heatmap's sliders was released: the value it stopped on becomes the
    base or d_model control's value (frames are named "base:10", "d_model:32")."""
    setting, _, value = (slider_value(FIG_PE) or "").partition(":")
    if setting == "base" and value in {str(b) for b in BASES}:
        st.session_state["positional_encoding_base"] = int(value)
    elif setting == "d_model" and value.isdigit() and int(value) in range(
            limits.PE_D_MODEL_MIN, limits.PE_D_MODEL_MAX + 1, limits.PE_D_MODEL_STEP):
        st.session_state["positional_encoding_d_model"] = int(value)


def base_on_chart(n_pos: int, d_model: int) -> bool:
    """True when the base's one control is the PE heatmap's own slider (a frame for every base
    fits in DRAG_CELLS): no base slider above it."""
    return n_pos * d_model * len(BASES) <= DRAG_CELLS


def d_model_widths(d_model: int) -> list[int]:
    """The widths the PE heatmap's d_model slider steps through: the grid and this one."""
    return sorted({*D_MODELS, d_model})


def d_model_on_chart(n_pos: int, d_model: int) -> bool:
    """True when d_model's one control is the PE heatmap's own slider (its frames fit in
    DRAG_CELLS): no d_model slider above it."""
    return n_pos * sum(d_model_widths(d_model)) <= DRAG_CELLS


def controls_on_chart(n_pos: int, d_model: int) -> str:
    """The caption saying which of the base and d_model are set with the PE heatmap's own
    sliders ("" when neither is)."""
    on_chart = (base_on_chart(n_pos, d_model), d_model_on_chart(n_pos, d_model))
    return {(True, True): text.BOTH_ON_CHART, (True, False): text.BASE_ON_CHART,
            (False, True): text.D_MODEL_ON_CHART}.get(on_chart, "")


def pe_frames(fig, n_pos: int, d_model: int, base: int) -> list[dict]:
    """Frames for the PE heatmap's drag sliders: every base at this d_model, and a grid of
    d_model values at this base (each slider only while its frames stay within DRAG_CELLS)."""
    def title(d: int, b: int) -> str:
        return axis_title(text.PE_TITLE.format(n_pos=n_pos, d_model=d, base=b),
                          text.AXIS_DIMENSION)

    frames = []
    if base_on_chart(n_pos, d_model):
        frames += with_slider(
            fig, [sinusoidal_positional_encoding(n_pos, d_model, base=float(b)) for b in BASES],
            [str(b) for b in BASES], BASES.index(base), prefix=text.BASE_PREFIX, kind="signed",
            names=[f"base:{b}" for b in BASES], titles=[title(d_model, b) for b in BASES])
    widths = d_model_widths(d_model)
    if d_model_on_chart(n_pos, d_model):
        frames += with_slider(
            fig, [sinusoidal_positional_encoding(n_pos, d, base=float(base)) for d in widths],
            [str(d) for d in widths], widths.index(d_model), prefix=text.D_MODEL_PREFIX,
            kind="signed", names=[f"d_model:{d}" for d in widths],
            x_labels=[[str(j) for j in range(d)] for d in widths],
            titles=[title(d, base) for d in widths])
    return frames


def pe_views(n_pos: int, d_model: int, base: int) -> None:
    """The PE matrix of ``n_pos`` positions and ``d_model`` dimensions at ``base`` (its sliders
    redraw it for other bases and widths while dragged), the curves of chosen dimensions, the
    similarity of positions and two of its rows."""
    pe = sinusoidal_positional_encoding(n_pos, d_model, base=float(base))
    dim_labels = [str(j) for j in range(d_model)]

    # presenter mode: one above the other, across the page (in half of a 1024-px screen the
    # matrix's title, "PE (50 × 32), base 10000 (columns: dimension)", was cut at both ends)
    left, right = (st.container(), st.container()) if state.presenter() \
        else st.columns(2, gap="large")
    with left:
        fig = heatmap(pe, dim_labels, [str(t) for t in range(n_pos)], kind="signed",
                      title=text.PE_TITLE.format(n_pos=n_pos, d_model=d_model, base=base),
                      y_title=common.AXIS_POSITION, x_title=text.AXIS_DIMENSION,
                      values=Values(zmin=-1.0, zmax=1.0),
                      sizing=Sizing(role="square", thin_columns=True))
        # the matrix for other bases and widths: the figure's own sliders redraw it while dragged
        frames = pe_frames(fig, n_pos, d_model, base)
        if frames:
            st.caption(text.BASE_DRAG)
        show_figure(fig, key=FIG_PE, frames=frames,
                    on_slider=set_setting_from_slider if frames else None)
    with right:
        dims_key = "positional_encoding_dims"
        if dims_key in st.session_state:  # drop dimensions that no longer exist (d_model shrank)
            st.session_state[dims_key] = [d for d in st.session_state[dims_key] if d < d_model]
        else:
            st.session_state[dims_key] = [d for d in (0, 1, 6, 14) if d < d_model]
        chosen = st.multiselect(text.DIMS_LABEL, list(range(d_model)), key=dims_key,
                                format_func=lambda j: text.DIM_NAME.format(j=j))
        st.caption(text.LINES)
        fig = line_chart(np.arange(n_pos), {text.DIM_NAME.format(j=j): pe[:, j] for j in chosen},
                         x_title=common.AXIS_POSITION, y_title=text.AXIS_PE_VALUE,
                         y_range=(-1.1, 1.1), height=layout.LINE_CHART_PX)
        show_figure(fig, key="positional_encoding_fig_lines")

    sim = pe @ pe.T  # (n_pos, n_pos)
    left, right = st.columns(2, gap="large")
    with left:
        positions = [str(t) for t in range(n_pos)]
        matrix_panel(text.SIMILARITY_TITLE,
                     heatmap(sim, positions, positions, y_title=common.AXIS_POSITION,
                             x_title=common.AXIS_POSITION, sizing=Sizing(role="square")),
                     key="positional_encoding_fig_similarity", formula=text.SIMILARITY_FORMULA,
                     explanation=text.SIMILARITY)
    with right:
        mid = n_pos // 2
        st.markdown(f"**{text.SIMILARITY_ROWS_TITLE.format(mid=mid)}**")
        st.caption(text.SIMILARITY_ROWS)
        fig = line_chart(np.arange(n_pos), {text.SIMILARITY_ROW.format(t=0): sim[0],
                                            text.SIMILARITY_ROW.format(t=mid): sim[mid]},
                         x_title=text.AXIS_POSITION_T, y_title=text.AXIS_DOT_PRODUCT,
                         height=layout.LINE_CHART_PX)
        show_figure(fig, key="positional_encoding_fig_similarity_rows")


def with_and_without_pe(scenario) -> None:
    """The scenario's weights without and with the positional encoding: side by side; in
    presenter mode one at a time across the page, its height following the screen (side by
    side at 1024 px, eight tokens' cells are too narrow for a number: ui/one_map.py)."""
    names = {"plain": text.WITHOUT_PE, "pe": text.WITH_PE}
    shown = one_map.pick("positional_encoding_pe_map", names, "plain")
    sides = [shown] if shown else list(names)
    cols = [st.container()] if shown else st.columns(2, gap="large")
    for col, side in zip(cols, sides, strict=True):
        use_pe = side == "pe"
        with col:
            result = controls.compute(replace(scenario, use_pe=use_pe))
            if result is None:
                continue
            weights = result.attention.weights
            if weights.ndim == 3:
                st.caption(text.COMPARE_HEAD)
                weights = weights[0]
            fig = heatmap(weights, result.k_labels, result.q_labels, kind="weights",
                          title=names[side], y_title=common.AXIS_QUERY, x_title=common.AXIS_KEY)
            show_figure(fig, key=f"positional_encoding_fig_weights_{side}",
                        fit=one_map.fit(fig) if shown else None)


def shuffled(t: int, kind: str, seed: int) -> np.ndarray:
    """The order of ``t`` tokens to compare: reversed, or (kind "random") a shuffle by
    ``seed`` that is not the identity (while t > 1)."""
    perm = np.arange(t)[::-1]
    if kind == "random":
        rng = np.random.default_rng(int(seed))
        perm = rng.permutation(t)
        while t > 1 and np.array_equal(perm, np.arange(t)):  # an unshuffled order shows nothing
            perm = rng.permutation(t)
    return perm


def permutation_views(scenario, perm: np.ndarray) -> None:
    """The scenario's tokens in the order ``perm``, with and without PE: how far the outputs
    move (metrics), and the outputs before, after and un-permuted."""
    if scenario.t == 1:
        st.info(text.IDENTITY)
    order = "  ".join(f"{i}:{scenario.tokens[p]}" for i, p in enumerate(perm))
    st.text(text.SHUFFLED_ORDER.format(order=order))
    try:
        checks = {pe_on: permutation_check(scenario, perm, with_pe=pe_on)
                  for pe_on in (False, True)}
    except ValueError as exc:
        st.error(text.PERMUTATION_ERROR.format(reason=exc))
        return  # (drawn inside a fragment: the page's end_page would be an exception there)
    m1, m2 = st.columns(2)
    plain = checks[False].max_diff
    m1.metric(text.DIFF_WITHOUT_PE, f"{plain:.3g}")  # the true value, rounding included
    m2.metric(text.DIFF_WITH_PE, f"{checks[True].max_diff:.3g}")
    if 0 < plain < 1e-12:
        m1.caption(text.ROUNDING.format(diff=plain))

    case = st.radio(text.SHOW_OUTPUTS, [False, True], horizontal=True,
                    key="positional_encoding_perm_case",
                    format_func=lambda v: text.WITH_PE if v else text.WITHOUT_PE)
    chk = checks[case]
    labels = position_labels(scenario.tokens)
    shuffled_labels = position_labels([scenario.tokens[p] for p in perm])
    out_dims = controls.dims("o", chk.output.shape[1])
    bound = float(max(np.max(np.abs(chk.output)), np.max(np.abs(chk.shuffled_output)))) or 1.0
    panels = ((text.OUTPUT_ORIGINAL, chk.output, labels, "orig"),
              (text.OUTPUT_SHUFFLED, chk.shuffled_output, shuffled_labels, "shuffled"),
              (text.OUTPUT_UNPERMUTED, chk.unpermuted, labels, "unpermuted"))
    for col, (title, z, rows, name) in zip(st.columns(3), panels, strict=True):
        with col:
            fig = heatmap(z, out_dims, rows, kind="signed", values=Values(zmin=-bound, zmax=bound))
            matrix_panel(title, fig, key=f"positional_encoding_fig_perm_{name}")
