"""Shared helpers for AppTest page tests: start the app, open a page, read chart data."""

from __future__ import annotations

import base64
import contextlib
import difflib
import json
from pathlib import Path

import numpy as np
from streamlit import config
from streamlit.testing.v1 import AppTest

from attnviz.teach.text import playground as playground_text
from attnviz.ui import grid, plotly_view

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")

# AppTest reads the dashboard's .streamlit/config.toml, which shows browsers a generic message
# instead of an exception's details (client.showErrorDetails = "none"); a failing test should
# name the exception (browser tests of the redaction start real servers: unaffected)
config.set_option("client.showErrorDetails", "full")


# ---------------------------------------------------------------------------------------------
# The only helpers here that need Streamlit internals (imported when used, guarded): a
# server-like pages manager (tests/pages/conftest.py), fragment reruns, downloads' bytes and
# the count of every entry session state holds. No test outside this file reads Streamlit
# internals (tests/test_no_internals.py checks it).
# ---------------------------------------------------------------------------------------------

class StreamlitInternalsMoved(RuntimeError):
    """A private Streamlit piece a helper of this section reads is gone (a Streamlit upgrade)."""


def _internals_moved(what: str, err: Exception) -> StreamlitInternalsMoved:
    return StreamlitInternalsMoved(
        f"{what} is not where Streamlit 1.67 kept it ({type(err).__name__}: {err}). The "
        "helpers of tests/apptest_helpers.py that read Streamlit internals (server_like_pages, "
        "fragment_of, run_like_a_server, recorded_downloads, session_entries) need an update "
        "for this Streamlit version. Tests "
        "without AppTest are unaffected.")


@contextlib.contextmanager
def server_like_pages():
    """While inside, AppTest runs app.py as a server process does after its first run.

    The design card keeps ``pages/`` beside app.py, so Streamlit starts in its legacy pages/
    mode, which app.py's frame (``attnviz.ui.state.use_app_frame``) switches off with one
    rerun: once per process on a server, but on *every* AppTest run, because AppTest resets
    the mode before each run. That extra rerun loses the run's button clicks and doubles
    every timing. Measured without this (Streamlit 1.67): each run of a page executes the
    page alone, then app.py and the page again; ``at.button(...).click().run()`` has no
    effect. This gives AppTest a pages manager that starts with the mode already off.
    """
    try:
        import streamlit.testing.v1.app_test as app_test_module
        from streamlit.runtime.pages_manager import PagesManager

        if app_test_module.PagesManager is not PagesManager or not hasattr(
                PagesManager, "uses_pages_directory"):
            raise AttributeError("AppTest no longer makes a PagesManager with that flag")
    except (ImportError, AttributeError) as err:
        raise _internals_moved("AppTest's PagesManager", err) from err

    class ServerLikePagesManager(PagesManager):
        """A PagesManager whose process has already left legacy pages/ mode."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            PagesManager.uses_pages_directory = False

    app_test_module.PagesManager = ServerLikePagesManager
    try:
        yield
    finally:
        app_test_module.PagesManager = PagesManager


@contextlib.contextmanager
def _rerun_fragment(fragment_id: str | None):
    """While inside, AppTest's runs rerun the ``st.fragment`` ``fragment_id`` alone (None: the
    whole script), as a server does when the browser sends the fragment's id.

    AppTest has no public way to do this: its script runner builds a plain ``RerunData``; this
    gives it one that carries the fragment id (the runner's initial request and the run's
    both: a full rerun coalesced with a fragment rerun is a full rerun), and puts it back after.
    """
    if fragment_id is None:
        yield
        return
    try:
        from streamlit.runtime.scriptrunner import RerunData
        from streamlit.testing.v1 import local_script_runner

        plain = local_script_runner.RerunData
    except (ImportError, AttributeError) as err:
        raise _internals_moved("AppTest's RerunData", err) from err

    def with_fragment(**kwargs):
        return RerunData(**{**kwargs, "fragment_id": fragment_id})

    local_script_runner.RerunData = with_fragment
    try:
        yield
    finally:
        local_script_runner.RerunData = plain


def fragment_of(at: AppTest, key: str | None) -> str | None:
    """The id of the ``st.fragment`` the widget ``key`` was drawn in; None for the page body
    or a key that is no widget of this run (read from the widget's registered metadata:
    Streamlit internals, so a clear failure if they moved)."""
    if key is None:
        return None
    try:
        state = at.session_state._state._state  # Streamlit internals
        mapper, metadata = state._key_id_mapper, state._new_widget_state.widget_metadata
    except AttributeError as err:
        raise _internals_moved("AppTest's widget metadata", err) from err
    try:
        return metadata[mapper.get_id_from_key(key)].fragment_id
    except KeyError:
        return None


@contextlib.contextmanager
def recorded_downloads():
    """Within: a function download button -> the bytes it serves (from the latest run).

    AppTest has no public way to read a download's bytes: this records the in-memory media
    storage each run makes (Streamlit internals, imported when used, so that a Streamlit that
    moved them fails the tests that read downloads with a clear message, not the collection).
    """
    try:
        import streamlit.testing.v1.app_test as app_test_module
        from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

        if app_test_module.MemoryMediaFileStorage is not MemoryMediaFileStorage:
            raise AttributeError("AppTest makes another media storage")
    except (ImportError, AttributeError) as err:
        raise _internals_moved("AppTest's media storage", err) from err
    instances = []

    class RecordingStorage(MemoryMediaFileStorage):
        """AppTest's media storage, remembered so a test can read what a button serves."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            instances.append(self)

    def read(button) -> bytes:
        name = button.proto.url.rsplit("/", 1)[-1]
        for storage in reversed(instances):
            try:
                return bytes(storage.get_file(name).content)
            except Exception:  # not in this run's storage
                continue
        raise AssertionError(f"download {button.proto.label!r} not found in media storage")

    app_test_module.MemoryMediaFileStorage = RecordingStorage
    try:
        yield read
    finally:
        app_test_module.MemoryMediaFileStorage = MemoryMediaFileStorage


