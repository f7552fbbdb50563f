"""Plain ("general") dot-product attention: the scores are not scaled (Luong et al., 2015)."""

from dataclasses import replace

from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, sdpa
from attnviz.scenarios.variant import Inputs, Variant, dot_product, dot_product_backward


def compute(inputs: Inputs):
    """softmax(Q·Kᵀ / τ + M)·V: the scale is fixed at 1 whatever the scale mode."""
    return dot_product(inputs, scale=1.0)



def loop_reference(inputs: Inputs):
    """Explicit loops with the scale fixed at 1."""
    return reference.dot_product(inputs, scale=1.0)


VARIANT = Variant(
    key="dot_product", name="Dot-product (unscaled)", order=10,
    description="Plain dot-product ('general') attention: the scores are not scaled.",
    formula=lambda w: (sdpa(replace(w, scale="none")) + r",\quad " + PROJECTIONS),
    compute=compute, backward=dot_product_backward, scale_fixed=1.0, heads=True, direct=True,
    reference=loop_reference,
)
