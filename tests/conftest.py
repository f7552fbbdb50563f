"""Shared test set-up: make tests/ importable (apptest_helpers, reference) for every test module.

Nothing else: no Streamlit module is imported here, so the core, scenario, io and teach tests
collect and run without Streamlit installed, and a Streamlit upgrade that moves an internal can
fail only the few page tests that use one (see ``apptest_helpers``: fragment reruns).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
