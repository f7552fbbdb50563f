"""One head of a trained transformer as a dashboard scenario, so every page can open it.

A head of :mod:`attnviz.core.transformer` is a single-head causal self-attention on the residual
stream entering its layer (:func:`~attnviz.core.transformer.head_view`): its input x, W_Q, W_K,
W_V of shape (d_model, d_k) and W_O of shape (d_v, d_model), scale 1/√d_k. Put into a
:class:`~attnviz.scenarios.scenario.Scenario` with the variant "causal" (or "rope" with a causal
mask, when the model rotates q and k), :func:`~attnviz.scenarios.scenario.run_scenario`
computes the same weights as the model did, and its output times W_O is what the head writes
into the stream (tests/scenarios/test_from_model.py checks both to 1e-12).

The sequence is the induction task's held-out repeated sequence
(:func:`attnviz.scenarios.induction.heldout_sequence`); its token ids become the labels
"t5", "t12", ... (the pages make them unique by position).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from attnviz.core.transformer import Params, head_view
from attnviz.scenarios.induction import InductionSettings, heldout_forward
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import Scenario, projected


class TrainedModel(Protocol):
    """Anything with a model's parameters and the settings it was trained with: a shipped
    :class:`~attnviz.io.examples.make_induction_model.InductionModel` or an
    :class:`~attnviz.scenarios.induction.InductionRun`."""

    params: Params
    settings: InductionSettings


def token_labels(tokens) -> tuple[str, ...]:
    """Token ids as labels: ``[5, 12]`` -> ``("t5", "t12")``."""
    return tuple(f"t{int(i)}" for i in np.asarray(tokens).reshape(-1))


def head_scenario(model: TrainedModel, layer: int, head: int, *, title: str = "",
                  description: str = "") -> Scenario:
    """Head ``head`` of layer ``layer`` on the held-out sequence, as a scenario.

    Parameters
    ----------
    model : InductionModel or InductionRun
        Its ``params`` and ``settings``.
    layer, head : int
        Indices from 0.
    title, description : str
        Shown where the scenario is named (the sidebar, the pages' captions).

    Returns
    -------
    Scenario
        tokens: the held-out sequence's ids as labels; x: the head's input (the residual stream
        entering the layer, after its layer norm when the model has one); w_q, w_k, w_v: the
        head's (d_model, d_k) matrices; w_o: its (d_v, d_model) W_O; variant "causal", scale
        1/√d_k; with RoPE the variant "rope" with the model's base, split-half pairs, every
        dimension rotated, positions from 0, and the causal mask.

    Raises
    ------
    ValueError
        A layer or head out of range; a RoPE base outside what the RoPE variant accepts.
    """
    params = model.params
    config = params.config
    result = heldout_forward(params, model.settings)
    view = head_view(result, layer, head)
    tokens = token_labels(result.tokens[0])
    fields: dict = dict(w_o=np.array(view.w_o), title=title, description=description,
                        variant="causal", scale_mode="sqrt_dk")
    if view.rope:
        rope = dict(rope_base=float(config.rope_base), rope_layout="split_half",
                    rope_fraction=1.0, rope_offset=0)  # the core's apply_rope as the model uses it
        for name, value in rope.items():
            VARIANTS["rope"].param(name).check(value)  # a base the variant refuses: a sentence
        fields.update(variant="rope", mask_kind="causal", params=rope)
    return projected(tokens, view.x, view.w_q, view.w_k, view.w_v, **fields)
