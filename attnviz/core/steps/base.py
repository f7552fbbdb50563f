"""The kinds of attention step, and reading and writing a list of steps as small dictionaries.

Every step is a frozen dataclass whose fields are its settings; ``to_dict`` gives
``{"step": name, **settings}`` with plain numbers, strings, booleans and lists (JSON), and
:func:`from_dicts` reads such a list back, checking every setting with a sentence. A step type
registers itself by its ``name`` when its class is defined.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from attnviz.core.score_mods import ScoreMod

Array = NDArray[np.floating]

#: step name -> its class (filled as the step modules are imported by the package).
STEP_TYPES: dict[str, type[Step]] = {}

#: The order of the kinds in a list: what a step changes, in the order a head computes it.
KINDS = ("heads", "qk", "score", "mask", "normaliser")


@dataclass(frozen=True)
class HeadShape:
    """What a score step may need to make its modifier: the sizes, the combined mask, and the
    q and k that reached the scores.

    Attributes
    ----------
    n_heads, t_q, t_k, d_k : int
    mask : ndarray of bool, shape (t_q, t_k)
        The combined mask of the list (True = may attend).
    q : ndarray of shape (n_heads, t_q, d_k) or None
    k : ndarray of shape (n_heads, t_k, d_k) or None
        Per query head (k of the key/value head it reads); None where a step is only written.
        One head run alone (:func:`~attnviz.core.steps.run_head` of a (t, d_k) q) gives its own
        q and k in every head's place; a run with leading axes gives none.
    """

    n_heads: int
    t_q: int
    t_k: int
    d_k: int
    mask: NDArray[np.bool_]
    q: NDArray[np.floating] | None = None
    k: NDArray[np.floating] | None = None


@dataclass(frozen=True, eq=False)
class Step(ABC):
    """One step of a head's attention.

    Class attributes
    ----------------
    name : str
        Its key in a list's dictionaries (``"rope"``, ``"causal"``, ...).
    kind : str
        One of :data:`KINDS`.
    title : str
        Its title where the teaching text has none of its own.
    """

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    title: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            STEP_TYPES[cls.name] = cls

    def settings(self) -> dict[str, Any]:
        """The step's settings as plain values (arrays become nested lists)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def to_dict(self) -> dict[str, Any]:
        """``{"step": name, **settings}``."""
        return {"step": self.name, **self.settings()}

    @abstractmethod
    def written(self) -> str:
        """The step's piece of the formula, in LaTeX (what it defines)."""


class QKStep(Step):
    """A change of one head's queries and keys before the scores (QK-norm, RoPE). Row i of q
    is the query at position i, row j of k the key at position j. Leading axes (sequences,
    heads) pass through; ``head`` is an int, or an array of heads along the leading axes
    (see :func:`attnviz.core.steps.run_head`)."""

    kind: ClassVar[str] = "qk"

    @abstractmethod
    def forward(self, x: Array, side: str, head) -> Array:
        """q (``side="q"``) or k (``side="k"``) of head ``head`` changed, (..., t, d) ->
        (..., t, d)."""

    @abstractmethod
    def backward(self, x: Array, d_y: Array, side: str, head) -> Array:
        """∂L/∂x from ∂L/∂y, for the input ``x`` the forward changed."""

    @abstractmethod
    def written_vector(self, current: str, side: str) -> str:
        """The step applied to the vector ``current`` (LaTeX), e.g. ``R(p_i)\\,(x_i W_Q)``."""


class ScoreStep(Step):
    """A change of the scores: makes the :class:`~attnviz.core.score_mods.ScoreMod` the engine,
    the backward pass, the row explanation and Trace read."""

    kind: ClassVar[str] = "score"

    @abstractmethod
    def mod(self, shape: HeadShape) -> ScoreMod:
        """The modifier for scores of this shape (all heads)."""

    def written(self) -> str:
        return self.mod_for_writing().written(r"s_{ij}")[0]

    def mod_for_writing(self) -> ScoreMod:
        """A modifier whose ``written`` is the step's formula (sizes need not be known)."""
        return self.mod(HeadShape(1, 1, 1, 1, np.ones((1, 1), dtype=bool)))


