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

Scaled RoPE (longer contexts) changes the frequencies θ_i and may scale the rotated
dimensions: linear ("position interpolation") divides θ by a factor, NTK-aware and dynamic NTK
raise the base, Llama 3 and YaRN rescale each frequency band, and YaRN and LongRoPE multiply
cos and sin by an attention factor. Every one of them is expressed here by its inverse
frequencies ``inv_freq`` (θ_i; Hugging Face's ``rotary_emb.inv_freq``) — or a table of
``cos``/``sin`` for each position and pair — and ``attention_scaling`` (Hugging Face's
``rotary_emb.attention_scaling``): position m's pair i is turned by m·θ_i and multiplied by
``attention_scaling``, so q·k scales by its square.
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


def apply_rope(x, positions=None, *, base: float | None = None, layout: str = "split_half",
               rotary_fraction: float = 1.0, offset: float = 0.0, d_rot: int | None = None,
               inv_freq=None, cos=None, sin=None, attention_scaling: float = 1.0) -> Array:
    """Rotate the rows of ``x`` (queries or keys, one head or several) by their positions.

    The angles come from one of three sources: ``base`` (θ_i = base^(−2i/d_rot), the
    default 10000), ``inv_freq`` (θ_i given, e.g. a scaled RoPE's), or the ``cos``/``sin`` of
    every angle given as tables.

    Parameters
    ----------
    x : array_like of shape (..., t, d)
        Row j is the query or key at position ``positions[j] + offset``.
    positions : array_like of shape (t,), optional
        Default 0, 1, ..., t − 1. Not with ``cos``/``sin`` (the tables hold the positions).
    base : float, optional
        θ_i = base^(−2i/d_rot); must be > 0. Default 10000 (not with ``inv_freq`` or
        ``cos``/``sin``).
    layout : {"split_half", "interleaved"}
        Which dimensions form a rotated pair (see the module docstring).
    rotary_fraction : float in (0, 1]
        Rotate the first int(d · rotary_fraction) dimensions (even); the rest pass through.
    offset : float
        Added to every position.
    d_rot : int, optional
        The number of rotated dimensions given directly (even, 2..d), instead of
        ``rotary_fraction``. With ``inv_freq`` or ``cos``/``sin`` it is twice their number
        of pairs.
    inv_freq : array_like of shape (d_rot / 2,), optional
        The inverse frequencies θ_i: pair i of position m turns by m·θ_i (Hugging Face's
        ``rotary_emb.inv_freq``, which every ``rope_type`` — linear, dynamic, yarn, llama3,
        longrope — computes).
    cos, sin : array_like of shape (t, d_rot / 2), optional
        cos(angle) and sin(angle) of every position (row) and pair (column), given together
        (Hugging Face's ``cos[:, :d_rot/2]``, whose two halves repeat, divided by
        ``attention_scaling``).
    attention_scaling : float
        Multiplies cos and sin (the rotated dimensions), > 0: Hugging Face's
        ``attention_scaling`` (YaRN's mscale, LongRoPE's factor; 1 for the others).

    Returns
    -------
    ndarray of the shape of ``x``

    Raises
    ------
    ValueError
        Two sources of angles at once, tables or frequencies of the wrong shape, or an
        invalid setting.
    """
    x = as_array("x", x, (2, 3, 4))
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r:.40}")
    t, d = x.shape[-2:]
    scaling = check_positive("attention_scaling", attention_scaling)
    # 1) the cos and sin of every position and pair, (t, d_rot/2) each
    cos, sin, d_rot = _rotation(t, d, positions, offset, base, rotary_fraction, d_rot, inv_freq,
                                cos, sin)
    if scaling != 1.0:
        cos, sin = cos * scaling, sin * scaling
    cos, sin = cos.astype(x.dtype, copy=False), sin.astype(x.dtype, copy=False)
    out = x.copy()
    # 2) the two members of every pair
    if layout == "split_half":
        first, second = slice(0, d_rot // 2), slice(d_rot // 2, d_rot)
    else:
        first, second = slice(0, d_rot, 2), slice(1, d_rot, 2)
    a, b = x[..., first], x[..., second]  # (..., t, d_rot/2) each
    # 3) rotate each pair (a, b) by its angle: (a cos − b sin, a sin + b cos)
    out[..., first] = a * cos - b * sin
    out[..., second] = a * sin + b * cos
    return out


def _rotation(t: int, d: int, positions, offset, base, rotary_fraction, d_rot, inv_freq, cos,
              sin) -> tuple[Array, Array, int]:
    """The cos and sin tables (t, d_rot/2) of :func:`apply_rope` from its settings, and d_rot."""
    if (cos is None) != (sin is None):
        raise ValueError("cos and sin are given together (the tables of one set of angles)")
    sources = [name for name, given in (("base", base is not None),
                                        ("inv_freq", inv_freq is not None),
                                        ("cos and sin", cos is not None)) if given]
    if len(sources) > 1:
        raise ValueError(f"give one source of the angles, not {' and '.join(sources)}: base, "
                         "inv_freq, or cos and sin")
    if cos is not None:
        if positions is not None or offset != 0:
            raise ValueError("the cos and sin tables already hold the positions; give no "
                             "positions or offset with them")
        cos, sin = as_array("cos", cos, 2), as_array("sin", sin, 2)
        if cos.shape != sin.shape or cos.shape[0] != t:
            raise ValueError(f"cos and sin must both have one row per row of x ({t}) and one "
                             f"column per rotated pair; got {cos.shape} and {sin.shape}")
        return cos, sin, _pairs_to_dims(cos.shape[1], d, d_rot, "cos and sin have")
    if positions is None:
        positions = np.arange(t, dtype=float)
    positions = as_array("positions", positions, 1)
    if positions.shape[0] != t:
        raise ValueError(f"positions must have one entry per row of x ({t}), "
                         f"got {positions.shape[0]}")
    offset = float(as_array("offset", [offset], 1)[0])
    if inv_freq is not None:
        inv_freq = as_array("inv_freq", inv_freq, 1)
        d_rot = _pairs_to_dims(inv_freq.shape[0], d, d_rot, "inv_freq has")
        angles = (positions + offset)[:, None] * inv_freq[None, :]  # (t, d_rot/2)
    else:
        if d_rot is None:
            d_rot = rotary_dims(d, rotary_fraction)
        elif not 2 <= d_rot <= d or d_rot % 2:
            raise ValueError(f"d_rot must be an even number between 2 and d = {d}, got {d_rot}")
        angles = rope_angles(positions + offset, d_rot,
                             base=10000.0 if base is None else base)  # (t, d_rot/2)
    return np.cos(angles), np.sin(angles), d_rot


def _pairs_to_dims(pairs: int, d: int, d_rot: int | None, what: str) -> int:
    """d_rot = 2 · pairs, checked against the head width and a d_rot given with it."""
    if 2 * pairs > d:
        raise ValueError(f"{what} {pairs} pairs; a head of d = {d} dimensions has at most "
                         f"{d // 2}")
    if d_rot is not None and d_rot != 2 * pairs:
        raise ValueError(f"d_rot ({d_rot}) must be twice the pairs {what[:-4]} ({pairs})")
    return 2 * pairs


def layout_permutation(d: int, d_rot: int | None = None) -> NDArray[np.intp]:
    """The column order that turns an interleaved vector into a split-half one.

    ``apply_rope(x[..., p], layout="split_half") == apply_rope(x, layout="interleaved")[..., p]``
    with ``p = layout_permutation(d, d_rot)``: the even rotated dimensions first, then the odd
    ones, then the dimensions that are not rotated.
    """
    d_rot = d if d_rot is None else d_rot
    return np.concatenate([np.arange(0, d_rot, 2), np.arange(1, d_rot, 2),
                           np.arange(d_rot, d)]).astype(np.intp)
