"""Step by step's query step names the vector it shows: RoPE's rotated and QK-norm's normalised
query get their variant's formula, a plain projection ``q_i = x_i W_Q``
(tests/scenarios/test_query_formula.py checks which variants need which)."""

from __future__ import annotations

import pytest
from apptest_helpers import APP, switch_to
from streamlit.testing.v1 import AppTest

from attnviz.scenarios.presets import PRESETS
from attnviz.scenarios.registry import VARIANTS
from attnviz.ui import state

PLAIN = r"q_i = x_i W_Q"


@pytest.mark.parametrize(("preset", "expected"), [
    ("rope_shift", VARIANTS["rope"].written_query()),
    ("qk_norm_tamed", VARIANTS["qk_norm"].written_query()),
    ("seed_000", PLAIN),
])
def test_the_query_step_writes_how_the_shown_query_was_made(preset, expected):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.session_state[state.SCENARIO] = PRESETS[preset].build()
    switch_to(at, "step_by_step", lazy_open=False, focus=None)
    assert not at.exception, [e.message for e in at.exception]
    written = [element.value.strip("$\n") for element in at.latex]
    assert expected in written
    if expected != PLAIN:
        assert PLAIN not in written
