"""QK-norm as a step: each row of a head's q and of its k RMS-normalised, times a gain per
dimension (Henry et al., 2020; RMSNorm as Qwen 3, Gemma 3 and OLMo 2 apply it, before RoPE).

``q_gain`` and ``k_gain`` hold one number (the same gain for every dimension) or one per
dimension of a head; ``eps`` is added under the root. Hugging Face's Gemma 3 RMSNorm multiplies
by (1 + w): its adapter gives the gain 1 + w.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core.qk_norm import layer_norm, layer_norm_backward, rms_norm, rms_norm_backward
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


@dataclass(frozen=True, eq=False)
class QKLayerNorm(QKStep):
    """(x − mean x) / sqrt(var x + eps) ∘ g + b for each row of q and of k: LayerNorm's QK-norm
    (Phi's one LayerNorm for every head, StableLM's one per head, before partial RoPE).

    ``q_gain``, ``k_gain``, ``q_bias``, ``k_bias`` are tables: one row for every head, or one
    row per query head (row h for query head h; the key's row is that of the key/value head
    query head h reads), each row one number per dimension of a head or a single number."""

    q_gain: tuple = ((1.0,),)
    k_gain: tuple = ((1.0,),)
    q_bias: tuple = ((0.0,),)
    k_bias: tuple = ((0.0,),)
    eps: float = 1e-5
    name: ClassVar[str] = "qk_layernorm"
    title: ClassVar[str] = "QK-LayerNorm"

    def __post_init__(self):
        tables = {}
        for side in "qk":
            for what in ("gain", "bias"):
                name = f"the {'query' if side == 'q' else 'key'} {what}"
                tables[f"{side}_{what}"] = vector(name, _rows(getattr(self, f"{side}_{what}")),
                                                  ndim=2)
        set_fields(self, **tables, eps=number("eps", self.eps, positive=True))

    def _row(self, side: str, what: str, head: int, d: int):
        table = getattr(self, f"{side}_{what}")
        name = f"{'query' if side == 'q' else 'key'} {what}"
        if len(table) > 1 and head >= len(table):
            raise ValueError(f"QK-LayerNorm holds {len(table)} rows of the {name}, one per "
                             f"head; it has none for head {head}")
        row = table[head] if len(table) > 1 else table[0]
        if len(row) not in (1, d):
            raise ValueError(f"a row of the {name} of QK-LayerNorm holds {len(row)} numbers; "
                             f"it does not fit heads of width {d}")
        return row[0] if len(row) == 1 else np.asarray(row)

    def forward(self, x: Array, side: str, head: int) -> Array:
        d = x.shape[-1]
        return layer_norm(x, self._row(side, "gain", head, d), self._row(side, "bias", head, d),
                          eps=self.eps)

    def backward(self, x: Array, d_y: Array, side: str, head: int) -> Array:
        return layer_norm_backward(x, d_y, self._row(side, "gain", head, x.shape[-1]),
                                   eps=self.eps)

    def written(self) -> str:
        return (r"\hat q = \frac{q - \bar q}{\sqrt{\mathrm{var}(q) + \epsilon}} \circ g_q + b_q,"
                r"\quad \hat k = \frac{k - \bar k}{\sqrt{\mathrm{var}(k) + \epsilon}} \circ g_k"
                r" + b_k")

    def written_vector(self, current: str, side: str) -> str:
        return rf"\mathrm{{LN}}\!\left({current}\right) \circ g_{side} + b_{side}"


def _rows(value):
    """A number -> one row of one number; a list of numbers -> one row."""
    value = _listed(value)
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return (tuple(value),)
    return value
