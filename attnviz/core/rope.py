"""Rotary position embedding (RoPE): rotate pairs of dimensions of q and k by position·θ_i.

Su et al. (2021), "RoFormer: Enhanced Transformer with Rotary Position Embedding",
https://arxiv.org/abs/2104.09864, §3.4: with θ_i = base^(−2i/d_rot), i = 0..d_rot/2 − 1, the
query or key at position m has its i-th pair of dimensions rotated by the angle m·θ_i. Then
q_m·k_n depends on the positions only through m − n: a common shift of every position leaves
the scores unchanged.

Which dimensions form the i-th pair is a memory layout, and implementations differ:

* ``"split_half"`` (GPT-NeoX, Hugging Face ``rotate_half``): dimension i pairs with
  i + d_rot/2;
* ``"interleaved"`` (GPT-J, Meta's ``apply_rotary_emb``, torchtune): dimension 2i pairs with
  2i + 1.

The two agree after a fixed permutation of the dimensions (:func:`layout_permutation`).
Partial rotary (GPT-NeoX's ``rotary_pct``, Hugging Face's ``partial_rotary_factor``) rotates
the first d_rot = int(d · fraction) dimensions of each head and leaves the rest as they are.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import as_array, check_positive

Array = NDArray[np.floating]

LAYOUTS = ("split_half", "interleaved")


def rotary_dims(d: int, fraction: float = 1.0) -> int:
    """The number of rotated dimensions, int(d · fraction); it must be even and > 0.

    Raises
    ------
    ValueError
        If ``fraction`` is not in (0, 1] or the rotated dimensions are odd or none.
    """
    fraction = check_positive("rotary_fraction", fraction)
    if fraction > 1:
        raise ValueError(f"rotary_fraction must be between 0 and 1, got {fraction:g}")
    d_rot = int(d * fraction)
    if d_rot < 2 or d_rot % 2:
        raise ValueError(
            f"the rotated dimensions must be an even number >= 2: rotary_fraction "
            f"{fraction:g} of d_k = {d} gives {d_rot}; choose an even head width or another "
            f"fraction"
        )
    return d_rot


def rope_angles(positions, d_rot: int, *, base: float = 10000.0) -> Array:
    """The rotation angle of every position and pair: position · base^(−2i/d_rot).

    Parameters
    ----------
    positions : array_like of shape (t,)
        Positions (any real numbers; an offset shifts them all).
    d_rot : int
        The number of rotated dimensions (even).
    base : float
        Must be > 0.

    Returns
    -------
    ndarray of shape (t, d_rot / 2)
    """
    base = check_positive("base", base)
    positions = as_array("positions", positions, 1)
    if d_rot < 2 or d_rot % 2:
        raise ValueError(f"d_rot must be an even number >= 2, got {d_rot}")
    theta = base ** (-np.arange(0, d_rot, 2, dtype=float) / d_rot)  # (d_rot/2,)
    return positions[:, None] * theta[None, :]  # (t, d_rot/2)


def apply_rope(x, positions=None, *, base: float = 10000.0, layout: str = "split_half",
               rotary_fraction: float = 1.0, offset: float = 0.0,
               d_rot: int | None = None) -> Array:
    """Rotate the rows of ``x`` (queries or keys, one head or several) by their positions.

    Parameters
    ----------
    x : array_like of shape (..., t, d)
        Row j is the query or key at position ``positions[j] + offset``.
    positions : array_like of shape (t,), optional
        Default 0, 1, ..., t − 1.
    base : float
        θ_i = base^(−2i/d_rot); must be > 0.
    layout : {"split_half", "interleaved"}
        Which dimensions form a rotated pair (see the module docstring).
    rotary_fraction : float in (0, 1]
        Rotate the first int(d · rotary_fraction) dimensions (even); the rest pass through.
    offset : float
        Added to every position.
    d_rot : int, optional
        The number of rotated dimensions given directly (even, 2..d), instead of
        ``rotary_fraction``.

    Returns
    -------
    ndarray of the shape of ``x``
    """
    x = as_array("x", x, (2, 3))
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r:.40}")
    t, d = x.shape[-2:]
    if d_rot is None:
        d_rot = rotary_dims(d, rotary_fraction)
    elif not 2 <= d_rot <= d or d_rot % 2:
        raise ValueError(f"d_rot must be an even number between 2 and d = {d}, got {d_rot}")
    if positions is None:
        positions = np.arange(t, dtype=float)
    positions = as_array("positions", positions, 1)
    if positions.shape[0] != t:
        raise ValueError(f"positions must have one entry per row of x ({t}), "
                         f"got {positions.shape[0]}")
    offset = float(as_array("offset", [offset], 1)[0])
    angles = rope_angles(positions + offset, d_rot, base=base)  # (t, d_rot/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    out = x.copy()
    # 1) the two members of every pair
    if layout == "split_half":
        first, second = slice(0, d_rot // 2), slice(d_rot // 2, d_rot)
    else:
        first, second = slice(0, d_rot, 2), slice(1, d_rot, 2)
    a, b = x[..., first], x[..., second]  # (..., t, d_rot/2) each
    # 2) rotate each pair (a, b) by its angle: (a cos − b sin, a sin + b cos)
    out[..., first] = a * cos - b * sin
    out[..., second] = a * sin + b * cos
    return out


def layout_permutation(d: int, d_rot: int | None = None) -> NDArray[np.intp]:
    """The column order that turns an interleaved vector into a split-half one.

    ``apply_rope(x[..., p], layout="split_half") == apply_rope(x, layout="interleaved")[..., p]``
    with ``p = layout_permutation(d, d_rot)``: the even rotated dimensions first, then the odd
    ones, then the dimensions that are not rotated.
    """
    d_rot = d if d_rot is None else d_rot
    return np.concatenate([np.arange(0, d_rot, 2), np.arange(1, d_rot, 2),
                           np.arange(d_rot, d)]).astype(np.intp)
