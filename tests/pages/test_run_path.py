"""One run path: every page computes through run_scenario via the session's memo
(attnviz.ui.controls), Multi-head and Compare included."""

from __future__ import annotations

from apptest_helpers import open_page

from attnviz.scenarios.fingerprint import fingerprint

MEMO = "_compute_memo"


def memo_keys(at) -> set[str]:
    return set(at.session_state[MEMO]) if MEMO in at.session_state else set()


def test_multi_head_computes_through_the_memo():
    """The default scenario is single-head scaled dot-product: only run_scenario(heads=n) gives
    a multi-head result, and the page's one is in the memo."""
    at = open_page("multi_head")
    assert not at.exception
    results = [r for r, _ in at.session_state[MEMO].values() if r is not None]
    assert any(hasattr(r.attention, "concat") for r in results)


def test_compare_computes_both_sides_through_the_memo():
    at = open_page("compare")  # the first comparison: scaled vs unscaled
    assert not at.exception
    assert len(memo_keys(at)) >= 2
    from attnviz.scenarios.compare import comparison_pair

    a, b, _, _ = comparison_pair(at.session_state["scenario"], "scale")
    assert {fingerprint((a, None)), fingerprint((b, None))} <= memo_keys(at)
