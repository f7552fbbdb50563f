"""The induction task: a two-layer attention-only transformer learns to copy in context.

Olsson et al. (2022), "In-context Learning and Induction Heads"
(https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html);
Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits".

The data: random tokens in which a segment of random length (``min_segment`` ..
``max_segment``) repeats ("A B … A → B"), at places and distances that vary from sequence to
sequence: every gap between the two copies that fits is equally likely, and so is every place
of the pair given its gap (:func:`make_batch`), so a model learns to copy across long gaps as
well as short ones. The loss counts only the predictions the repeat makes possible: at every
token of the second occurrence but its last, the next token. Two heads solve it together: a
*previous-token head* (layer 1 writes "the token before me was A" into each position) and an
*induction head* (layer 2 finds the position whose previous token matches its own token —
K-composition — and copies what stands there).

The shortcut (``fixed_place=True``): when the first half always repeats as the second half, a
layer-2 head can attend by position alone (query i to key i − t/2 + 1) and needs no
previous-token head: the loss falls with no induction circuit, and the model fails on a repeat
anywhere else (measured: see the docstring of tests/scenarios/test_induction.py).

Scores, on one held-out repeated sequence (every token of its segment distinct and, at the
default sizes, no other token repeated):

* previous-token score of a head: its mean attention from position i to i − 1 (i >= 1);
* prefix-matching score: its mean attention from a token that occurred earlier to the
  positions right *after* its earlier occurrences (Olsson et al.'s definition);
* copying score: Σλ / Σ|λ| over the eigenvalues of the head's OV circuit E W_V W_O U
  (:func:`attnviz.core.transformer.copying_score`; Elhage et al.): 1 when every eigenvalue
  is positive (attending to a token raises that token's own logit), −1 when every one is
  negative. It reads the weights only (the token embedding alone, no position, no layer
  norm), so it is the same for every sequence.

The scores are :mod:`attnviz.scenarios.circuits`' (the same for any model's heads). Every head
at or above :data:`PREVIOUS_TOKEN_THRESHOLD` or :data:`INDUCTION_THRESHOLD` (0.5: the majority
of the head's attention on the key the mechanism names, where uniform causal attention gives
0.12 and 0.05 on the held-out sequence) is named a previous-token or an induction head
(:func:`identify_heads`), whatever its index — a model may have two of either; the circuit has
formed when an induction head lies in a later layer than a previous-token head.

Training (:func:`train_induction`) is Adam on fresh batches (step s draws its batch from
``default_rng([seed, s])``, so a run does not depend on how it is cut into chunks), recorded at
up to :data:`MAX_FRAMES` steps. It runs in chunks (:func:`start_training`,
:func:`train_steps`, :func:`finish_training`) so that a caller can stop it between chunks
(``should_stop``) and show progress.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from attnviz.core.optim import AdamState, adam_step
from attnviz.core.transformer import (
    POSITIONAL,
    Params,
    TransformerConfig,
    TransformerResult,
    copying_score,
    forward,
    init_params,
    loss_and_gradients,
)
from attnviz.scenarios.circuits import (  # the scores of any model's heads
    THRESHOLD,
    named_heads,
    prefix_matching_score,
    prefix_targets,  # noqa: F401 (imported from here too)
    previous_token_score,
)

Array = NDArray[np.float64]

PREVIOUS_TOKEN_THRESHOLD = THRESHOLD
INDUCTION_THRESHOLD = THRESHOLD
MAX_STEPS = 3000
MAX_FRAMES = 51  # recorded steps (the first and the last included)
FRAME_CELLS = 1_000_000  # recorded attention weights in all (8 MB): fewer frames for big models
HELDOUT_SEED = 2021  # the held-out sequence and the evaluation batch do not depend on the seed
EVAL_SEED = 2022
EVAL_BATCH = 32

# (low, high) of every whole-number setting
LIMITS: dict[str, tuple[int, int]] = {
    "n_layers": (1, 3), "n_heads": (1, 4), "d_model": (4, 64), "d_head": (2, 32),
    "vocab_size": (4, 64), "n_tokens": (8, 64), "min_segment": (2, 32),
    "max_segment": (2, 32), "batch": (1, 256), "steps": (1, MAX_STEPS),
    "seed": (0, 2**32 - 1),
}
MAX_LR = 1.0


# ------------------------------------------------------------------------------ settings


def _given(value) -> str:
    """A setting's value for a message, as it was given: 1e18 as 1e+18, not 1,000,000,...
    (nor a converted stand-in), text cut to 40 characters."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = int(value)
        if value.bit_length() > 1000:  # beyond float: by its digits
            return f"a whole number of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
        return f"{value:,}" if abs(value) < 10**15 else f"{value:.6g}"
    if isinstance(value, np.floating):
        value = float(value)  # nan, not np.float64(nan)
    return f"{value!r:.40}"


