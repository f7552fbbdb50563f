"""The backward pass of a list of steps against torch.autograd (float64): QK-norm with a gain
per dimension, RoPE (split-half and interleaved, partial, scaled), scale and τ, ALiBi, the
soft-cap, a sliding window and a sink logit. The forward is written here in torch from the
formulas. Skipped where torch is not installed."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from attnviz.core import steps as S  # noqa: E402 - after the importorskip


def torch_rope(x, layout, d_rot, inv_freq, a, offset):
    t = x.shape[0]
    ang = (torch.arange(t, dtype=torch.float64) + offset)[:, None] * inv_freq[None, :]
    c, s = torch.cos(ang) * a, torch.sin(ang) * a
    rot, rest = x[:, :d_rot], x[:, d_rot:]
    if layout == "split_half":
        u, w = rot[:, :d_rot // 2], rot[:, d_rot // 2:]
        out = torch.cat([u * c - w * s, u * s + w * c], dim=1)
    else:
        u, w = rot[:, 0::2], rot[:, 1::2]
        out = torch.stack([u * c - w * s, u * s + w * c], dim=2).reshape(t, d_rot)
    return torch.cat([out, rest], dim=1)


@pytest.mark.parametrize("layout", ["split_half", "interleaved"])
@pytest.mark.parametrize("sink", [None, 0.7])
def test_head_backward_matches_autograd(layout, sink):
    rng = np.random.default_rng(5)
    t, d = 6, 6
    q, k, v = rng.normal(size=(3, t, d))
    gq, gk = rng.uniform(0.5, 2, d), rng.uniform(0.5, 2, d)
    inv_freq = np.array([1.0, 0.2])  # rotates 4 of 6 dimensions
    steps = [S.QKNorm(tuple(gq), tuple(gk), 1e-5),
             S.RoPE(inv_freq=tuple(inv_freq), layout=layout, attention_scaling=1.2, offset=2),
             S.Scale(0.3, 0.8), S.ALiBi((0.25,), "distance"), S.SoftCap(1.7), S.Causal(),
             S.Window(4)]
    if sink is not None:
        steps.append(S.SinkSoftmax((sink,)))
    d_out, d_w = rng.normal(size=(t, d)), rng.normal(size=(t, t))
    trace = S.run_head(steps, q, k, v)
    grads = S.head_backward(steps, trace, d_out, d_weights=d_w)

    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))

    def norm(x, g):
        return x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + 1e-5) * torch.tensor(g)

    fq = torch_rope(norm(tq, gq), layout, 4, torch.tensor(inv_freq), 1.2, 2.0)
    fk = torch_rope(norm(tk, gk), layout, 4, torch.tensor(inv_freq), 1.2, 2.0)
    s = fq @ fk.T * (0.3 / 0.8)
    i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
    s = s - 0.25 * (i - j)
    s = 1.7 * torch.tanh(s / 1.7)
    s = s.masked_fill(~((j <= i) & (j > i - 4)), float("-inf"))
    if sink is None:
        p = torch.softmax(s, dim=1)
    else:
        full = torch.softmax(torch.cat([s, torch.full((t, 1), sink, dtype=torch.float64)], 1), 1)
        p = full[:, :-1]
    out = p @ tv
    loss = (out * torch.tensor(d_out)).sum() + (p * torch.tensor(d_w)).sum()
    loss.backward()
    np.testing.assert_allclose(trace.weights, p.detach().numpy(), atol=1e-13)
    np.testing.assert_allclose(grads.d_q_in, tq.grad.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(grads.d_k_in, tk.grad.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(grads.d_v, tv.grad.numpy(), rtol=0, atol=1e-10)
