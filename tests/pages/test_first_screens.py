"""AppTest: in presenter mode a page's lesson (a chart with numbers) comes before its controls,
and where two charts or two code blocks shared the projected width they are shown one at a
time (tabs), each across the page. Walking every page at 1024×768 in presenter mode with an
eight-word sentence, Learn, Your own attention and Pitfalls showed only controls on the first
screen; Learn's target and weights side by side had cells too small for their numbers and
Pitfalls' code wrapped nearly every line. The browser's measure of the same screens:
tests/browser/test_readable_8_words.py (readable_walk.FIRST_SCREEN)."""

from __future__ import annotations

import pytest
from apptest_helpers import charts, open_page

from attnviz.teach.text import gradients as gradients_text
from attnviz.teach.text import learn as learn_text
from attnviz.teach.text import pitfalls as pitfalls_text


def _first(at, is_it) -> int:
    """The place in page order of the first element of the main area for which ``is_it``."""
    return next(i for i, node in enumerate(at.main) if is_it(node))


def _first_chart(at) -> int:
    drawn = {id(c) for c in charts(at)}
    return _first(at, lambda node: id(node) in drawn)


def _widget(key: str):
    return lambda node: getattr(node, "key", None) == key


def _presenter(at):
    at.toggle(key="presenter_mode").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.parametrize("page, control", [("learn", "learn_task"),
                                           ("your_attention", "your_attention_weights")])
def test_the_lesson_comes_before_the_controls_in_presenter_mode_only(page, control):
    at = open_page(page, lazy_open=False)
    assert _first(at, _widget(control)) < _first_chart(at)  # a page to work in: controls first
    _presenter(at)
    assert _first_chart(at) < _first(at, _widget(control))


def test_learn_shows_the_target_and_the_weights_one_at_a_time_in_presenter_mode():
    at = open_page("learn", lazy_open=False)
    assert not at.tabs and len(charts(at)) == 2
    _presenter(at)
    assert [t.label for t in at.tabs] == [learn_text.TARGET_PATTERN, learn_text.WEIGHTS_NOW]
    drawn = {c.proto.id for c in charts(at)}
    assert [sum(getattr(n, "proto", None) is not None and getattr(n.proto, "id", None) in drawn
                for n in t) for t in at.tabs] == [1, 1]


def test_pitfalls_picks_with_one_select_box_and_shows_the_code_one_at_a_time_in_presenter_mode():
    at = open_page("pitfalls", lazy_open=False)
    assert at.radio(key="pitfalls_choice") and not at.tabs and len(at.code) == 2
    _presenter(at)
    assert not at.radio and at.selectbox(key="pitfalls_choice").value == "softmax_over_queries"
    assert [t.label for t in at.tabs] == [pitfalls_text.WRONG, pitfalls_text.RIGHT]
    assert [len(t.code) for t in at.tabs] == [1, 1]
    assert _first_chart(at) < _first(at, lambda node: getattr(node, "type", None) == "code")
    # another pitfall, picked in the select box, is the one drawn
    at.selectbox(key="pitfalls_choice").set_value("mask_after_softmax").run()
    assert not at.exception and at.tabs[0].code[0].value.count("def ") >= 1
    assert at.session_state["pitfalls_choice"] == "mask_after_softmax"


def test_step_by_step_writes_its_tables_as_text_tables_in_presenter_mode():
    """The grid (st.dataframe) draws on a canvas at ≈ 14 px on any screen; presenter mode's
    tables are HTML, sized by its CSS, their numbers as the grid formats them ("−" minus)."""
    at = open_page("step_by_step", lazy_open=False)
    grids = len(at.dataframe)
    assert grids >= 4 and not at.table
    _presenter(at)
    assert len(at.table) == grids and not at.dataframe
    written = [str(v) for t in at.table for v in t.value.to_numpy().ravel()]
    assert any(w.startswith("−") for w in written) and not any(w.startswith("-") for w in written)


def test_gradients_shows_each_matrix_and_its_gradient_one_at_a_time_in_presenter_mode():
    """Side by side at 1024×768 a t × t pair's cells were too small for numbers, and at
    1920×1080 dS̃'s were 20 px; in presenter mode each pair is two tabs across the page, the
    gradient drawn in the second, and the introduction folds (the lesson starts higher)."""
    at = open_page("gradients", lazy_open=False)
    assert not at.tabs
    _presenter(at)
    labels = [t.label for t in at.tabs]
    assert labels[:6] == [gradients_text.OUTPUT, "dO", gradients_text.WEIGHTS, "dP",
                          gradients_text.SCALED, "dS̃"]
    drawn = {c.proto.id for c in charts(at)}
    per_tab = [sum(getattr(getattr(n, "proto", None), "id", None) in drawn for n in t)
               for t in at.tabs]
    assert per_tab == [1] * len(at.tabs)
    assert any(m.value == gradients_text.INTRO for e in at.expander for m in e.markdown)


def _line_view_columns(at) -> list[float]:
    """The widths of the column holding the line view's chart and of the weights' beside it."""
    cols = list(at.columns)
    i = next(i for i, c in enumerate(cols) if any(
        getattr(getattr(n, "proto", None), "id", "").endswith("-line_view_fig") for n in c))
    return [cols[i].weight, cols[i + 1].weight]


def test_line_view_gives_the_weights_more_than_half_the_page_in_presenter_mode():
    """Beside the lines (3 : 2) the weights' numbers were 22 px at 1920×1080; in halves, ten
    tokens' cells at 1024×768 were too narrow for a number (the weights take 3 : 2)."""
    at = open_page("line_view", lazy_open=False)
    left, right = _line_view_columns(at)
    assert left > right
    left, right = _line_view_columns(_presenter(at))
    assert left < right