def session_entries(at: AppTest) -> int:
    """How many entries the session state holds: the keys a page set and every widget's id and
    value (the public ``at.session_state`` lists user keys only, so widgets that pile up under
    new ids are only seen here)."""
    try:
        return len(at.session_state._state._state)  # Streamlit internals
    except (AttributeError, TypeError) as err:
        raise _internals_moved("AppTest's session state", err) from err


def run_like_a_server(at: AppTest, key: str | None) -> AppTest:
    """Run after a change of widget ``key`` as a server does: a widget drawn inside an
    ``st.fragment`` reruns that fragment alone (the browser sends the fragment's id), any
    other the whole script. AppTest itself always reruns the whole script.

    After a fragment run, ``at`` holds only the elements that run drew (the fragment's; the
    browser keeps showing the others).
    """
    with _rerun_fragment(fragment_of(at, key)):
        return at.run()


# ---------------------------------------------------------------------------------------------
# Lazy expanders and tabs: found on the page, never listed by hand
# ---------------------------------------------------------------------------------------------
# The ui makes an expander or a tab set lazy by giving it a key and ``on_change="rerun"``
# (``st.expander(..., key=..., on_change="rerun")``: its content runs only while it is open;
# ``st.tabs(..., key=..., on_change="rerun")``: only the selected tab's content runs). Every
# keyed expander and tab set in attnviz is lazy, so the helpers below take every keyed one of
# the page as it is drawn: a new lazy expander or tab set is opened without being named here.

_LAZY_SEEN: set[str] = set()  # lazy expander keys met so far (opened before a page's first run)


def closed_lazy_expanders(at: AppTest) -> list[str]:
    """The keys of the lazy (keyed) expanders of the current run that are closed."""
    return [e.key for e in at.expander if e.key and not e.proto.expanded]


