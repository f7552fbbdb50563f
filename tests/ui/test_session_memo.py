"""state.session_memo: the one way a ui module keeps a result for its session."""

from __future__ import annotations

import pytest

from attnviz.ui import state


@pytest.fixture
def session(monkeypatch) -> dict:
    """A plain dict as this session's state (no script run needed)."""
    kept: dict = {}
    monkeypatch.setattr(state.st, "session_state", kept)
    return kept


def test_a_kept_key_is_not_made_again_and_the_oldest_goes_first(session):
    made = []

    def memo(key):
        return state.session_memo("m", key, lambda: made.append(key) or key.upper(), entries=2)

    assert [memo("a"), memo("b"), memo("a")] == ["A", "B", "A"]
    assert made == ["a", "b"]  # "a" kept
    memo("c")  # "b" is now the oldest (a hit counts as the newest)
    assert list(session["m"]) == ["a", "c"]
    memo("b")
    assert made == ["a", "b", "c", "b"]


def test_values_that_do_not_fit_go_oldest_first_but_never_the_newest(session):
    def fits(values):
        return sum(values) <= 10

    for key, size in (("a", 4), ("b", 5), ("c", 3)):
        state.session_memo("m", key, lambda size=size: size, entries=9, fits=fits)
    assert list(session["m"]) == ["b", "c"]
    state.session_memo("m", "d", lambda: 50, entries=9, fits=fits)
    assert list(session["m"]) == ["d"]


def test_a_value_that_is_not_a_memo_starts_one(session):
    session["m"] = ("old", "tuple")
    assert state.session_memo("m", "k", lambda: 1) == 1 and session["m"] == {"k": 1}
