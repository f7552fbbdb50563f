"""attnviz — the frame: page config, navigation over pages/, the shared sidebar."""

import streamlit as st

from attnviz.ui import (
    blas,
    lecture_bar,
    memory,
    page_end,
    page_nav,
    presenter,
    share,
    sidebar,
    state,
)

blas.one_blas_thread()  # small matrices, many sessions: see attnviz/ui/blas.py
with state.frame_run():  # pages know they run inside this frame (state.use_app_frame)
    st.set_page_config(page_title="attnviz", page_icon="🔍", layout="wide",
                       initial_sidebar_state=presenter.sidebar_state())
    state.init_state()
    memory.track_session()  # a closed class's memory goes back to the machine (ui/memory.py)
    share.restore_from_link()  # a shared link (?scenario=...) replaces the scenario once

    PAGES = {
        # one line per page, grouped in the sidebar; no icons (offline machines lack emoji fonts)
        "Explore": [
            st.Page("pages/home.py", title="Home", default=True),
            st.Page("pages/playground.py", title="Playground"),
            st.Page("pages/step_by_step.py", title="Step by step"),
            st.Page("pages/masks.py", title="Masks"),
            st.Page("pages/multi_head.py", title="Multi-head"),
            st.Page("pages/positional_encoding.py", title="Positional encoding"),
            st.Page("pages/encoder_decoder.py", title="Encoder–decoder & additive"),
            st.Page("pages/inference.py", title="KV cache & online softmax"),
            st.Page("pages/modern.py", title="RoPE, ALiBi, GQA & QK-norm"),
        ],
        "Teach": [
            st.Page("pages/trace.py", title="Trace a cell"),
            st.Page("pages/compare.py", title="Compare"),
            st.Page("pages/pitfalls.py", title="Pitfalls"),
            st.Page("pages/why_sqrt_dk.py", title="Why √d_k"),
            st.Page("pages/gradients.py", title="Gradients"),
            st.Page("pages/learn.py", title="Learn"),
            st.Page("pages/induction.py", title="Induction heads"),
            st.Page("pages/line_view.py", title="Line view"),
            st.Page("pages/quiz.py", title="Quiz"),
        ],
        "Your data": [
            st.Page("pages/your_attention.py", title="Your own attention"),
            st.Page("pages/model_view.py", title="Model view"),
            st.Page("pages/generate.py", title="Generate"),
            st.Page("pages/share.py", title="Save & share"),
        ],
    }

    navigation = st.navigation(PAGES, expanded=True)  # every page listed, no "View more"
    lecture_bar.show(navigation)  # a guided lecture's bar, step and link (ui/lecture_bar.py)
    page_nav.show(PAGES, navigation)  # presenter mode: previous / next page, PageUp / PageDown
    sidebar.render()  # the scenario's summary: the controls wrote it before the run
    presenter.apply()
    try:
        with page_end.ending_pages():  # a page's end_page() ends the page, not the run
            navigation.run()
    finally:  # also when a page ends early (page_end.end_page) or reruns
        share.keep_in_url(state.get_scenario())  # a reload keeps the scenario
