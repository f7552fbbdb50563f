"""LaTeX pieces the dot-product variants' formulas share."""

SDPA = r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}\,\tau} + M\right)V"
PROJECTIONS = r"Q = XW_Q,\ K = XW_K,\ V = XW_V"
