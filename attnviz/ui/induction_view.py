"""The Induction page's Streamlit pieces (pages/induction.py): the shipped model and the
session's own run, live training within the click budget, the figures, ablation, the residual
stream and opening a head as the current scenario.

The page opens on the shipped model (:func:`shipped`): its file holds the final parameters and
every recorded step (attention of every head, scores, losses), read once per server process and
kept for every session — opening the page trains nothing. A session's own run (:data:`RUN`) is
one record in its state, replaced by the next Train; its memory is :meth:`InductionRun.nbytes`
(~1 MB at the defaults, at most ~8 MB of recorded attention:
:data:`attnviz.scenarios.induction.FRAME_CELLS`) plus, while it can still go on, the training
state.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from attnviz.figures.heatmap import PRESENTER_TICK_PX
from attnviz.figures.induction import (
    formation_figure,
    position_loss_figure,
    residual_figure,
    scores_figure,
)
from attnviz.io.examples.make_induction_model import InductionModel, load_induction_model
from attnviz.scenarios import limits
from attnviz.scenarios.budget import BUDGET, Budget, click_budget
from attnviz.scenarios.from_model import head_scenario
from attnviz.scenarios.induction import (
    INDUCTION_THRESHOLD,
    MAX_LR,
    MAX_STEPS,
    InductionRun,
    InductionSettings,
    finish_training,
    heldout_forward,
    induction_loss,
    start_training,
    train_steps,
)
from attnviz.scenarios.scenario import position_labels
from attnviz.teach.text import induction as text
from attnviz.ui import state
from attnviz.ui.panels import show_figure

RUN = "induction_run"  # dict(settings, state: TrainingState or None, run, paused)
EXPERIMENT = "induction_experiment"  # the experiment whose talking point is shown
OPENED = "induction_opened"  # the name of the head just opened as the scenario
ABLATE = "induction_ablate"
LABEL_PX = 9  # the grid's position labels (24 of them a heatmap)
# presenter mode (no sidebar: ~950 px wide at 1024): the loss curve beside the grid, which gets
# the height a 1024 × 768 screen leaves under the title (its labels, 16 px, below that)
PRESENTER_GRID_PX = 440
# the figure's height follows the screen in the browser (attnviz/ui/plotly_fit.js, the chart's
# ``fit``): never below the height it is built with (which fits 1024 × 768), at most this many
# times it (1920 × 1080: ~1.6), its labels ending FIT_GAP_PX above the window
FIT_GROW = 1.8
FIT_GAP_PX = 8
CHUNK = 10  # training steps between two progress updates (each is where Stop interrupts)
DEFAULTS = InductionSettings()
WIDGETS = {"induction_layers": DEFAULTS.n_layers, "induction_heads": DEFAULTS.n_heads,
           "induction_positional": DEFAULTS.positional, "induction_lr": DEFAULTS.lr,
           "induction_steps": DEFAULTS.steps, "induction_seed": DEFAULTS.seed}
EXPERIMENTS = {  # experiment -> the widgets it changes (the others back to the defaults)
    "defaults": {},
    "one_layer": {"induction_layers": 1},
    "no_positions": {"induction_positional": "none"},
    "one_head": {"induction_heads": 1},
    "high_lr": {"induction_lr": 0.1},
}


def init() -> None:
    """The shared state (and the app's frame, for a page opened by its URL: see
    :func:`attnviz.ui.state.use_app_frame`), and the controls' values, which live in the
    session state (the experiments set them)."""
    state.init_state()
    for key, value in WIDGETS.items():
        st.session_state.setdefault(key, value)


@st.cache_resource(show_spinner=False)
def shipped() -> tuple[InductionModel, InductionRun]:
    """The shipped model and its recorded training, read from its file (once per server
    process; no training)."""
    model = load_induction_model()
    return model, model.run


def current() -> tuple[InductionRun, InductionModel | InductionRun, bool]:
    """(the run to show, the model its parameters come from, whether it is the shipped one)."""
    record = st.session_state.get(RUN)
    if record is None:
        model, run = shipped()
        return run, model, True
    if record["run"] is None:  # finished once per change of the training state
        record["run"] = finish_training(record["state"])
        if record["state"].done:
            record["state"] = None  # the Adam moments and frames are no longer needed
    return record["run"], record["run"], False


def source_caption(run: InductionRun, is_shipped: bool) -> None:
    """Which model the page shows, and what a session run costs in memory."""
    if is_shipped:
        st.caption(text.SHIPPED_SOURCE.format(steps=run.settings.steps, seed=run.settings.seed))
        return
    st.caption(text.RUN_SOURCE.format(steps=len(run.losses), seconds=f"{run.seconds:.1f}",
                                      mb=f"{run.nbytes() / 1e6:.1f}"))


def back_to_shipped() -> None:
    """on_click of "back to the shipped model": forget the session's run."""
    st.session_state.pop(RUN, None)


