"""QK-norm as a step: each row of a head's q and of its k RMS-normalised, times a gain per
dimension (Henry et al., 2020; RMSNorm as Qwen 3 and Gemma 3 apply it, before RoPE), or one
RMSNorm over every head together seen from one head (:class:`QKNormAcross`, OLMo 2).

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

    def _row(self, side: str, what: str, head, d: int):
        """The head's row of a table; for an array of heads, their rows stacked to broadcast
        against (..., heads, t, d)."""
        table = getattr(self, f"{side}_{what}")
        name = f"{'query' if side == 'q' else 'key'} {what}"
        if len(table) > 1 and np.max(head) >= len(table):
            raise ValueError(f"QK-LayerNorm holds {len(table)} rows of the {name}, one per "
                             f"head; it has none for head {np.max(head)}")
        if len(table[0]) not in (1, d):
            raise ValueError(f"a row of the {name} of QK-LayerNorm holds {len(table[0])} "
                             f"numbers; it does not fit heads of width {d}")
        if np.ndim(head) and len(table) > 1:
            return np.asarray(table)[head][..., None, :]  # (heads, 1, 1 or d)
        row = table[head] if len(table) > 1 else table[0]
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


@dataclass(frozen=True, eq=False)
class QKNormAcross(QKStep):
    """One RMSNorm over every head's q together (and one over every key/value head's k), seen
    from one head: OLMo 2 normalises the whole projection, n_heads·d_k wide, before it splits
    it into heads.

    Row i of head h's q is divided by sqrt((‖q_i‖² + ρ_i) / D + eps), where ‖q_i‖² is this
    head's own sum of squares, ρ_i the other heads' (``q_rest``, recorded from the model) and
    D the width the mean runs over (``q_width``: n_heads·d_k); then it is multiplied by this
    head's slice of the gain. The other heads' share ρ is held fixed: an edit of this head's
    q changes only its own share, as the derivative with respect to it does (the other heads'
    q are other variables). With ρ = 0 and D = d_k it is :class:`QKNorm`.

    ``q_gain``, ``k_gain`` are tables as :class:`QKLayerNorm`'s (one row for every head, or
    one per query head: the key's row is that of the key/value head query head h reads);
    ``q_rest``, ``k_rest`` tables of one row per head (or one for every head) holding a number
    per position, or a single number for every position; ``q_width``, ``k_width`` None for a
    head's own width.
    """

    q_gain: tuple = ((1.0,),)
    k_gain: tuple = ((1.0,),)
    q_rest: tuple = ((0.0,),)
    k_rest: tuple = ((0.0,),)
    q_width: int | None = None
    k_width: int | None = None
    eps: float = 1e-6
    name: ClassVar[str] = "qk_norm_across"
    title: ClassVar[str] = "QK-norm across heads"

    def __post_init__(self):
        tables = {}
        for side in "qk":
            who = "query" if side == "q" else "key"
            tables[f"{side}_gain"] = vector(f"the {who} gain",
                                            _rows(getattr(self, f"{side}_gain")), ndim=2)
            rest = vector(f"the other heads' sum of squares of the {who}",
                          _rows(getattr(self, f"{side}_rest")), ndim=2)
            if any(v < 0 for row in rest for v in row):
                raise ValueError(f"the other heads' sum of squares of the {who} must be >= 0")
            tables[f"{side}_rest"] = rest
            width = getattr(self, f"{side}_width")
            if width is not None:
                if isinstance(width, bool) or not isinstance(width, (int, np.integer)) \
                        or width < 1:
                    raise ValueError(f"the {who} width the mean runs over must be a whole "
                                     f"number >= 1, got {width!r:.40}")
                width = int(width)
            tables[f"{side}_width"] = width
        set_fields(self, **tables, eps=number("eps", self.eps, positive=True))

    def _parts(self, side: str, head, x: Array):
        """(gain, the other heads' share per row (t, 1), the width D) for head ``head``; for
        an array of heads, their rows stacked to broadcast against (..., heads, t, d)."""
        t, d = x.shape[-2:]
        who = "query" if side == "q" else "key"
        rows = []
        for what in ("gain", "rest"):
            table = getattr(self, f"{side}_{what}")
            if len(table) > 1 and np.max(head) >= len(table):
                label = "gain" if what == "gain" else "other heads' share"
                raise ValueError(f"QK-norm across heads holds {len(table)} rows of the {who} "
                                 f"{label}, one per head; it has none for head {np.max(head)}")
            many = np.ndim(head) and len(table) > 1
            rows.append(np.asarray(table, dtype=float)[head] if many else
                        np.asarray(table[head] if len(table) > 1 else table[0], dtype=float))
        gain, rest = rows
        if gain.shape[-1] not in (1, d):
            raise ValueError(f"a row of the {who} gain of QK-norm across heads holds "
                             f"{gain.shape[-1]} numbers; it does not fit heads of width {d}")
        if rest.shape[-1] not in (1, t):
            raise ValueError(f"QK-norm across heads holds the other heads' share of the {who} "
                             f"for {rest.shape[-1]} positions; this sequence has {t}")
        width = getattr(self, f"{side}_width") or d
        if width < d:
            raise ValueError(f"QK-norm across heads takes the mean of the {who} over {width} "
                             f"dimensions, fewer than a head's {d}")
        return (gain[..., None, :] if gain.ndim > 1 else gain), rest[..., :, None], width

    def _root(self, x: Array, rest: Array, width: int) -> Array:
        """sqrt((Σ x² + ρ) / D + eps) per row, (t, 1)."""
        return np.sqrt((np.sum(x * x, axis=-1, keepdims=True) + rest) / width + self.eps)

    def forward(self, x: Array, side: str, head) -> Array:
        gain, rest, width = self._parts(side, head, x)
        with np.errstate(over="ignore", invalid="ignore"):
            return x / self._root(x, rest, width) * gain

    def backward(self, x: Array, d_y: Array, side: str, head) -> Array:
        """With r = sqrt((Σx² + ρ)/D + eps) and y = x / r ∘ g:
        ∂L/∂x = g ∘ dy / r − x · Σ(g ∘ dy ∘ x) / (D r³)."""
        gain, rest, width = self._parts(side, head, x)
        with np.errstate(over="ignore", invalid="ignore"):
            r = self._root(x, rest, width)
            g_dy = gain * d_y
            return g_dy / r - x * np.sum(g_dy * x, axis=-1, keepdims=True) / (width * r ** 3)

    def written(self) -> str:
        return (r"\hat q_i = \frac{q_i}{\sqrt{(\lVert q_i \rVert^2 + \rho^q_i) / D_q + "
                r"\epsilon}} \circ g_q,\quad \hat k_j = \frac{k_j}{\sqrt{(\lVert k_j \rVert^2 + "
                r"\rho^k_j) / D_k + \epsilon}} \circ g_k,\quad \rho_i = \textstyle"
                r"\sum_{h' \neq h} \lVert q^{(h')}_i \rVert^2 \text{ (the other heads', held "
                r"fixed)},\ D_q = n_{\text{heads}} d_k")

    def written_vector(self, current: str, side: str) -> str:
        return rf"\mathrm{{RMS}}_{{\text{{all heads}}}}\!\left({current}\right) \circ g_{side}"
