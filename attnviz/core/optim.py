"""Gradient descent on named arrays: plain (SGD) and Adam, one step at a time, without state
hidden anywhere (Adam's moments are a value passed in and returned).

Adam (Kingma & Ba, 2015, Algorithm 1; PyTorch's ``torch.optim.Adam`` defaults)::

    m ← β₁ m + (1 − β₁) g          v ← β₂ v + (1 − β₂) g²
    p ← p − lr · (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + ε)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import check_positive

Array = NDArray[np.floating]


@dataclass(frozen=True, eq=False)
class AdamState:
    """Adam's running moments of each parameter and the number of steps taken.

    Attributes
    ----------
    m, v : Mapping of str to ndarray
        First and second moment estimates, keyed like the parameters.
    t : int
        Steps taken so far.
    """

    m: Mapping[str, Array]
    v: Mapping[str, Array]
    t: int


def sgd_step(params: Mapping[str, Array], grads: Mapping[str, Array], lr: float
             ) -> dict[str, Array]:
    """p ← p − lr · g for every parameter (new arrays; the inputs are not changed)."""
    lr = check_positive("lr", lr)
    _check_keys(params, grads)
    with np.errstate(over="ignore", invalid="ignore"):
        return {k: np.asarray(p) - lr * np.asarray(grads[k]) for k, p in params.items()}


def adam_step(params: Mapping[str, Array], grads: Mapping[str, Array], lr: float,
              state: AdamState | None = None, *, betas: tuple[float, float] = (0.9, 0.999),
              eps: float = 1e-8) -> tuple[dict[str, Array], AdamState]:
    """One Adam step: the new parameters and the new state (None = the first step).

    Parameters
    ----------
    params, grads : Mapping of str to ndarray
        The parameters and their gradients, the same keys and shapes.
    lr : float
        The learning rate (> 0).
    state : AdamState, optional
        The state the previous step returned.
    betas, eps
        As in PyTorch (0.9, 0.999) and 1e-8.
    """
    lr = check_positive("lr", lr)
    _check_keys(params, grads)
    b1, b2 = betas
    if state is None:
        state = AdamState({k: np.zeros_like(p, dtype=float) for k, p in params.items()},
                          {k: np.zeros_like(p, dtype=float) for k, p in params.items()}, 0)
    t = state.t + 1
    new, m, v = {}, {}, {}
    with np.errstate(over="ignore", invalid="ignore"):
        for k, p in params.items():
            g = np.asarray(grads[k], dtype=float)
            m[k] = b1 * state.m[k] + (1 - b1) * g
            v[k] = b2 * state.v[k] + (1 - b2) * g * g
            step = (m[k] / (1 - b1 ** t)) / (np.sqrt(v[k] / (1 - b2 ** t)) + eps)
            new[k] = np.asarray(p, dtype=float) - lr * step
    return new, AdamState(m, v, t)


def _check_keys(params: Mapping, grads: Mapping) -> None:
    """A ValueError unless every parameter has a gradient of its shape."""
    for k, p in params.items():
        if k not in grads:
            raise ValueError(f"no gradient for the parameter {k!r}")
        if np.shape(grads[k]) != np.shape(p):
            raise ValueError(f"the gradient of {k!r} has shape {np.shape(grads[k])}, the "
                             f"parameter {np.shape(p)}")
