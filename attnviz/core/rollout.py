"""Head aggregation and attention rollout across layers (Abnar & Zuidema 2020).

Abnar & Zuidema, "Quantifying Attention Flow in Transformers", ACL 2020. A layer's attention
says how much each query mixes each key *of that layer's input*; to ask how much position i at
the top of the stack draws on token j at the bottom, the layers are chained:

    Ā_l   = fuse_h A_l[h]                       (mean over heads; max is a common variant)
    A'_l  = (1 − r) · Ā_l + r · I               (the residual connection, r = 0.5 in the paper)
    A'_l  ← A'_l / rowsum(A'_l)                 (each row a distribution again)
    R_l   = A'_l · A'_{l−1} · … · A'_0          (rollout up to layer l; R_{L−1} is the rollout)

Residual convention: each layer's output is x + attention(x), and the paper models the identity
path as an attention matrix I mixed in with weight r. Rows of R_l are indexed by the query
positions after layer l, columns by the input tokens; ``R_l[i, j]`` is the share of token j
in position i's mix. With r = 0 the rollout is the plain product of the attention matrices.

Properties (tested): every row of R_l sums to 1 when every row of the weights does (a product
of row-stochastic matrices is row-stochastic); causal weights give causal rollouts (a product of
lower-triangular matrices is lower triangular). A row of Ā_l that sums to 0 (a fully masked
query) with r = 0 stays 0 after renormalising (no division by 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

FUSIONS = ("mean", "max")
RESIDUAL = 0.5  # the paper's weight of the identity (residual) path


def _stack(weights: ArrayLike, name: str = "weights") -> Array:
    """Weights as float64 of shape (n_layers, n_heads, t, t), validated."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2] or 0 in w.shape:
        raise ValueError(f"{name} must have shape (n_layers, n_heads, t, t) with t >= 1, got "
                         f"{w.shape}")
    if not np.isfinite(w).all():
        raise ValueError(f"{name} hold NaN or infinite values; attention weights are finite")
    return w


def aggregate_heads(weights: ArrayLike, how: str = "mean") -> Array:
    """One matrix per layer from its heads: the mean or the elementwise max over heads.

    Parameters
    ----------
    weights : array_like of shape (n_layers, n_heads, t, t)
    how : {"mean", "max"}
        The mean keeps rows summing to 1; the max does not (each cell is its strongest head).

    Returns
    -------
    ndarray of shape (n_layers, t, t)
    """
    if how not in FUSIONS:
        raise ValueError(f"how must be one of {', '.join(FUSIONS)}, got {how!r}")
    w = _stack(weights)
    return w.mean(axis=1) if how == "mean" else w.max(axis=1)  # (n_layers, t, t)


def _normalise_rows(a: Array) -> Array:
    """Rows divided by their sums; a row summing to 0 stays 0."""
    sums = a.sum(axis=-1, keepdims=True)  # (..., t, 1)
    return np.divide(a, sums, out=np.zeros_like(a), where=sums > 0)


@dataclass(frozen=True, eq=False)
class Rollout:
    """Attention rollout and every intermediate.

    Attributes
    ----------
    fused : ndarray of shape (n_layers, t, t)
        Ā_l, the heads of each layer fused (mean or max).
    mixed : ndarray of shape (n_layers, t, t)
        A'_l = (1 − r)·Ā_l + r·I with rows renormalised.
    cumulative : ndarray of shape (n_layers, t, t)
        R_l = A'_l · … · A'_0, the rollout up to each layer.
    residual : float
        r, the weight of the identity path.
    how : str
        The head fusion, "mean" or "max".
    """

    fused: Array
    mixed: Array
    cumulative: Array
    residual: float
    how: str

    @property
    def rollout(self) -> Array:
        """R for the whole stack, shape (t, t): the last layer's cumulative rollout."""
        return self.cumulative[-1]


def attention_rollout(weights: ArrayLike, residual: float = RESIDUAL,
                      how: str = "mean") -> Rollout:
    """Attention rollout over the layers (Abnar & Zuidema 2020), see the module docstring.

    Parameters
    ----------
    weights : array_like of shape (n_layers, n_heads, t, t)
        Every layer's attention weights, layer 0 first (nearest the input).
    residual : float in [0, 1]
        r, the weight of the identity matrix (the residual path); the paper uses 0.5.
    how : {"mean", "max"}
        How the heads of a layer are fused before mixing.

    Returns
    -------
    Rollout
    """
    if isinstance(residual, bool) or not isinstance(residual, (int, float, np.floating)) \
            or not 0.0 <= float(residual) <= 1.0:
        raise ValueError(f"residual must be a number between 0 and 1, got {residual!r}")
    r = float(residual)
    fused = aggregate_heads(weights, how)  # (n_layers, t, t)
    t = fused.shape[-1]
    # 1) the residual path as attention to oneself  2) rows back to distributions
    mixed = _normalise_rows((1.0 - r) * fused + r * np.eye(t))  # (n_layers, t, t)
    # 3) chain the layers: R_l = A'_l · R_{l−1}
    cumulative = np.empty_like(mixed)
    current = np.eye(t)
    for layer, a in enumerate(mixed):
        current = a @ current
        cumulative[layer] = current
    return Rollout(fused=fused, mixed=mixed, cumulative=cumulative, residual=r, how=how)
