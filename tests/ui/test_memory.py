"""The reclaiming of a closed class's memory (attnviz/ui/memory.py)."""

import gc
import weakref

import numpy as np
from streamlit.testing.v1 import AppTest

from attnviz.ui import memory


def test_a_collection_is_due_after_a_quiet_session_and_a_run_at_most_every_gap():
    gap, idle = memory.GAP_S, memory.IDLE_S
    never = float("-inf")
    assert memory.due([1000.0 - idle - 1], 1000.0, last_touch=990.0, last_reclaim=never)
    assert not memory.due([1000.0 - idle + 1], 1000.0, 990.0, never)  # nobody quiet long enough
    assert not memory.due([], 1000.0, 990.0, never)  # no session at all
    # collected since the last run: nothing new can have been removed
    assert not memory.due([0.0], 1000.0, last_touch=500.0, last_reclaim=600.0)
    # a run since, but the last collection was too recent
    assert not memory.due([0.0], 1000.0, last_touch=900.0, last_reclaim=1000.0 - gap + 1)
    assert memory.due([0.0], 1000.0, last_touch=900.0, last_reclaim=1000.0 - gap)


class _Holder:
    """Something a session's state could hold."""


def test_reclaim_frees_state_held_only_by_a_reference_cycle():
    gc.disable()  # the automatic collector must not do the work the test checks
    try:
        state = _Holder()
        state.me = state  # a cycle, as a removed session's objects form
        state.matrix = np.ones((256, 256))
        alive = weakref.ref(state)
        del state
        assert alive() is not None  # reference counting alone cannot free a cycle
        memory.reclaim()
        assert alive() is None
    finally:
        gc.enable()


def test_every_run_of_the_app_touches_its_session_marker():
    def script():
        import streamlit as st

        from attnviz.ui import memory as m
        m.track_session(now=lambda: st.session_state["clock"])

    at = AppTest.from_function(script)
    at.session_state["clock"] = 10.0
    at.run()
    seen = at.session_state[memory._KEY]
    assert isinstance(seen, memory.Seen) and seen.at == 10.0
    at.session_state["clock"] = 20.0
    at.run()
    assert at.session_state[memory._KEY] is seen and seen.at == 20.0
    assert memory._CLOCK["touch"] == 20.0
    assert seen in set(memory._MARKERS)
