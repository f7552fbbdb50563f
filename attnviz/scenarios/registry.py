"""The variants the dashboard offers, written down once.

Each :class:`Variant` names the core function to call, the settings it fixes, a one-line
description and the LaTeX formula shown beside the heatmaps. Pages, docs and tests read from
:data:`VARIANTS` only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from attnviz.core.additive import additive_attention
from attnviz.core.attention import (
    cross_attention,
    multi_head_attention,
    self_attention,
)


@dataclass(frozen=True)
class Variant:
    """One attention variant.

    Attributes
    ----------
    key : str
        Identifier stored in scenarios and URLs.
    name : str
        Human name.
    description : str
        One sentence.
    formula : str
        LaTeX of what the function computes.
    function : callable
        The core function that computes it.
    kind : {"self", "cross", "multi_head", "additive"}
        How a scenario's inputs are passed to ``function``.
    fixed : mapping
        Keyword arguments the variant fixes (e.g. ``scale=1.0`` or ``causal=True``).
    """

    key: str
    name: str
    description: str
    formula: str
    function: Callable[..., Any]
    kind: str
    fixed: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    @property
    def uses_source(self) -> bool:
        """True when keys and values come from a second (source) sequence."""
        return self.kind in ("cross", "additive")


def _variant(key, name, description, formula, function, kind, **fixed) -> Variant:
    return Variant(key, name, description, formula, function, kind, MappingProxyType(fixed))


_SDPA = r"\mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}\,\tau} + M\right)V"

VARIANTS: MappingProxyType[str, Variant] = MappingProxyType({v.key: v for v in (
    _variant("dot_product", "Dot-product (unscaled)",
             "Plain dot-product ('general') attention: the scores are not scaled.",
             r"\mathrm{softmax}\!\left(\frac{QK^\top}{\tau} + M\right)V,\quad Q = XW_Q,\ "
             r"K = XW_K,\ V = XW_V",
             self_attention, "self", scale=1.0),
    _variant("scaled_dot_product", "Scaled dot-product",
             "Scores divided by √d_k so the softmax does not saturate as d_k grows.",
             _SDPA + r",\quad Q = XW_Q,\ K = XW_K,\ V = XW_V",
             self_attention, "self"),
    _variant("causal", "Causal self-attention",
             "Each token attends only to itself and earlier tokens (decoders, GPT).",
             _SDPA + r",\quad M_{ij} = \begin{cases}0 & j \le i\\ -\infty & j > i\end{cases}",
             self_attention, "self", causal=True),
    _variant("bidirectional", "Bidirectional self-attention",
             "Each token attends to every token, before and after it (encoders, BERT).",
             _SDPA + r",\quad M = 0 \text{ (only padding masked)}",
             self_attention, "self"),
    _variant("multi_head", "Multi-head",
             "h heads attend in parallel on column blocks of W_Q, W_K, W_V; their outputs are "
             "concatenated and projected by W_O.",
             r"\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W_O,\quad "
             r"\mathrm{head}_i = \mathrm{softmax}\!\left(\frac{Q_iK_i^\top}{\sqrt{d_k}\,\tau}"
             r" + M\right)V_i",
             multi_head_attention, "multi_head"),
    _variant("cross", "Cross-attention (encoder–decoder)",
             "Queries come from the target sequence, keys and values from the source sequence.",
             _SDPA + r",\quad Q = X_{\text{tgt}}W_Q,\ K = X_{\text{src}}W_K,\ "
             r"V = X_{\text{src}}W_V",
             cross_attention, "cross"),
    _variant("additive", "Additive (Bahdanau)",
             "A small feed-forward network scores each query–key pair: "
             "e = v_aᵀ tanh(W_q q + W_k k).",
             r"e_{ij} = v_a^\top \tanh\!\left(q_i W_q + k_j W_k\right),\quad "
             r"\alpha_{ij} = \mathrm{softmax}_j(e_{ij}),\quad c_i = \sum_j \alpha_{ij} v_j",
             additive_attention, "additive"),
)})