class MaskPart(Step):
    """One part of the mask; the parts are combined by logical and
    (:func:`attnviz.core.masks.combine`)."""

    kind: ClassVar[str] = "mask"

    @abstractmethod
    def allowed(self, t_q: int, t_k: int) -> NDArray[np.bool_]:
        """(t_q, t_k), True = may attend."""


class Normaliser(Step):
    """Turns one head's masked scores into weights."""

    kind: ClassVar[str] = "normaliser"

    @abstractmethod
    def forward(self, masked: Array, head) -> tuple[Array, Array]:
        """(weights (t_q, t_k), the share of each row that went nowhere (t_q,))."""

    def backward(self, weights: Array, d_weights: Array) -> Array:
        """∂L/∂masked = P ∘ (dP − rowsum(P ∘ dP)): the softmax's Jacobian, also with a sink
        column (the sink is not a score, so only the keys' weights enter the sum)."""
        with np.errstate(over="ignore", invalid="ignore"):
            pdp = weights * d_weights
            pdp -= weights * pdp.sum(axis=-1, keepdims=True)  # P∘dP − P∘rowsum: 0 where P is 0
            return pdp


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def to_dicts(steps: Iterable[Step]) -> list[dict[str, Any]]:
    """A list of steps as a list of small dictionaries."""
    return [s.to_dict() for s in steps]


def from_dicts(items: Iterable[Mapping[str, Any]]) -> tuple[Step, ...]:
    """Steps from their dictionaries (a step object is kept as it is).

    Raises
    ------
    ValueError
        An unknown step, a missing or unknown setting, or a value the step refuses (the
        sentence names the step and its position).
    """
    if not isinstance(items, (list, tuple)):
        raise ValueError("the steps must be a list of objects, one per step")
    out: list[Step] = []
    for n, item in enumerate(items):
        if isinstance(item, Step):
            out.append(item)
            continue
        if not isinstance(item, Mapping) or "step" not in item:
            raise ValueError(f"step {n} must be an object with a 'step' name, got "
                             f"{type(item).__name__}")
        name = item["step"]
        cls = STEP_TYPES.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ValueError(f"step {n}: {str(name)[:40]!r} is not a step; the steps are "
                             f"{', '.join(sorted(STEP_TYPES))}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(item) - known - {"step"})
        if unknown:
            raise ValueError(f"step {n} ({name}) has no setting {', '.join(unknown)[:80]}; its "
                             f"settings are {', '.join(sorted(known)) or 'none'}")
        try:
            out.append(cls(**{k: v for k, v in item.items() if k != "step"}))
        except (TypeError, ValueError) as err:
            raise ValueError(f"step {n} ({name}): {err}") from None
    check_order(out)
    return tuple(out)


def check_order(steps: Iterable[Step]) -> None:
    """A list has at most one head structure and one normaliser.

    Raises
    ------
    ValueError
        Otherwise, in a sentence.
    """
    steps = list(steps)
    for kind in ("heads", "normaliser"):
        if sum(s.kind == kind for s in steps) > 1:
            raise ValueError(f"a list of steps has at most one {kind} step")


def of_kind(steps: Iterable[Step], kind: str) -> list[Step]:
    """The steps of one kind, in the list's order."""
    return [s for s in steps if s.kind == kind]


def number(name: str, value: Any, *, low: float | None = None, high: float | None = None,
           positive: bool = False) -> float:
    """A finite number setting, checked, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value:g}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be between {low:g} and {high:g}, got {value:g}")
    return value


def vector(name: str, value: Any, *, positive: bool = False, length: int | None = None,
           ndim: int = 1) -> tuple:
    """A list of finite numbers (nested for ``ndim`` 2), checked, as a tuple of floats."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers") from None
    if a.ndim != ndim or not np.isfinite(a).all() or (positive and (a <= 0).any()):
        what = "positive " if positive else ""
        raise ValueError(f"{name} must be a {'list' if ndim == 1 else 'table'} of finite "
                         f"{what}numbers")
    if length is not None and a.shape[0] != length:
        raise ValueError(f"{name} must hold {length} numbers, got {a.shape[0]}")
    return tuple(a.tolist()) if ndim == 1 else tuple(tuple(r) for r in a.tolist())


def set_fields(obj: Step, **values: Any) -> None:
    """Store normalised settings on a frozen step (from its ``__post_init__``)."""
    for k, v in values.items():
        object.__setattr__(obj, k, v)


