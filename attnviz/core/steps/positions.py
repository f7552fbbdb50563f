"""Positional steps: RoPE turns q and k by their positions; ALiBi adds a bias per distance.

RoPE: Su et al. (2021), RoFormer §3.4 (:mod:`attnviz.core.rope`): pair i of the query or key at
position p turned by p·θ_i, θ_i = base^(−2i/d_rot) or a model's own ``inv_freq`` (any scaled
RoPE), pairs split in halves or interleaved, on a leading fraction of each head, times an
attention scaling a (YaRN, LongRoPE). ALiBi: Press et al. (2022) §3: head h adds −m_h·(i − j)
to its scaled scores (``form="distance"``), or m_h·j as BLOOM and Falcon write it
(``form="key"``): the two differ by m_h·i, a constant per query row, which the softmax removes.
No positional step at all is NoPE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core.alibi import alibi_slopes
from attnviz.core.rope import LAYOUTS, apply_rope
from attnviz.core.score_mods import Bias, ScoreMod
from attnviz.core.steps.base import Array, HeadShape, QKStep, ScoreStep, number, set_fields, vector


@dataclass(frozen=True, eq=False)
class RoPE(QKStep):
    """Rotary position embedding of q and k (the values are not turned).

    Attributes
    ----------
    base : float
        θ_i = base^(−2i/d_rot) when ``inv_freq`` is empty.
    inv_freq : tuple of float
        A model's own θ_i, one per rotated pair (then d_rot = 2·len(inv_freq)).
    fraction : float
        Rotate the largest even number of dimensions within this fraction of the head width
        (when ``inv_freq`` is empty).
    layout : {"split_half", "interleaved"}
    attention_scaling : float
        a: multiplies the rotated q and k (q·k then scales by a²).
    offset : float
        Added to every position (the weights do not change: only distances count).
    """

    base: float = 10000.0
    inv_freq: tuple = ()
    fraction: float = 1.0
    layout: str = "split_half"
    attention_scaling: float = 1.0
    offset: float = 0.0
    name: ClassVar[str] = "rope"
    title: ClassVar[str] = "Rotary positions (RoPE)"

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"the pair layout must be one of {', '.join(LAYOUTS)}, got "
                             f"{str(self.layout)[:40]!r}")
        set_fields(self, base=number("the RoPE base", self.base, low=1.0, high=1e12),
                   inv_freq=vector("the frequencies inv_freq", self.inv_freq, positive=True)
                   if len(self.inv_freq) else (),
                   fraction=number("the rotated fraction", self.fraction, low=0.0, high=1.0),
                   attention_scaling=number("the attention scaling", self.attention_scaling,
                                            positive=True),
                   offset=number("the position offset", self.offset, low=-1e6, high=1e6))

    def rotated(self, d: int) -> int:
        """The number of rotated dimensions of a head of width ``d``.

        Raises
        ------
        ValueError
            If no pair is rotated, or the given frequencies need more dimensions than ``d``.
        """
        if self.inv_freq:
            d_rot = 2 * len(self.inv_freq)
            if d_rot > d:
                raise ValueError(f"RoPE's {len(self.inv_freq)} frequencies turn {d_rot} "
                                 f"dimensions, but a head has {d}")
            return d_rot
        d_rot = 2 * (int(d * self.fraction) // 2)
        if d_rot < 2:
            raise ValueError(f"the rotated fraction {self.fraction:g} of the head width "
                             f"d_k = {d} rotates no pair of dimensions; raise it or widen W_Q "
                             f"and W_K")
        return d_rot

    def _turn(self, x: Array, positions: Array) -> Array:
        d_rot = self.rotated(x.shape[-1])
        if self.inv_freq:
            return apply_rope(x, positions, layout=self.layout,
                              inv_freq=np.array(self.inv_freq),
                              attention_scaling=self.attention_scaling)
        return apply_rope(x, positions, base=self.base, layout=self.layout, d_rot=d_rot,
                          attention_scaling=self.attention_scaling)

    def forward(self, x: Array, side: str, head: int) -> Array:
        return self._turn(x, np.arange(x.shape[-2], dtype=float) + self.offset)

    def backward(self, x: Array, d_y: Array, side: str, head: int) -> Array:
        # a·R(p) is turned back by its transpose a·R(−p)
        return self._turn(d_y, -(np.arange(d_y.shape[-2], dtype=float) + self.offset))

    def written(self) -> str:
        theta = (r"\theta_i\ \text{from the model}" if self.inv_freq
                 else r"\theta_i = b^{-2i/d}")
        a = "" if self.attention_scaling == 1.0 else \
            rf",\quad a = {self.attention_scaling:.4g}"
        return rf"q_i \leftarrow R(p_i)\,q_i,\ k_j \leftarrow R(p_j)\,k_j,\quad {theta}{a}"

    def written_vector(self, current: str, side: str) -> str:
        a = "" if self.attention_scaling == 1.0 else r"a\,"
        p = "p_i" if side == "q" else "p_j"
        return rf"{a}R({p})\,{current}"


@dataclass(frozen=True, eq=False)
class ALiBi(ScoreStep):
    """Head h adds −m_h·(i − j) (``form="distance"``) or m_h·j (``form="key"``) to its scores.

    ``slopes``: one per head, or one for every head; empty: the paper's slopes for the number
    of heads.
    """

    slopes: tuple = ()
    form: str = "distance"
    name: ClassVar[str] = "alibi"
    title: ClassVar[str] = "ALiBi"

    def __post_init__(self):
        if self.form not in ("distance", "key"):
            raise ValueError(f"the ALiBi form must be distance or key, got {str(self.form)[:40]!r}")
        set_fields(self, slopes=vector("the ALiBi slopes", self.slopes) if len(self.slopes)
                   else ())

    def values(self, n_heads: int, t_q: int, t_k: int) -> Array:
        """Every head's bias, (n_heads, t_q, t_k)."""
        m = np.array(self.slopes, dtype=float) if self.slopes else alibi_slopes(n_heads)
        if m.size == 1:
            m = np.full(n_heads, m[0])
        if m.size != n_heads:
            raise ValueError(f"ALiBi has {m.size} slopes for {n_heads} heads; give one per head")
        if self.form == "key":
            where = np.broadcast_to(np.arange(t_k, dtype=float)[None, :], (t_q, t_k))
        else:
            where = -np.subtract.outer(np.arange(t_q), np.arange(t_k)).astype(float)
        return m[:, None, None] * where[None]

    def mod_for_writing(self) -> ScoreMod:
        n = max(len(self.slopes), 1)
        return self.mod(HeadShape(n, 1, 1, 1, np.ones((1, 1), dtype=bool)))

    def mod(self, shape: HeadShape) -> ScoreMod:
        meaning = r"b_{ij} = m_h\,j" if self.form == "key" else r"b_{ij} = -m_h\,(i - j)"
        return Bias(self.values(shape.n_heads, shape.t_q, shape.t_k), meaning=meaning)
