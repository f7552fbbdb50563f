"""Positional encoding: the PE matrix, its curves and similarity, and why attention needs it.
The figures: :mod:`attnviz.ui.positional_encoding_view`."""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.teach.text import common
from attnviz.teach.text import positional_encoding as text
from attnviz.ui import presenter, state
from attnviz.ui.page_end import end_page
from attnviz.ui.positional_encoding_view import (
    BASES,
    base_on_chart,
    controls_on_chart,
    d_model_on_chart,
    pe_views,
    permutation_views,
    shuffled,
    with_and_without_pe,
)

st.header(text.TITLE)
scenario = state.get_scenario()
presenter.page_intro(text.INTRO)


# --- 1) the encoding on its own (independent of the scenario) -----------------------------------
@st.fragment
def pe_explorer() -> None:
    """The PE matrix, its curves and the similarity of positions for a base, d_model and
    number of positions of one's own. A fragment: its sliders redraw its four charts only,
    not the rest of the page (nothing else depends on them)."""
    st.subheader(text.EXPLORER_TITLE)
    st.caption(text.EXPLORE)
    c1, c2, c3 = st.columns(3)
    n_pos = c1.slider(text.POSITIONS_LABEL, 1, 256, 50, key="positional_encoding_positions")
    # one control per value: the base's and d_model's are the PE heatmap's
    # own sliders while their frames fit (their release sets these keys), else sliders here.
    # Written back every run: a key whose slider is not drawn would otherwise be dropped.
    for key, default in (("positional_encoding_base", 10000),
                         ("positional_encoding_d_model", 32)):
        st.session_state[key] = st.session_state.get(key, default)
    d_model = st.session_state["positional_encoding_d_model"]
    if not d_model_on_chart(n_pos, d_model):
        d_model = c2.slider(text.D_MODEL_LABEL, limits.PE_D_MODEL_MIN, limits.PE_D_MODEL_MAX,
                            step=limits.PE_D_MODEL_STEP,
                            key="positional_encoding_d_model")
    base = st.session_state["positional_encoding_base"]
    if not base_on_chart(n_pos, d_model):
        base = c3.select_slider(text.BASE_LABEL, BASES, key="positional_encoding_base")
    if where := controls_on_chart(n_pos, d_model):
        st.caption(where)
    if base == 1000:
        st.warning(text.BASE_TYPO)
    pe_views(n_pos, d_model, base)


# --- 2) on the scenario's tokens -----------------------------------------------------------------
def on_the_tokens() -> bool:
    """The scenario's weights without and with PE; False (a note instead) for a scenario that
    gives its scores directly."""
    st.subheader(text.SCENARIO_TITLE)
    if scenario.direct:
        st.info(text.DIRECT)
        return False
    compare = f"{text.COMPARE} {text.COMPARE_BASE.format(base=scenario.pe_base)}"
    if not state.presenter():
        st.caption(compare)
    with_and_without_pe(scenario)
    if state.presenter():  # (under the weights: their rows keep the first screen)
        st.caption(compare)
    return True


# presenter mode: the class's own tokens first, so the first screen shows a chart with numbers
# (the PE matrix's 50 × 32 cells hold none), then the encoding under its formula
if state.presenter():
    on_tokens = on_the_tokens()
    st.latex(text.FORMULA)
    pe_explorer()
else:
    st.latex(text.FORMULA)
    pe_explorer()
    on_tokens = on_the_tokens()
if not on_tokens:
    end_page()


@st.fragment
def permutation_demo() -> None:
    """Shuffle the scenario's tokens, with and without PE. A fragment: its radios and seed
    redraw its own metrics and charts only."""
    st.subheader(text.PERMUTATION_TITLE)
    st.write(text.PERMUTATION)
    c1, c2 = st.columns(2)
    kind = c1.radio(text.PERMUTATION_LABEL, list(text.PERMUTATION_KINDS), horizontal=True,
                    key="positional_encoding_perm_kind", format_func=text.PERMUTATION_KINDS.get)
    seed = c2.number_input(common.SEED_LABEL, 0, 10_000, 1, key="positional_encoding_perm_seed",
                           disabled=kind == "reverse")
    permutation_views(scenario, shuffled(scenario.t, kind, seed))


permutation_demo()
