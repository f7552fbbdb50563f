"""Changes of the scores as steps: each makes the core's
:class:`~attnviz.core.score_mods.ScoreMod` (forward, derivative, written step, traced cell).

:class:`Scale` (1/√d_k or a given factor, and τ) is a step like any other; :class:`AddBias`
adds a given (n_heads, t_q, t_k) table; :class:`SSMax` multiplies query i's scores by
s·log n_i (Nakanishi, 2025), n_i the keys the mask lets it see; :class:`SoftCap` is
c·tanh(s / c) (Gemma 2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from attnviz.core import score_mods
from attnviz.core.score_mods import At, ScoreMod
from attnviz.core.steps.base import HeadShape, ScoreStep, number, set_fields


@dataclass(frozen=True, eq=False)
class Scale(ScoreStep):
    """s · scale / τ; ``scale`` None means 1/√d_k."""

    scale: float | None = None
    temperature: float = 1.0
    name: ClassVar[str] = "scale"
    title: ClassVar[str] = "Scale and temperature"

    def __post_init__(self):
        set_fields(self, scale=None if self.scale is None else
                   number("the scale", self.scale, low=0.0, high=1e6),
                   temperature=number("the temperature", self.temperature, positive=True))

    def factor(self, d_k: int) -> float:
        """The scale applied to heads of width ``d_k``."""
        return 1.0 / math.sqrt(d_k) if self.scale is None else self.scale

    def mod(self, shape: HeadShape) -> ScoreMod:
        return score_mods.Scale(self.factor(shape.d_k), self.temperature)

    def written(self) -> str:
        scale = r"\frac{1}{\sqrt{d_k}}" if self.scale is None else f"{self.scale:.4g}"
        tau = r" / \tau" if self.temperature != 1 else ""
        return rf"s'_{{ij}} = s_{{ij}} \cdot {scale}{tau}"


@dataclass(frozen=True, eq=False)
class AddBias(ScoreStep):
    """s + b[h, i, j]: a given bias table, one (t_q, t_k) matrix per head (or one for all)."""

    values: tuple = ()
    name: ClassVar[str] = "bias"
    title: ClassVar[str] = "Bias"

    def __post_init__(self):
        a = np.asarray(self.values, dtype=float)
        if a.ndim == 2:
            a = a[None]
        if a.ndim != 3 or not np.isfinite(a).all():
            raise ValueError("the bias must be a table of finite numbers, (t_q, t_k) or one per "
                             "head")
        set_fields(self, values=tuple(tuple(tuple(r) for r in m) for m in a.tolist()))

    def mod(self, shape: HeadShape) -> ScoreMod:
        a = np.asarray(self.values, dtype=float)
        try:
            a = np.broadcast_to(a, (shape.n_heads, shape.t_q, shape.t_k))
        except ValueError:
            raise ValueError(f"the bias must be (t_q, t_k) = ({shape.t_q}, {shape.t_k}) per "
                             f"head, got {a.shape}") from None
        return score_mods.Bias(a)

    def mod_for_writing(self) -> ScoreMod:
        return score_mods.Bias(np.zeros((1, 1, 1)))


@dataclass(frozen=True, eq=False)
class LogLengthScale(ScoreMod):
    """Query i's scores times s·log n_i (n_i: the keys it may attend; at least 1).

    Attributes
    ----------
    s : float
    n_keys : ndarray of int, shape (t_q,)
    """

    s: float
    n_keys: np.ndarray
    key: ClassVar[str] = "ssmax"
    title: ClassVar[str] = "Scale by s·log n (SSMax)"

    @property
    def factors(self) -> np.ndarray:
        """s·log n_i for every query i, shape (t_q,)."""
        return self.s * np.log(np.maximum(self.n_keys, 1))

    def forward(self, s, at: At):
        return s * self.factors[at.i]

    def derivative(self, s, out, at: At):
        return np.broadcast_to(self.factors[at.i], np.shape(s))

    def written(self, current: str) -> tuple[str, str]:
        return (rf"s^{{n}}_{{ij}} = s\,\log n_i \cdot {current},\quad n_i = "
                r"\#\{j : M_{ij}\}", "s^{n}_{ij}")

    def written_derivative(self, current: str) -> str:
        return r"s\log n_i \cdot "

    def written_matrix(self, current: str) -> str:
        return rf"s\,\log n_i \cdot {current}"

    def traced(self, before: float, after: float, at: At, num: Callable[[float], str]) -> str:
        n = int(max(self.n_keys[int(at.i)], 1))
        return (rf"{num(self.s)}\,\log {n} \times {num(before)} = "
                rf"{num(float(self.factors[int(at.i)]))} \times {num(before)} = {num(after)}")


@dataclass(frozen=True, eq=False)
class SSMax(ScoreStep):
    """Query i's scores times s·log n_i, n_i the keys the mask lets it attend."""

    s: float = 1.0
    name: ClassVar[str] = "ssmax"
    title: ClassVar[str] = "Scale by s·log n (SSMax)"

    def __post_init__(self):
        set_fields(self, s=number("s", self.s, low=0.0, high=1e3))

    def mod(self, shape: HeadShape) -> ScoreMod:
        return LogLengthScale(self.s, shape.mask.sum(axis=1))


@dataclass(frozen=True, eq=False)
class SoftCap(ScoreStep):
    """c · tanh(s / c) (Gemma 2)."""

    cap: float = 50.0
    name: ClassVar[str] = "softcap"
    title: ClassVar[str] = "Soft-capping"

    def __post_init__(self):
        set_fields(self, cap=number("the soft-cap c", self.cap, positive=True))

    def mod(self, shape: HeadShape) -> ScoreMod:
        return score_mods.SoftCap(self.cap)
