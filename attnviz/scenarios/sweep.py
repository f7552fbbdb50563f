"""One matrix over a grid of values of a setting: what a slider shows while it is dragged.

The browser steps through the precomputed matrices (Plotly frames) as the slider moves, with no
server round trip; releasing it sets the exact value it stopped on, and every other view is
computed again from the scenario. The matrices come from :func:`run_scenario`, the one run
path: no maths here.

A sweep does not depend on the value the scenario holds for the swept setting (each frame sets
it), so sweeps are kept by the scenario *without* it (:func:`_key`): releasing τ's slider, which
changes only τ, finds every τ sweep of the page already made. The cache is shared by the
process's sessions (equal content, equal frames), bounded by :data:`CACHE_ENTRIES`, and holds
read-only arrays.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import AttentionResult, MultiHeadResult, reweigh, weighted_sum
from attnviz.core.score_mods import Scale, split_scale
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.limits import TEMPERATURE_MAX, TEMPERATURE_MIN, TEMPERATURE_STEP
from attnviz.scenarios.scenario import Scenario, run_scenario
from attnviz.scenarios.shared_lru import SharedLru

Array = NDArray[np.float64]

MAX_CELLS = 20_000  # numbers per sweep (grid × matrix): bounds what one figure sends
CACHE_ENTRIES = 32  # sweeps kept, each at most MAX_CELLS float64 (160 KB): 5 MB in all
KEPT_RUN_CELLS = MAX_CELLS // 100  # t² of a run kept for its sweeps (a τ grid's frames fit)

_CACHE = SharedLru(CACHE_ENTRIES)  # key (see _key) -> a sweep or a run


def value_grid(low: float, high: float, step: float) -> list[float]:
    """A slider's values from ``low`` to ``high`` by ``step``, rounded as the slider shows
    them (to 2 decimals)."""
    n = int(round((high - low) / step)) + 1
    return [round(low + i * step, 2) for i in range(n)]


def temperature_grid(low: float = TEMPERATURE_MIN, high: float = TEMPERATURE_MAX,
                     step: float = TEMPERATURE_STEP) -> list[float]:
    """The temperature slider's values, rounded as the slider shows them."""
    return value_grid(low, high, step)


def _with(scenario: Scenario, setting: str, value) -> Scenario:
    """The scenario with ``setting`` (a scenario field, or ``params.<name>`` for a setting of
    its variant) set to ``value``."""
    if setting.startswith("params."):
        return replace(scenario, params={**scenario.params, setting.removeprefix("params."): value})
    return replace(scenario, **{setting: value})


def _key(kind: str, scenario: Scenario, setting: str, values: list, matrix: str,
         head: int) -> str:
    """The cache key of a sweep: the scenario with ``setting`` at the grid's first value (the
    value the scenario holds makes no frame), and what is swept and shown."""
    base = _with(scenario, setting, values[0]) if values else scenario
    return fingerprint((kind, base, setting, [repr(v) for v in values], matrix, head))


def _frozen(frames) -> tuple[Array, ...]:
    """The frames as a tuple of read-only arrays (shared by every caller of the cache)."""
    out = tuple(np.asarray(z) for z in frames)
    for z in out:
        z.setflags(write=False)
    return out


def _check_size(scenario: Scenario, values: list) -> None:
    """A ValueError when a sweep of ``values`` would exceed :data:`MAX_CELLS`."""
    cells = scenario.t * scenario.t * len(values)
    if cells > MAX_CELLS:
        raise ValueError(f"a sweep of {len(values)} values over {scenario.t} tokens needs "
                         f"{cells:,} numbers, more than {MAX_CELLS:,}")


