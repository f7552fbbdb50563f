"""The Masks page's controls and views: widgets bound to the scenario's mask fields, the custom
grid with its fills, the mask beside the masked scores, the weights with (drag: every window
width) and without the mask, and the fully masked rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.core.attention import softmax
from attnviz.figures import heatmap, mask_figure
from attnviz.figures.heatmap import CELL_TEXT_LIMIT, with_slider
from attnviz.scenarios import sweep
from attnviz.scenarios.scenario import MASK_KINDS, user_mask
from attnviz.teach.text import common
from attnviz.teach.text import masks as text
from attnviz.ui import one_map, state
from attnviz.ui.mask_editor import mask_editor
from attnviz.ui.panels import show_figure, slider_value

M = common.MATRICES
Q, K = common.AXIS_QUERY, common.AXIS_KEY


def bind(key: str, field: str, value) -> dict:
    """Widget arguments that show ``value`` and store the user's change in ``field``."""
    st.session_state[key] = value
    return dict(key=key, on_change=lambda: state.update(**{field: st.session_state[key]}))


def on_kind() -> None:
    """Store the picked kind; a new custom grid starts from the mask that was in use."""
    old = state.get_scenario()
    kind = st.session_state["masks_kind"]
    if kind not in MASK_KINDS:  # a hand-made client's value (e.g. the index 4): not a kind
        st.session_state["masks_kind"] = old.mask_kind
        return
    changes = {"mask_kind": kind}
    shape = (old.t, len(old.key_tokens))
    grid = old.custom_mask
    if changes["mask_kind"] == "custom" and (grid is None or grid.shape != shape):
        start = user_mask(old, *shape) if old.mask_kind != "custom" else None
        changes["custom_mask"] = np.ones(shape, dtype=bool) if start is None else start
    state.update(**changes)


def custom_mask_controls(scenario, q_lab: list[str], k_lab: list[str]):
    """The custom mask: three fills and the grid of ticks; returns the scenario with it."""
    t_q, t_k = len(q_lab), len(k_lab)
    grid = scenario.custom_mask
    if grid is None or grid.shape != (t_q, t_k):
        st.info(text.CUSTOM_RESET)
        grid = np.ones((t_q, t_k), dtype=bool)
        scenario = state.update(custom_mask=grid)
    fills = {"attend": np.ones((t_q, t_k), bool),
             "causal": np.tri(t_q, t_k, dtype=bool),
             "blocked": np.zeros((t_q, t_k), bool)}
    for col, (name, fill) in zip(st.columns(len(fills)), fills.items(), strict=True):
        if col.button(text.FILL_BUTTON.format(fill=text.FILLS[name]), key=f"masks_fill_{name}",
                      width="stretch"):
            state.set_scenario(state.update(mask_kind="custom", custom_mask=fill),
                               reset_editors=True)
            st.rerun()
    st.caption(text.CUSTOM_HELP)
    edited = mask_editor(grid, key="masks_custom", row_labels=q_lab, col_labels=k_lab,
                         field="custom_mask")
    if not np.array_equal(edited, grid):
        scenario = state.update(custom_mask=edited)
    return scenario


def window_on_chart(t_q: int, t_k: int) -> bool:
    """True when the window width's one control is the weights chart's own slider (a
    sequence short enough to send a frame per width): no width slider above it."""
    return CELL_TEXT_LIMIT >= max(t_q, t_k) > 1


def window_frames(fig, sc, h: int, t_q: int, t_k: int) -> list[dict] | None:
    """The weights over every window width, for the figure's own slider (None when the
    matrices are too large to send them all)."""
    top = max(t_q, t_k) - 1
    if not window_on_chart(t_q, t_k):
        return None
    widths = list(range(top + 1))
    zs = sweep.sweep(sc, "window", widths, "weights", head=h)
    return with_slider(fig, zs, [str(w) for w in widths], min(max(sc.window, 0), top),
                       prefix=text.WINDOW_PREFIX, kind="weights")


