"""Projecting and splitting into heads, then attending: shared by the modern variants.

The modern variants (RoPE, QK-norm, ALiBi, soft-capping, GQA/MQA) are a change to q and k per
head, a bias on or a function of the scores, or a mapping of query heads to key/value heads;
each prepares its heads with :func:`project_heads`, changes what it changes, and calls
:func:`attend` — which goes through
the core's :func:`~attnviz.core.attention.attend_heads`, the same softmax, mask and scale code
as multi-head attention.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import AttentionResult, MultiHeadResult, attend_heads
from attnviz.core.checks import as_array
from attnviz.core.masks import causal_mask, combine
from attnviz.core.score_mods import ScoreMod
from attnviz.scenarios.variant import Inputs

Array = NDArray[np.floating]


def project_heads(inputs: Inputs, *, n_kv_heads: int | None = None
                  ) -> tuple[Array, Array, Array]:
    """q_h, k_h, v_h of the scenario's self-attention, split into ``inputs.n_heads`` heads.

    Head h uses the h-th block of columns of W_Q, W_K and W_V (as multi-head attention). With
    ``n_kv_heads`` (grouped-query attention), keys and values use the first ``n_kv_heads``
    column blocks of W_K and W_V only.

    Returns
    -------
    q_h : ndarray of shape (n_heads, t, d_k)
    k_h : ndarray of shape (n_kv_heads, t, d_k)
    v_h : ndarray of shape (n_kv_heads, t, d_v)

    Raises
    ------
    ValueError
        If the weights do not fit x or n_heads does not divide their columns.
    """
    sc = inputs.scenario
    n = inputs.n_heads
    x = as_array("x", inputs.x, 2)
    w = {name: as_array(name, getattr(sc, name), 2) for name in ("w_q", "w_k", "w_v")}
    for name, m in w.items():
        if m.shape[0] != x.shape[1]:
            raise ValueError(f"{name} must have one row per embedding dimension: x has "
                             f"d_model = {x.shape[1]} columns but {name} has {m.shape[0]} rows")
        if m.shape[1] % n:
            raise ValueError(f"n_heads ({n}) must divide the number of columns of {name} "
                             f"({m.shape[1]})")
    if w["w_q"].shape[1] != w["w_k"].shape[1]:
        raise ValueError(f"w_q and w_k must have the same number of columns (d_k), got "
                         f"{w['w_q'].shape[1]} and {w['w_k'].shape[1]}")
    t = x.shape[0]
    n_kv = n if n_kv_heads is None else n_kv_heads
    d_k, d_v = w["w_q"].shape[1] // n, w["w_v"].shape[1] // n
    with np.errstate(over="ignore", invalid="ignore"):
        q = x @ w["w_q"]  # (t, n·d_k)
        k = x @ w["w_k"][:, :n_kv * d_k]  # (t, n_kv·d_k)
        v = x @ w["w_v"][:, :n_kv * d_v]  # (t, n_kv·d_v)
    q_h = q.reshape(t, n, d_k).transpose(1, 0, 2)  # (n_heads, t, d_k)
    k_h = k.reshape(t, -1, d_k).transpose(1, 0, 2)  # (n_kv_heads, t, d_k)
    v_h = v.reshape(t, -1, d_v).transpose(1, 0, 2)  # (n_kv_heads, t, d_v)
    return q_h, k_h, v_h


def attend(inputs: Inputs, q_h, k_h, v_h, *, causal: bool = False, bias=None,
           softcap: float | None = None, score_mods: tuple[ScoreMod, ...] = (),
           always_heads: bool = False) -> AttentionResult | MultiHeadResult:
    """Attend over the prepared heads with the inputs' mask, scale and temperature, and the
    variant's changes of the scores (``bias``, ``softcap``, ``score_mods``: see
    :func:`~attnviz.core.attention.attend_heads`).

    Returns the single head's :class:`AttentionResult` when there is one head and the variant
    does not always run with heads; otherwise the :class:`MultiHeadResult` with W_O.
    """
    t_q, t_k = np.shape(q_h)[1], np.shape(k_h)[1]
    mask = inputs.mask
    if causal:
        mask = combine([causal_mask(t_q, t_k), mask], t_q, t_k)
    heads = always_heads or inputs.n_heads > 1
    result = attend_heads(q_h, k_h, v_h, mask=mask, scale=inputs.scale,
                          temperature=inputs.temperature, bias=bias, softcap=softcap,
                          score_mods=score_mods,
                          w_o=inputs.scenario.w_o if heads else None)
    return result if heads else result.head(0)
