"""Logit soft-capping (Gemma 2; Team Gemma, 2024, §2): c·tanh(s / c) on the scaled scores.

The scaled scores s = q·k·scale / τ pass through c·tanh(s / c) before the mask and the
softmax: nearly unchanged while |s| ≪ c, never beyond ±c, so no single logit can run away.
Gemma 2 uses c = 50 for attention; the preset uses a small cap so the bend is visible. The
``scaled`` matrix the pages show holds the capped scores.
"""

import math

import numpy as np

from attnviz.core import steps as S
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, scaled, softmax
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.heads import attend, project_heads

PARAMS = (Param("softcap", "Cap c", 50.0, low=0.01, high=1000.0),)


def compute(inputs: Inputs):
    """softmax(c·tanh(Q·Kᵀ·scale / (τ c)) + M)·V, one head (or several with the heads)."""
    q_h, k_h, v_h = project_heads(inputs)
    return attend(inputs, q_h, k_h, v_h, softcap=inputs.scenario.param("softcap"))


def capped():
    """Hand-built: large scores, cap 2 — the dominant key loses most of its lead."""
    tokens = ["one", "two", "three", "four"]
    x = np.array([[3.0, 0, 0], [0, 3, 0], [3, 3, 0], [0, 0, 3]])
    return draft(tokens, x, np.eye(3), np.eye(3), np.eye(3), variant="softcap",
                     params={"softcap": 2.0},
                     title="Soft-capping: no logit beyond ±c",
                     description="The raw scaled scores exceed 10; capped at c = 2 they stay "
                                 "below 2 and the weights spread. Raise the cap to 50 (Gemma 2) "
                                 "and the weights return to the plain softmax.")



def loop_reference(inputs: Inputs):
    """Explicit loops: logit c·tanh(q·k·scale / (τ c))."""
    cap = inputs.scenario.param("softcap")

    def logit(d_k):
        scaled_by = reference.scaled_logit(inputs, d_k)
        return lambda s, h, i, j: cap * math.tanh(scaled_by(s, h, i, j) / cap)

    return reference.multi_head(inputs, logit, w_o=inputs.n_heads > 1)


def to_steps(scenario) -> tuple:
    """c·tanh(s / c) as a score step."""
    return (S.SoftCap(float(scenario.param("softcap"))),)


VARIANT = Variant(
    key="softcap", name="Logit soft-capping", order=110,
    description="Each scaled score s becomes c·tanh(s / c) before the softmax: unchanged for "
                "small scores, never beyond ±c (Gemma 2).",
    formula=lambda w: (
        softmax(r"c\,\tanh\!\left(" + scaled(r"QK^\top", w, by="c") + r"\right)", w)
        + r"V,\quad " + PROJECTIONS),
    compute=compute, backward=dot_product_backward, params=PARAMS,
    presets=(Preset("capped_at_2", "Soft-capping at c = 2", "hand-built", capped),),
    reference=loop_reference, to_steps=to_steps,
)
