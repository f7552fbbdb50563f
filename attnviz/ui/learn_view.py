"""The Learn page's parts: the controls' defaults and the classroom experiments, the target of
the chosen task, a training run with its progress bar and Stop button (one click trains for at
most ``limits.TRAIN_SECONDS``: a Budget, attnviz/scenarios/budget.py; any rerun interrupts it at
its next progress update and the steps taken so far are kept), and the recorded run played back.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.figures.heatmap import Values, heatmap
from attnviz.figures.training import training_figure
from attnviz.scenarios import limits
from attnviz.scenarios.budget import BUDGET, Budget, click_budget
from attnviz.scenarios.gradients import Loss, target_pattern
from attnviz.scenarios.learn import Training, copy_previous_target
from attnviz.teach.text import common
from attnviz.teach.text import learn as text
from attnviz.ui import controls, layout, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import show_figure

RATES = [0.0001, 0.001, 0.01, 0.05, 0.1, 0.5, 1.0, 10.0, 100.0, 1000.0]
RUN = "learn_run"  # the last run: dict(settings=fingerprint, training=Training, seconds=float)
PROGRESS_EVERY = 0.2  # seconds between progress updates (each is where a click interrupts)
LOADED = "learn_loaded"  # the trained weights were loaded into the scenario (say so once)
# the page opens on a task its default head learns with these settings (seed 000: the loss
# falls from 11.3 to 0.017 in the 200 steps); "previous" needs positions (an experiment)
DEFAULTS = dict(learn_task="self", learn_optimizer="adam", learn_lr=0.05, learn_steps=200,
                learn_start="scenario", learn_seed=0)
# experiment -> (scenario changes, widget values)
EXPERIMENTS = {
    "learn_previous": (dict(use_pe=True), dict(
        learn_task="previous", learn_fields=["w_q", "w_k"], learn_optimizer="adam",
        learn_lr=0.05, learn_steps=200, learn_start="scenario")),
    "saturated": (dict(use_pe=True, scale_mode="custom"), dict(
        learn_task="copy_previous", learn_fields=["w_q", "w_k"], learn_optimizer="sgd",
        learn_lr=0.1, learn_steps=100, learn_start="scenario")),
    "diverge": (dict(use_pe=True), dict(
        learn_task="copy_previous", learn_fields=["w_q", "w_k", "w_v"], learn_optimizer="sgd",
        learn_lr=1000.0, learn_steps=100, learn_start="scenario")),
    "w_v_only": ({}, dict(
        learn_task="previous", learn_fields=["w_v"], learn_optimizer="adam", learn_lr=0.05,
        learn_steps=100, learn_start="scenario")),
}


def apply_experiment() -> None:
    """Set the scenario and the controls of the chosen classroom experiment."""
    key = st.session_state.get("learn_experiment")
    if key not in EXPERIMENTS:
        return
    changes, widgets = EXPERIMENTS[key]
    sc = state.get_scenario()
    if changes.get("scale_mode") == "custom":  # 5 × 1/√d_k: the softmax saturates
        d_k = sc.w_q.shape[1] // (sc.n_heads if sc.always_heads else 1)
        changes = dict(changes, custom_scale=5.0 / float(np.sqrt(d_k)))
    if changes:
        state.set_scenario(replace(sc, **changes))
    st.session_state.update(widgets)


def run_training(record: dict, budget: Budget) -> None:
    """Train ``record["training"]`` within ``budget`` with a progress bar and a Stop button.

    The training lives in the session state from the click on and each step changes it in
    place, so whatever ends the run — done, the budget, a rerun raised inside a progress
    update (Stop, another control, leaving the page) — the next run shows the steps taken.
    """
    training, before = record["training"], record["seconds"]
    bar = st.progress(training.step / training.steps)
    stop = st.empty()
    stop.button(text.STOP_BUTTON, key="learn_stop")  # its click reruns: that stops the run
    first, shown = training.step, [-PROGRESS_EVERY]

    def progress(step: int, value: float) -> None:
        record["seconds"] = before + budget.elapsed
        if budget.elapsed - shown[0] < PROGRESS_EVERY and step < training.steps:
            return
        shown[0] = budget.elapsed
        fit = first + budget.projected(step - first, training.steps - first)
        note = "" if fit >= training.steps else text.PROGRESS_FIT.format(
            fit=fit, steps=training.steps, budget=f"{budget.seconds:g}")
        bar.progress(step / training.steps, text=text.PROGRESS.format(
            step=step, steps=training.steps, loss=f"{value:.6g}") + note)

    training.run(budget, progress)
    record["seconds"] = before + budget.elapsed
    bar.empty()
    stop.empty()


def task_loss(scenario, result, task: str) -> Loss:
    """The loss of ``task``: a pattern's cross-entropy (a pattern drawn in a grid for
    "custom"), or the output of copying the previous token's value ("copy_previous")."""
    if task == "custom":
        with st.expander(text.CUSTOM_TITLE, expanded=True):
            kept = st.session_state.get("learn_target")
            default = target_pattern("previous", result.mask)
            target = matrix_editor(text.CUSTOM_TITLE, kept if kept is not None and kept.shape ==
                                   default.shape else default, key="learn_edit_target",
                                   row_labels=result.q_labels, col_labels=result.k_labels)
            st.session_state["learn_target"] = target
        return Loss("pattern_ce", target)
    if task == "copy_previous":
        return Loss("output_mse", copy_previous_target(scenario))
    return Loss("pattern_ce", target_pattern(task, result.mask, scenario.tokens))


