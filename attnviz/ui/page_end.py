"""End a page early and still let the frame finish its run.

A page that has drawn all it can (a message instead of its charts, a task that cannot be
learned) calls :func:`end_page` instead of ``st.stop()``. ``st.stop()`` asks Streamlit to stop
the whole script run, and every Streamlit call after it raises again — including those in
app.py's ``finally`` block, which writes the sidebar's "current scenario", settles the captions
and keeps the scenario in the page's link: after a ``st.stop()`` the sidebar would be left empty
and the link out of date. :func:`end_page` raises :class:`PageEnd`, which app.py catches around
the page (:func:`ending_pages`); the frame then finishes normally. A page run outside the frame
(Streamlit's legacy pages mode, see :func:`attnviz.ui.state.use_app_frame`) stops with
``st.stop()``.

Not inside a fragment (``st.fragment``): Streamlit runs a fragment on its own and shows any
exception raised in it, so a function drawn in a fragment ends with ``return``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import NoReturn

import streamlit as st

_CATCHING = threading.local()  # .on: a page is being run inside ending_pages()


class PageEnd(Exception):
    """Raised by :func:`end_page`: the page has nothing more to draw."""


@contextlib.contextmanager
def ending_pages() -> Iterator[None]:
    """app.py runs the page inside this: a :class:`PageEnd` ends the page and nothing else."""
    _CATCHING.on = True
    try:
        yield
    except PageEnd:
        pass
    finally:
        _CATCHING.on = False


def end_page() -> NoReturn:
    """Stop drawing the current page here (the frame still writes the sidebar and the link)."""
    if getattr(_CATCHING, "on", False):
        raise PageEnd
    st.stop()
    raise AssertionError("unreachable: st.stop() raises")  # pragma: no cover
