"""Every control's range is written once: in ``attnviz/scenarios/limits.py``,
read by the control's widget and by the frames its chart steps through.

Each test reads a range where it is used (a slider drawn by a page, a chart's drag steps) and
checks it against limits.py; the last one keeps the literal ranges out of the pages and views.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest_helpers import open_page, server_like_pages

from attnviz.scenarios import limits, sweep
from attnviz.ui import inference_view, modern_view, positional_encoding_view

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _server_like_pages():
    with server_like_pages():
        yield


def test_the_sink_logits_frames_span_its_slider():
    assert inference_view.LOGITS[0] == limits.SINK_LOGIT_MIN
    assert inference_view.LOGITS[-1] == limits.SINK_LOGIT_MAX
    logits = inference_view.LOGITS
    steps = {round(b - a, 9) for a, b in zip(logits, logits[1:], strict=False)}
    assert steps == {limits.SINK_LOGIT_STEP}


def test_the_rope_shifts_frames_span_its_slider():
    assert (modern_view.DELTAS[0], modern_view.DELTAS[-1]) == (0, limits.ROPE_SHIFT_MAX)


def test_the_pe_d_model_drag_steps_lie_in_its_slider_range():
    allowed = range(limits.PE_D_MODEL_MIN, limits.PE_D_MODEL_MAX + 1, limits.PE_D_MODEL_STEP)
    assert set(positional_encoding_view.D_MODELS) <= set(allowed)
    assert positional_encoding_view.D_MODELS[-1] == limits.PE_D_MODEL_MAX


def test_the_temperature_grid_is_the_sliders_range():
    grid = sweep.temperature_grid()
    assert (grid[0], grid[-1]) == (limits.TEMPERATURE_MIN, limits.TEMPERATURE_MAX)
    assert len(grid) == round((limits.TEMPERATURE_MAX - limits.TEMPERATURE_MIN)
                              / limits.TEMPERATURE_STEP) + 1


def test_the_playgrounds_sliders_and_boxes_take_their_range_from_limits():
    at = open_page("playground")
    version = at.session_state["editor_version"]
    tau = at.slider(key=f"playground_temperature_v{version}")
    assert (tau.min, tau.max, tau.step) == (limits.TEMPERATURE_MIN, limits.TEMPERATURE_MAX,
                                            limits.TEMPERATURE_STEP)
    seed = at.number_input(key="playground_init_seed")
    assert (seed.min, seed.max) == (0, limits.SEED_MAX)
    at.radio(key=f"playground_scale_mode_v{version}").set_value("custom").run()
    scale = at.number_input(key=f"playground_custom_scale_v{version}")
    assert (scale.min, scale.max, scale.step) == (limits.CUSTOM_SCALE_MIN,
                                                  limits.CUSTOM_SCALE_MAX,
                                                  limits.CUSTOM_SCALE_STEP)


# literal ranges that once stood in two or three places (now names in limits.py)
WRITTEN_ONCE = {
    "the sink logit": r"-10\.0,\s*10\.0|range\(-20,\s*21\)",
    "RoPE's shift": r"range\(0,\s*51\)|,\s*0,\s*50,",
    "the PE d_model": r"2,\s*128,\s*step=2|range\(2,\s*129,\s*2\)",
    "a seed's largest value": r"2\s*\*\*\s*31\s*-\s*1",
    "τ": r"0\.05,\s*5\.0",
}


@pytest.mark.parametrize("what", list(WRITTEN_ONCE))
def test_no_page_or_view_writes_a_range_of_limits_again(what):
    pattern = re.compile(WRITTEN_ONCE[what])
    found = [f"{path.relative_to(ROOT)}:{i}" for path in [*ROOT.glob("pages/*.py"),
                                                           *ROOT.glob("attnviz/ui/*.py")]
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert not found, f"{what}'s range written outside limits.py: {found}"