def set_window_from_slider() -> None:
    """The weights' slider was released: its width becomes the scenario's window."""
    width = slider_value("masks_fig_weights", int)
    if width is not None:
        state.update(window=width)


def mask_views(scenario, mask, att, head: int, kind: str, blocked_rows, q_lab: list[str],
               k_lab: list[str]) -> None:
    """The mask beside the masked scores, then head ``head``'s weights (``att``) with the mask
    (a window's weights carry a frame for every width) beside the softmax without it; in
    presenter mode one of the four at a time, large (:mod:`attnviz.ui.one_map`)."""
    mask_title = text.MASK_USED_CAUSAL if scenario.spec.causal else text.MASK_USED
    shown = one_map.pick("masks_map", {"mask": mask_title, "masked": M["masked"][0],
                                       "weights": text.WEIGHTS_MASKED,
                                       "nomask": text.WEIGHTS_NO_MASK}, default="weights")

    def mask_panel() -> None:
        _, formula, why = M["mask"]
        _panel(mask_title, mask_figure(mask, k_lab, q_lab, y_title=Q, x_title=K),
               "masks_fig_mask", formula, why, shown)

    def masked_panel() -> None:
        title, formula, why = M["masked"]
        _panel(title, heatmap(att.masked, k_lab, q_lab, y_title=Q, x_title=K),
               "masks_fig_masked", formula, why, shown)

    def weights_panel() -> None:
        _, formula, why = M["weights"]
        fig = heatmap(att.weights, k_lab, q_lab, kind="weights", y_title=Q, x_title=K,
                      highlight=blocked_rows.tolist())
        frames = window_frames(fig, scenario, head, len(q_lab), len(k_lab)) \
            if kind == "window" else None
        _panel(text.WEIGHTS_MASKED, fig, "masks_fig_weights", formula,
               text.WINDOW_DRAG if frames else why, shown, frames=frames,
               on_slider=set_window_from_slider if frames else None)

    def nomask_panel() -> None:
        before_mask = att.scaled  # additive attention: its scores (no scale step)
        _panel(text.WEIGHTS_NO_MASK,
               heatmap(softmax(before_mask), k_lab, q_lab, kind="weights", y_title=Q, x_title=K),
               "masks_fig_nomask", text.NO_MASK_FORMULA, text.NO_MASK, shown)

    panels = {"mask": mask_panel, "masked": masked_panel, "weights": weights_panel,
              "nomask": nomask_panel}
    if shown is not None:
        panels[shown]()
        return
    for pair in (("mask", "masked"), ("weights", "nomask")):
        for col, name in zip(st.columns(2), pair, strict=True):
            with col:
                panels[name]()


def _panel(title: str, fig, key: str, formula: str, why: str, shown: str | None,
           **show) -> None:
    """One map: its title, formula and explanation above it; in presenter mode (``shown``,
    the picked map) the map first, fitted to the screen, its formula and explanation under
    it (the picker names it)."""
    if shown is None:
        st.markdown(f"**{title}**")
        st.latex(formula)
        st.caption(why)
        show_figure(fig, key=key, filename=title, **show)
        return
    show_figure(fig, key=key, filename=title, fit=one_map.fit(fig), **show)
    st.latex(formula)
    st.caption(why)


def fully_masked(att, q_lab: list[str], k_lab: list[str], blocked_rows) -> None:
    """What a row with every key masked gets: its weights and output, as a table."""
    st.subheader(text.FULLY_MASKED_TITLE)
    st.write(common.FULLY_MASKED_ROW)
    if not blocked_rows.size:
        st.text(text.NONE_FULLY_MASKED)
        return
    out, t_k = att.output, len(k_lab)
    frame = pd.DataFrame(np.hstack([att.weights[blocked_rows], out[blocked_rows]]),
                         index=[q_lab[r] for r in blocked_rows],
                         columns=[text.COLUMN_WEIGHT.format(j=j) for j in range(t_k)]
                         + [text.COLUMN_OUTPUT.format(m=m) for m in range(out.shape[1])])
    frame.index.name = Q
    st.dataframe(frame)
