"""The guided lecture's bar, shown at the top of every page while a lecture is on.

A lecture (:mod:`attnviz.teach.lectures`) is started from Home (:func:`start_buttons`), the
sidebar (:func:`sidebar_picker`) or a link (``?lecture=<key>&step=<n>``, n = 1 for the first
step). app.py calls :func:`show` once per run, after ``st.navigation`` and before the sidebar and
the page: it reads a link, loads a step that is not loaded yet and switches to its page, then
draws the bar ("Lecture: Modern attention — step 3 of 10", the talking point, Back / Next /
Leave). The → and ← keys press Next and Back through a tiny component (``lecture_keys.js``); it
ignores keys typed into an input, a text area, a select, a slider or a chart.

Loading a step goes through the one load path of the sidebar's preset box:
``state.load_preset`` (the editors restart from the new scenario, the sidebar's box follows),
then ``state.set_scenario`` with the step's settings on top (:func:`with_settings`), and turns
presenter mode on. The Playground's focus (its tab's label) is written into its tabs' key at
the start of the run that draws the Playground, before the tabs exist (Streamlit's documented
way to set a widget's value).

While a lecture is on, the address bar holds ``?lecture=<key>&step=<n>`` beside the
``?scenario=`` link of :mod:`attnviz.ui.share`: a student opening that address follows the same
path (the step, not the lecturer's edits, decides the scenario). A link naming no lecture or no
step shows a sentence and changes nothing (a bad step starts the lecture at step 1).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from attnviz.scenarios.scenario import Scenario
from attnviz.teach.lectures import LECTURES, Lecture, Step, step_problem, with_settings
from attnviz.teach.text import lectures as text
from attnviz.teach.text import playground as playground_text
from attnviz.ui import state
from attnviz.ui.safe import md_escape

# A compact bar, the page's first line below Streamlit's header on every page (the Playground's
# compact padding would put the bar under it). Static CSS, injected only while a lecture is on;
# it reaches Streamlit's elements through data-testid attributes (not a public API; presenter
# mode's CSS does the same, see attnviz/ui/presenter.py) and the bar's st-key-lecture_bar class.
LECTURE_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.75rem !important; }
.st-key-lecture_bar { padding: 0.35rem 0.75rem; gap: 0.2rem; background-color: #ffffff; }
/* the bar stays in view while the page scrolls: its wrapper sticks (a sticky element
   sticks within its parent, and Streamlit wraps the container in one of its own) */
:has(> .st-key-lecture_bar) { position: sticky; top: 3.75rem; z-index: 99; }
[data-testid="stMain"] .st-key-lecture_bar [data-testid="stMarkdownContainer"] p {
  font-size: 1.05rem; line-height: 1.35;
}
[data-testid="stMain"] .st-key-lecture_bar [data-testid="stCaptionContainer"] {
  font-size: 0.9rem;
}
.st-key-lecture_bar button { min-height: 2.1rem; padding: 0.1rem 0.5rem; }
[data-testid="stMain"] .st-key-lecture_bar button p { font-size: 1rem; }
</style>"""
VISITS = "lecture_visits"  # session state: how many steps were opened (a new visit of a step)
LECTURE = "lecture_key"  # session state: the key of the lecture on, absent when none is
STEP = "lecture_step"  # session state: the index of its current step (0 = the first)
APPLIED = "_lecture_applied"  # (lecture key, step index) whose scenario was loaded last
PENDING_FOCUS = "_lecture_focus"  # the Playground focus to set when the Playground runs
LINK_SEEN = "_lecture_link_seen"  # the (lecture, step) link values read or written last
FLASH = "_lecture_flash"  # a link message to show on the next run (after a page switch)
CHOICE = "sidebar_lecture"  # the sidebar's select box
KEYS = "lecture_keys"  # the keys component
PARAM_LECTURE, PARAM_STEP = "lecture", "step"  # the link's parameters
FOCUS_KEY = "playground_focus"  # the open focus tab's label (ui/playground_view.py)
_HERE = Path(__file__).parent


# ---------------------------------------------------------------------------------------------
# The lecture's place (callbacks: they run before the script, so show() sees the new step)
# ---------------------------------------------------------------------------------------------

def current() -> Lecture | None:
    """The lecture that is on, or None."""
    return LECTURES.get(st.session_state.get(LECTURE))


