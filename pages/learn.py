"""Learn: gradient descent on the scenario's weights toward a pattern or an output, recorded and
played back in the browser; the trained weights can be loaded into the scenario.

One click trains for at most ``limits.TRAIN_SECONDS`` with a progress bar and a Stop button;
Continue goes on from where the budget or Stop left it. The parts: :mod:`attnviz.ui.learn_view`.
"""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.gradients import PATTERNS
from attnviz.scenarios.learn import MAX_STEPS, OPTIMIZERS, TRAINABLE
from attnviz.teach.text import learn as text
from attnviz.ui import controls, layout, presenter, state
from attnviz.ui.learn_view import (
    DEFAULTS,
    LOADED,
    RATES,
    apply_experiment,
    before_training,
    run_view,
    task_loss,
    train_buttons,
)
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import scenario_caption

for widget, value in DEFAULTS.items():  # the controls' values live in the session state (the
    st.session_state.setdefault(widget, value)  # experiments set them)
scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
presenter.page_intro(text.INTRO)
if st.session_state.pop(LOADED, False):
    st.success(text.LOADED)
result = controls.compute(scenario)
if result is None:
    end_page()
if scenario.spec.backward is None:
    st.info(text.NO_BACKWARD)
    end_page()
att = result.attention
lesson = presenter.lesson_box()

pick = st.selectbox(text.EXPERIMENTS_LABEL, list(text.EXPERIMENTS),
                    format_func=text.EXPERIMENTS.get, key="learn_experiment",
                    on_change=apply_experiment)
if pick:
    st.caption(text.EXPERIMENT_NOTES[pick])

c1, c2, c3 = st.columns(layout.TASK_FIELDS_HEAD)
task = c1.selectbox(text.TASK_LABEL, [*PATTERNS, "custom", "copy_previous"],
                    format_func=text.TASKS.get, key="learn_task", help=text.TASK_HELP)
if scenario.direct or not scenario.spec.projections:
    st.info(text.NO_PROJECTIONS)
    end_page()
with_w_o = hasattr(att, "concat")  # multi-head results go through W_O
readable = [f for f in TRAINABLE if f != "w_o" or with_w_o]
st.session_state["learn_fields"] = [f for f in st.session_state.get("learn_fields", ["w_q", "w_k"])
                                    if f in readable]
fields = c2.multiselect(text.TRAIN_LABEL, readable, format_func=text.FIELD_NAMES.get,
                        key="learn_fields")
head = controls.head_picker(att, "learn_head", c3) or 0
c4, c5, c6, c7, c8 = st.columns(layout.TRAINING_SETTINGS)
optimizer = c4.radio(text.OPTIMIZER_LABEL, OPTIMIZERS, format_func=text.OPTIMIZER_NAMES.get,
                     key="learn_optimizer")
lr = c5.select_slider(text.LR_LABEL, RATES, key="learn_lr")
steps = int(c6.number_input(text.STEPS_LABEL, 1, MAX_STEPS, key="learn_steps",
                            help=text.STEPS_HELP.format(limit=MAX_STEPS,
                                                        budget=f"{limits.TRAIN_SECONDS:g}")))
start = c7.radio(text.START_LABEL, ["scenario", "random"], format_func=text.START_NAMES.get,
                 key="learn_start", horizontal=True)
seed = int(c8.number_input(text.SEED_LABEL, 0, limits.SEED_MAX, key="learn_seed",
                           disabled=start != "random"))
loss = task_loss(scenario, result, task)
if task in ("previous", "copy_previous") and not scenario.use_pe and "x" not in fields:
    st.info(text.POSITIONS_HINT)
    if st.button(text.PE_BUTTON, key="learn_pe"):
        state.update(use_pe=True)
        st.rerun()
if fields == ["w_v"] and loss.kind == "pattern_ce":
    st.info(text.W_V_ONLY)

settings = fingerprint((scenario, loss.kind, loss.target, tuple(fields), optimizer, float(lr),
                        steps, start, seed, head))
record = train_buttons(scenario, loss, settings, fields, optimizer, float(lr), steps,
                       seed if start == "random" else None, head)
with lesson or st.container():
    if record is None:
        before_training(loss, att, head, result.q_labels, result.k_labels)
        st.caption(text.NO_RUN)
    else:
        run_view(record, settings, result.q_labels, result.k_labels)
