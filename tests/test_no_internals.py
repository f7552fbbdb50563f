"""Tests read Streamlit through its public API (``streamlit.testing.v1``); the few things AppTest
offers no public way to do (a server-like pages manager, fragment reruns, downloads' bytes, the
count of session entries) live in one guarded, documented place: tests/apptest_helpers.py,
whose helpers fail with one clear message when a Streamlit upgrade moves what they read."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ALLOWED = {TESTS / "apptest_helpers.py", Path(__file__).resolve()}
# Streamlit's private pieces: its runtime, AppTest's own modules, and session state's inner state
INTERNALS = re.compile(r"_state\._state|PagesManager|RerunData|script_runner|streamlit\.runtime"
                       r"|testing\.v1\.app_test|MemoryMediaFileStorage|_key_id_mapper")


def test_no_test_reads_streamlit_internals_outside_the_helpers():
    found = [f"{path.relative_to(TESTS)}:{n}: {line.strip()}"
             for path in sorted(TESTS.rglob("*.py")) if path not in ALLOWED
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if INTERNALS.search(line)]
    assert found == []
