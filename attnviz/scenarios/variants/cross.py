"""Cross-attention (encoder–decoder): queries from the target, keys and values from the source."""

import numpy as np

from attnviz.scenarios import reference
from attnviz.scenarios.formulas import sdpa
from attnviz.scenarios.variant import (
    Inputs,
    Preset,
    Variant,
    dot_product,
    dot_product_backward,
    draft,
)


def compute(inputs: Inputs):
    """Scaled dot-product attention of the main sequence's queries on the source's keys."""
    return dot_product(inputs)


def translation():
    """Hand-built: encoder–decoder attention from English to French."""
    src = ["the", "black", "cat"]
    tgt = ["le", "chat", "noir"]
    src_x = np.array([[1.0, 0, 0, 0], [0, 1, 0, 0.5], [0, 0, 1, 0]])
    tgt_x = np.array([[0.9, 0, 0.1, 0], [0, 0.1, 0.9, 0], [0, 0.9, 0, 0.4]])
    w = np.eye(4) * 2.0
    return draft(tgt, tgt_x, w, w, np.eye(4), variant="cross", source_tokens=tuple(src),
                     source_x=src_x,
                     title="Translation: the black cat → le chat noir (cross-attention)",
                     description="Each French word (query) looks for its English counterpart "
                                 "(keys): 'chat' attends to 'cat' although the word order "
                                 "differs.")



def loop_reference(inputs: Inputs):
    """Explicit loops: queries from x, keys and values from the source."""
    return reference.dot_product(inputs)


VARIANT = Variant(
    key="cross", name="Cross-attention", order=60,
    description="Encoder–decoder attention: queries come from the target sequence, keys and "
                "values from the source sequence.",
    formula=lambda w: (sdpa(w) + r",\quad Q = X_{\text{tgt}}W_Q,\ "
                       r"K = X_{\text{src}}W_K,\ V = X_{\text{src}}W_V"),
    compute=compute, backward=dot_product_backward, keys_from_source=True, parts=("source",),
    presets=(Preset("translation", "Translation (cross-attention)", "hand-built", translation),),
    reference=loop_reference,
)
