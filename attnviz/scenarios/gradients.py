"""The backward pass of a scenario: a loss, and the gradient of everything the forward read.

A :class:`Loss` turns the forward result into one number L:

* ``"output_mse"`` — ½‖O − T‖² with a target output T (the shape of the output);
* ``"pattern_ce"`` — cross-entropy between a target attention pattern T (rows normalised to
  sum to 1; a row of zeros asks nothing of its query) and the weights P,
  L = −(1/n_heads) Σ_h Σ_ij T_ij log P_h,ij: the mean over the heads of each head's sum over
  the queries;
* ``"given"`` — L = Σ O ∘ D for a given D, whose gradient is D itself: the user-given
  upstream gradient dO.

:func:`gradients` runs the scenario (:func:`~attnviz.scenarios.scenario.run_scenario`'s
inputs), the loss, and the variant's own backward pass (``Variant.backward``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import as_array
from attnviz.core.numerics import read_only
from attnviz.scenarios.scenario import (
    Scenario,
    ScenarioResult,
    run_scenario,
    scenario_inputs,
)

Array = NDArray[np.float64]

LOSSES = ("output_mse", "pattern_ce", "given")


@dataclass(frozen=True, eq=False)
class Loss:
    """A scalar loss of the forward result.

    Attributes
    ----------
    kind : {"output_mse", "pattern_ce", "given"}
    target : ndarray
        The target output (t_q, d_out), the target pattern (t_q, t_k), or the given dO.
    """

    kind: str
    target: Array

    def __post_init__(self):
        if self.kind not in LOSSES:
            raise ValueError(f"the loss must be one of {', '.join(LOSSES)}, got {self.kind!r:.40}")


@dataclass(frozen=True, eq=False)
class Gradients:
    """A loss and its gradients for one scenario.

    Attributes
    ----------
    loss : float
    forward : ScenarioResult
        The forward pass the gradients are of.
    attention : AttentionGradients or AdditiveGradients
        The gradient of every intermediate (:mod:`attnviz.core.backward`).
    params : Mapping of str to ndarray
        The gradient of each scenario field the computation read, by field name ("x",
        "w_q", ...), read-only.
    """

    loss: float
    forward: ScenarioResult
    attention: Any
    params: Mapping[str, Array]


def loss_terms(loss: Loss, result) -> tuple[float, Array | None, Array | None]:
    """The loss value, ∂L/∂output and ∂L/∂weights of a forward attention result.

    Raises
    ------
    ValueError
        If the target's shape does not fit, a pattern has negative entries, or the target
        wants weight where the weights are exactly 0 (a masked or underflowed key: the
        cross-entropy is infinite there).
    """
    target = as_array("the target", loss.target, 2)
    if loss.kind in ("output_mse", "given"):
        out = np.asarray(result.output)
        if target.shape != out.shape:
            raise ValueError(f"the target must have the output's shape {out.shape}, got "
                             f"{target.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            diff = out - target
            value = float(np.sum(out * target) if loss.kind == "given"
                          else 0.5 * np.sum(diff * diff))
        if not (np.isfinite(value) and np.isfinite(diff).all()):
            raise ValueError("the loss overflows the floating-point range; use a target and "
                             "values of a more usual size")
        return value, (target if loss.kind == "given" else diff), None
    weights = np.asarray(result.weights)
    p = weights if weights.ndim == 3 else weights[None]  # (n, t_q, t_k)
    if target.shape != p.shape[1:]:
        raise ValueError(f"the target pattern must have the weights' shape {p.shape[1:]}, got "
                         f"{target.shape}")
    if (target < 0).any():
        raise ValueError("the target pattern must not have negative entries")
    rows = target.sum(axis=1, keepdims=True)
    t = np.divide(target, rows, out=np.zeros_like(target), where=rows > 0)
    wanted = np.broadcast_to(t > 0, p.shape)
    if (wanted & (p == 0)).any():
        h, i, j = np.argwhere(wanted & (p == 0))[0]
        raise ValueError(f"the target pattern wants weight on key {j} of query {i}, where head "
                         f"{h}'s weight is exactly 0 (masked, or the softmax underflowed): the "
                         f"cross-entropy is infinite; change the target, the mask or the scale")
    n = p.shape[0]
    logs = np.log(np.where(wanted, p, 1.0))
    value = -float(np.sum(t * logs)) / n
    d_weights = np.where(wanted, -t / (n * np.where(wanted, p, 1.0)), 0.0)
    return value, None, d_weights if weights.ndim == 3 else d_weights[0]


def gradients(scenario: Scenario, loss: Loss) -> Gradients:
    """The loss of the scenario's forward pass and the gradient of everything it read.

    Raises
    ------
    ValueError
        If the variant has no backward pass yet, or as :func:`run_scenario` and
        :func:`loss_terms` do.
    """
    spec = scenario.spec
    if spec.backward is None:
        raise ValueError(f"gradients are not available for {spec.name} yet")
    forward = run_scenario(scenario)
    inputs = scenario_inputs(scenario)
    value, d_output, d_weights = loss_terms(loss, forward.attention)
    grads, params = spec.backward(inputs, forward.attention, d_output, d_weights)
    params = {name: np.array(g, dtype=float) for name, g in params.items()}
    read_only(*params.values())
    return Gradients(value, forward, grads, MappingProxyType(params))


def default_loss(scenario: Scenario, kind: str) -> Loss:
    """The loss a page starts with: the target output of :func:`self_output`, the "previous
    token" pattern, dO = 1.

    Raises
    ------
    ValueError
        If the scenario does not compute (as :func:`run_scenario`).
    """
    result = run_scenario(scenario).attention
    if kind == "pattern_ce":
        return Loss(kind, previous_token_pattern(*np.shape(result.head(0).weights)))
    if kind == "output_mse":
        return Loss(kind, self_output(scenario))
    return Loss(kind, np.ones(np.shape(result.output)))


def self_output(scenario: Scenario) -> Array:
    """A target output that asks for something visible: what the output would be if every
    query attended to its own position only (key i for query i; the last key for queries
    beyond the keys), i.e. the scenario run with that mask. Every gradient is then non-zero
    wherever the weights are not already diagonal."""
    t_q, t_k = scenario.t, len(scenario.key_tokens)
    own = np.zeros((t_q, t_k), dtype=bool)
    own[np.arange(t_q), np.minimum(np.arange(t_q), t_k - 1)] = True
    pinned = replace(scenario, mask_kind="custom", custom_mask=own)
    return np.array(run_scenario(pinned).attention.output)


PATTERNS = ("previous", "first", "self", "same_word", "uniform")


def target_pattern(kind: str, mask, tokens=None) -> Array:
    """A target attention pattern of the mask's shape (t_q, t_k), one of :data:`PATTERNS`:
    the previous token (the first query: itself), the first token, itself (the diagonal), the
    same word earlier (the latest earlier key with the query's token; a first occurrence:
    itself), or uniform over the keys the mask lets each query see.

    Raises
    ------
    ValueError
        For an unknown kind, or "same_word" without one token per key.
    """
    mask = np.asarray(mask, dtype=bool)
    t_q, t_k = mask.shape
    if kind == "same_word":
        if tokens is None or len(tokens) < max(t_q, t_k):
            raise ValueError("the same-word pattern needs the tokens")
        pattern = np.zeros((t_q, t_k))
        for i in range(t_q):
            earlier = [j for j in range(min(i, t_k)) if tokens[j] == tokens[i]]
            pattern[i, earlier[-1] if earlier else min(i, t_k - 1)] = 1.0
        return pattern
    if kind == "previous":
        return previous_token_pattern(t_q, t_k)
    if kind == "first":
        return np.tile(np.arange(t_k) == 0, (t_q, 1)).astype(float)
    if kind == "self":
        return np.eye(t_q, t_k)
    if kind == "uniform":
        return mask.astype(float)
    raise ValueError(f"the pattern must be one of {', '.join(PATTERNS)}, got {kind!r:.40}")


def previous_token_pattern(t_q: int, t_k: int) -> Array:
    """Query i attends to key i − 1 (the first query to itself): the induction-head building
    block, and the Learn page's first target."""
    pattern = np.zeros((t_q, t_k))
    for i in range(t_q):
        pattern[i, min(max(i - 1, 0), t_k - 1)] = 1.0
    return pattern


