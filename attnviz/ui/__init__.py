"""Streamlit helpers shared by the pages: session state, matrix editors, matrix panels.

Only pages import this package; the core never does.
"""
