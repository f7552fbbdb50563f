"""Multi-head attention (Vaswani et al., 2017, §3.2.2): heads on column blocks, then W_O."""

from attnviz.scenarios import reference
from attnviz.scenarios.formulas import sdpa
from attnviz.scenarios.variant import Inputs, Variant, dot_product, dot_product_backward


def compute(inputs: Inputs):
    """``scenario.n_heads`` heads of scaled dot-product attention, concatenated, times W_O."""
    return dot_product(inputs, always_heads=True)



def loop_reference(inputs: Inputs):
    """Explicit loops per head, the heads side by side, times W_O."""
    return reference.dot_product(inputs, heads=True)


VARIANT = Variant(
    key="multi_head", name="Multi-head", order=50,
    description="h heads attend in parallel on column blocks of W_Q, W_K, W_V; their outputs "
                "are concatenated and projected by W_O.",
    formula=lambda w: (r"\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W_O,"
                       r"\quad \mathrm{head}_i = " + sdpa(w, r"Q_iK_i^\top", "V_i")),
    compute=compute, backward=dot_product_backward, heads=True, always_heads=True,
    reference=loop_reference,
)
