"""Masks: causal, padding, sliding-window and custom masks, and what −∞ does to the softmax."""

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import position_labels
from attnviz.core.attention import softmax
from attnviz.figures import heatmap, mask_figure
from attnviz.figures.heatmap import CELL_TEXT_LIMIT, with_slider
from attnviz.scenarios import sweep
from attnviz.scenarios.scenario import MASK_KINDS, user_mask
from attnviz.teach.text import common
from attnviz.teach.text import masks as text
from attnviz.ui import controls, heads, state
from attnviz.ui.mask_editor import mask_editor
from attnviz.ui.panels import matrix_panel, released, scenario_caption, show_figure

st.header(text.TITLE)
scenario = state.get_scenario()
scenario_caption(scenario)
st.write(text.INTRO)
q_lab, k_lab = position_labels(scenario.tokens), position_labels(scenario.key_tokens)
t_q, t_k = len(q_lab), len(k_lab)

# 1) the user's mask: kind and its controls. The widgets show the scenario's values and write
#    changes back through callbacks, so a scenario changed elsewhere is never overwritten here.


def bind(key: str, field: str, value) -> dict:
    """Widget arguments that show ``value`` and store the user's change in ``field``."""
    st.session_state[key] = value
    return dict(key=key, on_change=lambda: state.update(**{field: st.session_state[key]}))


def on_kind() -> None:
    """Store the picked kind; a new custom grid starts from the mask that was in use."""
    old = state.get_scenario()
    changes = {"mask_kind": st.session_state["masks_kind"]}
    shape = (old.t, len(old.key_tokens))
    grid = old.custom_mask
    if changes["mask_kind"] == "custom" and (grid is None or grid.shape != shape):
        start = user_mask(old, *shape) if old.mask_kind != "custom" else None
        changes["custom_mask"] = np.ones(shape, dtype=bool) if start is None else start
    state.update(**changes)


def window_frames(fig, sc, h: int) -> list[dict] | None:
    """The weights over every window width, for the figure's own slider (None when the
    matrices are too large to send them all)."""
    top = max(t_q, t_k) - 1
    if max(t_q, t_k) > CELL_TEXT_LIMIT or top < 1:
        return None
    widths = list(range(top + 1))
    zs = sweep.sweep(sc, "window", widths, "weights", head=h)
    return with_slider(fig, zs, [str(w) for w in widths], min(max(sc.window, 0), top),
                       prefix=text.WINDOW_PREFIX, kind="weights")


def land_window() -> None:
    """The weights' slider was released: its width becomes the scenario's window."""
    width = released("masks_fig_weights", int)
    if width is not None:
        state.update(window=width)


kind = st.radio(text.KIND_LABEL, list(MASK_KINDS), horizontal=True, format_func=text.KINDS.get,
                **{**bind("masks_kind", "mask_kind", scenario.mask_kind), "on_change": on_kind})
st.caption(text.KIND_HELP[kind])
if kind == "padding":
    st.slider(text.VALID_LEN_LABEL, 0, t_k,
              **bind("masks_valid_len", "valid_len", min(max(scenario.valid_len, 0), t_k)))
elif kind == "window" and max(t_q, t_k) > 1:
    top = max(t_q, t_k) - 1
    st.slider(text.WINDOW_LABEL, 0, top,
              **bind("masks_window", "window", min(max(scenario.window, 0), top)))
elif kind == "custom":
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
    edited = mask_editor(grid, key="masks_custom", row_labels=q_lab, col_labels=k_lab)
    if not np.array_equal(edited, grid):
        scenario = state.update(custom_mask=edited)
scenario = state.get_scenario()  # with the values the widgets' callbacks stored
if scenario.spec.causal:
    st.info(text.CAUSAL_VARIANT)

# 2) compute with the core; pick a head for multi-head attention
result = controls.compute(scenario)
if result is None:
    st.stop()
att = result.attention
head = heads.head_picker(att, "masks_head") or 0
att = att.head(head)
before_mask = att.scaled  # additive attention: its scores (no scale step)
mask = result.mask
blocked_rows = np.flatnonzero(~mask.any(axis=1))
if not mask.any():
    st.warning(common.MASKS_ALL_BLOCKED)
elif blocked_rows.size:
    rows = ", ".join(str(r) for r in blocked_rows)
    st.warning(text.BLOCKED_ROWS.format(rows=rows))

# 3) the mask, the masked scores, the weights with and without the mask
M = common.MATRICES
Q, K = common.AXIS_QUERY, common.AXIS_KEY
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
    frames = window_frames(fig, scenario, head) if kind == "window" else None
    st.markdown(f"**{text.WEIGHTS_MASKED}**")
    st.latex(formula)
    st.caption(text.WINDOW_DRAG if frames else why)
    show_figure(fig, key="masks_fig_weights", filename=text.WEIGHTS_MASKED, frames=frames,
                on_slider=land_window if frames else None)
with c2:
    matrix_panel(text.WEIGHTS_NO_MASK,
                 heatmap(softmax(before_mask), k_lab, q_lab, kind="weights", y_title=Q,
                         x_title=K),
                 key="masks_fig_nomask", formula=text.NO_MASK_FORMULA,
                 explanation=text.NO_MASK)

# 4) fully masked rows
st.subheader(text.FULLY_MASKED_TITLE)
st.write(common.FULLY_MASKED_ROW)
if blocked_rows.size:
    out = att.output
    frame = pd.DataFrame(np.hstack([att.weights[blocked_rows], out[blocked_rows]]),
                         index=[q_lab[r] for r in blocked_rows],
                         columns=[text.COLUMN_WEIGHT.format(j=j) for j in range(t_k)]
                         + [text.COLUMN_OUTPUT.format(m=m) for m in range(out.shape[1])])
    frame.index.name = Q
    st.dataframe(frame)
else:
    st.text(text.NONE_FULLY_MASKED)