def norm_sweep(scenario: Scenario, loss: Loss, setting: str, values) -> Array:
    """‖dS̃‖ (the gradient of the softmax's input, Frobenius norm over every head) for each
    value of one setting, everything else as in the scenario: the √d_k story.

    Parameters
    ----------
    setting : {"scale", "temperature"}
        "scale" sets a custom scale factor (variants that fix their scale ignore it);
        "temperature" sets τ.
    values : array_like of float

    Raises
    ------
    ValueError
        If the scenario does not compute at some value (as :func:`gradients`).
    """
    if setting not in ("scale", "temperature"):
        raise ValueError(f"setting must be scale or temperature, got {setting!r:.40}")
    norms = []
    for v in np.asarray(values, dtype=float):
        sc = (replace(scenario, scale_mode="custom", custom_scale=float(v)) if setting == "scale"
              else replace(scenario, temperature=float(v)))
        norms.append(float(np.linalg.norm(gradients(sc, loss).attention.d_scaled)))
    return np.array(norms)


@dataclass(frozen=True)
class KVHead:
    """The key/value head a query head reads (grouped-query attention shares one among
    ``group`` query heads; plain multi-head attention has one per query head).

    Attributes
    ----------
    n_kv : int
        The key/value heads of the gradients.
    group : int
        Query heads per key/value head.
    kv : int
        The key/value head the query head reads.
    """

    n_kv: int
    group: int
    kv: int

    @property
    def query_heads(self) -> range:
        """Every query head that reads key/value head ``kv``."""
        return range(self.kv * self.group, (self.kv + 1) * self.group)


