"""Additive attention (Bahdanau et al., 2015): a small network scores each query–key pair."""

import math

import numpy as np

from attnviz.core.additive import additive_attention
from attnviz.core.backward import additive_backward
from attnviz.core.initializers import init_weights
from attnviz.scenarios import reference
from attnviz.scenarios.variant import Inputs, Preset, Variant
from attnviz.scenarios.variants.cross import translation


def compute(inputs: Inputs):
    """e_ij = v_aᵀ tanh(q_i W_q + k_j W_k), α = softmax_j(e), c_i = Σ_j α_ij v_j (source rows)."""
    sc = inputs.scenario
    return additive_attention(inputs.x, inputs.source, inputs.source, sc.w_a_q, sc.w_a_k,
                              sc.v_a, mask=inputs.mask)


def backward(inputs: Inputs, result, d_output, d_weights):
    """Back through the context, the softmax, v_a and the tanh network (keys = values =
    the source, whose gradient is the sum of both roles)."""
    sc = inputs.scenario
    g = additive_backward(result, inputs.x, inputs.source, inputs.source, sc.w_a_q, sc.w_a_k,
                          sc.v_a, d_output, d_weights=d_weights)
    return g, {"x": g.d_query, "source_x": g.d_keys + g.d_values, "w_a_q": g.d_w_q,
               "w_a_k": g.d_w_k, "v_a": g.d_v_a}


def bahdanau():
    """Hand-built: additive attention on the translation example."""
    w_a_q, w_a_k, v_a = init_weights("normal", [(4, 3), (4, 3), (1, 3)], seed=11)
    return translation().with_fields(
        variant="additive", w_a_q=w_a_q, w_a_k=w_a_k, v_a=v_a[0],
        title="Additive (Bahdanau) attention",
        description="A one-layer network scores each decoder-encoder pair; the weights form "
                    "the context vector for each target word.")



def loop_reference(inputs: Inputs):
    """Explicit loops: e_ij = Σ_a v_a,a · tanh(Σ_m x_im W_q,ma + Σ_m s_jm W_k,ma), keys and
    values the source rows."""
    sc = inputs.scenario
    x, src = inputs.x, inputs.source
    ok = reference.allowed(inputs, len(x), len(src))
    weights, output = np.zeros((len(x), len(src))), np.zeros((len(x), src.shape[1]))
    for i in range(len(x)):
        logits = {}
        for j in range(len(src)):
            if ok[i][j]:
                logits[j] = math.fsum(
                    float(sc.v_a[a]) * math.tanh(reference.dot(x[i], sc.w_a_q[:, a])
                                                 + reference.dot(src[j], sc.w_a_k[:, a]))
                    for a in range(len(sc.v_a)))
        weights[i] = reference.softmax_row(logits, len(src))
        for j in range(len(src)):
            output[i] += weights[i, j] * src[j]
    return weights[None], output


VARIANT = Variant(
    key="additive", name="Additive (Bahdanau)", order=70,
    description="A small feed-forward network scores each query–key pair: "
                "e = v_aᵀ tanh(W_q q + W_k k).",
    formula=r"e_{ij} = v_a^\top \tanh\!\left(q_i W_q + k_j W_k\right),\quad "
            r"\alpha_{ij} = \mathrm{softmax}_j(e_{ij}),\quad c_i = \sum_j \alpha_{ij} v_j",
    compute=compute, backward=backward, keys_from_source=True, projections=False,
    parts=("source", "additive"),
    presets=(Preset("bahdanau", "Additive (Bahdanau) attention", "hand-built", bahdanau),),
    reference=loop_reference,
)
