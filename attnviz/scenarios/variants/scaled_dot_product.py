"""Scaled dot-product attention (Vaswani et al., 2017, §3.2.1)."""

from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, sdpa
from attnviz.scenarios.variant import Inputs, Variant, dot_product, dot_product_backward


def compute(inputs: Inputs):
    """softmax(Q·Kᵀ·scale / τ + M)·V with the scenario's scale (1/√d_k by default)."""
    return dot_product(inputs)



def loop_reference(inputs: Inputs):
    """Explicit loops with the scenario's scale."""
    return reference.dot_product(inputs)


VARIANT = Variant(
    key="scaled_dot_product", name="Scaled dot-product", order=20,
    description="Scores divided by √d_k so the softmax does not saturate as d_k grows.",
    formula=lambda w: (sdpa(w) + r",\quad " + PROJECTIONS),
    compute=compute, backward=dot_product_backward, heads=True, direct=True,
    reference=loop_reference,
)
