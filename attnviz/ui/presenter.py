"""Presenter mode: bigger type for a projector.

The sidebar toggle (``state.PRESENTER``) switches it on. :func:`apply` (called by app.py on
every run) injects one static CSS block; it contains no user data. Figures grow in
``panels.show_figure`` and the Playground collapses its editors (``state.presenter()``).
"""

from __future__ import annotations

import streamlit as st

from attnviz.ui import state

PRESENTER_CSS = """
<style>
[data-testid="stMain"] { font-size: 1.3rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li,
[data-testid="stMain"] [data-testid="stText"],
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.3rem; }
[data-testid="stMain"] h1 { font-size: 3rem; }
[data-testid="stMain"] h2 { font-size: 2.4rem; }
[data-testid="stMain"] h3 { font-size: 2rem; }
[data-testid="stMain"] .katex { font-size: 1.5em; }
[data-testid="stMain"] code { font-size: 1.15rem; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.2rem; }
[data-testid="stMain"] [data-baseweb="select"] div,
[data-testid="stMain"] input { font-size: 1.2rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 3rem; }
</style>
"""


def apply() -> None:
    """Inject the presenter CSS when presenter mode is on (static CSS only)."""
    if state.presenter():
        st.markdown(PRESENTER_CSS, unsafe_allow_html=True)