def train_buttons(scenario, loss: Loss, settings: str, fields: list[str], optimizer: str,
                  lr: float, steps: int, seed: int | None, head: int) -> dict | None:
    """Train (a fresh run with these settings) and Continue (the last run, while it can go
    on); returns the session's last run, or None before the first."""
    record = st.session_state.get(RUN)
    b1, b2, _ = st.columns(layout.TRAIN_BUTTONS)
    fresh = b1.button(text.TRAIN_BUTTON, type="primary", key="learn_train", disabled=not fields)
    go_on = b2.empty()  # Continue, while the last run can go on
    if (not fresh and record is not None and record["settings"] == settings
            and not record["training"].done
            and go_on.button(text.CONTINUE_BUTTON, key="learn_continue")):
        run_training(record, click_budget())
        if record["training"].done:
            go_on.empty()
    if fresh:
        budget = click_budget()  # the first gradients count too
        try:
            training = Training(scenario, loss, trainable=fields, optimizer=optimizer, lr=lr,
                                steps=steps, seed=seed, head=head)
        except ValueError as exc:
            st.error(f"{text.CANNOT}: {exc}")
            end_page()
        record = st.session_state[RUN] = dict(settings=settings, training=training, seconds=0.0)
        run_training(record, budget)
        if not training.done:  # paused by the budget: offer to go on at once
            go_on.button(text.CONTINUE_BUTTON, key="learn_continue")
    return record


def before_training(loss: Loss, att, head: int, q_lab: list[str], k_lab: list[str]) -> None:
    """Before the first run: the target beside what the scenario computes now — the task's
    pattern and the head's weights (one 0–1 scale), or the target output and the output (one
    signed range) — so the class sees what training has to change."""
    if loss.kind == "pattern_ce":
        now = att.weights[head] if np.ndim(att.weights) == 3 else att.weights
        panels = ((text.TARGET_PATTERN, loss.target), (text.WEIGHTS_NOW, now))
        cols, kw = k_lab, dict(kind="weights", y_title=common.AXIS_QUERY,
                               x_title=common.AXIS_KEY)
    else:
        panels = ((text.TARGET_OUTPUT, loss.target), (text.OUTPUT_NOW, att.output))
        bound = float(max(np.abs(loss.target).max(), np.abs(att.output).max())) or 1.0
        cols = controls.dims("o", np.shape(att.output)[1])
        kw = dict(kind="signed", values=Values(zmin=-bound, zmax=bound))
    # side by side; in presenter mode one at a time, each as large as the screen allows (two
    # side by side at 1024×768 left cells too small for their numbers)
    boxes = (st.tabs([title for title, _ in panels]) if state.presenter()
             else st.columns(2, gap="large"))
    for box, (title, z), name in zip(boxes, panels, ("target", "now"), strict=True):
        with box:
            if not state.presenter():
                st.markdown(f"**{title}**")
            show_figure(heatmap(z, cols, q_lab, **kw), key=f"learn_fig_{name}")


def run_view(record: dict, settings: str, q_lab: list[str], k_lab: list[str]) -> None:
    """The last run: how it ended, its loss curve with the weights (and up to two trained
    fields) played back step by step, and the button that loads its weights."""
    ran_with, run, seconds = record["settings"], record["training"].result(), record["seconds"]
    if ran_with != settings:
        st.info(text.STALE)
    if run.stopped:
        st.warning(text.STOPPED.format(reason=run.stopped))
    elif run.paused:
        done = len(run.losses) - 1
        st.warning(text.BUDGET_OUT.format(budget=f"{limits.TRAIN_SECONDS:g}", done=done,
                                          steps=run.steps) if run.paused == BUDGET
                   else text.PAUSED.format(done=done, steps=run.steps))
    st.success(text.DONE.format(steps=common.count(len(run.losses) - 1, "step"),
                                first=f"{run.losses[0]:.6g}", last=f"{run.losses[-1]:.6g}",
                                seconds=f"{seconds:.2f}"))
    panels = {text.WEIGHTS_PANEL: (run.weights, k_lab, q_lab, True)}
    for name in [f for f in ("w_q", "w_k", "w_v", "w_o", "x") if f in run.params][:2]:
        stack = run.params[name]
        rows = q_lab if name == "x" else controls.dims("r", stack.shape[1])
        panels[text.FIELD_NAMES[name]] = (stack, controls.dims("c", stack.shape[2]), rows, False)
    st.caption(text.PLAYBACK)
    fig, frames = training_figure(run.losses, run.frames, panels, loss_title=text.LOSS_AXIS,
                                  step_title=text.STEP_AXIS, step_prefix=text.STEP_PREFIX,
                                  play=text.PLAY, pause=text.PAUSE)
    show_figure(fig, key="learn_fig_training", frames=frames)
    if st.button(text.LOAD_BUTTON, key="learn_load", disabled=ran_with != settings):
        state.set_scenario(run.final, reset_editors=True)
        st.session_state.pop(RUN, None)
        st.session_state[LOADED] = True
        st.rerun()
