"""Scalable-Softmax (SSMax; Nakanishi, 2025, "Scalable-Softmax Is Superior for Attention",
https://arxiv.org/abs/2501.19399): the scores multiplied by s·log n before the softmax.

With n keys, a softmax over scores of a fixed size flattens as n grows: its largest weight
falls like 1/n ("attention fading"). SSMax multiplies query i's scaled scores by s·log n_i,
where n_i is the number of keys it may attend (here: i + 1 under the causal mask, fewer when
the user's mask hides some), so the gap between the largest score and the rest grows with the
context and the peak survives long sequences. s is a learned scalar in the paper (one per
layer or head); here one setting. Llama 4's attention temperature tuning is the same idea on
the queries.

A change of the scores alone, so the variant is one :class:`ScoreMod` (its forward, derivative
and written step) and the dot-product path does the rest: the engine, the backward pass,
Trace, Step by step and the formulas pick it up from the result.
"""

from __future__ import annotations

import math

import numpy as np

from attnviz.core import steps as S
from attnviz.core.initializers import init_weights
from attnviz.core.masks import causal_mask, combine
from attnviz.core.steps.scores import LogLengthScale
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, scaled, softmax, with_mask
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.heads import attend, project_heads

PARAMS = (Param("ssmax_s", "Scale s of s·log n", 1.0, low=0.05, high=5.0),)


def _allowed(inputs: Inputs, t_q: int, t_k: int) -> np.ndarray:
    """The causal mask and the user's: which keys each query may attend."""
    return combine([causal_mask(t_q, t_k), inputs.mask], t_q, t_k)


def compute(inputs: Inputs):
    """Causal attention with every query's scaled scores times s·log n_i."""
    q_h, k_h, v_h = project_heads(inputs)
    n_keys = _allowed(inputs, q_h.shape[1], k_h.shape[1]).sum(axis=1)
    mod = LogLengthScale(float(inputs.scenario.param("ssmax_s")), n_keys)
    return attend(inputs, q_h, k_h, v_h, causal=True, score_mods=(mod,))


def loop_reference(inputs: Inputs):
    """The same with explicit loops: logit = s·log(n_i) · q_i·k_j · scale / τ."""
    s = float(inputs.scenario.param("ssmax_s"))
    t = inputs.x.shape[0]
    ok = reference.allowed(inputs, t, t, causal=True)
    n_keys = [max(sum(row), 1) for row in ok]

    def logit(d_k):
        scaled_by = reference.scaled_logit(inputs, d_k)
        return lambda q_k, h, i, j: s * math.log(n_keys[i]) * scaled_by(q_k, h, i, j)

    return reference.multi_head(inputs, logit, causal=True, w_o=inputs.n_heads > 1)


def long_sentence():
    """Hand-built: ten tokens; the last, 'idea', matches itself and token 2 (the same word)."""
    tokens = ["the", "key", "idea", "of", "this", "long", "and", "winding", "sentence", "idea"]
    x = np.round(0.4 * init_weights("normal", [(10, 4)], seed=52)[0], 1)
    x[2] = x[9] = [1.0, 1.0, 0.0, 0.0]  # both 'idea's
    w = np.eye(4) * 1.5
    return draft(tokens, x, w, w, np.eye(4), variant="ssmax", params={"ssmax_s": 1.0},
                     title="Scalable-Softmax: the peak survives a long context",
                     description="The last 'idea' matches itself and the earlier 'idea'. Over "
                                 "10 keys a plain softmax leaves the two matches 71 % of its "
                                 "weight; SSMax multiplies the scores by s·log 10 ≈ 2.3 and "
                                 "they keep 97 %. Set s to 0.43 (≈ 1/log 10) and the last row "
                                 "is the plain softmax again.")


def to_steps(scenario) -> tuple:
    """SSMax's s·log n as a score step."""
    return (S.SSMax(float(scenario.param("ssmax_s"))),)


VARIANT = Variant(
    key="ssmax", name="Scalable-Softmax", order=115,
    description="Scalable-Softmax (SSMax): causal attention whose scores are multiplied by "
                "s·log n, n the number of keys a query sees, so the weights do not flatten as "
                "the context grows (Nakanishi 2025).",
    formula=lambda w: with_mask(
        softmax(r"s\log n_i \cdot " + scaled(r"QK^\top", w), w) + r"V,\quad " + PROJECTIONS,
        w, r"M_{ij} = (j \le i)"),
    compute=compute, backward=dot_product_backward, causal=True, params=PARAMS,
    reference=loop_reference, to_steps=to_steps,
    presets=(Preset("ssmax_long", "Scalable-Softmax on ten tokens", "hand-built",
                    long_sentence),),
)
