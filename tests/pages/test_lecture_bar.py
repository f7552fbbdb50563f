"""AppTest: the guided lecture's bar (attnviz/ui/lecture_bar.py) over app.py — starting a lecture
from Home and the sidebar, Next/Back moving the page, the preset, the settings and the
Playground's focus, presenter mode kept on, Leave, and the ``?lecture=&step=`` link (beside the
share feature's ``?scenario=``), hostile values included."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest_helpers import APP, chart_keys, set_focus, spec_by_key
from streamlit.testing.v1 import AppTest

from attnviz.io import scenario_io
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.presets import PRESETS, default_scenario
from attnviz.teach.lectures import LECTURES
from attnviz.teach.text import lectures as text
from attnviz.teach.text import playground as playground_text
from attnviz.ui import lecture_bar, state
from attnviz.ui.lecture import slot_key

TIMEOUT = 60


def fresh(**params) -> AppTest:
    """app.py's first run, with these query parameters in the address bar."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def bar_title(at: AppTest) -> str | None:
    """The bar's "Lecture: … — step n of N" (None without a bar)."""
    for md in at.markdown:
        if md.value.startswith("**Lecture: "):
            return md.value[2:].split("**", 1)[0]
    return None


def page_keys(at: AppTest) -> set[str]:
    """The key prefixes of the widgets drawn (a page's widgets start with its file's stem)."""
    return {str(w.key).split("_", 1)[0] for w in at.main if getattr(w, "key", None)}


def on_step(at: AppTest, key: str, index: int) -> None:
    """The run shows step ``index`` of lecture ``key``: bar, scenario, focus, page, link."""
    no_exception(at)
    lecture = LECTURES[key]
    step = lecture.steps[index]
    assert bar_title(at) == text.BAR_TITLE.format(title=lecture.title, n=index + 1,
                                                  total=len(lecture.steps))
    expected = lecture_bar.with_settings(PRESETS[step.preset].build(), step.settings)
    assert fingerprint(at.session_state[state.SCENARIO]) == fingerprint(expected)
    assert at.session_state[state.PRESENTER] is True
    stem = Path(step.page).stem
    assert any(k.startswith(stem.split("_")[0]) for k in page_keys(at)), (stem, page_keys(at))
    if step.focus:
        assert at.session_state["playground_focus"] == playground_text.FOCUS[step.focus]
    assert at.query_params[lecture_bar.PARAM_LECTURE] == key
    assert at.query_params[lecture_bar.PARAM_STEP] == str(index + 1)


def test_home_starts_a_lecture_on_its_first_step():
    at = fresh()
    assert bar_title(at) is None
    at.button(key="home_lecture_modern").click().run()
    on_step(at, "modern", 0)
    assert at.selectbox(key=lecture_bar.CHOICE).value == "modern"  # the sidebar follows
    step = LECTURES["modern"].steps[0]  # the share link stays beside the lecture's
    expected = lecture_bar.with_settings(PRESETS[step.preset].build(), step.settings)
    assert at.query_params[scenario_io.LINK_PARAM] == scenario_io.to_link_param(expected)


def test_next_and_back_move_the_page_the_preset_and_the_focus():
    at = fresh()
    at.button(key="home_lecture_scratch").click().run()
    on_step(at, "scratch", 0)  # Playground, focus Q K V
    assert at.button(key="lecture_back").disabled
    at.button(key="lecture_next").click().run()
    on_step(at, "scratch", 1)  # same page, focus Scores
    for index in (2, 3):
        at.button(key="lecture_next").click().run()
        on_step(at, "scratch", index)  # step 4: Step by step on seed 002
    at.button(key="lecture_back").click().run()
    on_step(at, "scratch", 2)  # back on the Playground, Weights, seed 000


def test_a_step_loads_its_settings_through_the_editors():
    """Step 6 of Attention from scratch sets τ = 0.3: the Playground's τ slider (a widget of
    the new editor generation) shows 0.3, and moving it still edits the scenario."""
    at = fresh(lecture="scratch", step="6")
    on_step(at, "scratch", 5)
    # the weights focus: τ's control is the weights chart's own slider
    (tau,) = spec_by_key(at, slot_key(1))["layout"]["sliders"]
    assert tau["steps"][tau["active"]]["label"] == "0.3"
    set_focus(at, "all").run()  # where τ has a slider in the settings
    slider = at.slider(key=f"playground_temperature_v{at.session_state[state.EDITOR_VERSION]}")
    assert slider.value == pytest.approx(0.3)
    slider.set_value(1.5).run()
    no_exception(at)
    assert at.session_state[state.SCENARIO].temperature == pytest.approx(1.5)


def test_presenter_mode_goes_on_with_every_step():
    at = fresh()
    at.button(key="home_lecture_backprop").click().run()
    at.session_state[state.PRESENTER] = False
    at.run()
    at.button(key="lecture_next").click().run()
    on_step(at, "backprop", 1)


