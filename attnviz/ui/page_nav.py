"""Presenter mode's way between pages without the sidebar: "‹ previous page" and "next page ›"
in the top bar, and the PageUp / PageDown keys a presentation clicker sends.

In presenter mode the sidebar is collapsed; opening it to change page covered a third of a
1024-px screen and stayed open. The links sit in Streamlit's top bar (fixed there by
presenter mode's CSS, :data:`attnviz.ui.presenter.PRESENTER_CSS`, beside its menu), so they
take no room from the page below them (nor does a CSS element of their own: each element of a
page adds the column's gap). A guided
lecture has its own bar and keys (:mod:`attnviz.ui.lecture_bar`): while one runs, this draws
nothing. The keys follow the links in the browser (``page_keys.js``): no run of their own.
"""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

from attnviz.teach.text import common as text
from attnviz.ui import lecture_bar, state

_HERE = Path(__file__).resolve().parent

def neighbours(pages: list, current) -> tuple[object | None, object | None]:
    """The pages before and after ``current`` in the navigation's order (None at an end)."""
    paths = [p.url_path for p in pages]
    if current.url_path not in paths:
        return None, None
    i = paths.index(current.url_path)
    return (pages[i - 1] if i > 0 else None), (pages[i + 1] if i + 1 < len(pages) else None)


def show(sections: dict[str, list], current) -> None:
    """The frame's call (app.py, after the lecture bar): in presenter mode with no lecture
    running, links to the previous and next page and their keys."""
    if not state.presenter() or lecture_bar.current() is not None:
        return
    back, nxt = neighbours([p for group in sections.values() for p in group], current)
    with st.container(key="page_nav", horizontal=True, gap="small"):
        if back is not None:
            with st.container(key="page_nav_back", width="content"):
                st.page_link(back, label=text.PAGE_BACK.format(title=back.title),
                             help=text.PAGE_BACK_HELP)
        if nxt is not None:
            with st.container(key="page_nav_next", width="content"):
                st.page_link(nxt, label=text.PAGE_NEXT.format(title=nxt.title),
                             help=text.PAGE_NEXT_HELP)
        _keys_component()(key="page_keys")


@functools.cache
def _keys_component():
    """The PageUp / PageDown keys (registered once per process; ``page_keys.js``)."""
    return st.components.v2.component(
        "attnviz_page_keys", js=(_HERE / "page_keys.js").read_text(encoding="utf-8"),
        isolate_styles=False)