def kv_head(scenario: Scenario, grads: Gradients, head: int) -> KVHead:
    """The key/value head query head ``head`` of ``grads`` (of ``scenario``) reads; one for
    every head without projections (the additive variants' keys are the inputs themselves)."""
    g = grads.attention
    n_kv = np.shape(g.d_v)[0] if scenario.spec.projections else 1
    group = g.n_heads // n_kv
    return KVHead(n_kv, group, head // group)


SCALE_MULTIPLES = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # × 1/√d_k
SWEEP_TEMPERATURES = (8.0, 4.0, 2.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125)


@dataclass(frozen=True)
class SaturationSweep:
    """The values :func:`norm_sweep` runs for the √d_k story of one scenario.

    Attributes
    ----------
    setting : {"scale", "temperature"}
        The custom scale (multiples of 1/√d_k), or τ for a variant that fixes its scale.
    picks : tuple of float
        What the slider offers: multiples of 1/√d_k, or temperatures.
    base : float
        1/√d_k: a pick times ``base`` is the scale (1 for temperatures).
    """

    setting: str
    picks: tuple[float, ...]
    base: float

    @property
    def values(self) -> list[float]:
        """The setting's values, one per pick."""
        return [m * self.base for m in self.picks]

    def swept(self, scenario: Scenario, pick: float) -> Scenario:
        """``scenario`` at one pick of the sweep."""
        if self.setting == "scale":
            return replace(scenario, scale_mode="custom", custom_scale=float(pick * self.base))
        return replace(scenario, temperature=float(pick))


def saturation_sweep(scenario: Scenario, d_k: int) -> SaturationSweep:
    """The √d_k story's sweep for ``scenario`` with heads ``d_k`` wide: the custom scale, or
    τ when the variant fixes its scale."""
    if scenario.spec.scale_fixed is None:
        return SaturationSweep("scale", SCALE_MULTIPLES, 1.0 / np.sqrt(d_k))
    return SaturationSweep("temperature", SWEEP_TEMPERATURES, 1.0)
