"""Give a finished class's memory back to the machine.

Streamlit removes a session about two minutes after its tab closed (``server.
disconnectedSessionTTL``, at the next disconnect), but the session's state then sits in reference
cycles until Python's cyclic collector next runs a full collection, and glibc's allocator keeps
the freed pages for the process. Measured at the editing limits (20 simulated students, each with
a 256-token scenario; ``benchmarks/ws_load.py``): RSS 619 MiB after the class, 576 after
Streamlit removed the sessions, 465 after ``gc.collect()``, 226 after ``malloc_trim(0)``.

The frame notes every run (:func:`track_session`; each session's state holds a small marker with
the time it last ran). A daemon thread looks every :data:`CHECK_S` seconds and runs one full
collection and ``malloc_trim(0)`` (:func:`reclaim`) when :func:`due`: some session has been
quiet for longer than Streamlit keeps a closed one, a session ran since the last collection
(Streamlit removes closed sessions only when another session disconnects, which follows a
run), and the last collection is at least :data:`GAP_S` seconds old. During a class with a
student who reads without clicking, that is one collection (~0.1 s) per :data:`GAP_S`. The
maths and the pages know nothing of this.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import threading
import time
import weakref
from collections.abc import Callable, Iterable

import streamlit as st

CHECK_S = 30.0  # how often the thread looks
IDLE_S = 180.0  # a session quiet this long is closed (Streamlit keeps one 120 s) or idle
GAP_S = 300.0  # at most one collection this often
_KEY = "_attnviz_seen"
_THREAD = "attnviz_reclaim"  # the thread's name, for a debugger's thread list
_MARKERS: weakref.WeakSet = weakref.WeakSet()  # one per live session state
_LOCK = threading.Lock()
_CLOCK = {"touch": 0.0, "reclaim": float("-inf")}  # the last run of any session, collection


class Seen:
    """When a session last ran."""

    __slots__ = ("at", "__weakref__")

    def __init__(self, at: float) -> None:
        self.at = at


def track_session(now: Callable[[], float] = time.monotonic) -> None:
    """Note that the running session ran now (the frame calls it on every run) and make sure
    the reclaiming thread runs."""
    seen = st.session_state.get(_KEY)
    with _LOCK:
        if not isinstance(seen, Seen):
            seen = Seen(now())
            st.session_state[_KEY] = seen
            _MARKERS.add(seen)
        seen.at = _CLOCK["touch"] = now()
    _start_thread()


def due(last_runs: Iterable[float], now: float, last_touch: float, last_reclaim: float) -> bool:
    """Whether a collection is due: a session quiet for more than :data:`IDLE_S`, a run since
    the last collection, and that collection at least :data:`GAP_S` ago."""
    return (last_touch > last_reclaim and now - last_reclaim >= GAP_S
            and any(now - at > IDLE_S for at in last_runs))


def reclaim() -> None:
    """Collect cyclic garbage, then hand the allocator's free pages back to the system (glibc's
    ``malloc_trim``; elsewhere only the collection)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where there is none (macOS, musl)."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _check() -> None:
    """One look; no marker stays referenced after it (a removed session's must be freeable)."""
    now = time.monotonic()
    with _LOCK:
        go = due([m.at for m in _MARKERS], now, _CLOCK["touch"], _CLOCK["reclaim"])
        if go:
            _CLOCK["reclaim"] = now
    if go:
        reclaim()


def _loop() -> None:
    while True:
        time.sleep(CHECK_S)
        _check()


@functools.cache
def _start_thread() -> None:
    """Start the reclaiming thread once per process."""
    threading.Thread(target=_loop, name=_THREAD, daemon=True).start()
