"""The one place that names session-state keys and their defaults.

The scenario (tokens, embeddings, weights, variant, settings) lives in
``st.session_state[SCENARIO]`` and is shared by every page, so switching pages never loses an
edit. Editors are keyed with ``EDITOR_VERSION``: replacing the scenario from outside (a preset,
a resize, an upload) bumps the version so every editor restarts from the new values.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import streamlit as st

try:  # Streamlit internals: the legacy pages/ mode has no public switch (see use_app_frame)
    from streamlit.runtime.pages_manager import PagesManager
except ImportError:  # a Streamlit that moved it: pages still work, see use_app_frame
    PagesManager = None

from attnviz.scenarios import presets
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.scenarios.scenario import Scenario, with_parts
from attnviz.scenarios.variant import PARTS

SCENARIO = "scenario"
EDITOR_VERSION = "editor_version"
PRESENTER = "presenter_mode"
PROJECTOR = "projector_theme"  # the high-contrast colours (attnviz.figures.colours.PROJECTOR)
PRESET_CHOICE = "sidebar_preset"
PRESET_LOADED = "_preset_loaded"  # set by load_preset, read by the sidebar
IMAGE_FORMAT = "image_format"  # "png" or "svg": what the charts' camera button saves
LINK_APPLIED = "_link_applied"  # the ?scenario= value already applied in this session
ORIGINS = "_scenario_origins"  # title -> fingerprint of each scenario opened whole
BASE_PREFIX = "_base_"  # + an editor's widget key: the matrix that editor generation started from


def use_app_frame() -> None:
    """Make every run go through app.py, including a page URL opened directly: the one place
    that deals with Streamlit's legacy pages/ mode (the design card keeps ``pages/`` beside
    ``app.py``).

    Streamlit 1.67 still runs ``pages/x.py`` on its own (legacy multipage mode, no app.py,
    so no sidebar or page config) while a ``pages/`` folder exists and app.py has not yet
    switched that mode off in this server process (its ``st.navigation`` call does). Switch
    it off and rerun through app.py: once per server process. Streamlit has no public API for
    this mode, so it reads and sets the private class flag; if a Streamlit release moves it,
    this does nothing: a page opened directly by URL before any run of app.py in the process
    then shows without the sidebar until the next page switch. (Tests:
    ``tests/apptest_helpers.server_like_pages``.)

    Measured alternative, not kept: drawing the frame inline in the page's own run (running
    app.py without its ``navigation.run()``) avoids the rerun, but its ``st.navigation`` call
    moves the page's widgets to the main script's id space, so widget ids differ from a
    server run's and a Home button click is lost.
    """
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()
    if not getattr(_FRAME, "running", False) and not st.session_state.get(_FRAME_SEEN):
        # a page that ran alone although the mode is off now: it started in legacy mode
        # while another session switched it off (a class opening a link at once on a freshly
        # started server); its frame never ran, so no link was applied. Once per session
        # (callbacks run outside any script, after the session has seen its frame).
        st.session_state[_FRAME_SEEN] = True
        st.rerun()


_FRAME = threading.local()  # .running: this script run went through app.py (see frame_run)
_FRAME_SEEN = "_frame_seen"  # this session has run app.py (or reran once to get it)


@contextlib.contextmanager
def frame_run():
    """app.py wraps its whole run in this: pages then know they are drawn inside the frame."""
    _FRAME.running = True
    _FRAME.one_time_message = False
    st.session_state[_FRAME_SEEN] = True
    try:
        yield
    finally:
        _FRAME.running = False


def mark_one_time_message() -> None:
    """Note that this run shows a message no later run shows again (one taken from the session,
    a link's first reading): the Playground then leaves its hidden tabs to be filled by a click
    (the run :func:`attnviz.ui.playground_view.ask_for_filling_run` asks for would take the message
    off the screen)."""
    _FRAME.one_time_message = True


def shows_one_time_message() -> bool:
    """True when this run has shown a message no later run shows again
    (:func:`mark_one_time_message`)."""
    return getattr(_FRAME, "one_time_message", False)


def init_state() -> None:
    """Create the shared keys with their defaults (idempotent: ``setdefault``)."""
    use_app_frame()
    if SCENARIO not in st.session_state:
        st.session_state[SCENARIO] = default_scenario()
    st.session_state.setdefault(EDITOR_VERSION, 0)
    st.session_state.setdefault(PRESENTER, False)


def get_scenario() -> Scenario:
    """The current scenario."""
    init_state()
    return st.session_state[SCENARIO]


def set_scenario(scenario: Scenario, *, reset_editors: bool = False) -> None:
    """Store a new scenario; ``reset_editors`` restarts every matrix editor from its values."""
    st.session_state[SCENARIO] = scenario
    if reset_editors:
        st.session_state[EDITOR_VERSION] = st.session_state.get(EDITOR_VERSION, 0) + 1
        release_editor_bases()


def open_whole(scenario: Scenario) -> None:
    """Make a scenario opened from elsewhere (a real model's head, a trained induction head, a
    file, a link) the current one, and remember its numbers under its title, so that once
    edited it reads "Edited from <title>" everywhere, as an edited preset does
    (:func:`with_true_title`)."""
    set_scenario(scenario, reset_editors=True)
    remember_opened(scenario)


def remember_opened(scenario: Scenario) -> None:
    """Remember the current scenario's numbers under its title (see :func:`open_whole`; a
    lecture step's scenario, named by its settings, too)."""
    if scenario.title:
        origins = st.session_state.setdefault(ORIGINS, {})
        origins.pop(scenario.title, None)  # the newest opening of a title counts, kept last
        origins[scenario.title] = fingerprint(scenario)
        while len(origins) > MAX_ORIGINS:  # bounded per session: the oldest go first
            del origins[next(iter(origins))]


MAX_ORIGINS = 64  # titles of opened scenarios a session remembers


def with_true_title(scenario: Scenario) -> Scenario:
    """The scenario with a title and description that hold for its numbers: a preset's, or
    an opened scenario's (:func:`open_whole`), while it still is that one; "Edited from
    <title>" once edited (:func:`attnviz.scenarios.presets.with_true_title`). Every caption, the
    sidebar, Save & share, links and files name the scenario through this."""
    return presets.with_true_title(scenario, st.session_state.get(ORIGINS))


def base_key(widget_key: str) -> str:
    """The session-state key of the matrix an editor generation started from."""
    return f"{BASE_PREFIX}{widget_key}"


def outcome_key(widget_key: str) -> str:
    """The session-state key of what an editor's change callback made of its edits (dropped
    with the bases: it starts with :data:`BASE_PREFIX`)."""
    return f"{BASE_PREFIX}{widget_key}_outcome"


def field_value(field: str):
    """The scenario's ``field`` as a page shows it: the stored value, or, for an optional part
    the stored scenario does not have yet, the value it is filled with (see :func:`update`)."""
    current = get_scenario()
    missing = [part for part, fields in PARTS.items()
               if field in fields and not current.has_part(part)]
    return getattr(with_parts(current, missing) if missing else current, field, None)


def release_editor_bases() -> None:
    """Drop every editor's base matrix: called when the generation changes, after which no
    editor reads them (each new generation copies the scenario again). Without this a session
    kept one copy of every matrix per edit of the tokens or sizes, for as long as it lived."""
    for k in [k for k in st.session_state if str(k).startswith(BASE_PREFIX)]:
        del st.session_state[k]


def update(**changes) -> Scenario:
    """Replace some fields of the scenario (edits typed by the user: editors keep their state).

    An edit of an optional part the stored scenario does not have yet (a page shows the parts
    it reads filled, without storing them: opening a page changes nothing) stores that part
    filled as the page showed it, then the edit."""
    current = get_scenario()
    missing = [part for part, fields in PARTS.items()
               if not current.has_part(part) and any(f in changes for f in fields)]
    scenario = replace(with_parts(current, missing), **changes)
    set_scenario(scenario)
    return scenario


def load_preset(key: str) -> Scenario:
    """Load a preset as the whole scenario and reset the editors."""
    scenario = PRESETS[key].build()
    set_scenario(scenario, reset_editors=True)
    st.session_state[PRESET_LOADED] = key  # the sidebar's preset box follows on the next run
    return scenario


def editor_version() -> int:
    """The current editor generation (part of every editor's key)."""
    init_state()
    return st.session_state[EDITOR_VERSION]


def presenter() -> bool:
    """True in presenter mode (bigger type, editors collapsed)."""
    return bool(st.session_state.get(PRESENTER, False))


def projector() -> bool:
    """True while the high-contrast projector colours are on."""
    return bool(st.session_state.get(PROJECTOR, False))


def vkey(name: str) -> str:
    """A widget key tied to the editor generation: the widget restarts from the scenario's
    value whenever the scenario is replaced from outside (preset, resize, upload)."""
    return f"{name}_v{editor_version()}"


T = TypeVar("T")


def session_memo(name: str, key: str, make: Callable[[], T], *, entries: int = 1,
                 fits: Callable[[list[T]], bool] | None = None) -> T:
    """What ``make()`` gives for ``key``, kept in this session's state under ``name``: computed
    again only for a key that is not among the last ``entries`` (a hit counts as the newest),
    and, with ``fits``, the oldest dropped while the kept values do not fit (the newest always
    stays). The one way a ui module keeps a result for its session (docs/contributing.md,
    "Memos"); ``make`` turns the errors it expects into a value (a message, None)."""
    memo = st.session_state.get(name)
    memo = memo if isinstance(memo, dict) else {}
    value = memo.pop(key) if key in memo else make()
    memo[key] = value  # newest last
    while len(memo) > 1 and (len(memo) > entries or (fits and not fits(list(memo.values())))):
        del memo[next(iter(memo))]
    st.session_state[name] = memo
    return value
