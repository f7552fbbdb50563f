"""Score modifiers: each change to the scores between q·kᵀ and the softmax, as one small unit.

The model is FlexAttention's ``score_mod(score, b, h, q_idx, kv_idx)`` (PyTorch; the
attention-gym zoo): an element-wise function of a score and where it sits. Here a modifier
carries everything that depends on it in one place::

    forward(s, at)              the modified scores
    derivative(s, out, at)      ∂out/∂s, element-wise (None: the identity, 1)
    written(current)            its step in the teaching formulas, in LaTeX
    traced(before, after, at, num)   that step for one cell, with the numbers

The engine (:func:`attnviz.core.attention.attend_heads`) applies a result's modifiers in order
and records them on the result (``score_mods``); the backward pass
(:func:`attnviz.core.backward.attention_backward`), the row explanation
(:func:`attnviz.core.explain.explain_row`), Trace a cell and the formulas loop over what a
result recorded, so no caller passes a setting twice or forgets one. The first modifier of
every dot-product result is :class:`Scale` (scale / τ); variants add theirs after it
(:class:`Bias`: ALiBi; :class:`SoftCap`: Gemma 2, always last). A new element-wise change of
the scores is a subclass of :class:`ScoreMod` in its variant's module.

Masks, attention sinks (a logit that joins the softmax) and changes of q and k (RoPE,
QK-norm) are not score modifiers: they have their own steps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import as_array, check_positive

Array = NDArray[np.floating]


class At(NamedTuple):
    """Where scores sit: head, query and key indices, integer arrays broadcastable to the
    scores' shape (FlexAttention's h, q_idx, kv_idx)."""

    h: NDArray[np.intp]
    i: NDArray[np.intp]
    j: NDArray[np.intp]

    @classmethod
    def grid(cls, n_heads: int, t_q: int, t_k: int) -> At:
        """Every score of (n_heads, t_q, t_k) stacked heads."""
        return cls(np.arange(n_heads)[:, None, None], np.arange(t_q)[None, :, None],
                   np.arange(t_k)[None, None, :])

    @classmethod
    def head(cls, h: int, t_q: int, t_k: int) -> At:
        """Every score of head ``h``: a (t_q, t_k) matrix."""
        return cls(np.intp(h), np.arange(t_q)[:, None], np.arange(t_k)[None, :])

    @classmethod
    def row(cls, h: int, i: int, t_k: int) -> At:
        """Query ``i``'s row of head ``h``: a (t_k,) vector."""
        return cls(np.intp(h), np.intp(i), np.arange(t_k))


@dataclass(frozen=True, eq=False)
class ScoreMod(ABC):
    """An element-wise change of the scores (the base of every modifier; a subclass that lacks
    one of the abstract methods cannot be made).

    Attributes
    ----------
    key : str
        Names the step (``"scale"``, ``"bias"``, ``"cap"``, ...): the key of its formula and
        of its title in the teaching text.
    title : str
        The step's title where the teaching text has none of its own.
    """

    key: ClassVar[str] = "mod"
    title: ClassVar[str] = "Change of the scores"

    @abstractmethod
    def forward(self, s: Array, at: At) -> Array:
        """The modified scores (a new array of the same shape and dtype)."""

    @abstractmethod
    def derivative(self, s: Array, out: Array, at: At) -> Array | float | None:
        """∂out/∂s element-wise, given the input ``s`` and the output ``out`` of
        :meth:`forward`; None for the identity."""

    @abstractmethod
    def written(self, current: str) -> tuple[str, str]:
        """(the LaTeX formula of this step, the symbol it produces) given the LaTeX symbol of
        the score it receives, e.g. ``s'_{ij}``."""

    def written_derivative(self, current: str) -> str:
        """The LaTeX factor this step puts in dS (``""`` for the identity); ``current`` is the
        symbol of its output."""
        return ""

    def written_matrix(self, current: str) -> str:
        """This step applied to the whole matrix ``current`` (LaTeX), as a chart's title
        writes it: the default names the step by its title."""
        return rf"\mathrm{{{self.key}}}\!\left({current}\right)"

    @abstractmethod
    def traced(self, before: float, after: float, at: At, num: Callable[[float], str]) -> str:
        """This step for one cell with its numbers, in LaTeX (``at`` holds scalars; ``num``
        writes a number as the caller's view does)."""


