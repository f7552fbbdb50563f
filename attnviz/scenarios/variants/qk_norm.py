"""QK-norm (Henry et al., 2020; RMSNorm as in OLMo 2 and Qwen 3): q and k normalised per head.

Every query and key row of each head is divided by its root mean square and multiplied by a
gain g (:func:`attnviz.core.qk_norm.rms_norm`) before the scores; the values are not touched.
The logits are then bounded by d_k·g² whatever the size of the embeddings and weights. The
dashboard's gain is one number for queries and keys alike (a model learns one per dimension).
"""

import numpy as np

from attnviz.core import steps as S
from attnviz.core.qk_norm import rms_norm, rms_norm_backward
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, sdpa
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.heads import attend, project_heads

PARAMS = (Param("qk_gain", "Gain g", 1.0, low=0.0, high=100.0),)


def compute(inputs: Inputs):
    """softmax(RMS(Q)·g · (RMS(K)·g)ᵀ·scale / τ + M)·V."""
    gain = inputs.scenario.param("qk_gain")
    q_h, k_h, v_h = project_heads(inputs)
    return attend(inputs, rms_norm(q_h, gain), rms_norm(k_h, gain), v_h)


def unnormalise(inputs: Inputs, d_q_h, d_k_h):
    """The gradients of the normalised q and k carried back through the RMS norm."""
    gain = inputs.scenario.param("qk_gain")
    q_h, k_h, _ = project_heads(inputs)
    return rms_norm_backward(q_h, d_q_h, gain), rms_norm_backward(k_h, d_k_h, gain)


def backward(inputs: Inputs, result, d_output, d_weights):
    """The dot-product backward pass, then back through the RMS norm of q and k."""
    return dot_product_backward(inputs, result, d_output, d_weights, pullback=unnormalise)


def tamed():
    """Hand-built: large embeddings that saturate plain attention; QK-norm keeps it soft."""
    tokens = ["big", "bigger", "small", "tiny"]
    x = np.array([[8.0, 2, 0, 1], [12, -3, 4, 0], [1, 1, 0.5, 0], [0.2, 0, 0.1, 0.3]])
    w = np.eye(4)
    return draft(tokens, x, w, w, w, variant="qk_norm", params={"qk_gain": 1.0},
                     title="QK-norm: logits bounded by d_k·g²",
                     description="Plain attention puts all weight on 'bigger'; with q and k "
                                 "RMS-normalised each score is at most d_k·g² = 4 before "
                                 "scaling and the weights stay spread. Raise the gain to "
                                 "sharpen them again.")



def loop_reference(inputs: Inputs):
    """Explicit loops on q and k normalised row by row: x / sqrt(mean(x²) + 1e-6) · g."""
    gain = inputs.scenario.param("qk_gain")

    def normalise(q, k, h):
        return (np.array([reference.rms(row, gain) for row in q]),
                np.array([reference.rms(row, gain) for row in k]))

    return reference.multi_head(inputs, lambda d_k: reference.scaled_logit(inputs, d_k),
                                change=normalise, w_o=inputs.n_heads > 1)


def to_steps(scenario) -> tuple:
    """QK-norm with one gain for queries and keys."""
    gain = float(scenario.param("qk_gain"))
    return (S.QKNorm((gain,), (gain,), 1e-6),)


VARIANT = Variant(
    key="qk_norm", name="QK-norm", order=120,
    description="Queries and keys are RMS-normalised per head (times a gain) before the "
                "scores, so the logits cannot grow with the embeddings.",
    formula=lambda w: (
        sdpa(w, r"\hat Q \hat K^\top") + r",\quad \hat q = "
        r"\frac{q}{\sqrt{\mathrm{mean}(q^2) + \epsilon}}\,g,\quad " + PROJECTIONS),
    compute=compute, backward=backward, params=PARAMS,
    presets=(Preset("qk_norm_tamed", "QK-norm tames large logits", "hand-built", tamed),),
    reference=loop_reference, to_steps=to_steps,
    # the vector in the scores is the projection RMS-normalised (per head), times the gain
    query_formula=(r"q_i = \frac{x_i W_Q}{\sqrt{\mathrm{mean}((x_i W_Q)^2) + \epsilon}}\,g,"
                   r"\quad k_j \text{ likewise}"),
)
