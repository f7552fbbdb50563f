"""Mask parts, and the one function that combines them (logical and; True = may attend).

FlexAttention's ``and_masks(causal, sliding_window)``: a head's mask is the conjunction of its
parts, whatever they are; :func:`attnviz.core.masks.combine` is that conjunction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from attnviz.core.masks import causal_mask, padding_mask, sliding_window_mask, window_mask
from attnviz.core.steps.base import MaskPart, set_fields

BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class Causal(MaskPart):
    """Query i sees keys j ≤ i."""

    name: ClassVar[str] = "causal"
    title: ClassVar[str] = "Causal mask"

    def allowed(self, t_q: int, t_k: int) -> BoolArray:
        return causal_mask(t_q, t_k)

    def written(self) -> str:
        return r"M_{ij} = (j \le i)"


@dataclass(frozen=True, eq=False)
class Window(MaskPart):
    """A sliding window. ``keys``: query i sees the last ``width`` keys, itself included
    (i − width < j ≤ i; Hugging Face's ``sliding_window``, Mistral, Gemma); otherwise the keys at
    most ``width`` away on either side (|i − j| ≤ width; ModernBERT's local layers).
    ``keep_first``: the first keys stay in sight of every later query whatever the window
    (StreamingLLM's attention sinks; with ``keys`` only)."""

    width: int = 1
    keys: bool = True
    keep_first: int = 0
    name: ClassVar[str] = "window"
    title: ClassVar[str] = "Sliding window"

    def __post_init__(self):
        if isinstance(self.width, bool) or not isinstance(self.width, int) or \
                not (1 if self.keys else 0) <= self.width <= 1 << 20:
            raise ValueError(f"the window width must be a whole number >= "
                             f"{1 if self.keys else 0}, got {self.width!r:.40}")
        if not isinstance(self.keys, bool):
            raise ValueError("keys must be true or false")
        if isinstance(self.keep_first, bool) or not isinstance(self.keep_first, int) or \
                self.keep_first < 0 or (self.keep_first and not self.keys):
            raise ValueError(f"keep_first must be a whole number >= 0 (a window of keys only), "
                             f"got {self.keep_first!r:.40}")

    def allowed(self, t_q: int, t_k: int) -> BoolArray:
        if self.keys:
            if t_q == t_k and not self.keep_first:
                return sliding_window_mask(t_q, self.width)
            d = np.subtract.outer(np.arange(t_q), np.arange(t_k))  # i − j
            return (d >= 0) & ((d < self.width) | (np.arange(t_k)[None, :] < self.keep_first))
        return window_mask(t_q, t_k, width=self.width)

    def written(self) -> str:
        if self.keys and self.keep_first:
            return (rf"M_{{ij}} = (j \le i) \wedge (i - {self.width} < j \vee "
                    rf"j < {self.keep_first})")
        if self.keys:
            return rf"M_{{ij}} = (i - {self.width} < j \le i)"
        return rf"M_{{ij}} = (|i - j| \le {self.width})"


@dataclass(frozen=True, eq=False)
class Padding(MaskPart):
    """Only some keys are real tokens: ``real`` lists, per key, whether it is (False =
    padding); an empty ``real`` with ``valid_len`` keeps the first ``valid_len`` keys."""

    real: tuple = ()
    valid_len: int = 0
    name: ClassVar[str] = "padding"
    title: ClassVar[str] = "Padding mask"

    def __post_init__(self):
        real = tuple(bool(r) for r in self.real) if not isinstance(self.real, (str, bytes)) \
            else None
        if real is None or any(not isinstance(r, (bool, np.bool_)) for r in self.real):
            raise ValueError("real must be a list of true or false, one per key")
        if isinstance(self.valid_len, bool) or not isinstance(self.valid_len, int) or \
                self.valid_len < 0:
            raise ValueError(f"valid_len must be a whole number >= 0, got {self.valid_len!r:.40}")
        set_fields(self, real=real)

    def allowed(self, t_q: int, t_k: int) -> BoolArray:
        if self.real:
            if len(self.real) != t_k:
                raise ValueError(f"the padding mask says which of {len(self.real)} keys are "
                                 f"real, but there are {t_k} keys")
            return np.broadcast_to(np.array(self.real)[None, :], (t_q, t_k)).copy()
        return padding_mask(min(self.valid_len, t_k), t_k, t_q)

    def written(self) -> str:
        return r"M_{ij} = (j \text{ is a real token})"


@dataclass(frozen=True, eq=False)
class CustomMask(MaskPart):
    """A mask given cell by cell, (t_q, t_k) of true or false."""

    allowed_pairs: tuple = ()
    name: ClassVar[str] = "custom_mask"
    title: ClassVar[str] = "Custom mask"

    def __post_init__(self):
        a = np.asarray(self.allowed_pairs)
        if a.ndim != 2 or (a.size and a.dtype != bool):
            raise ValueError("the custom mask must be a table of true or false, one row per "
                             "query")
        set_fields(self, allowed_pairs=tuple(tuple(bool(v) for v in row) for row in a.tolist()))

    def allowed(self, t_q: int, t_k: int) -> BoolArray:
        a = np.array(self.allowed_pairs, dtype=bool).reshape(len(self.allowed_pairs), -1)
        if a.shape != (t_q, t_k):
            raise ValueError(f"the custom mask must have shape (t_q, t_k) = ({t_q}, {t_k}), got "
                             f"{a.shape}; reset it on the Masks page")
        return a

    def written(self) -> str:
        return r"M_{ij}\ \text{as drawn}"
