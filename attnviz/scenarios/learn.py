"""Training a scenario's weights by gradient descent, recorded for playback.

:func:`train` repeats: the loss and its gradients (:func:`attnviz.scenarios.gradients.gradients`),
one optimiser step (:mod:`attnviz.core.optim`) on the chosen fields — W_Q and W_K by default;
W_V, W_O, the embeddings X optionally. It records the loss of every step and, at up to
:data:`MAX_FRAMES` steps, the weights of every head and the trained matrices, so a page can
step through the training in the browser.

It stops early, keeping the last finite weights, when a step's loss or weights stop being
finite (a learning rate too large: the loss runs to inf) — never with a NaN in the result.
The run is deterministic: the same scenario, loss, settings and seed give the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import MultiHeadResult
from attnviz.core.initializers import init_weights
from attnviz.core.optim import adam_step, sgd_step
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
    """

    losses: Array
    frames: NDArray[np.int_]
    weights: Array
    params: dict[str, Array]
    final: Scenario
    stopped: str


def train(scenario: Scenario, loss: Loss, *, trainable=("w_q", "w_k"),
          optimizer: str = "adam", lr: float = 0.05, steps: int = 200, seed: int | None = None,
          head: int = 0, progress: Callable[[int, float], None] | None = None) -> TrainingRun:
    """Train the fields ``trainable`` of ``scenario`` on ``loss``.

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

    Raises
    ------
    ValueError
        For bad settings, or when the scenario does not compute before any step.
    """
    trainable = tuple(dict.fromkeys(trainable))
    if not trainable or any(f not in TRAINABLE for f in trainable):
        raise ValueError(f"train one or more of {', '.join(TRAINABLE)}, got {trainable}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"the optimizer must be one of {', '.join(OPTIMIZERS)}")
    if not (isinstance(steps, int) and 1 <= steps <= MAX_STEPS):
        raise ValueError(f"steps must be a whole number from 1 to {MAX_STEPS}, got {steps!r}")
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
    every = max(1, -(-steps // (n_frames - 1)))
    losses, frames, weights, params = [g.loss], [0], [_weights(g.forward, head)], [_fields(
        scenario, trainable)]
    state, stopped = None, ""
    for step in range(1, steps + 1):
        current = {f: np.asarray(getattr(scenario, f), dtype=float) for f in trainable}
        grads = {f: np.asarray(g.params[f]) for f in trainable}
        if optimizer == "sgd":
            new = sgd_step(current, grads, lr)
        else:
            new, state = adam_step(current, grads, lr, state)
        if not all(np.isfinite(a).all() for a in new.values()):
            stopped = f"step {step}: the weights overflow"
            break
        candidate = replace(scenario, **new)
        try:
            g_new = gradients(candidate, loss)
        except ValueError as exc:
            stopped = f"step {step}: {exc}"
            break
        if not np.isfinite(g_new.loss):
            stopped = f"step {step}: the loss is no longer finite"
            break
        scenario, g = candidate, g_new
        losses.append(g.loss)
        if progress is not None:
            progress(step, g.loss)
        if step % every == 0 or step == steps:
            frames.append(step)
            weights.append(_weights(g.forward, head))
            params.append(_fields(scenario, trainable))
    if frames[-1] != len(losses) - 1:  # stopped early: record the last finite step
        frames.append(len(losses) - 1)
        weights.append(_weights(g.forward, head))
        params.append(_fields(scenario, trainable))
    return TrainingRun(np.array(losses), np.array(frames), np.stack(weights),
                       {f: np.stack([p[f] for p in params]) for f in trainable}, scenario,
                       stopped)


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


def _fields(scenario: Scenario, names) -> dict[str, Array]:
    return {f: np.array(getattr(scenario, f), dtype=float) for f in names}
