"""Bidirectional self-attention (encoders, BERT): the same computation as scaled dot-product."""

from attnviz.scenarios import reference
from attnviz.scenarios.formulas import sdpa, with_mask
from attnviz.scenarios.variant import Inputs, Variant, dot_product, dot_product_backward


def compute(inputs: Inputs):
    """Scaled dot-product attention with no mask of its own (only the user's)."""
    return dot_product(inputs)



def loop_reference(inputs: Inputs):
    """Explicit loops, the user's mask only."""
    return reference.dot_product(inputs)


VARIANT = Variant(
    key="bidirectional", name="Bidirectional attention", order=40,
    description="Bidirectional self-attention: each token attends to every token, before and "
                "after it (encoders, BERT).",
    formula=lambda w: with_mask(sdpa(w), w, r"M \text{: only padding masked}"),
    compute=compute, backward=dot_product_backward, heads=True, direct=True,
    same_as="scaled_dot_product",
    reference=loop_reference,
)
