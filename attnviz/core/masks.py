"""Boolean attention masks, True = may attend (PyTorch's boolean convention).

Every mask has shape (t_q, t_k): row i says which keys query i may look at. Combine masks with
``np.logical_and``. A row with no True entry is a fully masked query: the core gives it zero
weights and a zero output (see :func:`attnviz.core.attention.softmax`). A mask holds at most
:data:`~attnviz.core.checks.MAX_ENTRIES` (2**24) entries; larger sizes raise a ValueError
before anything is allocated.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import check_count, check_entries, check_flag

BoolArray = NDArray[np.bool_]


def _query_key_counts(t_q: int, t_k: int | None) -> tuple[int, int]:
    """(t_q, t_k) checked as whole numbers >= 1; ``t_k`` None means t_k = t_q."""
    t_q = check_count("t_q", t_q)
    return t_q, (t_q if t_k is None else check_count("t_k", t_k))


def causal_mask(t_q: int, t_k: int | None = None, *, align: str = "top_left") -> BoolArray:
    """Query i may attend to keys 0..i (lower triangle, aligned top-left).

    Parameters
    ----------
    t_q : int
        Number of queries.
    t_k : int, optional
        Number of keys; defaults to t_q.
    align : {"top_left", "bottom_right"}
        "bottom_right": the queries are the *last* t_q positions of the key sequence (cached
        decoding, PyTorch's ``causal_lower_right``): query i may attend to keys
        0..i + t_k − t_q. The two agree when t_q = t_k.

    Returns
    -------
    ndarray of bool, shape (t_q, t_k)

    Raises
    ------
    ValueError
        Sizes that are not whole numbers >= 1, or t_q·t_k above 2**24.
    """
    t_q, t_k = _query_key_counts(t_q, t_k)
    check_entries("the causal mask", (t_q, t_k))
    if align not in ("top_left", "bottom_right"):
        raise ValueError(f"align must be top_left or bottom_right, got {align!r:.40}")
    return np.tri(t_q, t_k, k=t_k - t_q if align == "bottom_right" else 0, dtype=bool)


def padding_mask(valid_len: int, t_k: int, t_q: int | None = None) -> BoolArray:
    """Only the first ``valid_len`` keys are real tokens; the rest are padding.

    Parameters
    ----------
    valid_len : int
        Number of real (non-padding) keys, 0 <= valid_len <= t_k.
    t_k : int
        Number of keys.
    t_q : int, optional
        Number of queries; defaults to t_k.

    Returns
    -------
    ndarray of bool, shape (t_q, t_k)

    Raises
    ------
    ValueError
        Sizes that are not whole numbers >= 1, or t_q·t_k above 2**24.
        Column j is True for every query when j < valid_len.
    """
    t_k = check_count("t_k", t_k)
    t_q = t_k if t_q is None else check_count("t_q", t_q)
    valid_len = check_count("valid_len", valid_len, minimum=0)
    if valid_len > t_k:
        raise ValueError(f"valid_len ({valid_len}) must be at most t_k ({t_k})")
    check_entries("the padding mask", (t_q, t_k))
    row = np.arange(t_k) < valid_len  # (t_k,)
    return np.broadcast_to(row, (t_q, t_k)).copy()


def window_mask(t_q: int, t_k: int | None = None, *, width: int,
                causal: bool = False) -> BoolArray:
    """Sliding window: query i may attend to key j when |i − j| <= width.

    ``width`` counts the neighbours on *each side*, so a causal window of width w shows
    w + 1 keys (itself and w earlier ones). Hugging Face's ``sliding_window=W`` on a causal
    model (Mistral, Gemma 2, Qwen) counts the *keys*, itself included: that is
    :func:`sliding_window_mask` (t, W), equal to ``window_mask(t, width=W − 1, causal=True)``.
    Hugging Face's bidirectional sliding window (encoders) is |i − j| <= W, equal to
    ``window_mask(t, width=W)``.

    Parameters
    ----------
    t_q : int
    t_k : int, optional
        Defaults to t_q.
    width : int
        How many neighbours on each side are visible; 0 = only the token itself.
    causal : bool
        Keep only the window's past half (j <= i).

    Returns
    -------
    ndarray of bool, shape (t_q, t_k)

    Raises
    ------
    ValueError
        Sizes that are not whole numbers >= 1, or t_q·t_k above 2**24.
    """
    t_q, t_k = _query_key_counts(t_q, t_k)
    width = check_count("width", width, minimum=0)
    causal = check_flag("causal", causal)
    check_entries("the window mask", (t_q, t_k))
    offset = np.arange(t_k)[None, :] - np.arange(t_q)[:, None]  # (t_q, t_k): j − i
    allowed = np.abs(offset) <= width
    return allowed & (offset <= 0) if causal else allowed


def sliding_window_mask(t: int, window: int) -> BoolArray:
    """Hugging Face's causal sliding window: query i sees key j when i − W < j <= i.

    ``window`` = W is Hugging Face's ``config.sliding_window`` (Mistral, Gemma 2, Qwen,
    ``masking_utils.sliding_window_causal_mask_function``: ``kv_idx > q_idx − W`` and
    ``kv_idx <= q_idx``): W keys, the query's own included. (:func:`window_mask`'s ``width``
    counts neighbours on each side instead: this is ``window_mask(t, width=W − 1,
    causal=True)``.)

    Parameters
    ----------
    t : int
        Number of queries and keys.
    window : int
        Keys each query sees, itself included (>= 1; 1 = only itself).

    Returns
    -------
    ndarray of bool, shape (t, t)

    Raises
    ------
    ValueError
        Sizes that are not whole numbers >= 1, or t² above 2**24.
    """
    t = check_count("t", t)
    window = check_count("window", window)
    check_entries("the sliding window mask", (t, t))
    back = np.arange(t)[:, None] - np.arange(t)[None, :]  # (t, t): i − j
    return (back >= 0) & (back < window)


def combine(parts: Iterable, t_q: int, t_k: int) -> BoolArray:
    """The conjunction of mask parts as one (t_q, t_k) array, all True when there is none: the
    one place attnviz combines masks ("causal AND the user's", a list of steps' parts).

    A part is a boolean array broadcastable to (t_q, t_k), an object with ``allowed(t_q, t_k)``
    (a mask step, :class:`attnviz.core.steps.MaskPart`), or None (skipped).

    Raises
    ------
    ValueError
        A mask array whose shape does not fit (t_q, t_k).
    """
    mask = np.ones((t_q, t_k), dtype=bool)
    for part in parts:
        if part is None:
            continue
        allowed = part.allowed(t_q, t_k) if hasattr(part, "allowed") else np.asarray(part)
        if allowed.dtype != bool:
            raise ValueError(f"a mask must be boolean (True = may attend), got {allowed.dtype}")
        try:
            mask &= np.broadcast_to(allowed, (t_q, t_k))
        except ValueError:
            raise ValueError(f"a mask must have shape (t_q, t_k) = ({t_q}, {t_k}), got "
                             f"{allowed.shape}") from None
    return mask