def head_name(layer: int, head: int) -> str:
    return text.HEAD_NAME.format(layer=layer, head=head)


def role_of(run: InductionRun, layer: int, head: int) -> str:
    """"previous", "induction" or "" for a head, from the last frame's scores: every head at
    or above its threshold has its role (:meth:`HeadRoles.role`), not only the top one."""
    return run.roles.role(layer, head)


def named_heads(heads, scores) -> str:
    """"L1 H1 (0.93), L1 H0 (0.88)": named heads with their scores, highest first."""
    return ", ".join(text.NAMED_HEAD.format(head=head_name(*h), score=f"{scores[h]:.2f}")
                     for h in heads)


# ------------------------------------------------------------------------------ training


def apply_experiment(key: str) -> None:
    """on_click of an experiment's button: the defaults, then the experiment's changes."""
    st.session_state.update(WIDGETS)
    st.session_state.update(EXPERIMENTS[key])
    st.session_state[EXPERIMENT] = key


def experiments() -> None:
    """The experiments' buttons, each as wide as its label (a row that wraps: every label
    whole at 1024 px beside the sidebar), and the talking point of the one last chosen."""
    st.markdown(f"**{text.EXPERIMENTS_TITLE}** — {text.EXPERIMENTS_CAPTION}")
    with st.container(horizontal=True, key="induction_experiments"):
        for key, label in text.EXPERIMENTS.items():
            st.button(label, key=f"induction_exp_{key}", on_click=apply_experiment,
                      args=(key,))
    chosen = st.session_state.get(EXPERIMENT)
    if chosen in text.EXPERIMENT_NOTES:
        st.info(text.EXPERIMENT_NOTES[chosen])


def settings_controls() -> InductionSettings | None:
    """The training settings from their widgets; None (with an error) when out of range."""
    c = st.columns(6)
    layers = c[0].number_input(text.LAYERS_LABEL, 1, 3, key="induction_layers")
    heads = c[1].number_input(text.HEADS_LABEL, 1, 4, key="induction_heads")
    positional = c[2].selectbox(text.POSITIONAL_LABEL, list(text.POSITIONAL_NAMES),
                                format_func=text.POSITIONAL_NAMES.get,
                                help=text.POSITIONAL_HELP, key="induction_positional")
    # value=None: a number Streamlit does not keep (NaN or ±inf sent by a client, an empty box)
    # comes back as None rather than as a stand-in 0 the message would then show. Steps is a
    # float box for the same reason: an integer box turns 1e18 into its stand-in (and NaN into
    # an error inside Streamlit); InductionSettings refuses what is not a whole number.
    lr = c[3].number_input(text.LR_LABEL, value=None, format="%g", step=0.001,
                           key="induction_lr", help=text.LR_HELP.format(limit=f"{MAX_LR:g}"))
    steps = c[4].number_input(text.STEPS_LABEL, value=None, format="%g", step=50.0,
                              key="induction_steps",
                              help=text.STEPS_HELP.format(limit=MAX_STEPS,
                                                          budget=f"{limits.TRAIN_SECONDS:g}"))
    seed = c[5].number_input(text.SEED_LABEL, 0, 2**32 - 1, key="induction_seed")
    if lr is None or steps is None:
        missing = (text.LR_MISSING.format(limit=f"{MAX_LR:g}") if lr is None
                   else text.STEPS_MISSING.format(limit=f"{MAX_STEPS:,}"))
        st.error(f"{text.CANNOT}: {missing}")
        return None
    if isinstance(steps, float) and steps.is_integer():
        steps = int(steps)  # 300.0 from the box; a fraction stays, and is refused as one
    try:
        return InductionSettings(n_layers=int(layers), n_heads=int(heads),
                                 positional=positional, lr=lr, steps=steps, seed=int(seed))
    except (ValueError, TypeError, OverflowError) as exc:
        st.error(f"{text.CANNOT}: {exc}")
        return None