def sweep(scenario: Scenario, setting: str, values, matrix: str = "weights", *,
          head: int = 0) -> list[Array]:
    """``matrix`` of head ``head`` (``run_scenario(...).attention.head(head)``) for each value
    of ``setting`` (a scenario field, or ``params.<name>`` for a setting of the scenario's
    variant); a ValueError when the grid would exceed MAX_CELLS. Read-only arrays, kept by the
    scenario without ``setting`` (see the module docstring)."""
    values = list(values)
    _check_size(scenario, values)
    key = _key("sweep", scenario, setting, values, matrix, head)
    return list(_CACHE.get_or_make(key, lambda: _frozen(
        getattr(run_scenario(_with(scenario, setting, v)).attention.head(head), matrix)
        for v in values)))


def reweighable(scenario: Scenario, setting: str, matrix: str) -> bool:
    """True when :func:`score_sweep` computes ``matrix`` over ``setting`` from one run (not a
    run per value)."""
    if setting not in ("temperature", "custom_scale"):
        return False
    return _reweighable(scenario, _base(scenario, setting), setting, matrix)


def _base(scenario: Scenario, setting: str):
    """The attention result :func:`score_sweep` reweighs: the scenario's with ``setting`` (τ
    or the custom scale) at 1 — its raw scores, values and other score modifiers do not depend
    on it. Kept (:data:`_CACHE`) while as small as a τ sweep's frames
    (:data:`KEPT_RUN_CELLS`)."""
    neutral = _with(scenario, setting, 1.0)
    if scenario.t * scenario.t > KEPT_RUN_CELLS:
        return run_scenario(neutral).attention
    return _CACHE.get_or_make(fingerprint(("run", neutral)),
                             lambda: run_scenario(neutral).attention)


def _reweighable(scenario: Scenario, result, setting: str, matrix: str) -> bool:
    """τ or the custom scale only change the factor of the raw scores: the scaled scores and
    weights of a plain result (one head or several), and the output of one head (weights @ V,
    as the engine mixes them; heads combined by W_O are not)."""
    if setting not in ("temperature", "custom_scale") or (
            setting == "custom_scale" and scenario.scale_mode != "custom"):
        return False
    if matrix in ("scaled", "weights"):
        return type(result) in (AttentionResult, MultiHeadResult)
    return matrix == "output" and type(result) is AttentionResult


def score_sweep(scenario: Scenario, setting: str, values, matrix: str = "weights", *,
                head: int = 0) -> list[Array]:
    """:func:`sweep` over the temperature or the custom scale, from one run: both only change
    the factor the raw scores are multiplied by, so each frame re-applies the result's score
    modifiers with another factor (:func:`~attnviz.core.attention.reweigh`) to one matrix of
    raw scores — the same bits as a run at that value; a single head's ``"output"`` likewise
    (its weights times V). Other settings, and results computed another way (tiles, a cache,
    sinks, additive scores, heads combined by W_O), take a run per value. Read-only arrays,
    kept by the scenario without ``setting``: a new τ finds its τ sweeps made; the weights,
    scaled scores and output of one scenario share its one run."""
    values = list(values)
    if not reweighable(scenario, setting, matrix):
        return sweep(scenario, setting, values, matrix, head=head)
    _check_size(scenario, values)
    key = _key("score_sweep", scenario, setting, values, matrix, head)
    return list(_CACHE.get_or_make(
        key, lambda: _frozen(_reweighed(scenario, setting, values, matrix, head))))


def _reweighed(scenario: Scenario, setting: str, values: list, matrix: str,
               head: int) -> list[Array]:
    """The frames of :func:`score_sweep`, from one run (:func:`_base`)."""
    part = _base(scenario, setting).head(head)
    first, rest = split_scale(part.score_mods)
    frames = []
    for v in values:
        scale = Scale(first.scale, float(v)) if setting == "temperature" else \
            Scale(float(v), first.temperature)
        scaled, weights = reweigh(part, (scale, *rest))
        if matrix == "output":
            frames.append(np.asarray(weighted_sum(weights, part.v, "v")))
        else:
            frames.append(np.asarray(scaled if matrix == "scaled" else weights))
    return frames
