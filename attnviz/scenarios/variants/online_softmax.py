"""FlashAttention's online softmax (Milakov & Gimelshein, 2018; Dao et al., 2022, Alg. 1).

The same attention as scaled dot-product, computed over tiles of ``tile`` keys with a running
maximum m, a running sum l and a running output that is rescaled whenever the maximum grows
(:func:`attnviz.core.online.online_softmax_attention`). The result equals the one-pass softmax
to rounding; the Inference page steps through the tiles. One head; Q, K and V may be given.
"""

import numpy as np

from attnviz.core.initializers import init_weights
from attnviz.core.online import online_softmax_attention
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft

PARAMS = (Param("tile", "Keys per tile", 2, low=1, high=256),)


def single_head_qkv(inputs: Inputs):
    """q, k, v of one head: the given Q, K, V in direct mode, else x·W_Q, x·W_K, x·W_V."""
    sc = inputs.scenario
    if sc.direct:
        return sc.q_in, sc.k_in, sc.v_in
    x = np.asarray(inputs.x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        return x @ sc.w_q, x @ sc.w_k, x @ sc.w_v


def compute(inputs: Inputs):
    """softmax(Q·Kᵀ·scale / τ + M)·V, tile by tile over the keys."""
    q, k, v = single_head_qkv(inputs)
    return online_softmax_attention(q, k, v, tile=inputs.scenario.param("tile"),
                                    mask=inputs.mask, scale=inputs.scale,
                                    temperature=inputs.temperature)


def tiles_of_two():
    """Hand-built: six tokens whose largest score arrives late, so the running max grows."""
    tokens = ["we", "read", "the", "whole", "long", "book"]
    x = np.round(init_weights("normal", [(6, 4)], seed=21)[0], 1)
    x[5] *= 3  # the last key scores highest: m jumps in the last tile
    w_q, w_k, w_v = (np.round(w, 2) for w in init_weights("glorot_uniform", [(4, 4)] * 3,
                                                           seed=22))
    return draft(tokens, x, w_q, w_k, w_v, variant="online_softmax", params={"tile": 2},
                     title="Online softmax: three tiles of two keys",
                     description="Step through the tiles on the Inference page: the running "
                                 "max m grows at the last tile, the partial sums are rescaled "
                                 "by exp(m_old − m_new), and the result equals the one-pass "
                                 "softmax to rounding.")



def loop_reference(inputs: Inputs):
    """Explicit loops over whole rows: the tiles must not change the result."""
    return reference.dot_product(inputs)


VARIANT = Variant(
    key="online_softmax", name="Online softmax (tiled)", order=130,
    description="The same attention computed over tiles of keys with a running max and sum "
                "(FlashAttention): no t × t matrix is kept between tiles.",
    formula=r"m \leftarrow \max(m, \max_j \tilde S_{ij}),\ "
            r"\ell \leftarrow e^{m_{\text{old}} - m}\ell + \sum_j e^{\tilde S_{ij} - m},\ "
            r"O \leftarrow e^{m_{\text{old}} - m} O + e^{\tilde S - m} V_j,\ "
            r"\text{output} = O / \ell,\quad " + PROJECTIONS,
    compute=compute, backward=dot_product_backward, direct=True, params=PARAMS,
    presets=(Preset("online_tiles", "Online softmax: three tiles of two keys", "hand-built",
                    tiles_of_two),),
    reference=loop_reference,
)