def run_training(record: dict, budget: Budget) -> None:
    """Train ``record["state"]`` in chunks within ``budget``, with a progress bar and Stop.

    The record is updated after every chunk, so whatever ends the run — done, the budget, a
    rerun raised inside a progress update (Stop, another control, leaving the page) — the next
    run shows the steps taken.
    """
    training, steps = record["state"], record["settings"].steps
    record["paused"] = ""
    bar = st.progress(training.step / steps)
    stop = st.empty()
    stop.button(text.STOP_BUTTON, key="induction_stop")  # its click reruns: that stops the run
    while not training.done and budget.check():
        training = train_steps(training, CHUNK)
        record["state"], record["run"] = training, None
        loss = float(training.losses[-1]) if len(training.losses) else math.nan
        bar.progress(min(training.step / steps, 1.0), text=text.PROGRESS.format(
            step=training.step, steps=steps, loss=f"{loss:.4g}"))
    if not training.done and budget.reason == BUDGET:
        record["paused"] = BUDGET
    bar.empty()
    stop.empty()


def train_panel(settings: InductionSettings | None) -> None:
    """Train / Continue buttons, the training itself, and what became of the last run."""
    record = st.session_state.get(RUN)
    b1, b2, _ = st.columns([1, 2, 5])
    fresh = b1.button(text.TRAIN_BUTTON, type="primary", key="induction_train",
                      disabled=settings is None)
    go_on = b2.empty()

    def can_go_on() -> bool:
        return (record is not None and record["state"] is not None
                and not record["state"].done and record["settings"] == settings)

    if not fresh and can_go_on() and go_on.button(text.CONTINUE_BUTTON,
                                                  key="induction_continue"):
        run_training(record, click_budget())
    if fresh:
        budget = click_budget()  # the first frame's recording counts too
        record = st.session_state[RUN] = dict(settings=settings, state=start_training(settings),
                                               run=None, paused="")
        for key in (ABLATE, "induction_open_layer", "induction_open_head"):
            st.session_state.pop(key, None)  # a new model: back to its induction head, none off
        run_training(record, budget)
        if can_go_on():
            go_on.button(text.CONTINUE_BUTTON, key="induction_continue")
    if record is None:
        return
    training = record["state"]
    if training is not None and not training.done:
        done, steps = training.step, record["settings"].steps
        st.warning(text.BUDGET_OUT.format(budget=f"{limits.TRAIN_SECONDS:g}", done=done,
                                          steps=steps) if record["paused"] == BUDGET
                   else text.PAUSED.format(done=done, steps=steps))
    stopped = (training.stopped if training is not None else
               (record["run"].stopped if record["run"] is not None else ""))
    if stopped and (training is None or training.done):
        st.warning(text.STOPPED.format(reason=stopped))
    if settings is not None and record["settings"] != settings:
        st.info(text.STALE)


# ------------------------------------------------------------------------------ figures


