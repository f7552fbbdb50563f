"""Grouped-query and multi-query attention (Ainslie et al., 2023; Shazeer, 2019).

``n_heads`` query heads share ``n_kv_heads`` key/value heads: query head h uses key/value head
h // (n_heads / n_kv_heads) — consecutive query heads form a group (``repeat_interleave``,
PyTorch's ``enable_gqa``, Hugging Face's ``repeat_kv``). n_kv_heads = n_heads is multi-head
attention, n_kv_heads = 1 is multi-query attention; the KV cache shrinks by n_heads / n_kv_heads.

How the scenario holds the smaller W_K and W_V: it keeps them at the multi-head shape
(d_model, n_heads·d_k) and the variant uses their first ``n_kv_heads`` column blocks; the other
blocks are ignored. So switching between Multi-head and GQA, or moving the ``n_kv_heads``
setting, needs no resizing of the matrices the user has edited, files and links keep one shape
rule for every variant, and n_kv_heads = n_heads is exactly the multi-head variant on the same
scenario. The default, n_kv_heads = 1 (multi-query), divides every head count, so the variant
computes on any scenario.
"""

import numpy as np

from attnviz.core import steps as S
from attnviz.core.initializers import init_weights
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import sdpa
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.heads import attend, project_heads

PARAMS = (Param("n_kv_heads", "Key/value heads", 1, low=1, high=16),)


def compute(inputs: Inputs):
    """Multi-head attention whose heads share ``n_kv_heads`` key/value heads, times W_O."""
    n_kv = inputs.scenario.param("n_kv_heads")
    if inputs.n_heads % n_kv:
        choices = ", ".join(str(h) for h in range(1, inputs.n_heads + 1)
                            if inputs.n_heads % h == 0)
        raise ValueError(f"n_kv_heads ({n_kv}) must divide n_heads ({inputs.n_heads}); "
                         f"valid choices: {choices}")
    q_h, k_h, v_h = project_heads(inputs, n_kv_heads=n_kv)
    return attend(inputs, q_h, k_h, v_h, always_heads=True)


def eight_on_two():
    """Hand-built: 8 query heads sharing 2 key/value heads (groups of 4)."""
    tokens = ["I", "saw", "a", "cat", "on", "the", "mat"]
    x = np.round(init_weights("normal", [(7, 4)], seed=5)[0], 1)
    # 8 heads of width d_k = d_v = 2; rounded so that the numbers read (and the link is short)
    w_q, w_k, w_v = (np.round(w, 2) for w in init_weights("glorot_uniform", [(4, 16)] * 3,
                                                           seed=8))
    w_o = np.round(init_weights("glorot_uniform", [(16, 4)], seed=9)[0], 2)
    return draft(tokens, x, 2 * w_q, 2 * w_k, w_v, w_o=w_o, variant="gqa", n_heads=8,
                     params={"n_kv_heads": 2},
                     title="Grouped-query attention: 8 query heads, 2 key/value heads",
                     description="Heads 0-3 share the first key/value head and heads 4-7 the "
                                 "second: the KV cache is 4 times smaller than with 8 "
                                 "key/value heads, while every head keeps its own queries.")



def loop_reference(inputs: Inputs):
    """Explicit loops per query head, reading key/value head h // (n_heads / n_kv_heads)."""
    return reference.multi_head(inputs, lambda d_k: reference.scaled_logit(inputs, d_k),
                                n_kv=inputs.scenario.param("n_kv_heads"))


def to_steps(scenario) -> tuple:
    """n_heads query heads on n_kv_heads key/value heads, and W_O."""
    return (S.Heads(scenario.n_heads, scenario.param("n_kv_heads"), project_out=True),)


VARIANT = Variant(
    key="gqa", name="Grouped-query (GQA)", order=90,
    description="Groups of query heads share one key/value head (n_kv_heads = n_heads: "
                "multi-head; 1: multi-query, MQA), shrinking the KV cache.",
    formula=lambda w: (
        r"\mathrm{head}_h = " + sdpa(w, r"Q_h K_{g(h)}^\top", "V_{g(h)}") + r",\quad "
        r"g(h) = \left\lfloor h \,/\, \tfrac{n_{\text{heads}}}{n_{\text{kv}}} \right\rfloor"),
    compute=compute, backward=dot_product_backward, always_heads=True, params=PARAMS,
    presets=(Preset("gqa_8_2", "GQA: 8 query heads, 2 key/value heads", "hand-built",
                    eight_on_two),),
    reference=loop_reference, to_steps=to_steps,
)
