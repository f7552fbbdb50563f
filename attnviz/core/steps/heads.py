"""Head structure: how many query heads, how many key/value heads they share, and W_O.

Multi-head attention (Vaswani et al., 2017, §3.2.2) has n_kv_heads = n_heads; grouped-query
attention (Ainslie et al., 2023) shares each key/value head between n_heads / n_kv_heads
consecutive query heads; multi-query attention (Shazeer, 2019) has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from attnviz.core.steps.base import Step, set_fields


@dataclass(frozen=True, eq=False)
class Heads(Step):
    """n_heads query heads reading n_kv_heads key/value heads; ``project_out``: the heads'
    outputs are concatenated and multiplied by W_O (a multi-head result even for one head).
    """

    n_heads: int = 1
    n_kv_heads: int = 0  # 0: as many as n_heads
    project_out: bool = False
    name: ClassVar[str] = "heads"
    kind: ClassVar[str] = "heads"
    title: ClassVar[str] = "Heads"

    def __post_init__(self):
        for label, value, low in (("n_heads", self.n_heads, 1), ("n_kv_heads", self.n_kv_heads, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 256:
                raise ValueError(f"{label} must be a whole number from {low} to 256, got "
                                 f"{value!r:.40}")
        if not isinstance(self.project_out, bool):
            raise ValueError("project_out must be true or false")
        n_kv = self.n_kv_heads or self.n_heads
        if self.n_heads % n_kv:
            raise ValueError(f"n_kv_heads ({n_kv}) must divide n_heads ({self.n_heads})")
        set_fields(self, n_kv_heads=n_kv)

    def kv_head(self, head: int) -> int:
        """The key/value head query head ``head`` reads: head // (n_heads / n_kv_heads)."""
        return head // (self.n_heads // self.n_kv_heads)

    def written(self) -> str:
        if self.n_kv_heads == self.n_heads:
            return r"\mathrm{head}_h = \mathrm{Attention}(Q_h, K_h, V_h)"
        return (r"\mathrm{head}_h = \mathrm{Attention}(Q_h, K_{g(h)}, V_{g(h)}),\quad g(h) = "
                r"\left\lfloor h \,/\, \tfrac{n_{\text{heads}}}{n_{\text{kv}}} \right\rfloor")
