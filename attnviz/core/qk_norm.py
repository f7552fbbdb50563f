"""QK-norm: RMS-normalise each query and key (per head) before the scores, with a gain.

Henry et al. (2020), "Query-Key Normalization for Transformers", https://arxiv.org/abs/2010.04245;
with RMSNorm (Zhang & Sennrich, 2019) as in OLMo 2, Gemma 3 and Qwen 3:

    rms_norm(x) = x / sqrt(mean(x²) + eps) · g

applied to every row of q and of k, over one head's d_k dimensions. The scores then lie in
[−d_k·g_q·g_k, d_k·g_q·g_k] whatever the size of the embeddings and weights, so the softmax
cannot saturate from growing logits.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attnviz.core.checks import as_array, check_positive

Array = NDArray[np.floating]


def rms_norm(x, gain=1.0, *, eps: float = 1e-6) -> Array:
    """x / sqrt(mean(x², last axis) + eps) · gain.

    Parameters
    ----------
    x : array_like of shape (..., d)
    gain : float or array_like of shape (d,)
        The learnable gain g (1 = none).
    eps : float
        Added under the root (> 0): a zero row stays zero instead of dividing by 0.

    Returns
    -------
    ndarray of the shape of ``x``
    """
    x = as_array("x", x, (1, 2, 3, 4))
    eps = check_positive("eps", eps)
    gain = as_array("gain", np.atleast_1d(np.asarray(gain, dtype=float)), 1)
    if gain.shape[0] not in (1, x.shape[-1]):
        raise ValueError(f"gain must be one number or one per dimension ({x.shape[-1]}), got "
                         f"{gain.shape[0]}")
    rms = _rms(x, eps)  # (..., 1)
    return x / rms * gain


def _rms(x: Array, eps: float) -> Array:
    """sqrt(mean(x², last axis) + eps), without overflow at the dtype's extremes.

    Squaring overflows from |x| ≈ 1.8e19 in float32 (1.3e154 in float64): a row whose largest
    |x| could overflow the mean of the squares is divided by s = max|x| before squaring and
    the root multiplied by s again, ``s · sqrt(mean((x/s)²) + eps/s²)``; every other row has
    s = 1, the plain formula bit for bit.
    """
    top = np.max(np.abs(x), axis=-1, keepdims=True)
    s = np.where(top > _big(x), top, 1.0).astype(x.dtype)  # (..., 1)
    y = x / s
    return s * np.sqrt(np.mean(y * y, axis=-1, keepdims=True) + eps / s / s)


def _big(x: Array) -> float:
    """The largest |x| whose d squares (d = the last axis) cannot overflow their sum."""
    return float(np.sqrt(np.finfo(x.dtype).max / (2 * x.shape[-1])))


def rms_norm_backward(x, d_y, gain=1.0, *, eps: float = 1e-6) -> Array:
    """The gradient of :func:`rms_norm` with respect to ``x``, given ∂L/∂y.

    With r = sqrt(mean(x²) + eps) over the last axis (width d) and y = x / r · g::

        ∂L/∂x = (g ∘ dy − x · Σ(g ∘ dy ∘ x) / (d r²)) / r

    Parameters
    ----------
    x : array_like of shape (..., d)
        The input the forward normalised.
    d_y : array_like of the same shape
    gain, eps
        As in :func:`rms_norm`.

    Returns
    -------
    ndarray of the shape of ``x``
    """
    x = as_array("x", x, (1, 2, 3, 4))
    d_y = as_array("d_y", d_y, (1, 2, 3, 4))
    eps = check_positive("eps", eps)
    gain = np.atleast_1d(np.asarray(gain, dtype=float))
    rms = _rms(x, eps)  # (..., 1)
    g_dy = d_y * gain
    if np.max(np.abs(x), initial=0.0) <= _big(x):  # the formula as written
        inner = np.sum(g_dy * x, axis=-1, keepdims=True) / (x.shape[-1] * rms * rms)
        return (g_dy - x * inner) / rms
    x_hat = x / rms  # |x_hat| <= sqrt(d): x · Σ(g∘dy∘x) / (d r²) without squaring r or x
    inner = np.sum(g_dy * x_hat, axis=-1, keepdims=True) / x.shape[-1]
    return (g_dy - x_hat * inner) / rms


def layer_norm(x, gain=1.0, bias=0.0, *, eps: float = 1e-5) -> Array:
    """(x − mean(x)) / sqrt(var(x) + eps) · gain + bias over the last axis (Ba et al., 2016;
    the population variance, as torch's LayerNorm): the QK-norm of Phi and StableLM.

    Parameters
    ----------
    x : array_like of shape (..., d)
    gain, bias : float or array_like of shape (d,)
    eps : float
        Added under the root (> 0).

    Returns
    -------
    ndarray of the shape of ``x``
    """
    x = as_array("x", x, (1, 2, 3, 4))
    eps = check_positive("eps", eps)
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps) \
        * np.asarray(gain, dtype=float) + np.asarray(bias, dtype=float)


def layer_norm_backward(x, d_y, gain=1.0, *, eps: float = 1e-5) -> Array:
    """The gradient of :func:`layer_norm` with respect to ``x``, given ∂L/∂y.

    With σ = sqrt(var(x) + eps), x̂ = (x − mean(x)) / σ and g = gain ∘ dy::

        ∂L/∂x = (g − mean(g) − x̂ · mean(g ∘ x̂)) / σ

    (the bias adds a constant, so it does not enter.)
    """
    x = np.asarray(x, dtype=float)
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)
    x_hat = centred / sigma
    g = np.asarray(d_y, dtype=float) * np.asarray(gain, dtype=float)
    return (g - g.mean(axis=-1, keepdims=True)
            - x_hat * np.mean(g * x_hat, axis=-1, keepdims=True)) / sigma
