"""QK-norm as a step: each row of a head's q and of its k RMS-normalised, times a gain per
dimension (Henry et al., 2020; RMSNorm as Qwen 3, Gemma 3 and OLMo 2 apply it, before RoPE).

``q_gain`` and ``k_gain`` hold one number (the same gain for every dimension) or one per
dimension of a head; ``eps`` is added under the root. Hugging Face's Gemma 3 RMSNorm multiplies
by (1 + w): its adapter gives the gain 1 + w.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from attnviz.core.qk_norm import rms_norm, rms_norm_backward
from attnviz.core.steps.base import Array, QKStep, number, set_fields, vector


@dataclass(frozen=True, eq=False)
class QKNorm(QKStep):
    """x / sqrt(mean(x²) + eps) ∘ g, for q with ``q_gain`` and for k with ``k_gain``."""

    q_gain: tuple = (1.0,)
    k_gain: tuple = (1.0,)
    eps: float = 1e-6
    name: ClassVar[str] = "qk_norm"
    title: ClassVar[str] = "QK-norm"

    def __post_init__(self):
        set_fields(self, q_gain=vector("the query gain", _listed(self.q_gain)),
                   k_gain=vector("the key gain", _listed(self.k_gain)),
                   eps=number("eps", self.eps, positive=True))

    def _gain(self, side: str, d: int):
        gain = self.q_gain if side == "q" else self.k_gain
        if len(gain) not in (1, d):
            raise ValueError(f"the {'query' if side == 'q' else 'key'} gain of QK-norm holds "
                             f"{len(gain)} numbers, one per dimension of a head of width "
                             f"{len(gain)}; it does not fit heads of width {d}")
        return gain[0] if len(gain) == 1 else gain

    def forward(self, x: Array, side: str, head: int) -> Array:
        return rms_norm(x, self._gain(side, x.shape[-1]), eps=self.eps)

    def backward(self, x: Array, d_y: Array, side: str, head: int) -> Array:
        return rms_norm_backward(x, d_y, self._gain(side, x.shape[-1]), eps=self.eps)

    def written(self) -> str:
        return (r"\hat q = \frac{q}{\sqrt{\mathrm{mean}(q^2) + \epsilon}} \circ g_q,\quad "
                r"\hat k = \frac{k}{\sqrt{\mathrm{mean}(k^2) + \epsilon}} \circ g_k")

    def written_vector(self, current: str, side: str) -> str:
        g = "g_q" if side == "q" else "g_k"
        return rf"\mathrm{{RMS}}\!\left({current}\right) \circ {g}"


def _listed(value):
    return (value,) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