@dataclass(frozen=True)
class InductionSettings:
    """Everything a training run depends on (validated when made; out of range: ValueError).

    The defaults form a previous-token head and an induction head in a few seconds (measured
    for several seeds in tests/scenarios/test_induction.py).

    Attributes
    ----------
    n_layers, n_heads, d_model, d_head, positional, layer_norm
        The model (:class:`~attnviz.core.transformer.TransformerConfig`).
    vocab_size : int
        Token ids 0 .. vocab_size − 1.
    n_tokens : int
        Sequence length t.
    min_segment, max_segment : int
        The repeated segment's length is drawn uniformly from this range; both occurrences
        must fit: 2 · max_segment <= n_tokens.
    fixed_place : bool
        The shortcut: the first half repeats as the second half, always (segment lengths
        ignored).
    lr : float
        Adam's learning rate, in (0, 1].
    batch : int
        Sequences per step.
    steps : int
        Adam steps, 1 .. :data:`MAX_STEPS`.
    seed : int
        The parameters' initialisation and the batches.
    """

    n_layers: int = 2
    n_heads: int = 2
    d_model: int = 32
    d_head: int = 16
    positional: str = "learned"
    layer_norm: bool = False
    vocab_size: int = 16
    n_tokens: int = 24
    min_segment: int = 4
    max_segment: int = 8
    fixed_place: bool = False
    lr: float = 1e-2
    batch: int = 32
    steps: int = 300
    seed: int = 0

    def __post_init__(self) -> None:
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{name} must be a whole number, got {_given(value)}")
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low:,} and {high:,}, got "
                                 f"{_given(value)}")
        if self.positional not in POSITIONAL:
            raise ValueError(f"positional must be one of {', '.join(POSITIONAL)}, got "
                             f"{self.positional!r:.40}")
        for name in ("layer_norm", "fixed_place"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float, np.floating)) \
                or not (math.isfinite(self.lr) and 0 < self.lr <= MAX_LR):
            raise ValueError(f"the learning rate must be a number above 0 and at most "
                             f"{MAX_LR:g}, got {_given(self.lr)}")
        if self.min_segment > self.max_segment:
            raise ValueError(f"min_segment ({self.min_segment}) must be at most max_segment "
                             f"({self.max_segment})")
        if 2 * self.max_segment > self.n_tokens:
            raise ValueError(f"two copies of the longest segment (2 × {self.max_segment}) must "
                             f"fit in n_tokens ({self.n_tokens})")
        if self.max_segment > self.vocab_size:
            raise ValueError(f"the held-out segment uses max_segment ({self.max_segment}) "
                             f"distinct tokens: vocab_size ({self.vocab_size}) is too small")
        self.config()  # the model's own checks (RoPE needs an even d_head)

    def config(self) -> TransformerConfig:
        """The model's configuration."""
        return TransformerConfig(vocab_size=self.vocab_size, n_ctx=self.n_tokens,
                                 d_model=self.d_model, n_layers=self.n_layers,
                                 n_heads=self.n_heads, d_head=self.d_head,
                                 positional=self.positional, layer_norm=self.layer_norm)

    def as_dict(self) -> dict[str, object]:
        """The settings as plain values (for a file or a page's state)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ------------------------------------------------------------------------------ the task


@dataclass(frozen=True, eq=False)
class InductionBatch:
    """Sequences with a repeated segment and the loss mask on the repeat.

    Attributes
    ----------
    tokens : ndarray of int, shape (batch, t)
    loss_mask : ndarray of bool, shape (batch, t − 1)
        True at positions second .. second + length − 2: the predictions of the segment's
        tokens after its first (position i predicts token i + 1).
    first, second : ndarray of int, shape (batch,)
        Where the segment starts, the first time and the second.
    length : ndarray of int, shape (batch,)
    """

    tokens: NDArray[np.int_]
    loss_mask: NDArray[np.bool_]
    first: NDArray[np.int_]
    second: NDArray[np.int_]
    length: NDArray[np.int_]

    @property
    def gap(self) -> NDArray[np.int_]:
        """Tokens between the end of the first copy and the start of the second, shape
        (batch,)."""
        return self.second - self.first - self.length


def make_batch(settings: InductionSettings, rng: np.random.Generator, batch: int | None = None
               ) -> InductionBatch:
    """Random sequences, each with a segment repeated at a random place and distance.

    Per sequence: the length L uniform in min_segment .. max_segment; the gap between the
    copies (``second − first − L``) uniform in 0 .. t − 2L; the first start uniform in
    0 .. t − 2L − gap, so that the pair fits. Every gap a length allows is equally likely
    and, given the gap, every place; drawing the starts first instead would make short gaps
    common and long ones rare (a fourth of the sequences with gap 0 at the defaults, 2 % with
    a gap of 12 or more), and a model trained on them copies poorly across long gaps. Every
    token is uniform over the vocabulary, then the segment is copied. With ``fixed_place``:
    L = t // 2 at 0 and t // 2, always.
    """
    b = settings.batch if batch is None else batch
    t, vocab = settings.n_tokens, settings.vocab_size
    tokens = rng.integers(0, vocab, size=(b, t))
    if settings.fixed_place:
        length = np.full(b, t // 2)
        first, second = np.zeros(b, dtype=np.int64), length.copy()
    else:
        length = rng.integers(settings.min_segment, settings.max_segment + 1, size=b)
        gap = rng.integers(0, t - 2 * length + 1)  # 0 .. t − 2L, each equally likely
        first = rng.integers(0, t - 2 * length - gap + 1)  # 0 .. t − 2L − gap
        second = first + length + gap
    # copy the segment: column j < length of the second occurrence takes the first's token
    j = np.arange(t)[None, :]  # (1, t)
    in_repeat = (j >= second[:, None]) & (j < (second + length)[:, None])  # (b, t)
    source = np.clip(j - second[:, None] + first[:, None], 0, t - 1)  # (b, t)
    tokens = np.where(in_repeat, np.take_along_axis(tokens, source, axis=1), tokens)
    loss_mask = (j[:, :-1] >= second[:, None]) & (j[:, :-1] < (second + length - 1)[:, None])
    return InductionBatch(tokens, loss_mask, first, second, length)


def heldout_sequence(settings: InductionSettings) -> InductionBatch:
    """The one repeated sequence the attention and the scores are recorded on.

    Its segment is max_segment distinct tokens, first at t // 8, again ending 2 before the
    end when there is room, and never t // 2 after the first (the fixed-place shortcut's
    offset: a model that attends by position alone scores nothing here); the other positions
    hold the remaining tokens, each once when the vocabulary allows (the defaults: every token
    of 16 appears, only the segment repeats), else drawn at random from them. Fixed (seed
    :data:`HELDOUT_SEED`), the same for every training seed.
    """
    rng = np.random.default_rng(HELDOUT_SEED)
    t, vocab = settings.n_tokens, settings.vocab_size
    length = t // 2 if settings.fixed_place else settings.max_segment
    first = 0 if settings.fixed_place else min(t // 8, t - 2 * length)
    second = t // 2 if settings.fixed_place else \
        min(t - length, max(first + length, t - length - 2))
    if not settings.fixed_place and second - first == t // 2 and second > first + length:
        second -= 1  # not the shortcut's offset: a head that attends by position fails here
    order = rng.permutation(vocab)
    segment, others = order[:length], order[length:]
    if length > vocab:  # the fixed-place half is longer than the vocabulary
        segment = rng.choice(vocab, size=length)
    n_fill = t - 2 * length
    fill = rng.permutation(others)[:n_fill] if len(others) >= n_fill else \
        rng.choice(others if len(others) else order, size=n_fill)
    tokens = np.empty(t, dtype=np.int64)
    repeat = np.zeros(t, dtype=bool)
    repeat[first:first + length] = repeat[second:second + length] = True
    tokens[first:first + length] = tokens[second:second + length] = segment
    tokens[~repeat] = fill
    loss_mask = np.zeros((1, t - 1), dtype=bool)
    loss_mask[0, second:second + length - 1] = True
    one = np.array([1])
    return InductionBatch(tokens[None], loss_mask, first * one, second * one, length * one)


def eval_batch(settings: InductionSettings) -> InductionBatch:
    """A fixed batch of :data:`EVAL_BATCH` task sequences (seed :data:`EVAL_SEED`)."""
    return make_batch(settings, np.random.default_rng(EVAL_SEED), EVAL_BATCH)


# ------------------------------------------------------------------------------ scores


def copying_scores(params: Params) -> Array:
    """Every head's copying score, shape (n_layers, n_heads)
    (:func:`attnviz.core.transformer.copying_score`)."""
    c = params.config
    return np.array([[copying_score(params, layer, head) for head in range(c.n_heads)]
                     for layer in range(c.n_layers)])


@dataclass(frozen=True)
class HeadRoles:
    """The previous-token heads and the induction heads, named by their scores.

    Attributes
    ----------
    previous_token : tuple of (layer, head)
        The head with the highest previous-token score.
    previous_token_score : float
    induction : tuple of (layer, head)
        The head with the highest prefix-matching score.
    induction_score : float
    formed : bool
        An induction head in a later layer than a previous-token head (the circuit composes
        across layers).
    previous_tokens, inductions : tuple of (layer, head)
        Every head whose score is at or above its threshold, highest first (empty when none
        is): a model may have several of each.
    """

    previous_token: tuple[int, int]
    previous_token_score: float
    induction: tuple[int, int]
    induction_score: float
    formed: bool
    previous_tokens: tuple[tuple[int, int], ...] = ()
    inductions: tuple[tuple[int, int], ...] = ()

    def role(self, layer: int, head: int) -> str:
        """"induction", "previous" or "" (a head named for both is an induction head)."""
        if (layer, head) in self.inductions:
            return "induction"
        return "previous" if (layer, head) in self.previous_tokens else ""


def identify_heads(previous: Array, prefix: Array) -> HeadRoles:
    """Name every head whose previous-token or prefix-matching score is at or above its
    threshold (:func:`attnviz.scenarios.circuits.named_heads`), and the top head of each.

    Parameters
    ----------
    previous, prefix : array_like of shape (n_layers, n_heads)
    """
    previous, prefix = np.asarray(previous, dtype=float), np.asarray(prefix, dtype=float)
    if previous.ndim != 2 or previous.shape != prefix.shape:
        raise ValueError(f"the scores must be two (n_layers, n_heads) arrays, got shapes "
                         f"{previous.shape} and {prefix.shape}")
    p = tuple(int(i) for i in np.unravel_index(np.argmax(previous), previous.shape))
    q = tuple(int(i) for i in np.unravel_index(np.argmax(prefix), prefix.shape))
    previous_heads = named_heads(previous, PREVIOUS_TOKEN_THRESHOLD)
    induction_heads = named_heads(prefix, INDUCTION_THRESHOLD)
    formed = bool(previous_heads and induction_heads
                  and max(h[0] for h in induction_heads) > min(h[0] for h in previous_heads))
    return HeadRoles(p, float(previous[p]), q, float(prefix[q]), formed, previous_heads,
                     induction_heads)


# ------------------------------------------------------------------------------ phase change


@dataclass(frozen=True)
class PhaseChange:
    """The steepest sustained fall of the (smoothed) loss.

    Attributes
    ----------
    step : int
        The middle of the steepest stretch (a step number: ``losses[step − 1]`` is its loss).
    start, end : int
        Where the fall starts and ends (the steps around ``step`` where the smoothed loss
        falls at least half as fast as at its steepest).
    before, after : float
        The smoothed loss at ``start`` and ``end``.
    """

    step: int
    start: int
    end: int
    before: float
    after: float


def detect_phase_change(losses, *, window: int = 25, min_drop: float = 0.2) -> PhaseChange | None:
    """Find the abrupt fall of a loss curve, if it has one.

    1) smooth with a moving average of ``window`` steps (25: the training loss of a batch of
    32 is noisy; 15 missed seed 1's drop); 2) find the steepest fall of the smoothed curve
    over ``window`` steps; 3) widen it to the neighbouring steps that still fall at least half
    as fast. It is a phase change when the loss falls there by at least ``min_drop`` of its
    starting (smoothed) value, from no higher than 1.5 times that value (not the recovery of
    a diverging run), and the fall takes at most half the curve; else None (a flat curve, a
    slow steady decline, a curve shorter than 3 windows).

    Parameters
    ----------
    losses : array_like of shape (n,)
        One loss per step (finite).
    """
    losses = np.asarray(losses, dtype=float)
    if losses.ndim != 1 or not np.isfinite(losses).all():
        raise ValueError("losses must be a 1-D array of finite numbers")
    n = len(losses)
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a whole number >= 1, got {window!r}")
    w = int(window)
    if n < 3 * w:
        return None
    # 1) smooth: smooth[i] is the mean of steps i .. i + w − 1 (centred at i + w // 2)
    smooth = np.convolve(losses, np.ones(w) / w, mode="valid")
    # 2) the fall over w steps from every point
    fall = smooth[:-w] - smooth[w:]
    i = int(np.argmax(fall))
    if fall[i] <= 0:
        return None
    # 3) widen to where the fall is still at least half the steepest
    steep = fall >= fall[i] / 2
    lo, hi = i, i
    while lo > 0 and steep[lo - 1]:
        lo -= 1
    while hi < len(fall) - 1 and steep[hi + 1]:
        hi += 1
    start, end = lo, hi + w  # indices into smooth
    before, after = float(smooth[start]), float(smooth[end])
    if before - after < min_drop * smooth[0] or before > 1.5 * smooth[0] \
            or end - start > n / 2:
        return None
    centre = w // 2 + 1  # smooth[k] is centred on losses[k + w // 2], the loss of step k + 1
    return PhaseChange(i + w // 2 + centre, start + centre, end + centre, before, after)


# ------------------------------------------------------------------------------ training


@dataclass(frozen=True, eq=False)
class Frame:
    """What is recorded at one step.

    Attributes
    ----------
    step : int
    weights : ndarray of shape (n_layers, n_heads, t, t)
        Every head's attention on the held-out sequence.
    previous_token, prefix_matching, copying : ndarray of shape (n_layers, n_heads)
    position_loss : ndarray of shape (t − 1,)
        The held-out sequence's next-token loss at every position.
    eval_loss : float
        The task loss (on the repeat) of the fixed evaluation batch.
    """

    step: int
    weights: Array
    previous_token: Array
    prefix_matching: Array
    copying: Array
    position_loss: Array
    eval_loss: float


@dataclass(frozen=True, eq=False)
class TrainingState:
    """A run in progress (a value: :func:`train_steps` returns a new one).

    Attributes
    ----------
    settings : InductionSettings
    params : Params
        The parameters after ``step`` steps.
    adam : AdamState or None
    step : int
        Steps taken.
    losses : ndarray of shape (step,)
        The training loss of every step's batch (before that step's update).
    frames : tuple of Frame
    every : int
        Record every this many steps (and the last).
    stopped : str
        Why the run ended early ("" = it has not).
    seconds : float
        Wall-clock time spent in training so far.
    """

    settings: InductionSettings
    params: Params
    adam: AdamState | None
    step: int
    losses: Array
    frames: tuple[Frame, ...]
    every: int
    stopped: str
    seconds: float

    @property
    def done(self) -> bool:
        """All steps taken, or stopped early."""
        return self.step >= self.settings.steps or bool(self.stopped)


@dataclass(frozen=True, eq=False)
class InductionRun:
    """A finished (or stopped) training run, recorded.

    Attributes
    ----------
    settings : InductionSettings
    params : Params
        The final parameters.
    losses : ndarray of shape (n,)
        The training loss of each step taken.
    frames : ndarray of int, shape (f,)
        The recorded steps (0 = before training; the last step taken is always one).
    weights : ndarray of shape (f, n_layers, n_heads, t, t)
        Every head's attention on the held-out sequence at each recorded step (float64;
        float32 in the shipped model's run, read from its file:
        :func:`attnviz.io.examples.make_induction_model.recorded_run`).
    previous_token, prefix_matching, copying : ndarray of shape (f, n_layers, n_heads)
    position_loss : ndarray of shape (f, t − 1)
    eval_loss : ndarray of shape (f,)
    heldout : InductionBatch
        The held-out sequence (a batch of one).
    roles : HeadRoles
        The heads identified from the last frame's scores.
    phase_change : PhaseChange or None
        Detected on ``losses``.
    stopped : str
    seconds : float
    """

    settings: InductionSettings
    params: Params
    losses: Array
    frames: NDArray[np.int_]
    weights: Array
    previous_token: Array
    prefix_matching: Array
    copying: Array
    position_loss: Array
    eval_loss: Array
    heldout: InductionBatch
    roles: HeadRoles
    phase_change: PhaseChange | None
    stopped: str
    seconds: float

    def roles_at(self, frame: int) -> HeadRoles:
        """The heads identified from the scores of recorded frame ``frame``."""
        return identify_heads(self.previous_token[frame], self.prefix_matching[frame])

    def nbytes(self) -> int:
        """The memory the recorded arrays and the parameters hold."""
        arrays = (self.losses, self.frames, self.weights, self.previous_token,
                  self.prefix_matching, self.copying, self.position_loss, self.eval_loss)
        return sum(a.nbytes for a in arrays) + sum(a.nbytes for a in self.params.values())


def frame_interval(settings: InductionSettings) -> int:
    """Record every this many steps: at most :data:`MAX_FRAMES` frames and
    :data:`FRAME_CELLS` recorded weights in all."""
    per_frame = settings.n_layers * settings.n_heads * settings.n_tokens ** 2
    n_frames = max(2, min(MAX_FRAMES, FRAME_CELLS // per_frame))
    return max(1, -(-settings.steps // (n_frames - 1)))


def start_training(settings: InductionSettings) -> TrainingState:
    """The initial state: parameters drawn with the seed, frame 0 recorded."""
    params = init_params(settings.config(), seed=settings.seed)
    return TrainingState(settings, params, None, 0, np.zeros(0), (record(params, settings, 0),),
                         frame_interval(settings), "", 0.0)


def train_steps(state: TrainingState, n_steps: int) -> TrainingState:
    """Up to ``n_steps`` more Adam steps (never beyond ``settings.steps``).

    A step whose loss or new parameters are not finite (a learning rate too large) ends the
    run: the state keeps the last finite parameters and says why in ``stopped``.
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps must be a whole number >= 1, got {n_steps!r}")
    settings, params, adam = state.settings, state.params, state.adam
    step, frames, stopped = state.step, list(state.frames), state.stopped
    losses: list[float] = []
    clock = time.perf_counter()
    end = min(settings.steps, step + int(n_steps))
    while step < end and not stopped:
        batch = make_batch(settings, np.random.default_rng([settings.seed, step + 1]))
        try:
            result, grads = loss_and_gradients(params, batch.tokens, loss_mask=batch.loss_mask)
        except ValueError as exc:  # the scores or the output overflow: the sentence says which
            stopped = f"step {step + 1}: {exc}"
            break
        if not np.isfinite(result.loss):
            stopped = f"step {step + 1}: the loss is no longer finite"
            break
        new, new_adam = adam_step(params, grads.params, settings.lr, adam)
        if not all(np.isfinite(a).all() for a in new.values()):
            stopped = f"step {step + 1}: the parameters overflow"
            break
        params, adam, step = params.replace(new), new_adam, step + 1
        losses.append(result.loss)
        if step % state.every == 0 or step == settings.steps:
            frames.append(record(params, settings, step))
    if stopped and frames[-1].step != step:
        frames.append(record(params, settings, step))
    return TrainingState(settings, params, adam, step,
                         np.concatenate([state.losses, losses]), tuple(frames), state.every,
                         stopped, state.seconds + time.perf_counter() - clock)