def test_the_last_step_has_no_next_and_leave_ends_the_lecture():
    total = len(LECTURES["backprop"].steps)
    at = fresh(lecture="backprop", step=str(total))
    on_step(at, "backprop", total - 1)
    assert at.button(key="lecture_next").disabled
    shown = fingerprint(at.session_state[state.SCENARIO])
    at.button(key="lecture_leave").click().run()
    no_exception(at)
    assert bar_title(at) is None
    assert lecture_bar.PARAM_LECTURE not in at.query_params
    assert lecture_bar.PARAM_STEP not in at.query_params
    assert fingerprint(at.session_state[state.SCENARIO]) == shown  # the scenario stays
    at.run()  # the old link is not followed again
    assert bar_title(at) is None


def test_the_sidebar_starts_and_leaves_a_lecture():
    at = fresh()
    at.selectbox(key=lecture_bar.CHOICE).select("backprop").run()
    on_step(at, "backprop", 0)
    at.selectbox(key=lecture_bar.CHOICE).select("").run()
    no_exception(at)
    assert bar_title(at) is None


@pytest.mark.parametrize(("key", "n"), [("scratch", 4), ("modern", 4), ("backprop", 5)])
def test_a_link_opens_that_step(key, n):
    on_step(fresh(lecture=key, step=str(n)), key, n - 1)


def test_a_link_without_a_step_opens_the_first():
    on_step(fresh(lecture="modern"), "modern", 0)


@pytest.mark.parametrize("value", ["../../x", "<script>alert(1)</script>", "", "SCRATCH",
                                   "x" * 10_000, "modern\n"])
def test_a_link_to_no_lecture_says_so_and_changes_nothing(value):
    at = fresh(lecture=value, step="2")
    no_exception(at)
    assert [e.value for e in at.error] == [text.BAD_LECTURE]
    assert bar_title(at) is None
    assert fingerprint(at.session_state[state.SCENARIO]) == fingerprint(default_scenario())
    at.run()  # said once
    assert not at.error


@pytest.mark.parametrize("value", [str(10**9), "0", "-3", "2.5", "abc", "٣", "", "9" * 4000])
def test_a_link_to_no_step_says_so_and_starts_at_step_one(value):
    at = fresh(lecture="modern", step=value)
    on_step(at, "modern", 0)
    assert [w.value for w in at.warning] == [
        text.BAD_STEP.format(title="Modern attention", total=len(LECTURES["modern"].steps))]


def test_a_scenario_link_still_works_without_a_lecture():
    scenario = PRESETS["gqa_8_2"].build()
    at = fresh(scenario=scenario_io.to_link_param(scenario))
    no_exception(at)
    assert bar_title(at) is None
    assert fingerprint(at.session_state[state.SCENARIO]) == fingerprint(scenario)


def test_with_both_links_the_lecture_step_decides_the_scenario():
    other = PRESETS["gqa_8_2"].build()
    at = fresh(scenario=scenario_io.to_link_param(other), lecture="scratch", step="2")
    on_step(at, "scratch", 1)
    step = LECTURES["scratch"].steps[1]
    expected = lecture_bar.with_settings(PRESETS[step.preset].build(), step.settings)
    assert at.query_params[scenario_io.LINK_PARAM] == scenario_io.to_link_param(expected)


def test_every_step_of_every_lecture_runs_without_an_exception():
    at = fresh()
    for key, lecture in LECTURES.items():
        at.selectbox(key=lecture_bar.CHOICE).select(key).run()
        for index in range(len(lecture.steps)):
            on_step(at, key, index)
            step = lecture.steps[index]
            if step.show:  # the chart the browser brings up under the bar is on the page
                assert step.show in chart_keys(at), (key, index, step.show, chart_keys(at))
            if index < len(lecture.steps) - 1:
                at.button(key="lecture_next").click().run()


def test_steps_whose_page_starts_below_the_first_screen_name_their_chart():
    """Walked at 1024×768 in presenter mode, these steps' lesson was below the screen (the
    page's title, scenario caption and controls first): each names the chart to bring up."""
    named = {(step.page, step.talk) for lecture in LECTURES.values() for step in lecture.steps
             if step.show}
    for page in ("masks", "multi_head", "inference", "modern", "why_sqrt_dk", "gradients",
                 "learn"):
        assert any(p == f"pages/{page}.py" for p, _ in named), page


def test_on_another_page_the_bar_says_so_and_next_returns_to_the_path():
    at = fresh(lecture="scratch", step="4")  # Step by step
    on_step(at, "scratch", 3)
    shown = fingerprint(at.session_state[state.SCENARIO])
    at.switch_page("pages/quiz.py").run()
    no_exception(at)
    assert bar_title(at) == text.BAR_TITLE.format(title="Attention from scratch", n=4,
                                                  total=len(LECTURES["scratch"].steps))
    assert text.ELSEWHERE in [c.value for c in at.caption]
    assert fingerprint(at.session_state[state.SCENARIO]) == shown  # nothing reloaded
    at.button(key="lecture_next").click().run()
    on_step(at, "scratch", 4)
    assert text.ELSEWHERE not in [c.value for c in at.caption]
