"""Step by step: one query through the whole computation, with the scenario's numbers.
The views: :mod:`attnviz.ui.step_by_step_view`."""

import streamlit as st

from attnviz import position_labels
from attnviz.teach.text import step_by_step as text
from attnviz.ui import controls, presenter, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import scenario_caption
from attnviz.ui.step_by_step_view import explained_row, query_and_weights, row_steps

st.header(text.HEADER)
scenario = state.get_scenario()
scenario_caption(scenario)
presenter.page_intro(text.INTRO)

if scenario.direct:
    with st.expander(text.DIRECT_EXPANDER, expanded=not state.presenter()):
        st.caption(text.DIRECT)
        q_lab, k_lab = position_labels(scenario.tokens), position_labels(scenario.source_tokens)
        for col, name, rows in zip(st.columns(3), ("q_in", "k_in", "v_in"),
                                   (q_lab, k_lab, k_lab), strict=True):
            old, letter = getattr(scenario, name), name[0]
            col.markdown(f"**{letter.upper()}**")
            with col:
                matrix_editor(letter.upper(), old, key=f"step_by_step_{name}", row_labels=rows,
                              col_labels=controls.dims(letter, old.shape[1]), field=name)
        scenario = state.get_scenario()  # the editors wrote their edits to it

result = controls.compute(scenario)
if result is None:
    end_page()


@st.fragment
def one_query(result, scenario) -> None:
    """The chosen query (and head) through every step. A fragment: picking another query or
    head reruns this part alone, not the page's header and its Q, K, V editors."""
    multi = scenario.always_heads  # the path goes on through W_O
    i, head = query_and_weights(result, scenario)
    row = explained_row(scenario, result, i, head=head, w_o=scenario.w_o if multi else None)
    row_steps(row, result, scenario, i)


one_query(result, scenario)
