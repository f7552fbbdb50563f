"""Validation at the public boundary: turn user input into arrays or raise a ValueError in words.

Every public function of the core calls these once; internal helpers trust their inputs.
Messages name the argument, what was expected and what was received.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

FLOAT_TYPES = (np.float32, np.float64)
# Most entries of one array a core function builds from sizes alone (masks, positional
# encodings, initial weights): 128 MiB of float64. The dashboard's largest (1024 × 1024 upload
# masks, 256 tokens × 64 dimensions) are far below; 10**9 tokens raise here, not MemoryError.
MAX_ENTRIES = 2**24


def float_dtype(*arrays: NDArray) -> np.dtype:
    """The dtype results are computed in: float32 only when every input is float32, else float64."""
    dtype = np.result_type(*arrays)
    return dtype if dtype in FLOAT_TYPES else np.dtype(np.float64)


def as_array(name: str, value: Any, ndim: int | tuple[int, ...]) -> NDArray[np.floating]:
    """Convert ``value`` to a finite, non-empty float array of rank ``ndim``.

    Integers and booleans become float64; float32 stays float32.

    Raises
    ------
    ValueError
        If the value is not numeric, has the wrong rank, is empty or holds NaN/inf.
    """
    arr = _as_real(name, value)
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if arr.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ValueError(f"{name} must be {want}, got a {arr.ndim}-D array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    _refuse(name, arr, ~np.isfinite(arr), "finite numbers")
    return arr


def as_scores(name: str, value: Any) -> NDArray[np.floating]:
    """Convert ``value`` to a float array of any shape holding finite values or −inf.

    −inf is a masked score (weight 0); NaN and +inf have no meaning there.

    Raises
    ------
    ValueError
        If the value is not numeric or holds NaN or +inf.
    """
    arr = _as_real(name, value)
    _refuse(name, arr, np.isnan(arr) | np.isposinf(arr), "finite numbers or -inf")
    return arr


def check_inner(name_a: str, size_a: int, name_b: str, size_b: int) -> None:
    """Raise unless two sizes that are multiplied together agree."""
    if size_a != size_b:
        raise ValueError(f"{name_a} ({size_a}) must equal {name_b} ({size_b})")


def check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float; raise unless a real number (not a bool or a string),
    finite and > 0 (or >= 0 if allowed)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    ok = np.isfinite(number) and (number >= 0 if allow_zero else number > 0)
    if not ok:
        kind = "a finite number >= 0" if allow_zero else "a finite number > 0"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return number


def check_flag(name: str, value: Any) -> bool:
    """Return ``value`` as a bool; raise unless it is True or False (numpy's bools too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_head(h: Any, n_heads: int) -> int:
    """Return the head index ``h``; raise unless it is a whole number in 0..n_heads − 1."""
    if isinstance(h, (bool, np.bool_)) or not isinstance(h, (int, np.integer)):
        raise ValueError(f"the head index must be a whole number, got {h!r}")
    if not 0 <= h < n_heads:
        which = "only head 0" if n_heads == 1 else f"heads 0 to {n_heads - 1}"
        raise ValueError(f"there is no head {h}: this result has {which}")
    return int(h)


def check_count(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, raising unless it is a whole number >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value}")
    return int(value)


def check_entries(name: str, shape: tuple[int, ...]) -> None:
    """Raise unless an array of ``shape`` holds at most :data:`MAX_ENTRIES` entries.

    Called with checked sizes, before anything is allocated.
    """
    entries = math.prod(shape)
    if entries > MAX_ENTRIES:
        sizes = " × ".join(f"{n:,}" for n in shape)
        raise ValueError(f"{name} would hold {sizes} = {entries:,} entries; at most "
                         f"{MAX_ENTRIES:,} (2**24) are allowed — use smaller sizes")


def as_mask(name: str, mask: Any, shape: tuple[int, int]) -> NDArray[np.bool_]:
    """Broadcast a boolean mask (True = may attend) to ``shape``; None means all True."""
    if mask is None:
        everything = np.ones(shape, dtype=bool)
        everything.flags.writeable = False  # results are read-only, this mask too
        return everything
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise ValueError(
            f"{name} must be boolean (True = may attend), got values of type {arr.dtype}"
        )
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(
            f"{name} of shape {arr.shape} cannot be broadcast to (t_q, t_k) = {shape}"
        ) from None


def _as_real(name: str, value: Any) -> NDArray[np.floating]:
    """``value`` as an array of float32 or float64 (other real types become float64)."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged lists
        raise ValueError(f"{name} must be a numeric array; could not read it ({exc})") from None
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
    ) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers, got values of type {arr.dtype}")
    return arr if arr.dtype in FLOAT_TYPES else arr.astype(np.float64)


def _refuse(name: str, arr: NDArray, bad: NDArray[np.bool_], what: str) -> None:
    """Raise naming the first entry of ``arr`` where ``bad`` is True, if any."""
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must hold {what}, got {arr[index]} at index {index}")
