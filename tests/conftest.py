"""Shared test set-up.

* Make tests/ importable (apptest_helpers, reference) for every test module.
* AppTest resets Streamlit's legacy "pages/ directory" flag before every run, so each run
  would take the legacy multipage path, in which app.py's ``state.use_app_frame`` reruns the
  script and widget triggers (button clicks) are lost. A real server switches legacy mode off
  once per process (see ``attnviz.ui.state.use_app_frame``); this reproduces that state.
"""

import sys
from pathlib import Path

import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.pages_manager import PagesManager

sys.path.insert(0, str(Path(__file__).resolve().parent))


class _ServerLikePagesManager(PagesManager):
    """A PagesManager whose process has already left legacy pages/ mode, as on a server."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


app_test_module.PagesManager = _ServerLikePagesManager
