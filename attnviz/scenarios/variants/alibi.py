"""ALiBi (Press et al., 2022): a per-head linear penalty on the query–key distance.

Head h adds −m_h·(i − j) to the scaled scores of query i and key j, with the paper's slopes
(:func:`attnviz.core.alibi.alibi_slopes`: 2^(−8/n), 2^(−16/n), ... for a power-of-two head
count, the reference code's interleaving rule otherwise). No positional encoding is needed.
As in the paper the attention is causal, so only keys at or before the query are biased
(j ≤ i, a penalty ≥ 0). It runs with the scenario's ``n_heads`` and W_O: the slopes differ per
head, which is the point.
"""

import numpy as np

from attnviz.core import steps as S
from attnviz.core.alibi import alibi_bias, alibi_slopes
from attnviz.core.initializers import init_weights
from attnviz.core.score_mods import Bias
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import scaled, softmax
from attnviz.scenarios.variant import Inputs, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.heads import attend, project_heads

MEANING = r"b_{ij} = -m_h\,(i - j)"  # ALiBi's bias, as the formulas write it


def compute(inputs: Inputs):
    """Causal multi-head attention with −m_h·(i − j) added to head h's scaled scores."""
    q_h, k_h, v_h = project_heads(inputs)
    bias = alibi_bias(inputs.n_heads, q_h.shape[1], k_h.shape[1])  # (n_heads, t, t)
    return attend(inputs, q_h, k_h, v_h, causal=True, always_heads=True,
                  score_mods=(Bias(bias, meaning=MEANING),))


def local_heads():
    """Hand-built: identical tokens, so only ALiBi's distance penalty shapes the weights."""
    tokens = ["la"] * 8
    x = np.tile([1.0, 0.5, -0.5, 0.25], (8, 1))  # the same embedding at every position
    w_q, w_k, w_v = init_weights("glorot_uniform", [(4, 4)] * 3, seed=4)
    return draft(tokens, x, w_q, w_k, w_v, variant="alibi", n_heads=4,
                     title="ALiBi: each head looks as far back as its slope allows",
                     description="Identical tokens: the scores alone would spread the weights "
                                 "evenly over the past. Head 0 (slope 1/4) favours the nearest "
                                 "tokens; head 3 (slope 1/256) spreads almost evenly over the "
                                 "whole past.")



def loop_reference(inputs: Inputs):
    """Explicit loops: head h's logit is q·k·scale/τ − m_h·(i − j), causal."""
    slopes = alibi_slopes(inputs.n_heads)

    def logit(d_k):
        scaled_by = reference.scaled_logit(inputs, d_k)
        return lambda s, h, i, j: scaled_by(s, h, i, j) - float(slopes[h]) * (i - j)

    return reference.multi_head(inputs, logit, causal=True)


def to_steps(scenario) -> tuple:
    """ALiBi with the paper's slopes for the scenario's heads."""
    return (S.ALiBi(),)


VARIANT = Variant(
    key="alibi", name="ALiBi (linear biases)", order=100,
    description="Each head subtracts its slope times the query–key distance from the scores, "
                "so nearer tokens weigh more; no positional encoding is added.",
    formula=lambda w: (
        r"\mathrm{head}_h = " + softmax(scaled(r"Q_hK_h^\top", w) + r" - m_h\,(i - j)", w)
        + r"V_h,\quad m_h = 2^{-8(h+1)/n_{\text{heads}}}"),
    compute=compute, backward=dot_product_backward, causal=True, always_heads=True,
    presets=(Preset("alibi_local", "ALiBi: one slope per head", "hand-built", local_heads),),
    reference=loop_reference, to_steps=to_steps,
)
