"""Masks: causal, padding, sliding-window and custom masks, and what −∞ does to the softmax."""

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import position_labels
from attnviz.core.attention import MultiHeadResult, softmax
from attnviz.figures import heatmap, mask_figure
from attnviz.scenarios.scenario import MASK_KINDS, user_mask
from attnviz.teach.text import common
from attnviz.teach.text import masks as text
from attnviz.ui import controls, state
from attnviz.ui.mask_editor import mask_editor
from attnviz.ui.panels import matrix_panel, scenario_caption

st.header("Masks")
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
    changes = {"mask_kind": st.session_state["mk_kind"]}
    shape = (old.t, len(old.key_tokens))
    grid = old.custom_mask
    if changes["mask_kind"] == "custom" and (grid is None or grid.shape != shape):
        start = user_mask(old, *shape) if old.mask_kind != "custom" else None
        changes["custom_mask"] = np.ones(shape, dtype=bool) if start is None else start
    state.update(**changes)


kind = st.radio("Mask", list(MASK_KINDS), horizontal=True, format_func=text.KINDS.get,
                **{**bind("mk_kind", "mask_kind", scenario.mask_kind), "on_change": on_kind})
st.caption(text.KIND_HELP[kind])
if kind == "padding":
    st.slider("Valid length (real keys; the rest is padding)", 0, t_k,
              **bind("mk_valid_len", "valid_len", min(max(scenario.valid_len, 0), t_k)))
elif kind == "window" and max(t_q, t_k) > 1:
    top = max(t_q, t_k) - 1
    st.slider("Window width (visible neighbours on each side)", 0, top,
              **bind("mk_window", "window", min(max(scenario.window, 0), top)))
elif kind == "custom":
    grid = scenario.custom_mask
    if grid is None or grid.shape != (t_q, t_k):
        st.info(text.CUSTOM_RESET)
        grid = np.ones((t_q, t_k), dtype=bool)
        scenario = state.update(custom_mask=grid)
    fills = {"All may attend": np.ones((t_q, t_k), bool),
             "Causal": np.tri(t_q, t_k, dtype=bool),
             "All blocked": np.zeros((t_q, t_k), bool)}
    for col, (label, fill) in zip(st.columns(len(fills)), fills.items(), strict=True):
        if col.button(f"Fill: {label}", key=f"mk_fill_{label.split()[-1].lower()}",
                      width="stretch"):
            state.set_scenario(state.update(mask_kind="custom", custom_mask=fill),
                               reset_editors=True)
            st.rerun()
    st.caption("Ticked = may attend. Rows are queries, columns are keys.")
    edited = mask_editor(grid, key="mk_custom", row_labels=q_lab, col_labels=k_lab)
    if not np.array_equal(edited, grid):
        scenario = state.update(custom_mask=edited)
scenario = state.get_scenario()  # with the values the widgets' callbacks stored
if scenario.spec.fixed.get("causal"):
    st.info(text.CAUSAL_VARIANT)

# 2) compute with the core; pick a head for multi-head attention
result = controls.compute(scenario)
if result is None:
    st.stop()
att = result.attention
if isinstance(att, MultiHeadResult):
    h = st.selectbox("Head", range(att.n_heads), key="mk_head", format_func=lambda r: f"head {r}")
    att = att.heads[min(h, att.n_heads - 1)]
before_mask = getattr(att, "scaled", att.scores)  # additive attention has no scale step
mask = result.mask
blocked_rows = np.flatnonzero(~mask.any(axis=1))
if not mask.any():
    st.warning(common.MASKS_ALL_BLOCKED)
elif blocked_rows.size:
    rows = ", ".join(str(r) for r in blocked_rows)
    st.warning(f"Query row(s) {rows} (counting from 0) may attend to no key: their weights and "
               "outputs are all 0 (see below).")

# 3) the mask, the masked scores, the weights with and without the mask
M = common.MATRICES
c1, c2 = st.columns(2)
with c1:
    title, formula, why = M["mask"]
    title = "Mask used (yours AND causal)" if scenario.spec.fixed.get("causal") else "Mask used"
    matrix_panel(title, mask_figure(mask, k_lab, q_lab, y_title="query", x_title="key"),
                 key="mk_fig_mask", formula=formula, explanation=why)
with c2:
    title, formula, why = M["masked"]
    matrix_panel(title, heatmap(att.masked, k_lab, q_lab, y_title="query", x_title="key"),
                 key="mk_fig_masked", formula=formula, explanation=why)
c1, c2 = st.columns(2)
with c1:
    title, formula, why = M["weights"]
    matrix_panel("Weights with the mask (renormalised)",
                 heatmap(att.weights, k_lab, q_lab, kind="weights", y_title="query",
                         x_title="key", highlight_rows=blocked_rows.tolist()),
                 key="mk_fig_weights", formula=formula, explanation=why)
with c2:
    matrix_panel("Weights without any mask",
                 heatmap(softmax(before_mask), k_lab, q_lab, kind="weights", y_title="query",
                         x_title="key"),
                 key="mk_fig_nomask", formula=r"A^{\text{no mask}} = \mathrm{softmax}(S')",
                 explanation=text.NO_MASK)

# 4) fully masked rows
st.subheader("A fully masked row")
st.write(common.FULLY_MASKED_ROW)
if blocked_rows.size:
    out = att.output
    frame = pd.DataFrame(np.hstack([att.weights[blocked_rows], out[blocked_rows]]),
                         index=[q_lab[r] for r in blocked_rows],
                         columns=[f"α[{j}]" for j in range(t_k)]
                         + [f"o[{m}]" for m in range(out.shape[1])])
    frame.index.name = "query"
    st.dataframe(frame)
else:
    st.text("No query is fully masked with the current mask; try padding with valid length 0, "
            "or untick a whole row of the custom grid.")
