"""Training a scenario's weights by gradient descent, recorded for playback.

:func:`train` repeats: the loss and its gradients (:func:`attnviz.scenarios.gradients.gradients`),
one optimiser step (:mod:`attnviz.core.optim`) on the chosen fields — W_Q and W_K by default;
W_V, W_O, the embeddings X optionally. It records the loss of every step and, at up to
:data:`MAX_FRAMES` steps, the weights of every head and the trained matrices, so a page can
step through the training in the browser.

It stops early, keeping the last finite weights, when a step's loss or weights stop being
finite (a learning rate too large: the loss runs to inf) — never with a NaN in the result.
The run is deterministic: the same scenario, loss, settings and seed give the same numbers.

A :class:`Training` is the same run taken in pieces: a :class:`~attnviz.scenarios.budget.Budget`
(one click's wall time, :data:`attnviz.scenarios.limits.TRAIN_SECONDS` on the page) ends a
piece; the next piece goes on from there with the optimiser's state, and the numbers are those
of one uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import MultiHeadResult
from attnviz.core.initializers import init_weights
from attnviz.core.optim import adam_step, sgd_step
from attnviz.scenarios.budget import STOP, Budget
from attnviz.scenarios.gradients import Loss, gradients
from attnviz.scenarios.scenario import Scenario, run_scenario

Array = NDArray[np.float64]

TRAINABLE = ("w_q", "w_k", "w_v", "w_o", "x")
OPTIMIZERS = ("adam", "sgd")
MAX_STEPS = 1000  # one run; stated on the page
MAX_FRAMES = 51  # recorded steps a page can play back (the first and the last included)
FRAME_CELLS = 400_000  # at most this many recorded weights in all: fewer frames for long inputs


@dataclass(frozen=True, eq=False)
class TrainingRun:
    """A recorded training run.

    Attributes
    ----------
    losses : ndarray of shape (n + 1,)
        The loss before any step and after each of the n steps taken.
    frames : ndarray of int, shape (f,)
        The steps recorded in ``weights`` and ``params`` (0 = before training; the last
        step taken is always one): up to :data:`MAX_FRAMES`, fewer when the weights are
        large (at most :data:`FRAME_CELLS` recorded weights in all; 256 tokens: 6 frames).
    weights : ndarray of shape (f, t_q, t_k)
        The attention weights of the recorded head at each recorded step.
    params : dict of str to ndarray of shape (f, ...)
        Each trained field at each recorded step.
    final : Scenario
        The scenario with the weights of the last finite step.
    stopped : str
        Why training stopped before the steps asked for ("" = it ran them all).
    paused : str
        Why a run that can go on ended early: "budget" (the click's time ran out), "stop"
        (stopped or interrupted), "" (it ran every step, or ``stopped`` says why not).
    steps : int
        The steps asked for.
    """

    losses: Array
    frames: NDArray[np.int_]
    weights: Array
    params: dict[str, Array]
    final: Scenario
    stopped: str
    paused: str = ""
    steps: int = 0


def train(scenario: Scenario, loss: Loss, *, trainable=("w_q", "w_k"),
          optimizer: str = "adam", lr: float = 0.05, steps: int = 200, seed: int | None = None,
          head: int = 0, progress: Callable[[int, float], None] | None = None,
          budget: Budget | None = None) -> TrainingRun:
    """Train the fields ``trainable`` of ``scenario`` on ``loss`` (a :class:`Training` run in
    one go, or until ``budget`` stops it).

    Parameters
    ----------
    scenario : Scenario
    loss : Loss
    trainable : sequence of str
        Fields of :data:`TRAINABLE` (those the variant reads; "w_o" only with W_O).
    optimizer : {"adam", "sgd"}
    lr : float
        Learning rate (> 0).
    steps : int
        1 .. :data:`MAX_STEPS`.
    seed : int, optional
        Start the trained weight matrices from Glorot-uniform random values drawn with this
        seed (the embeddings X keep their values); None starts from the scenario's own.
    head : int
        The head whose weights are recorded (memory: one head's (t_q, t_k) per frame).
    progress : callable(step, loss), optional
        Called after every step (a page's progress bar).
    budget : Budget, optional
        Checked before every step: when it says stop, the run ends there (``paused`` says
        why) and can go on with :meth:`Training.run`.

    Raises
    ------
    ValueError
        For bad settings, or when the scenario does not compute before any step.
    """
    training = Training(scenario, loss, trainable=trainable, optimizer=optimizer, lr=lr,
                        steps=steps, seed=seed, head=head)
    training.run(budget, progress)
    return training.result()


class Training:
    """A training run that can be taken in pieces: each :meth:`run` goes on from the last step
    (with the optimiser's state) until the steps asked for are done, the loss or the weights
    stop being finite, or a :class:`~attnviz.scenarios.budget.Budget` says stop.

    The recorded frames are the same as one uninterrupted run's (plus the last step of a
    piece, when :meth:`result` is read between pieces). Parameters as :func:`train`; creating
    one computes the loss and gradients before any step.
    """

    def __init__(self, scenario: Scenario, loss: Loss, *, trainable=("w_q", "w_k"),
                 optimizer: str = "adam", lr: float = 0.05, steps: int = 200,
                 seed: int | None = None, head: int = 0) -> None:
        trainable = tuple(dict.fromkeys(trainable))
        if not trainable or any(f not in TRAINABLE for f in trainable):
            raise ValueError(f"train one or more of {', '.join(TRAINABLE)}, got {trainable}")
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"the optimizer must be one of {', '.join(OPTIMIZERS)}")
        if not (isinstance(steps, int) and 1 <= steps <= MAX_STEPS):
            raise ValueError(f"steps must be a whole number from 1 to {MAX_STEPS}, "
                             f"got {steps!r}")
        if not (np.isfinite(lr) and lr > 0):
            raise ValueError(f"the learning rate must be a positive number, got {lr!r}")
        if seed is not None:
            scenario = _random_start(scenario, trainable, seed)
        g = gradients(scenario, loss)
        g.forward.attention.head(head)  # a ValueError naming the heads if there is no such head
        missing = [f for f in trainable if f not in g.params]
        if missing:
            raise ValueError(f"{scenario.spec.name} does not read {', '.join(missing)}; train "
                             f"{', '.join(f for f in trainable if f in g.params) or 'W_Q and W_K'}")
        t_q, t_k = np.shape(g.forward.attention.head(head).weights)
        n_frames = max(2, min(MAX_FRAMES, FRAME_CELLS // (t_q * t_k)))
        self.steps, self.loss, self.trainable = steps, loss, trainable
        self.optimizer, self.lr, self.head = optimizer, float(lr), head
        self._every = max(1, -(-steps // (n_frames - 1)))
        # between steps only what the next step needs is kept (not the forward pass's
        # intermediates: tens of MB at the limits, and a paused run stays in the session)
        self._scenario, self._state = scenario, None
        self._grads, self._last = _grads(g, trainable), _weights(g.forward, head)
        self._losses, self._frames = [g.loss], [0]
        self._weights, self._params = [_weights(g.forward, head)], [_fields(scenario,
                                                                            trainable)]
        self.stopped = ""  # why it cannot go on (the loss or the weights are not finite)
        self.paused = ""  # why the last run() ended before the steps asked for (resumable)
        self._result: tuple | None = None  # (state it was read at, TrainingRun)

    @property
    def step(self) -> int:
        """Steps taken so far."""
        return len(self._losses) - 1

    @property
    def done(self) -> bool:
        """Nothing left to run: every step asked for is taken, or training failed."""
        return self.step >= self.steps or bool(self.stopped)

    @property
    def current_loss(self) -> float:
        return self._losses[-1]

    def run(self, budget: Budget | None = None,
            progress: Callable[[int, float], None] | None = None) -> None:
        """Take steps until done or ``budget`` says stop (``paused`` then says why: "budget"
        or "stop"). ``progress(step, loss)`` is called after each step, once it is recorded:
        an exception raised there (a page left mid-run) leaves a consistent run, ``paused``
        "stop", that :meth:`result` reads and a later ``run`` continues."""
        while not self.done:
            self.paused = STOP  # until this piece ends normally (an interruption leaves it)
            if budget is not None and not budget.check():
                self.paused = budget.reason
                return
            self._one_step()
            if progress is not None and not self.stopped:
                progress(self.step, self._losses[-1])
        self.paused = ""

    def _one_step(self) -> None:
        """One optimiser step, recorded (or ``stopped`` set, keeping the last finite step)."""
        step = self.step + 1
        current = {f: np.asarray(getattr(self._scenario, f), dtype=float)
                   for f in self.trainable}
        grads = self._grads
        if self.optimizer == "sgd":
            new, state = sgd_step(current, grads, self.lr), None
        else:
            new, state = adam_step(current, grads, self.lr, self._state)
        if not all(np.isfinite(a).all() for a in new.values()):
            self.stopped = f"step {step}: the weights overflow"
            return
        candidate = replace(self._scenario, **new)
        try:
            g_new = gradients(candidate, self.loss)
        except ValueError as exc:
            self.stopped = f"step {step}: {exc}"
            return
        if not np.isfinite(g_new.loss):
            self.stopped = f"step {step}: the loss is no longer finite"
            return
        record = step % self._every == 0 or step == self.steps
        params = _fields(candidate, self.trainable) if record else None
        # the state changes together, after everything that can fail or take time
        self._scenario, self._state = candidate, state
        self._grads, self._last = _grads(g_new, self.trainable), _weights(g_new.forward,
                                                                          self.head)
        self._losses.append(g_new.loss)
        if record:
            self._frames.append(step)
            self._weights.append(self._last)
            self._params.append(params)

    def result(self) -> TrainingRun:
        """The run so far as a :class:`TrainingRun` (the last step taken always recorded; the
        same object until the run changes, so a page can read it on every rerun)."""
        key = (self.step, self.stopped, self.paused)
        if self._result is None or self._result[0] != key:
            self._result = key, self._collect()
        return self._result[1]

    def _collect(self) -> TrainingRun:
        """Stack the record; the record then holds rows of the stacked arrays (views), so a
        run kept in a session holds its frames once, not once more in its result."""
        frames, weights, params = list(self._frames), list(self._weights), list(self._params)
        if frames[-1] != self.step:  # stopped or paused between two recorded steps
            frames.append(self.step)
            weights.append(self._last)
            params.append(_fields(self._scenario, self.trainable))
        stacked_weights = np.stack(weights)
        stacked_params = {f: np.stack([p[f] for p in params]) for f in self.trainable}
        n = len(self._frames)
        self._weights = list(stacked_weights[:n])
        self._params = [{f: stacked_params[f][i] for f in self.trainable} for i in range(n)]
        return TrainingRun(np.array(self._losses), np.array(frames), stacked_weights,
                           stacked_params, self._scenario, self.stopped,
                           "" if self.done else self.paused, self.steps)


def copy_previous_target(scenario: Scenario) -> Array:
    """The output attention would give if every head attended to the previous token (the
    first token to itself), with the scenario's current values and W_O: the target of the
    "copy the previous token's value" task."""
    forward = run_scenario(scenario)
    att = forward.attention
    t_q, t_k = np.shape(att.head(0).weights)
    shift = np.zeros((t_q, t_k))
    shift[np.arange(t_q), np.clip(np.arange(t_q) - 1, 0, t_k - 1)] = 1.0
    concat = np.hstack([shift @ np.asarray(att.head(h).v if scenario.spec.projections
                                           else forward.source_x)
                        for h in range(att.n_heads)])
    return concat @ np.asarray(scenario.w_o) if isinstance(att, MultiHeadResult) else concat


def _random_start(scenario: Scenario, trainable, seed: int) -> Scenario:
    """The trained weight matrices drawn Glorot-uniform with ``seed`` (X keeps its values)."""
    fields = [f for f in trainable if f != "x"]
    shapes = [np.shape(getattr(scenario, f)) for f in fields]
    drawn = init_weights("glorot_uniform", shapes, seed=seed) if fields else []
    return replace(scenario, **dict(zip(fields, drawn, strict=True)))


def _weights(forward, head: int) -> Array:
    """The attention weights of one head, (t_q, t_k)."""
    return np.array(forward.attention.head(head).weights, dtype=float)


def _grads(g, names) -> dict[str, Array]:
    """The gradients of the trained fields (nothing else of the pass is kept)."""
    return {f: np.asarray(g.params[f]) for f in names}


def _fields(scenario: Scenario, names) -> dict[str, Array]:
    return {f: np.array(getattr(scenario, f), dtype=float) for f in names}