@dataclass(frozen=True, eq=False)
class Scale(ScoreMod):
    """s · scale / τ — the first modifier of every dot-product result (one multiplication by
    the factor scale / τ, computed once in Python floats)."""

    scale: float
    temperature: float = 1.0
    key: ClassVar[str] = "scaled"
    title: ClassVar[str] = "Scale and temperature"

    @property
    def factor(self) -> float:
        """scale / τ."""
        return self.scale / self.temperature

    def forward(self, s: Array, at: At) -> Array:
        return s * s.dtype.type(self.factor)

    def derivative(self, s: Array, out: Array, at: At) -> float:
        return s.dtype.type(self.factor)

    def written_factor(self) -> str:
        """The factor in LaTeX: scale / τ, or scale alone at τ = 1 (the one place a
        modifier's formula writes τ)."""
        return r"\frac{\text{scale}}{\tau}" if self.temperature != 1 else r"\text{scale}"

    def written(self, current: str) -> tuple[str, str]:
        return rf"s'_{{ij}} = {current} \cdot {self.written_factor()}", "s'_{ij}"

    def written_derivative(self, current: str) -> str:
        return self.written_factor()

    def traced(self, before: float, after: float, at: At, num: Callable[[float], str]) -> str:
        return rf"{num(before)} \times {num(self.factor)} = {num(after)}"


@dataclass(frozen=True, eq=False)
class Bias(ScoreMod):
    """s + b[h, i, j]: a bias added to the scaled scores (ALiBi; PyTorch's float attn_mask).

    Attributes
    ----------
    values : ndarray of shape (n_heads, t_q, t_k)
    meaning : str
        LaTeX that defines b_ij in the formulas (e.g. ALiBi's ``b_{ij} = -m_h\\,(i - j)``).
    """

    values: Array
    meaning: str = ""
    key: ClassVar[str] = "bias"
    title: ClassVar[str] = "Bias"

    def forward(self, s: Array, at: At) -> Array:
        return s + self.values[at.h, at.i, at.j]

    def derivative(self, s: Array, out: Array, at: At) -> None:
        return None

    def written(self, current: str) -> tuple[str, str]:
        meaning = rf",\quad {self.meaning}" if self.meaning else ""
        return rf"s^{{b}}_{{ij}} = {current} + b_{{ij}}{meaning}", "s^{b}_{ij}"

    def traced(self, before: float, after: float, at: At, num: Callable[[float], str]) -> str:
        return rf"{num(before)} + ({num(float(self.values[at.h, at.i, at.j]))}) = {num(after)}"

    def written_matrix(self, current: str) -> str:
        return rf"{current} + B"


@dataclass(frozen=True, eq=False)
class SoftCap(ScoreMod):
    """c · tanh(s / c): logit soft-capping (Gemma 2; Team Gemma 2024, §2), nearly the identity
    for |s| ≪ c and never beyond ±c."""

    cap: float
    key: ClassVar[str] = "cap"
    title: ClassVar[str] = "Soft-capping"

    def forward(self, s: Array, at: At) -> Array:
        return self.cap * np.tanh(s / s.dtype.type(self.cap))

    def derivative(self, s: Array, out: Array, at: At) -> Array:
        return 1 - (out / self.cap) ** 2  # 1 − tanh²(s/c), read from the output

    def written(self, current: str) -> tuple[str, str]:
        return rf"\hat s_{{ij}} = c\,\tanh\!\left({current} / c\right)", r"\hat s_{ij}"

    def written_derivative(self, current: str) -> str:
        return rf"\left(1 - (\tilde S / {self.cap:g})^2\right) \circ "

    def traced(self, before: float, after: float, at: At, num: Callable[[float], str]) -> str:
        return rf"{num(self.cap)}\,\tanh({num(before)} / {num(self.cap)}) = {num(after)}"

    def written_matrix(self, current: str) -> str:
        return rf"c\,\tanh\!\left(\frac{{{current}}}{{c}}\right)"


