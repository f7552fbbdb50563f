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
from attnviz.ui import state
from attnviz.ui.mask_editor import mask_editor
from attnviz.ui.panels import matrix_panel, show_figure, slider_value

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
    (a window's weights carry a frame for every width) beside the softmax without it."""
    c1, c2 = st.columns(2)
    with c1:
        title, formula, why = M["mask"]
        title = text.MASK_USED_CAUSAL if scenario.spec.causal else text.MASK_USED
        matrix_panel(title, mask_figure(mask, k_lab, q_lab, y_title=Q, x_title=K),
                     key="masks_fig_mask", formula=formula, explanation=why)
    with c2:
        title, formula, why = M["masked"]
        matrix_panel(title, heatmap(att.masked, k_lab, q_lab, y_title=Q, x_title=K),
                     key="masks_fig_masked", formula=formula, explanation=why)
    c1, c2 = st.columns(2)
    with c1:
        title, formula, why = M["weights"]
        fig = heatmap(att.weights, k_lab, q_lab, kind="weights", y_title=Q, x_title=K,
                      highlight_rows=blocked_rows.tolist())
        frames = window_frames(fig, scenario, head, len(q_lab), len(k_lab)) \
            if kind == "window" else None
        st.markdown(f"**{text.WEIGHTS_MASKED}**")
        st.latex(formula)
        st.caption(text.WINDOW_DRAG if frames else why)
        show_figure(fig, key="masks_fig_weights", filename=text.WEIGHTS_MASKED, frames=frames,
                    on_slider=set_window_from_slider if frames else None)
    with c2:
        before_mask = att.scaled  # additive attention: its scores (no scale step)
        matrix_panel(text.WEIGHTS_NO_MASK,
                     heatmap(softmax(before_mask), k_lab, q_lab, kind="weights", y_title=Q,
                             x_title=K),
                     key="masks_fig_nomask", formula=text.NO_MASK_FORMULA,
                     explanation=text.NO_MASK)


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