def open_lazy_expanders(at: AppTest) -> AppTest:
    """Open every lazy expander of the page, as a user clicking each would: rerun while the
    page has a closed one (an opened one may hold another). Returns ``at``, run with all of
    them open (not run again when none was closed)."""
    for _ in range(10):
        closed = closed_lazy_expanders(at)
        if not closed:
            return at
        _LAZY_SEEN.update(closed)
        for key in closed:
            at.session_state[key] = True
        at.run()
    raise AssertionError(f"lazy expanders do not open: {closed_lazy_expanders(at)}")


def user_key(element) -> str:
    """The key an element or widget was drawn with (Streamlit ends its id with "-<key>")."""
    return element.proto.id.split("-", 2)[-1]


def grids(at: AppTest) -> list:
    """The matrix editors' grids (``attnviz.ui.grid``) of the current run, in page order."""
    return [node for node in at.get("bidi_component")
            if node.proto.component_name == grid.NAME]


def grid_cells(element) -> list[list[str]]:
    """The cell texts a grid element was drawn with."""
    return json.loads(element.proto.json)["cells"]


def grid_state(edits: dict) -> dict:
    """A grid's session-state value holding ``edits`` ({row: {column: text or number}}), as
    the browser sends it after those edits."""
    return {grid.STATE: {"edited_rows": edits}}


def editor_state(at: AppTest, widget_key: str, edits: dict) -> dict:
    """The session-state value that carries ``edits`` to the editor ``widget_key`` of the last
    run: a matrix editor's grid, or the mask editor's ``st.data_editor`` (its tick boxes)."""
    if any(user_key(g) == widget_key for g in grids(at)):
        return grid_state(edits)
    return {"edited_rows": edits, "added_rows": [], "deleted_rows": []}


def editor_keys(at: AppTest) -> set[str]:
    """The widget keys of the editors of the current run: the matrix editors' grids and the
    mask editor's ``st.data_editor``."""
    return {user_key(e) for e in [*grids(at), *at.get("data_editor")]}


PLAYGROUND_FOCUS = "playground_focus"  # the Playground's focus tabs (every focus drawn: not lazy)


def lazy_tab_sets(at: AppTest) -> dict[str, list[str]]:
    """The lazy (keyed) tab sets of the current run: key -> tab labels, in page order."""
    return {block.key: [tab.label for tab in block.children.values()]
            for block in at.get("tab_container") if block.key and block.key != PLAYGROUND_FOCUS}


def show_weight_tab(at: AppTest, name: str) -> AppTest:
    """Select the tab of editor ``name`` ("playground_w_k") when its editor is not on the page, as a
    user clicks a tab first: only the selected tab's editor runs.

    Tries the tabs of every lazy tab set of the page, the labels most like ``name`` first,
    until the editor is drawn; fails when no tab draws it.
    """
    if any(k.startswith(f"{name}_v") for k in editor_keys(at)):
        return at
    field = name.partition("_")[2]
    tries = sorted(((key, label) for key, labels in lazy_tab_sets(at).items()
                    for label in labels),
                   key=lambda kl: -difflib.SequenceMatcher(None, kl[1].lower(), field).ratio())
    for key, label in tries:
        at.session_state[key] = label
        at.run()
        if any(k.startswith(f"{name}_v") for k in editor_keys(at)):
            return at
    raise AssertionError(f"no tab of {sorted(lazy_tab_sets(at))} draws the editor {name!r}")


def each_weight_tab(at: AppTest) -> list[str]:
    """Rerun the page with each other tab of its lazy tab sets selected, then the first again.

    Only the selected tab's editor runs, so a sweep that wants every editor to meet a
    scenario goes through them; each run is checked here (no exception). Returns the labels
    visited.
    """
    visited = []
    for key, labels in lazy_tab_sets(at).items():
        for label in labels[1:] + labels[:1]:
            at.session_state[key] = label
            at.run()
            assert not at.exception, (key, label, [e.message for e in at.exception])
            visited.append(label)
    return visited