class QKScoreMod(ScoreMod):
    """A change of the scores that adds terms computed from q and k themselves (DeBERTa's
    content-to-position and position-to-content scores): the identity in s, so ∂out/∂s is 1,
    and :meth:`qk_backward` gives what the added terms send back to q and k, which the
    backward passes add to what q·kᵀ sends them."""

    def derivative(self, s: Array, out: Array, at: At) -> None:
        return None

    @abstractmethod
    def qk_backward(self, d_out: Array, at: At) -> tuple[Array, Array]:
        """(∂L/∂q, ∂L/∂k) through the added terms, given ∂L/∂ of this step's output at the
        scores ``at`` (a matrix per head: (..., t_q, t_k) -> (..., t_q, d_k), (..., t_k, d_k))."""

    def written_qk_backward(self) -> tuple[str, str]:
        """What the added terms put in dQ and in dK, in LaTeX (each starting with its
        operator), for the backward formulas."""
        return "", ""


def qk_pull_back(mods: tuple[ScoreMod, ...], stages: list[Array], d_out: Array, at: At
                 ) -> tuple[Array, Array] | None:
    """What every :class:`QKScoreMod` among ``mods`` sends back to q and k, given the
    gradient of the last stage (None when there is none)."""
    found = None
    for n, mod in enumerate(mods):
        if isinstance(mod, QKScoreMod):
            d_here = pull_back(mods[n + 1:], stages[n + 1:], d_out, at)  # ∂L/∂ its output
            d_q, d_k = mod.qk_backward(d_here, at)
            found = (d_q, d_k) if found is None else (found[0] + d_q, found[1] + d_k)
    return found


def chain(scale: float, temperature: float, *, bias=None, softcap: float | None = None,
          extra: tuple[ScoreMod, ...] = (), shape: tuple[int, int, int] | None = None,
          dtype=np.float64) -> tuple[ScoreMod, ...]:
    """The modifiers of a dot-product result, validated, in the engine's order: the scale,
    the bias, the variant's own, the cap.

    Parameters
    ----------
    scale, temperature : float
    bias : array_like broadcastable to ``shape`` = (n_heads, t_q, t_k), optional
    softcap : float, optional
    extra : tuple of ScoreMod
        A variant's own modifiers (after the bias, before the cap).
    """
    temperature = check_positive("temperature", temperature)
    mods: list[ScoreMod] = [Scale(scale, temperature)]
    if bias is not None:
        bias = as_array("bias", bias, (1, 2, 3)).astype(dtype, copy=False)
        try:
            bias = np.broadcast_to(bias, shape)
        except ValueError:
            raise ValueError(f"bias must be broadcastable to (n_heads, t_q, t_k) = {shape}, "
                             f"got shape {bias.shape}") from None
        mods.append(Bias(bias))
    for mod in extra:
        if not isinstance(mod, ScoreMod):
            raise ValueError(f"score_mods must be ScoreMod objects, got {type(mod).__name__}")
        mods.append(mod)
    if softcap is not None:
        mods.append(SoftCap(check_positive("softcap", softcap)))
    return tuple(mods)


def apply(mods: tuple[ScoreMod, ...], scores: Array, at: At) -> list[Array]:
    """Every stage: ``[scores, after mods[0], after mods[1], ...]`` (no finiteness check)."""
    stages = [scores]
    with np.errstate(over="ignore", invalid="ignore"):
        for mod in mods:
            stages.append(mod.forward(stages[-1], at))
    return stages


def pull_back(mods: tuple[ScoreMod, ...], stages: list[Array], d_out: Array, at: At) -> Array:
    """The gradient of the raw scores from the gradient of the last stage: the chain rule
    through every modifier, last to first."""
    d = d_out
    for mod, s_in, s_out in zip(reversed(mods), reversed(stages[:-1]), reversed(stages[1:]),
                                strict=True):
        factor = mod.derivative(s_in, s_out, at)
        if factor is not None:
            d = d * factor
    return d


def split_scale(mods: tuple[ScoreMod, ...]) -> tuple[Scale, tuple[ScoreMod, ...]]:
    """A result's scale step (s · scale / τ) and the changes of the scores after it.

    The scale is the first modifier of every dot-product result; scores with none (additive
    attention) read as scale 1 at τ = 1, every modifier after it. The one place a reader
    separates the scale from the rest (a τ sweep, the row explanation, the backward formulas).
    """
    mods = tuple(mods)
    if mods and isinstance(mods[0], Scale):
        return mods[0], mods[1:]
    return Scale(1.0, 1.0), mods


def find(mods: tuple[ScoreMod, ...], kind: type) -> ScoreMod | None:
    """The first modifier of type ``kind`` in ``mods``, or None."""
    return next((m for m in mods if isinstance(m, kind)), None)

