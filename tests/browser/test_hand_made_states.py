"""Hand-made widget states sent to one attnviz server (no proxy), as a student with the
browser's developer tools could: nothing shows a traceback, nothing changes a number silently.

The client is benchmarks/ws_load.py's simulated student (the WebSocket protocol a browser
speaks). tests/pages/test_classroom.py checks the same through the classroom's proxy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from pathlib import Path

import pytest
import websockets

from attnviz.scenarios.presets import default_scenario

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import ws_load  # noqa: E402 - the benchmark's simulated students

pytestmark = pytest.mark.browser


def _session(app_server: str, steps):
    """Open one session, run ``steps(student)`` (a coroutine function) and return its result."""

    async def go():
        student = ws_load.Student(0, default_scenario())
        url = app_server.replace("http://", "ws://") + "/_stcore/stream"
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None,
                                      ping_interval=None) as ws:
            student.ws = ws
            return await steps(student)

    # in a thread of its own: Playwright's sync API (the other browser tests of the session)
    # keeps an event loop running in this one, where asyncio.run() refuses to start
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def test_a_state_streamlit_cannot_parse_shows_no_traceback(app_server):
    """Streamlit parses a grid's state before any page code runs: a hand-made one (row 'abc')
    raises there. The dashboard's config (client.showErrorDetails = "none") shows a generic
    message: no exception type's details, no stack trace, no server path."""

    async def steps(student):
        run = await ws_load.rerun(student, "masks")
        custom = ws_load.widget_state(run.widgets["masks_kind"], string_value="custom")
        student.states[custom.id] = custom
        run = await ws_load.rerun(student, "masks")
        bad = ws_load.widget_state(run.widgets["masks_custom_v0"],
                                   string_value='{"edited_rows": {"abc": {}}}')
        student.states[bad.id] = bad
        return await ws_load.rerun(student, "masks")

    run = _session(app_server, steps)
    assert run.exceptions, "the malformed state no longer raises in Streamlit: the test is moot"
    for exc in run.exceptions:
        assert "redacted" in exc and "site-packages" not in exc and "/work" not in exc, exc


def test_a_mask_kind_sent_as_a_number_changes_nothing(app_server):
    """The Masks page's radio sent as a number (4, not "custom") once stored mask_kind=4 in the
    scenario: every page then refused it. It is ignored; the Playground draws the default."""

    async def steps(student):
        run = await ws_load.rerun(student, "masks")
        number = ws_load.widget_state(run.widgets["masks_kind"], int_value=4)
        student.states[number.id] = number
        after = await ws_load.rerun(student, "masks")
        student.states.clear()
        ws_load.check(student, await ws_load.rerun(student))  # the Playground
        return after, student

    run, student = _session(app_server, steps)
    assert run.exceptions == []
    assert student.errors == [] and student.lost == 0, "the Playground no longer draws the default"
