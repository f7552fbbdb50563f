"""Normalisers: masked scores of one head to weights.

:class:`Softmax` is the softmax over the keys (a fully masked row gets weights 0).
:class:`SinkSoftmax` adds one learned logit per head as an extra column of each row's softmax,
dropped afterwards (OpenAI's gpt-oss, 2025; Hugging Face's ``eager_attention_forward`` there):
a row may put weight "nowhere", and its weights sum to 1 − (the sink's share).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core.numerics import stable_softmax
from attnviz.core.steps.base import Array, Normaliser, set_fields, vector


@dataclass(frozen=True, eq=False)
class Softmax(Normaliser):
    """softmax over the keys."""

    name: ClassVar[str] = "softmax"
    title: ClassVar[str] = "Softmax"

    def forward(self, masked: Array, head: int) -> tuple[Array, Array]:
        return stable_softmax(masked, axis=-1), np.zeros(masked.shape[:-1], masked.dtype)

    def written(self) -> str:
        return r"\alpha_{ij} = \frac{e^{\tilde s_{ij}}}{\sum_k e^{\tilde s_{ik}}}"


@dataclass(frozen=True, eq=False)
class SinkSoftmax(Normaliser):
    """softmax over the keys and a sink logit s_h (one per head), the sink's column dropped."""

    logits: tuple = (0.0,)
    name: ClassVar[str] = "sink_softmax"
    title: ClassVar[str] = "Softmax with a sink logit"

    def __post_init__(self):
        set_fields(self, logits=vector("the sink logits", self.logits))
        if not self.logits:
            raise ValueError("the sink logits must hold one number per head")

    def logit(self, head):
        """Head ``head``'s sink logit (one logit for every head when only one is given); an
        array of heads gives the array of their logits."""
        if np.ndim(head) == 0:
            return self.logits[head if len(self.logits) > 1 else 0]
        return np.asarray(self.logits)[head if len(self.logits) > 1 else np.zeros_like(head)]

    def forward(self, masked: Array, head) -> tuple[Array, Array]:
        sink = np.asarray(self.logit(head), dtype=masked.dtype)[..., None]  # against (..., t_q)
        top = np.maximum(masked.max(axis=-1), sink)  # finite: the sink is always there
        e = np.exp(masked - top[..., None])  # masked keys: exp(−inf) = 0
        e_sink = np.exp(sink - top)
        total = e.sum(axis=-1) + e_sink
        return e / total[..., None], e_sink / total

    def written(self) -> str:
        return (r"\alpha_{ij} = \frac{e^{\tilde s_{ij}}}{\sum_k e^{\tilde s_{ik}} + e^{s_h}},"
                r"\quad s_h\ \text{the head's sink logit}")
