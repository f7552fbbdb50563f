"""QK-norm across heads as a step (OLMo 2's one RMSNorm over every head's q together): one
head's slice of the joint norm, the other heads' share of each row's mean square given.

Its forward is the head's slice of torch's RMSNorm over all heads; its backward is
torch.autograd's gradient of that joint norm with respect to this head's q and k (the other
heads' q and k are other variables), through RoPE, the scale, the causal mask and the softmax,
float64; and it matches finite differences. Settings that do not fit are refused in a
sentence."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.core import steps as S

T, D, N = 5, 4, 3  # positions, head width, heads


def shares(x_all: np.ndarray, head: int) -> np.ndarray:
    """The other heads' sum of squares at each position, (t,)."""
    sq = np.sum(x_all ** 2, axis=2)  # (n, t)
    return np.delete(sq, head, axis=0).sum(axis=0)


def step_for(q_all, k_all, gq, gk, head, eps=1e-6):
    return S.QKNormAcross([gq[head]], [gk[head]], [shares(q_all, head)],
                          [shares(k_all, head)], N * D, N * D, eps)


def test_it_is_the_heads_slice_of_one_rmsnorm_over_every_head():
    rng = np.random.default_rng(0)
    q_all = rng.normal(size=(N, T, D))
    gain = rng.uniform(0.5, 2, (N, D))
    joint = q_all.transpose(1, 0, 2).reshape(T, N * D)  # (t, n·d), heads side by side
    normed = joint / np.sqrt(np.mean(joint ** 2, axis=1, keepdims=True) + 1e-6) \
        * gain.reshape(-1)
    for h in range(N):
        step = step_for(q_all, q_all, gain, gain, h)
        np.testing.assert_allclose(step.forward(q_all[h], "q", 0), normed[:, h * D:(h + 1) * D],
                                   rtol=0, atol=1e-14)
    per_head = S.QKNorm(tuple(gain[0]), tuple(gain[0]), 1e-6).forward(q_all[0], "q", 0)
    alone = S.QKNormAcross([gain[0]], [gain[0]], eps=1e-6).forward(q_all[0], "q", 0)
    np.testing.assert_allclose(alone, per_head, rtol=0, atol=1e-15)  # ρ = 0, D = d_k
    assert np.abs(step_for(q_all, q_all, gain, gain, 0).forward(q_all[0], "q", 0)
                  - per_head).max() > 1e-2  # the other heads count


def loss_of(steps, q, k, v, d_out, d_w):
    tr = S.run_head(steps, q, k, v)
    return float(np.sum(tr.output * d_out) + np.sum(tr.weights * d_w))


def test_head_backward_matches_finite_differences():
    rng = np.random.default_rng(4)
    q_all, k_all = rng.normal(size=(2, N, T, D))
    gq, gk = rng.uniform(0.5, 2, (2, N, D))
    head = 1
    steps = [step_for(q_all, k_all, gq, gk, head), S.RoPE(inv_freq=(1.0, 0.3)), S.Scale(),
             S.Causal()]
    q, k, v = q_all[head], k_all[head], rng.normal(size=(T, 3))
    d_out, d_w = rng.normal(size=(T, 3)), rng.normal(size=(T, T))
    g = S.head_backward(steps, S.run_head(steps, q, k, v), d_out, d_weights=d_w)
    eps = 1e-6
    for which, grad in (("q", g.d_q_in), ("k", g.d_k_in)):
        num = np.zeros((T, D))
        for idx in np.ndindex(num.shape):
            arrays = []
            for sign in (1, -1):
                a = dict(q=q.copy(), k=k.copy())
                a[which][idx] += sign * eps
                arrays.append(loss_of(steps, a["q"], a["k"], v, d_out, d_w))
            num[idx] = (arrays[0] - arrays[1]) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-7)


def test_head_backward_is_autograd_of_the_joint_norm():
    torch = pytest.importorskip("torch")
    from test_steps_torch import torch_rope

    rng = np.random.default_rng(9)
    q_all, k_all = rng.normal(size=(2, N, T, D))
    gq, gk = rng.uniform(0.5, 2, (2, N, D))
    head, eps = 2, 1e-5
    inv_freq = np.array([0.9, 0.2])
    steps = [step_for(q_all, k_all, gq, gk, head, eps), S.RoPE(inv_freq=tuple(inv_freq)),
             S.Scale(), S.Causal()]
    v = rng.normal(size=(T, D))
    d_out, d_w = rng.normal(size=(T, D)), rng.normal(size=(T, T))
    trace = S.run_head(steps, q_all[head], k_all[head], v)
    grads = S.head_backward(steps, trace, d_out, d_weights=d_w)

    tq, tk = (torch.tensor(a.transpose(1, 0, 2).reshape(T, N * D), requires_grad=True)
              for a in (q_all, k_all))  # every head's q side by side, as OLMo 2 holds it

    def joint(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * torch.tensor(g.reshape(-1))

    cut = slice(head * D, (head + 1) * D)
    fq = torch_rope(joint(tq, gq)[:, cut], "split_half", 4, torch.tensor(inv_freq), 1.0, 0.0)
    fk = torch_rope(joint(tk, gk)[:, cut], "split_half", 4, torch.tensor(inv_freq), 1.0, 0.0)
    s = (fq @ fk.T / np.sqrt(D)).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(),
                                             float("-inf"))
    p = torch.softmax(s, dim=1)
    loss = (p @ torch.tensor(v) * torch.tensor(d_out)).sum() + (p * torch.tensor(d_w)).sum()
    loss.backward()
    np.testing.assert_allclose(trace.weights, p.detach().numpy(), rtol=0, atol=1e-13)
    np.testing.assert_allclose(grads.d_q_in, tq.grad.numpy()[:, cut], rtol=0, atol=1e-10)
    np.testing.assert_allclose(grads.d_k_in, tk.grad.numpy()[:, cut], rtol=0, atol=1e-10)


def test_it_reads_and_writes_as_a_small_dictionary():
    step = S.QKNormAcross([1.0, 2.0], 0.5, [[0.1, 0.2, 0.3]], 0.0, 8, None, 1e-6)
    (back,) = S.from_dicts(S.to_dicts([step]))
    assert back.to_dict() == step.to_dict() and back.q_rest == ((0.1, 0.2, 0.3),)
    assert back.q_width == 8 and back.k_width is None
    assert r"\rho" in step.written() and "held" in step.written()


@pytest.mark.parametrize(("kwargs", "words"), [
    (dict(q_rest=[[1.0, 2.0]]), r"holds the other heads' share of the query for 2 positions; "
                                r"this sequence has 3"),
    (dict(k_gain=[1.0, 2.0, 3.0]), r"holds 3 numbers; it does not fit heads of width 4"),
    (dict(q_width=2), r"takes the mean of the query over 2 dimensions, fewer than a head's 4"),
    (dict(q_rest=[[1.0], [2.0]]), r"holds 2 rows of the query other heads' share, one per "
                                  r"head; it has none for head 2"),
])
def test_settings_that_do_not_fit_are_refused_in_a_sentence(kwargs, words):
    steps = [S.QKNormAcross(**kwargs), S.Causal()]
    x = np.ones((3, 4)) * np.arange(4)
    with pytest.raises(ValueError, match=words):
        S.run_head(steps, x, x, x, head=2, n_heads=3)
    with pytest.raises(ValueError, match=r"sum of squares of the key must be >= 0"):
        S.QKNormAcross(k_rest=[-1.0])
    with pytest.raises(ValueError, match=r"whole number >= 1"):
        S.QKNormAcross(q_width=0)