def start(key: str) -> None:
    """Start lecture ``key`` at its first step (a button's or the select box's callback)."""
    st.session_state[LECTURE] = key
    st.session_state[STEP] = 0


def leave() -> None:
    """End the lecture; the page, the scenario and presenter mode stay as they are."""
    for key in (LECTURE, STEP, APPLIED, PENDING_FOCUS):
        st.session_state.pop(key, None)


def move(delta: int) -> None:
    """Go ``delta`` steps along the current lecture (stays within its steps)."""
    lecture = current()
    if lecture is not None:
        index = st.session_state.get(STEP, 0) + delta
        st.session_state[STEP] = min(max(index, 0), len(lecture.steps) - 1)


def _on_key() -> None:
    """The keys component sent "next" (→) or "back" (←); anything else is ignored."""
    value = st.session_state.get(KEYS)
    action = value.get("action") if isinstance(value, Mapping) else getattr(value, "action",
                                                                            None)
    if action in ("next", "back"):
        move(1 if action == "next" else -1)


def _on_pick() -> None:
    """The sidebar's select box: start the chosen lecture, or leave for "None"."""
    key = st.session_state.get(CHOICE)
    if key in LECTURES:
        start(key)
    else:
        leave()


# ---------------------------------------------------------------------------------------------
# Loading a step
# ---------------------------------------------------------------------------------------------

def load_step(step: Step) -> Scenario:
    """Load the step's preset and settings as the scenario (as the sidebar's preset box does:
    the editors restart from it), turn presenter mode on and ask for the step's focus."""
    scenario = state.load_preset(step.preset)
    scenario = with_settings(scenario, step.settings)
    state.set_scenario(scenario)
    state.remember_opened(scenario)  # once edited: "Edited from <the step's title>"
    st.session_state[state.PRESENTER] = True  # before the sidebar's toggle is drawn
    if step.focus:
        st.session_state[PENDING_FOCUS] = step.focus
    else:
        st.session_state.pop(PENDING_FOCUS, None)
    return scenario


def on_page(page, step: Step) -> bool:
    """True when ``page`` (what ``st.navigation`` returned) is the step's page."""
    return (getattr(page, "url_path", "") or "home") == Path(step.page).stem


# ---------------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------------

def _read_link() -> None:
    """Follow ``?lecture=<key>&step=<n>`` once per value: start that lecture at that step, or
    leave a sentence saying what is wrong with the link (never an exception)."""
    lecture_key = st.query_params.get(PARAM_LECTURE)
    step_text = st.query_params.get(PARAM_STEP)
    if lecture_key is None:
        return
    seen = (lecture_key, step_text)
    if st.session_state.get(LINK_SEEN) == seen:
        return  # read already, or written by this session (_keep_link)
    st.session_state[LINK_SEEN] = seen
    problem = step_problem(lecture_key, step_text)
    if problem == "lecture":
        st.session_state[FLASH] = text.BAD_LECTURE
        return
    lecture = LECTURES[lecture_key]
    index = 0 if problem or step_text is None else int(step_text) - 1
    if problem == "step":
        st.session_state[FLASH] = text.BAD_STEP.format(title=lecture.title,
                                                       total=len(lecture.steps))
    st.session_state[LECTURE] = lecture.key
    st.session_state[STEP] = index


def _link(lecture: Lecture, index: int) -> dict[str, str]:
    return {PARAM_LECTURE: lecture.key, PARAM_STEP: str(index + 1)}


def _keep_link(lecture: Lecture | None, index: int) -> None:
    """Keep the address bar's lecture parameters in step with the lecture (none without one:
    only those this session wrote or read are removed)."""
    if lecture is None:
        seen = st.session_state.get(LINK_SEEN)
        here = (st.query_params.get(PARAM_LECTURE), st.query_params.get(PARAM_STEP))
        if here[0] is not None and here == seen:
            del st.query_params[PARAM_LECTURE]
            if PARAM_STEP in st.query_params:
                del st.query_params[PARAM_STEP]
        return
    link = _link(lecture, index)
    st.session_state[LINK_SEEN] = (link[PARAM_LECTURE], link[PARAM_STEP])
    for name, value in link.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value


# ---------------------------------------------------------------------------------------------
# What is drawn
# ---------------------------------------------------------------------------------------------

