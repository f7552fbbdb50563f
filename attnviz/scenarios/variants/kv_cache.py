"""KV-cache decoding: prefill, then one token at a time against the cached keys and values.

Causal self-attention computed as a decoder does (:func:`attnviz.core.decode.cached_decoding`):
the first ``prefill`` tokens in one call, then each later token's query against the growing
cache, with the causal mask aligned bottom-right. The rows equal full causal attention (the
Inference page steps through the calls and shows the largest difference). One head.

A prefill longer than the sequence is read as the whole sequence (one call); the Inference page
says so.
"""

from dataclasses import replace

import numpy as np

from attnviz.core.decode import cached_decoding
from attnviz.core.initializers import init_weights
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, scaled, softmax
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.online_softmax import single_head_qkv

PARAMS = (Param("prefill", "Prompt tokens (prefill)", 2, low=1, high=256),)


def compute(inputs: Inputs):
    """Causal attention, assembled from the prefill call and one call per decoded token."""
    q, k, v = single_head_qkv(inputs)
    prefill = min(inputs.scenario.param("prefill"), np.shape(q)[0])
    return cached_decoding(q, k, v, prefill=prefill, mask=inputs.mask, scale=inputs.scale,
                           temperature=inputs.temperature)


def six_tokens():
    """Hand-built: a prompt of two tokens, then four decoded one by one."""
    tokens = ["Once", "upon", "a", "time", "there", "was"]
    x = np.round(init_weights("normal", [(6, 4)], seed=31)[0], 1)
    w_q, w_k, w_v = (np.round(w, 2) for w in init_weights("glorot_uniform", [(4, 4)] * 3,
                                                           seed=32))
    return draft(tokens, x, w_q, w_k, w_v, variant="kv_cache", params={"prefill": 2},
                     use_pe=True,
                     title="KV-cache decoding: a prompt of 2, then 4 tokens one by one",
                     description="Each decoding step computes one query row against the cached "
                                 "keys and values; the rows equal full causal attention. The "
                                 "cache grows by one key and one value per token.")



def loop_reference(inputs: Inputs):
    """Explicit loops of full causal attention: the cache must not change the result."""
    return reference.dot_product(inputs, causal=True)


VARIANT = Variant(
    key="kv_cache", name="KV-cache decoding", order=140,
    description="Causal attention as a decoder computes it: the prompt at once, then each new "
                "token's query against the cached keys and values.",
    formula=lambda w: (  # the cache holds the keys so far: causal by construction, no M
        "o_t = " + softmax(scaled(r"q_t\,[k_0 \dots k_t]^\top", w), replace(w, masked=False))
        + r"[v_0 \dots v_t],\quad K_{\text{cache}} \leftarrow [K_{\text{cache}}; k_t],"
        r"\quad " + PROJECTIONS),
    compute=compute, backward=dot_product_backward, causal=True, params=PARAMS,
    presets=(Preset("kv_decoding", "KV-cache decoding of 6 tokens", "hand-built", six_tokens),),
    reference=loop_reference,
)
