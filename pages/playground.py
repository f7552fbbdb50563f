"""Playground: edit tokens, embeddings and weights, pick a variant, see every matrix.

The views: :mod:`attnviz.ui.playground_view`, a tab per focus — which stage of the computation
fills the screen (1024×768 and up, no scrolling) — under the lecture view's controls
(:mod:`attnviz.ui.lecture`); cells that the last change moved are outlined. The "All" tab is
the full view (:mod:`attnviz.ui.full_view`): every intermediate with its formula, the
diagnostics and the downloads.
"""

import streamlit as st

from attnviz.ui import controls, layout, presenter, state
from attnviz.ui.playground_view import lecture
from attnviz.ui.safe import md_escape

presenter.compact_page()
scenario = state.get_scenario()
if state.with_true_title(scenario).title and not state.presenter():  # one line, for the matrices
    st.caption(md_escape(state.with_true_title(scenario).title))
pick, scale_box = st.columns(layout.PICK_SCALE, vertical_alignment="top")
with pick:
    scenario = controls.variant_picker("playground", scenario, compact=True)
with st.sidebar:  # a scenario of composed steps: add or drop a step
    controls.steps_menu("playground", scenario)
st.latex(controls.variant_formula(scenario))  # the settings' callbacks ran before the page
with scale_box:
    scenario = controls.settings_controls("playground", scenario, compact=True, only=("scale",))
lecture(scenario)