def finish_training(state: TrainingState) -> InductionRun:
    """Stack the frames, identify the heads, detect the phase change."""
    frames = state.frames
    if frames[-1].step != state.step:  # stopped between records: record the last step
        frames = frames + (record(state.params, state.settings, state.step),)

    def stack(name: str) -> Array:
        return np.stack([getattr(f, name) for f in frames])

    previous, prefix = stack("previous_token"), stack("prefix_matching")
    losses = np.asarray(state.losses, dtype=float)
    phase = detect_phase_change(losses) if len(losses) and np.isfinite(losses).all() else None
    return InductionRun(state.settings, state.params, losses,
                        np.array([f.step for f in frames]), stack("weights"), previous, prefix,
                        stack("copying"), stack("position_loss"),
                        np.array([f.eval_loss for f in frames]),
                        heldout_sequence(state.settings),
                        identify_heads(previous[-1], prefix[-1]), phase, state.stopped,
                        state.seconds)


def train_induction(settings: InductionSettings | None = None, *,
                    should_stop: Callable[[], bool] | None = None,
                    progress: Callable[[int, float], None] | None = None,
                    chunk: int = 25) -> InductionRun:
    """Train a model on the induction task from ``settings`` (None = the defaults).

    Parameters
    ----------
    settings : InductionSettings, optional
    should_stop : callable() -> bool, optional
        Asked before every chunk; True ends the run there ("stopped" says so) — a time budget
        or a Stop button.
    progress : callable(step, loss), optional
        Called after every chunk with the steps taken and the last training loss.
    chunk : int
        Steps per chunk.
    """
    settings = InductionSettings() if settings is None else settings
    state = start_training(settings)
    while not state.done:
        if should_stop is not None and should_stop():
            state = _stopped(state, f"stopped after {state.step} of {settings.steps} steps")
            break
        state = train_steps(state, chunk)
        if progress is not None and len(state.losses):
            progress(state.step, float(state.losses[-1]))
    return finish_training(state)