def show(page) -> None:
    """The frame's one call (app.py, after ``st.navigation``, before the sidebar and the page):
    follow a lecture link, load the current step when it changed (switching to its page), set
    the Playground's focus, and draw the bar."""
    _read_link()
    lecture = current()
    flash = st.session_state.pop(FLASH, None)
    if flash:
        state.mark_one_time_message()
    if lecture is None:
        _keep_link(None, 0)
        if flash:
            st.error(flash)
        return
    index = min(max(int(st.session_state.get(STEP, 0)), 0), len(lecture.steps) - 1)
    step = lecture.steps[index]
    if st.session_state.get(APPLIED) != (lecture.key, index):
        load_step(step)
        st.session_state[APPLIED] = (lecture.key, index)
        st.session_state[VISITS] = st.session_state.get(VISITS, 0) + 1
        if not on_page(page, step):
            if flash:
                st.session_state[FLASH] = flash  # said on the step's page
            st.session_state[LINK_SEEN] = (lecture.key, str(index + 1))
            st.switch_page(step.page, query_params=_link(lecture, index))
    here = on_page(page, step)
    if here and PENDING_FOCUS in st.session_state:
        st.session_state[FOCUS_KEY] = playground_text.FOCUS[st.session_state.pop(PENDING_FOCUS)]
    _keep_link(lecture, index)
    if flash:
        st.warning(flash)
    _bar(lecture, index, here)


def _bar(lecture: Lecture, index: int, here: bool) -> None:
    """Title and place, the talking point, Back / Next / Leave, and the keys."""
    step = lecture.steps[index]
    last = len(lecture.steps) - 1
    st.html(LECTURE_CSS)
    with st.container(border=True, key="lecture_bar"):
        words, back, nxt, leave_box = st.columns([7.5, 1.2, 1.2, 1.1], vertical_alignment="center")
        place = text.BAR_TITLE.format(title=lecture.title, n=index + 1, total=last + 1)
        words.markdown(f"**{place}** · {md_escape(text.TALK[step.talk])}")
        if not here:
            words.caption(text.ELSEWHERE)
        back.button(text.BACK, key="lecture_back", on_click=move, args=(-1,),
                    disabled=index == 0, help=text.BACK_HELP, width="stretch")
        nxt.button(text.NEXT, key="lecture_next", on_click=move, args=(1,),
                   disabled=index == last, help=text.NEXT_HELP, width="stretch", type="primary")
        leave_box.button(text.LEAVE, key="lecture_leave", on_click=leave, help=text.LEAVE_HELP,
                         width="stretch")
        show = step.show if here else None  # brought up under the bar once per visit
        visit = f"{lecture.key}:{index}:{st.session_state.get(VISITS, 0)}"
        _keys_component()(key=KEYS, data={"step": index, "show": show, "id": visit},
                          on_action_change=_on_key)


@functools.cache
def _keys_component():
    """The → / ← keys (registered once per process; ``lecture_keys.js``)."""
    return st.components.v2.component(
        "attnviz_lecture_keys", js=(_HERE / "lecture_keys.js").read_text(encoding="utf-8"),
        isolate_styles=False)


# ---------------------------------------------------------------------------------------------
# Where a lecture starts
# ---------------------------------------------------------------------------------------------

def sidebar_picker() -> None:
    """The sidebar's "Guided lecture" select box (it follows a lecture started elsewhere)."""
    st.session_state[CHOICE] = st.session_state.get(LECTURE) if current() else ""
    choices = ["", *LECTURES]
    st.selectbox(text.SIDEBAR_LABEL, choices, key=CHOICE, on_change=_on_pick,
                 format_func=lambda k: LECTURES[k].title if k else text.SIDEBAR_NONE,
                 help=text.SIDEBAR_HELP)


def start_buttons(prefix: str) -> None:
    """Home's section: one Start button per lecture, with what it covers."""
    st.subheader(text.HOME_TITLE)
    st.caption(text.HOME_INTRO)
    for col, lecture in zip(st.columns(len(LECTURES)), LECTURES.values(), strict=True):
        with col.container(border=True):
            st.markdown(f"**{lecture.title}** · {text.HOME_STEPS.format(n=len(lecture.steps))}")
            st.caption(text.LECTURE_ABOUT[lecture.key])
            st.button(text.HOME_START, key=f"{prefix}_lecture_{lecture.key}", on_click=start,
                      args=(lecture.key,))
