"""Compare: the same inputs under two variants or two settings, and their difference.

:func:`comparison_pair` turns the current scenario into two scenarios A and B that differ in
one thing (the scale, the causal mask, the number of heads, positional encoding, the
temperature, or the variant). :func:`run_side` computes one side; :func:`compare` runs both and
the element-wise differences A − B where the shapes agree.

For multi-head attention the weights shown are the mean over the heads (each head's rows sum to
1, so the mean's rows do too); the per-head maps are kept in ``head_weights``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import MultiHeadResult, valid_head_counts
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import (
    Scenario,
    ScenarioResult,
    position_labels,
    run_scenario,
    with_variant,
)

Array = NDArray[np.float64]

KINDS = ("scale", "causal", "heads", "pe", "temperature", "variants")


@dataclass(frozen=True, eq=False)
class Side:
    """One side of a comparison.

    Attributes
    ----------
    label : str
    scenario : Scenario
    weights : ndarray of shape (t_q, t_k) or None
        The weights (mean over heads for multi-head); None when the side failed.
    head_weights : ndarray of shape (n_heads, t_q, t_k) or None
    output : ndarray of shape (t_q, d_out) or None
    q_labels, k_labels : list of str
    error : str
        Why the side could not be computed ("" when it could).
    """

    label: str
    scenario: Scenario
    weights: Array | None
    head_weights: Array | None
    output: Array | None
    q_labels: list[str]
    k_labels: list[str]
    error: str = ""


@dataclass(frozen=True, eq=False)
class Comparison:
    """Both sides and their differences (None where the shapes differ or a side failed)."""

    a: Side
    b: Side
    weights_diff: Array | None
    output_diff: Array | None


def head_choices(scenario: Scenario, limit: int = 16) -> list[int]:
    """Head counts > 1 that divide both the Q/K and the V width."""
    return [h for h in valid_head_counts(int(scenario.w_q.shape[1]), limit)
            if h > 1 and scenario.w_v.shape[1] % h == 0]


def _is_self(scenario: Scenario) -> bool:
    return scenario.spec.heads


def comparison_pair(scenario: Scenario, kind: str, *, n_heads: int | None = None,
                    temperature: float = 0.5, variant_a: str | None = None,
                    variant_b: str | None = None) -> tuple[Scenario, Scenario, str, str]:
    """Two scenarios that differ only in ``kind``, with their labels.

    Parameters
    ----------
    scenario : Scenario
    kind : {"scale", "causal", "heads", "pe", "temperature", "variants"}
    n_heads : int, optional
        B's number of heads for ``kind="heads"`` (default: the largest of head_choices <= 4).
    temperature : float
        B's temperature for ``kind="temperature"`` (A keeps the scenario's).
    variant_a, variant_b : str, optional
        Registry keys for ``kind="variants"``.

    Raises
    ------
    ValueError
        When the comparison does not apply to this scenario, in a sentence.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "scale":
        if not scenario.spec.projections:
            raise ValueError("additive attention has no scale; pick a dot-product variant")
        base = replace(scenario, variant="scaled_dot_product") \
            if scenario.variant == "dot_product" else scenario
        return (replace(base, scale_mode="sqrt_dk"), replace(base, scale_mode="none"),
                "scaled by 1/√d_k", "unscaled")
    if kind == "causal":
        if not _is_self(scenario):
            raise ValueError("causal vs bidirectional applies to self-attention; pick a "
                             "self-attention or multi-head variant")
        if scenario.always_heads:
            return (replace(scenario, mask_kind="causal"), replace(scenario, mask_kind="none"),
                    "causal", "bidirectional")
        return (replace(scenario, variant="causal"), replace(scenario, variant="bidirectional"),
                "causal", "bidirectional")
    if kind == "heads":
        if scenario.direct or not _is_self(scenario):
            raise ValueError("1 vs several heads needs embeddings and weight matrices with "
                             "self-attention; load a preset such as the four words")
        choices = head_choices(scenario)
        if not choices:
            raise ValueError(f"no head count above 1 divides both the Q/K width "
                             f"({scenario.w_q.shape[1]}) and the V width "
                             f"({scenario.w_v.shape[1]}); widen them on the Playground")
        small = [c for c in choices if c <= 4]
        h = n_heads if n_heads in choices else (max(small) if small else choices[0])
        return (replace(scenario, n_heads=1), replace(scenario, n_heads=h), "1 head",
                f"{h} heads")
    if kind == "pe":
        if scenario.direct:
            raise ValueError("positional encoding is added to embeddings, but this scenario "
                             "gives Q, K and V directly; load a preset with embeddings")
        return (replace(scenario, use_pe=True), replace(scenario, use_pe=False), "with PE",
                "without PE")
    if kind == "temperature":
        if not scenario.spec.projections:
            raise ValueError("additive attention has no temperature; pick a dot-product variant")
        return (scenario, replace(scenario, temperature=float(temperature)),
                f"τ = {scenario.temperature:g}", f"τ = {float(temperature):g}")
    a = variant_a or scenario.variant
    b = variant_b or scenario.variant
    for v in (a, b):
        if v not in VARIANTS:
            raise ValueError(f"unknown variant {v!r}")
    return (with_variant(scenario, a), with_variant(scenario, b), VARIANTS[a].name,
            VARIANTS[b].name)


def run_side(scenario: Scenario, label: str, *, force_heads: int | None = None,
             run: Callable[..., ScenarioResult] = run_scenario) -> Side:
    """Compute one side; a ValueError becomes ``Side.error`` instead of propagating.

    ``force_heads`` runs multi-head attention with that many heads whatever the variant.
    ``run`` is the run path (``run_scenario``, or the dashboard's memo of it, which takes the
    same arguments).
    """
    q_lab = position_labels(scenario.tokens)
    k_lab = position_labels(scenario.key_tokens)
    try:
        res: ScenarioResult = run(scenario, heads=force_heads)
        att = res.attention
        q_lab, k_lab = res.q_labels, res.k_labels
    except ValueError as exc:
        return Side(label, scenario, None, None, None, q_lab, k_lab, error=str(exc))
    head_weights = None
    weights = np.atleast_2d(np.asarray(att.weights, dtype=np.float64))
    if isinstance(att, MultiHeadResult):
        head_weights = np.asarray(att.weights, dtype=np.float64)
        weights = head_weights.mean(axis=0)  # (t_q, t_k)
    output = np.atleast_2d(np.asarray(att.output, dtype=np.float64))
    return Side(label, scenario, weights, head_weights, output, q_lab, k_lab)


def _diff(a: Array | None, b: Array | None) -> Array | None:
    if a is None or b is None or a.shape != b.shape:
        return None
    return a - b


def compare(scenario: Scenario, kind: str, *,
            run: Callable[..., ScenarioResult] = run_scenario, **options) -> Comparison:
    """Run both sides of :func:`comparison_pair` and their differences A − B.

    Raises
    ------
    ValueError
        When the comparison does not apply (see :func:`comparison_pair`).
    """
    sa, sb, la, lb = comparison_pair(scenario, kind, **options)
    if kind == "heads":
        a = run_side(sa, la, force_heads=sa.n_heads, run=run)
        b = run_side(sb, lb, force_heads=sb.n_heads, run=run)
    else:
        a, b = run_side(sa, la, run=run), run_side(sb, lb, run=run)
    return Comparison(a, b, _diff(a.weights, b.weights), _diff(a.output, b.output))
