"""The backward pass against torch.autograd (float64, to 1e-10) on random shapes, masks, head
counts, shared key/value heads, biases and soft-capping.

The forward is written here in torch from the formulas (repeat_interleave for the shared
heads, masked_fill with −inf, torch.softmax, tanh soft-capping), and autograd differentiates
L = Σ O ∘ D + Σ P ∘ E. Skipped where torch is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from attnviz.core.attention import attend_heads  # noqa: E402 - after the importorskip
from attnviz.core.backward import attention_backward  # noqa: E402

TOL = 1e-10


def torch_forward(q, k, v, w_o, mask, factor, bias, softcap):
    """Output and weights of attend_heads, in torch."""
    group = q.shape[0] // k.shape[0]
    kq, vq = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
    s = q @ kq.transpose(1, 2) * factor
    if bias is not None:
        s = s + bias
    if softcap is not None:
        s = softcap * torch.tanh(s / softcap)
    m = torch.from_numpy(mask)
    live = m.any(dim=1, keepdim=True)  # a fully masked query: zero weights (torch gives NaN)
    s = s.masked_fill(~(m | ~live), float("-inf"))
    p = torch.softmax(s, dim=-1) * live
    out = (p @ vq).transpose(0, 1).reshape(q.shape[1], -1)
    return (out if w_o is None else out @ w_o), p


@pytest.mark.parametrize("seed", range(12))
def test_attention_backward_matches_autograd(seed):
    rng = np.random.default_rng(seed)
    n_kv = int(rng.integers(1, 3))
    n = n_kv * int(rng.integers(1, 4))
    t_q, t_k, d_k, d_v = (int(a) for a in rng.integers(1, 6, size=4))
    mask = rng.random((t_q, t_k)) < 0.6
    if seed % 3 == 0:
        mask[0] = False  # a fully masked query
    arrays = dict(q=rng.normal(size=(n, t_q, d_k)), k=rng.normal(size=(n_kv, t_k, d_k)),
                  v=rng.normal(size=(n_kv, t_k, d_v)))
    w_o = rng.normal(size=(n * d_v, 3)) if seed % 2 else None
    bias = rng.normal(size=(n, t_q, t_k)) if seed % 4 == 1 else None
    softcap = 1.3 if seed % 5 == 2 else None
    scale, temperature = float(rng.uniform(0.2, 2)), float(rng.uniform(0.5, 2))
    result = attend_heads(arrays["q"], arrays["k"], arrays["v"], mask=mask, scale=scale,
                          temperature=temperature, bias=bias, softcap=softcap, w_o=w_o)
    d_out = rng.normal(size=result.output.shape)
    d_p = rng.normal(size=result.weights.shape)
    ours = attention_backward(result, d_out, d_weights=d_p)

    t = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()}
    t_wo = None if w_o is None else torch.tensor(w_o, requires_grad=True)
    out, p = torch_forward(t["q"], t["k"], t["v"], t_wo, mask, scale / temperature,
                           None if bias is None else torch.tensor(bias), softcap)
    np.testing.assert_allclose(out.detach().numpy(), result.output, atol=1e-12)
    loss = (out * torch.tensor(d_out)).sum() + (p * torch.tensor(d_p)).sum()
    loss.backward()
    for name, g in (("q", ours.d_q), ("k", ours.d_k), ("v", ours.d_v)):
        np.testing.assert_allclose(g, t[name].grad.numpy(), rtol=TOL, atol=TOL, err_msg=name)
    if w_o is not None:
        np.testing.assert_allclose(ours.d_w_o, t_wo.grad.numpy(), rtol=TOL, atol=TOL)
    assert not np.isnan(ours.d_scaled).any()