def formation(run: InductionRun) -> None:
    """The loss over the replayable grid, then what it shows: the roles named, the phase
    change, how to read the grid."""
    c = run.settings
    titles = [[head_title(run, layer, head) for head in range(c.n_heads)]
              for layer in range(c.n_layers)]
    fig, frames = formation_figure(
        run.losses, run.frames, run.weights, labels(run), titles, phase=_phase(run),
        loss_title=text.LOSS_AXIS, step_title=text.STEP_AXIS, step_prefix=text.STEP_PREFIX,
        play=text.PLAY, pause=text.PAUSE, query_title=text.QUERY_AXIS, key_title=text.KEY_AXIS,
        **(dict(label_px=PRESENTER_TICK_PX, grid_px=PRESENTER_GRID_PX, beside=True)
           if state.presenter() else dict(label_px=LABEL_PX)))
    show_figure(fig, key="induction_fig_grid", frames=frames, grow=False, fit=screen_fit(fig))
    roles = run.roles
    if roles.formed:
        st.success(text.FORMED.format(
            previous=named_heads(roles.previous_tokens, run.previous_token[-1]),
            induction=named_heads(roles.inductions, run.prefix_matching[-1]),
            threshold=f"{INDUCTION_THRESHOLD:g}"))
    else:
        st.info(text.NOT_FORMED.format(previous=head_name(*roles.previous_token),
                                       previous_score=f"{roles.previous_token_score:.2f}",
                                       induction=head_name(*roles.induction),
                                       induction_score=f"{roles.induction_score:.2f}"))
    phase = run.phase_change
    st.caption(text.PHASE.format(step=phase.step, before=f"{phase.before:.2f}",
                                 after=f"{phase.after:.2f}") if phase else text.NO_PHASE)
    st.caption(text.WATCH_CAPTION)


def screen_fit(fig) -> dict:
    """The chart component's ``fit`` that makes the figure as tall as the screen leaves under
    its top (its plot area one "row" of the fit, between the height it was built with and
    :data:`FIT_GROW` times that): a taller screen draws bigger cells, the loss and the slider
    grow with them (every vertical place in the figure is a fraction of its plot area)."""
    margin = fig.layout.margin
    area = fig.layout.height - margin.t - margin.b
    return dict(bottom=margin.b + FIT_GAP_PX, rows=1, minRow=area, maxRow=round(area * FIT_GROW))


def head_title(run: InductionRun, layer: int, head: int) -> str:
    """"L1 H1 · induction", or the head's name alone when it has no role."""
    role = role_of(run, layer, head)
    name = head_name(layer, head)
    return text.ROLE_TITLE.format(head=name, role=text.GRID_ROLES[role]) if role else name


def labels(run: InductionRun) -> list[str]:
    """The held-out sequence's positions as "position:t<id>"."""
    return position_labels([f"t{i}" for i in run.heldout.tokens[0]])


def _phase(run: InductionRun) -> tuple[int, int, int] | None:
    p = run.phase_change
    return None if p is None else (p.step, p.start, p.end)


def scores(run: InductionRun) -> None:
    """Every head's three scores over training."""
    c = run.settings
    names = [head_name(layer, head) for layer in range(c.n_layers) for head in range(c.n_heads)]
    fig = scores_figure(run.frames, {text.SCORE_NAMES["previous"]: run.previous_token,
                                     text.SCORE_NAMES["prefix"]: run.prefix_matching,
                                     text.SCORE_NAMES["copying"]: run.copying},
                        names, phase=_phase(run), threshold=INDUCTION_THRESHOLD,
                        step_title=text.STEP_AXIS, score_title=text.SCORE_AXIS)
    show_figure(fig, key="induction_fig_scores")
    st.caption(text.SCORES_CAPTION)


