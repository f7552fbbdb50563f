"""Playground: edit tokens, embeddings and weights, pick a variant, see every matrix.

The lecture view (:mod:`attnviz.ui.lecture`): a focus switch picks which stage of the computation
fills the screen, with the controls that change it on the same screen (1024×768 and up, no
scrolling); cells that the last change moved are outlined. "Every matrix" is the full view
(:mod:`attnviz.ui.full_view`): every intermediate with its formula, the diagnostics and the
downloads.
"""

import streamlit as st

from attnviz.scenarios.presets import truthful
from attnviz.teach.text import playground as text
from attnviz.ui import controls, layout, presenter, state
from attnviz.ui.full_view import every_matrix
from attnviz.ui.lecture import lecture
from attnviz.ui.panels import scenario_caption
from attnviz.ui.safe import md_escape

presenter.compact_page()
scenario = state.get_scenario()
focus = st.session_state.get("playground_focus") or "weights"
if focus == "all":
    st.header(text.HEADER)
    scenario_caption(scenario)
elif truthful(scenario).title and not state.presenter():  # one line, for the matrices
    st.caption(md_escape(truthful(scenario).title))
if state.presenter():  # no sidebar: variant | focus | scale
    pick, focus_box, scale_box = st.columns(layout.PICK_FOCUS_SCALE, vertical_alignment="top")
else:  # beside the sidebar: the scale's choices go under the focus switch
    pick, right = st.columns(layout.PICK_REST, vertical_alignment="top")
    focus_box, scale_box = right.container(), right.container()
with pick:
    scenario = controls.variant_picker("playground", scenario, compact=True)
with focus_box:
    foci = [f for f in text.FOCUS if f != "heads" or scenario.spec.always_heads]
    focus = st.segmented_control(text.FOCUS_LABEL, foci, format_func=text.FOCUS.get,
                                 default="weights", key="playground_focus",
                                 help=text.FOCUS_HELP) or "weights"
    focus = focus if focus in foci else "weights"
st.latex(controls.variant_formula(scenario))  # the settings' callbacks ran before the page
if focus == "all":
    every_matrix(scenario)
else:
    with scale_box:
        scenario = controls.settings_controls("playground", scenario, compact=True,
                                              only=("scale",))
    lecture(scenario, focus)
