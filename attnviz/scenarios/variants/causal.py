"""Causal (masked) self-attention: decoders, GPT (Vaswani et al., 2017, §3.2.3)."""

import numpy as np

from attnviz.core.initializers import init_weights
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import sdpa, with_mask
from attnviz.scenarios.variant import (
    Inputs,
    Preset,
    Variant,
    dot_product,
    dot_product_backward,
    draft,
)


def compute(inputs: Inputs):
    """Scaled dot-product attention with the causal mask added to the user's."""
    return dot_product(inputs, causal=True)


def cat_sat():
    """Hand-built: a repeated word, causal attention, positional encoding on."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    x = np.array([[1.0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0.5, 0, 0, 1], [1, 0, 0, 0],
                  [0, 1, 1, 0]])
    w_q, w_k, w_v = init_weights("glorot_uniform", [(4, 4)] * 3, seed=1)
    return draft(tokens, x, w_q, w_k, w_v, variant="causal", use_pe=True,
                     title="The cat sat on the mat (causal, with PE)",
                     description="'the' appears twice: identical embeddings, but positional "
                                 "encoding makes its two copies attend differently.")



def loop_reference(inputs: Inputs):
    """Explicit loops with j <= i."""
    return reference.dot_product(inputs, causal=True)


VARIANT = Variant(
    key="causal", name="Causal self-attention", order=30,
    description="Each token attends only to itself and earlier tokens (decoders, GPT).",
    formula=lambda w: with_mask(sdpa(w), w, r"M_{ij} = (j \le i)"),
    compute=compute, backward=dot_product_backward, causal=True, heads=True, direct=True,
    presets=(Preset("cat_sat", "The cat sat on the mat (causal + PE)", "hand-built", cat_sat),),
    reference=loop_reference,
)