def set_focus(at: AppTest, focus: str) -> AppTest:
    """Open the Playground's tab of ``focus`` (a key of ``text.FOCUS``: "weights", "all", ...)
    for the next run, as a click on the tab does."""
    at.session_state[PLAYGROUND_FOCUS] = playground_text.FOCUS[focus]
    return at


def switch_to(at: AppTest, page: str, *, lazy_open: bool = True,
              focus: str | None = "all") -> AppTest:
    """Switch to ``pages/<page>.py`` and run it.

    ``lazy_open``: open every lazy expander of the page (see ``open_lazy_expanders``; those met
    before are opened for the first run already, so a page usually runs once).
    ``focus``: the Playground's focus; by default "all", the full view with every matrix,
    which most page tests check (the lecture view's tests ask for theirs; None keeps it).
    """
    for key in _LAZY_SEEN if lazy_open else ():
        at.session_state[key] = True
    if page == "playground" and focus is not None:
        set_focus(at, focus)
    at.switch_page(f"pages/{page}.py").run()
    return open_lazy_expanders(at) if lazy_open else at


def open_page(page: str | None = None, *, timeout: float = 60,
              lazy_open: bool = True, focus: str | None = "all") -> AppTest:
    """Run app.py, then switch to ``pages/<page>.py`` (None = Home); fail on any exception.

    ``lazy_open``, ``focus``: see ``switch_to``.
    """
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    if page:
        switch_to(at, page, lazy_open=lazy_open, focus=focus)
    assert not at.exception, [e.message for e in at.exception]
    return at


def decode(value):
    """Turn plotly's base64 typed arrays ({"dtype", "bdata", "shape"}) back into numpy."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else shape
            arr = arr.reshape(dims)
        return arr
    return np.asarray(value)


def charts(at: AppTest) -> list:
    """Every chart element of the current run, in page order: attnviz's in-place chart
    component (``attnviz.ui.plotly_view``) or, where static serving is off,
    ``st.plotly_chart``."""
    return [node for node in at.main
            if getattr(node, "type", None) == "plotly_chart"
            or (getattr(node, "type", None) == "bidi_component"
                and node.proto.component_name == plotly_view.NAME)]


def chart_spec(element) -> dict:
    """A chart element's figure as a dict: ``data``, ``layout`` and the Plotly ``config``."""
    if element.type == "plotly_chart":
        return {**json.loads(element.proto.spec), "config": json.loads(element.proto.config)}
    return json.loads(element.proto.bytes)  # plotly_view's JSON, sent as UTF-8 bytes


def chart_specs(at: AppTest) -> list[dict]:
    """Every chart of the current run as a decoded-JSON figure dict (with its ``config``)."""
    return [chart_spec(c) for c in charts(at)]


def chart_z(at: AppTest, index: int, trace: int = 0) -> np.ndarray:
    """The z matrix of the index-th plotly chart (first trace by default) as float64."""
    return decode(chart_specs(at)[index]["data"][trace]["z"]).astype(np.float64)


def chart_keys(at: AppTest) -> list[str]:
    """The ``key=`` of every chart, in page order (Streamlit ids end with "-<key>")."""
    return [user_key(c) for c in charts(at)]


def spec_by_key(at: AppTest, key: str) -> dict:
    """The figure dict of the chart drawn with ``key=key``."""
    keys = chart_keys(at)
    assert key in keys, f"no chart with key {key!r}; charts: {keys}"
    return chart_specs(at)[keys.index(key)]


def chart_z_by_key(at: AppTest, key: str, trace: int = 0) -> np.ndarray:
    """The z matrix of the chart drawn with ``key=key``."""
    keys = chart_keys(at)
    assert key in keys, f"no chart with key {key!r}; charts: {keys}"
    return chart_z(at, keys.index(key), trace)


def edit_cells(at: AppTest, widget_key: str, edits: dict[int, dict[str, float]]) -> AppTest:
    """Seed an editor's edits in session state (AppTest cannot type into the grid)."""
    at.session_state[widget_key] = editor_state(at, widget_key, edits)
    return at.run()
