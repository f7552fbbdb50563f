"""AppTest: presenter mode moves between pages without the sidebar (attnviz/ui/page_nav.py).

In presenter mode every page shows links to the page before and after it in the sidebar's
order (the keys PageUp / PageDown follow them in the browser:
tests/browser/test_page_nav_browser.py); outside presenter mode, and while a guided lecture
runs (its own bar moves it), none.
"""

from __future__ import annotations

from apptest_helpers import APP, open_page, switch_to
from streamlit.testing.v1 import AppTest

from attnviz.teach.text import common as text
from attnviz.ui import state


def nav_links(at) -> list[tuple[str, str]]:
    return [(link.proto.page, link.proto.label) for link in at.get("page_link")
            if link.proto.label.startswith("‹ ") or link.proto.label.endswith(" ›")]


def presenter_on(at):
    at.session_state[state.PRESENTER] = True
    return at


def test_presenter_mode_links_the_previous_and_the_next_page():
    at = presenter_on(open_page("masks"))
    at = switch_to(at, "masks")
    links = nav_links(at)
    assert [label for _, label in links] == [text.PAGE_BACK.format(title="Step by step"),
                                             text.PAGE_NEXT.format(title="Multi-head")]
    assert [page.rsplit("/", 1)[-1] for page, _ in links] == ["step_by_step", "multi_head"]


def test_the_first_and_last_pages_have_one_link():
    at = presenter_on(open_page(None))  # Home, the first page
    at.run()
    assert [label for _, label in nav_links(at)] == [text.PAGE_NEXT.format(title="Playground")]
    at = switch_to(at, "share")  # the last page
    assert [label for _, label in nav_links(at)] == [
        text.PAGE_BACK.format(title="Generate")]


def test_no_links_outside_presenter_mode_or_in_a_lecture():
    at = open_page("masks")
    assert not nav_links(at)
    lecture = AppTest.from_file(APP, default_timeout=60)
    lecture.query_params["lecture"] = "scratch"
    lecture.run()
    assert lecture.session_state[state.PRESENTER] is True  # a lecture turns presenter mode on
    assert not nav_links(lecture)