def _stopped(state: TrainingState, why: str) -> TrainingState:
    return TrainingState(state.settings, state.params, state.adam, state.step, state.losses,
                         state.frames, state.every, why, state.seconds)


# ------------------------------------------------------------------------------ measuring


def heldout_forward(params: Params, settings: InductionSettings, head_mask=None
                    ) -> TransformerResult:
    """The model on the held-out sequence (loss on its repeat)."""
    seq = heldout_sequence(settings)
    return forward(params, seq.tokens, loss_mask=seq.loss_mask, head_mask=head_mask)


def induction_loss(params: Params, settings: InductionSettings, head_mask=None) -> float:
    """The task loss on the fixed evaluation batch (ablate heads with ``head_mask``: False =
    zeroed)."""
    batch = eval_batch(settings)
    return forward(params, batch.tokens, loss_mask=batch.loss_mask, head_mask=head_mask).loss


def loss_by_gap(params: Params, batch: InductionBatch) -> dict[int, tuple[float, int]]:
    """The task loss of ``batch`` per gap between the copies: gap -> (the mean next-token
    loss over the repeat's predictions in the sequences with that gap, how many predictions).

    How well a model copies across a distance: an induction head that only looks a few
    tokens back does well at short gaps and badly at long ones.
    """
    nll = np.asarray(forward(params, batch.tokens).nll)  # (batch, t − 1)
    found = {}
    for gap in np.unique(batch.gap):
        counted = batch.loss_mask & (batch.gap == gap)[:, None]  # (batch, t − 1)
        found[int(gap)] = (float(nll[counted].mean()), int(counted.sum()))
    return found


def record(params: Params, settings: InductionSettings, step: int) -> Frame:
    """Attention, scores and losses of ``params`` at ``step``."""
    result = heldout_forward(params, settings)
    tokens = result.tokens[0]
    weights = result.weights[:, 0]  # (n_layers, n_heads, t, t)
    return Frame(step, np.array(weights), previous_token_score(weights),
                 prefix_matching_score(weights, tokens), copying_scores(params),
                 np.array(result.nll[0]), induction_loss(params, settings))

