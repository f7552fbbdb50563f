"""Shared test set-up.

* Make tests/ importable (apptest_helpers, reference) for every test module.
* AppTest resets Streamlit's legacy "pages/ directory" flag before every run, so each run
  would take the legacy multipage path, in which app.py's ``state.use_app_frame`` reruns the
  script and widget triggers (button clicks) are lost. A real server switches legacy mode off
  once per process (see ``attnviz.ui.state.use_app_frame``); ``act_like_a_server`` reproduces
  that state.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from apptest_helpers import act_like_a_server  # noqa: E402 — needs the path above

act_like_a_server()
