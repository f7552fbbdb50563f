"""Line view: BertViz's head view — a line from each query to each key, opacity = weight."""

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.figures.clickable import point_from_selection
from attnviz.figures.grid import compact
from attnviz.figures.line_view import MAX_TOKENS, head_view
from attnviz.teach.text import common
from attnviz.teach.text import line_view as text
from attnviz.ui import controls, layout, one_map, presenter, state
from attnviz.ui.diagnostics import diagnostics_panel
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import show_figure

scenario = state.get_scenario()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)
result = controls.compute(scenario)
if result is None:
    end_page()
weights = np.asarray(result.attention.weights, dtype=float)
weights = weights if weights.ndim == 3 else np.atleast_2d(weights)[None]  # (n_heads, t_q, t_k)
n_heads, t_q, t_k = weights.shape
q_lab, k_lab = result.q_labels, result.k_labels

focus_options = ["none"] + [f"query:{i}" for i in range(t_q)] + [f"key:{j}" for j in range(t_k)]
if st.session_state.get("line_view_labels") != (q_lab, k_lab):  # first visit or other tokens
    st.session_state["line_view_labels"] = (q_lab, k_lab)
    st.session_state["line_view_focus"] = "none"


def focus_label(option: str) -> str:
    """'none' -> all tokens; 'query:3' -> 'query 3:the'."""
    if option == "none":
        return text.FOCUS_NONE
    side, index = option.split(":")
    name = common.AXIS_QUERY if side == "query" else common.AXIS_KEY
    return text.FOCUS_OPTION.format(side=name,
                                    label=(q_lab if side == "query" else k_lab)[int(index)])


c1, c2 = st.columns(2)
heads = list(range(n_heads))
if n_heads > 1:
    heads = c1.multiselect(common.HEADS_LABEL, heads, default=heads[:8], max_selections=8,
                           format_func=lambda h: common.HEAD_NAME.format(h=h),
                           key="line_view_heads")
choice = c2.selectbox(text.FOCUS_LABEL, focus_options, format_func=focus_label,
                      key="line_view_focus")
focus = None if choice == "none" else (choice.split(":")[0], int(choice.split(":")[1]))

if focus is None and max(t_q, t_k) > MAX_TOKENS:
    st.info(text.TOO_MANY.format(limit=MAX_TOKENS, n=max(t_q, t_k)))
    end_page()
if not heads:
    st.info(text.NO_HEAD)
    end_page()

fig = head_view(weights, q_lab, k_lab, heads=heads, focus=focus)
marker_curves = [len(fig.data) - 2, len(fig.data) - 1]  # the "queries" and "keys" markers


def on_click() -> None:
    """A clicked token becomes the focus; clicking the focused token again clears it."""
    point = point_from_selection(st.session_state.get("line_view_fig"), marker_curves)
    if point is not None:
        side = "query" if point[0] == marker_curves[0] else "key"
        option = f"{side}:{point[1]}"
        st.session_state["line_view_focus"] = "none" if option == choice else option


# presenter mode: the weights wider, without axis titles (named in their title) or colour bar,
# their height following the screen: a number fits each cell on the first screen at 1024×768
presenting = state.presenter()
left, right = st.columns(layout.NARROW_LEFT if presenting else layout.WIDE_LEFT, gap="large")
with left:
    st.caption(text.OPACITY)
    show_figure(fig, key="line_view_fig", on_select=on_click)
with right:
    h = heads[0]
    title = text.HEAD_WEIGHTS.format(h=h) if n_heads > 1 else text.WEIGHTS
    st.markdown(f"**{title}**" + (text.AXES_PRESENTER if presenting else ""))
    rows = [focus[1]] if focus and focus[0] == "query" else []
    cells = [(i, focus[1]) for i in range(t_q)] if focus and focus[0] == "key" else []
    fig = heatmap(weights[h], k_lab, q_lab, kind="weights", x_title=common.AXIS_KEY,
                  y_title=common.AXIS_QUERY, highlight=[*rows, *cells])
    if presenting:  # the scale is in the cells' numbers, the axes in the title
        compact(fig, colour_bar=False)
    show_figure(fig, key="line_view_fig_weights", fit=one_map.fit(fig) if presenting else None)
    diagnostics_panel(weights if n_heads > 1 else weights[0], q_lab, k_lab, key="line_view_diag")
