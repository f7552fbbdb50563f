"""One matrix over a grid of values of a setting: what a slider shows while it is dragged.

The browser steps through the precomputed matrices (Plotly frames) as the slider moves, with no
server round trip; releasing it sets the exact value it stopped on, and every other view is
computed again from the scenario. The matrices come from :func:`run_scenario`, the one run
path: no maths here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import AttentionResult, MultiHeadResult, reweigh, weighted_sum
from attnviz.core.score_mods import Scale
from attnviz.scenarios.limits import TEMPERATURE_MAX, TEMPERATURE_MIN, TEMPERATURE_STEP
from attnviz.scenarios.scenario import Scenario, run_scenario

Array = NDArray[np.float64]

MAX_CELLS = 20_000  # numbers per sweep (grid × matrix): bounds what one figure sends


def temperature_grid(low: float = TEMPERATURE_MIN, high: float = TEMPERATURE_MAX,
                     step: float = TEMPERATURE_STEP) -> list[float]:
    """The temperature slider's values, rounded as the slider shows them."""
    n = int(round((high - low) / step)) + 1
    return [round(low + i * step, 2) for i in range(n)]


def _with(scenario: Scenario, setting: str, value) -> Scenario:
    """The scenario with ``setting`` (a scenario field, or ``params.<name>`` for a setting of
    its variant) set to ``value``."""
    if setting.startswith("params."):
        return replace(scenario, params={**scenario.params, setting.removeprefix("params."): value})
    return replace(scenario, **{setting: value})


def sweep(scenario: Scenario, setting: str, values, matrix: str = "weights", *,
          head: int = 0) -> list[Array]:
    """``matrix`` of head ``head`` (``run_scenario(...).attention.head(head)``) for each value
    of ``setting`` (a scenario field, or ``params.<name>`` for a setting of the scenario's
    variant); a ValueError when the grid would exceed MAX_CELLS."""
    values = list(values)
    cells = scenario.t * scenario.t * len(values)
    if cells > MAX_CELLS:
        raise ValueError(f"a sweep of {len(values)} values over {scenario.t} tokens needs "
                         f"{cells:,} numbers, more than {MAX_CELLS:,}")
    return [np.asarray(getattr(run_scenario(_with(scenario, setting, v)).attention.head(head),
                               matrix)) for v in values]


def reweighable(scenario: Scenario, setting: str, matrix: str) -> bool:
    """True when :func:`score_sweep` computes ``matrix`` over ``setting`` from one run (not a
    run per value)."""
    return _reweighable(scenario, run_scenario(scenario).attention, setting, matrix)


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
    modifiers with another factor (:func:`~attnviz.core.attention.reweigh`) — the same bits as
    a run at that value; a single head's ``"output"`` likewise (its weights times V). Other
    settings, and results computed another way (tiles, a cache, sinks, additive scores, heads
    combined by W_O), take a run per value."""
    result = run_scenario(scenario).attention
    if not _reweighable(scenario, result, setting, matrix):
        return sweep(scenario, setting, values, matrix, head=head)
    values = list(values)
    cells = scenario.t * scenario.t * len(values)
    if cells > MAX_CELLS:
        raise ValueError(f"a sweep of {len(values)} values over {scenario.t} tokens needs "
                         f"{cells:,} numbers, more than {MAX_CELLS:,}")
    part = result.head(head)
    first, rest = part.score_mods[0], part.score_mods[1:]
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