def ablation(run: InductionRun, model) -> np.ndarray:
    """The heads to zero (a multiselect) and the task loss with and without them; returns the
    head mask (True = kept)."""
    c = model.settings
    heads = [(layer, head) for layer in range(c.n_layers) for head in range(c.n_heads)]
    options = [head_name(*h) for h in heads]
    st.session_state[ABLATE] = [h for h in st.session_state.get(ABLATE, []) if h in options]
    chosen = st.multiselect(text.ABLATION_LABEL, options, key=ABLATE, help=text.ABLATION_HELP)
    keep = np.ones((c.n_layers, c.n_heads), dtype=bool)
    for name in chosen:
        keep[heads[options.index(name)]] = False
    full = induction_loss(model.params, c)
    m1, m2 = st.columns(2)
    m1.metric(text.LOSS_ALL, f"{full:.3f}")
    if chosen:
        ablated = induction_loss(model.params, c, keep)
        m2.metric(text.ABLATED_LOSS.format(heads=", ".join(chosen)), f"{ablated:.3f}",
                  delta=f"{ablated - full:+.3f}", delta_color="inverse")
    else:
        m2.caption(text.NOTHING_ABLATED)
    st.caption(text.LOSS_NOTE)
    return keep


def position_loss(run: InductionRun, model, keep: np.ndarray) -> None:
    """The loss at every position before and after training (and with the ablation)."""
    series = {text.BEFORE.format(step=int(run.frames[0])): run.position_loss[0],
              text.AFTER.format(step=int(run.frames[-1])): run.position_loss[-1]}
    if not keep.all():
        series[text.ABLATED_LINE] = heldout_forward(model.params, model.settings,
                                                    keep).nll[0]
    mask = np.flatnonzero(run.heldout.loss_mask[0])
    fig = position_loss_figure(series, labels(run)[:-1], (int(mask[0]), int(mask[-1])),
                               x_title=text.POSITION_AXIS, y_title=text.NLL_AXIS)
    show_figure(fig, key="induction_fig_positions")
    st.caption(text.POSITION_CAPTION)


def residual(run: InductionRun, model, keep: np.ndarray) -> None:
    """‖embedding‖ and ‖each head's output‖ at every position of the held-out sequence."""
    result = heldout_forward(model.params, model.settings, keep)
    c = model.settings
    rows = [np.linalg.norm(result.embedded[0], axis=-1)]
    names = [text.RESIDUAL_ROWS["embed"]]
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            out = result.layers[layer].head_outputs[0, head] * keep[layer, head]
            rows.append(np.linalg.norm(out, axis=-1))
            names.append(head_name(layer, head))
    fig = residual_figure(np.array(rows), names, labels(run), x_title=text.RESIDUAL_AXIS)
    show_figure(fig, key="induction_fig_residual")
    st.caption(text.RESIDUAL_CAPTION)


# ------------------------------------------------------------------------------ open a head


def open_head(run: InductionRun, model) -> None:
    """Pick a head and make it the current scenario for every page."""
    c = model.settings
    for key, n, default in (("induction_open_layer", c.n_layers, run.roles.induction[0]),
                            ("induction_open_head", c.n_heads, run.roles.induction[1])):
        if st.session_state.get(key) not in range(n):  # a new run (or fewer layers or heads):
            st.session_state[key] = default  # its induction head
    c1, c2, c3 = st.columns([1, 1, 2], vertical_alignment="bottom")
    layer = c1.selectbox(text.OPEN_LAYER, range(c.n_layers), key="induction_open_layer")
    head = c2.selectbox(text.OPEN_HEAD, range(c.n_heads), key="induction_open_head")
    if c3.button(text.OPEN_BUTTON, key="induction_open", type="primary"):
        name = head_name(layer, head)
        try:
            sc = head_scenario(model, layer, head, title=text.HEAD_TITLE.format(head=name),
                               description=text.HEAD_DESCRIPTION.format(
                                   head=name, role=text.ROLE_NAMES[role_of(run, layer, head)],
                                   layer=layer))
        except ValueError as exc:
            st.error(f"{text.CANNOT_OPEN}: {exc}")
            return
        state.open_whole(sc)
        st.session_state[OPENED] = name
        st.rerun()  # the sidebar and the page from the opened head (one source of truth)
    if st.session_state.get(OPENED):
        st.success(text.OPENED.format(head=st.session_state[OPENED]))
        for column, (page, title) in zip(st.columns(len(text.OPEN_PAGES)),
                                         text.OPEN_PAGES.items(), strict=True):
            column.page_link(page, label=title)
