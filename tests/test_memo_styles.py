"""One memo style per purpose (docs/contributing.md, "Memos"): once per process
``functools.cache``; a loaded file ``st.cache_resource``; a pure computation shared by every
session ``SharedLru``; a result for one session ``state.session_memo``. The styles outside the
table are found by their spelling in attnviz/ and pages/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "attnviz").rglob("*.py"), *(ROOT / "pages").glob("*.py"),
                  ROOT / "app.py"])
FORBIDDEN = {
    "st.cache_data (pickles on every hit)": re.compile(r"@st\.cache_data|st\.cache_data\("),
    "functools.lru_cache (use functools.cache or SharedLru)": re.compile(r"\blru_cache\b"),
    "a bare @cache (spelled @functools.cache)": re.compile(r"^\s*@cache\b|import cache\b"),
    "a module-level dict as a cache (use SharedLru)":
        re.compile(r"^_?[A-Z_]*(CACHE|MEMO)[A-Z_]*\s*(:[^=]*)?=\s*(\{\}|dict\(\))"),
}
# session memos are made by state.session_memo alone: a session-state dict grown by hand
HAND_MADE = re.compile(r"session_state\.(get|setdefault)\(\s*_?[A-Z_]*(MEMO|CACHE)[A-Z_]*\b")


def _lines(path: Path):
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        yield f"{path.relative_to(ROOT)}:{n}: {line.strip()}", line


def test_no_memo_style_outside_the_four():
    found = [(why, where) for path in SOURCES for where, line in _lines(path)
             for why, pattern in FORBIDDEN.items() if pattern.search(line)]
    assert found == []


def test_session_memos_are_made_by_state_session_memo():
    state = ROOT / "attnviz" / "ui" / "state.py"
    found = [where for path in SOURCES if path != state for where, line in _lines(path)
             if HAND_MADE.search(line)]
    assert found == []
