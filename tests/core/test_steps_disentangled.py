"""DeBERTa's disentangled attention as a step: content-to-position and position-to-content
terms from q and k added to the scaled scores.

Against explicit loops written here from the formula; the head's backward (run_head /
head_backward) and the whole layer's (attend_steps, then the core's attention_backward, the
one the pages use) against finite differences and torch.autograd of the same formula written
in torch with gather as Hugging Face writes it, float64; each term matters; its formula, its
traced cell and its dictionary; settings that do not fit are refused in a sentence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.core import steps as S
from attnviz.core.backward import attention_backward
from attnviz.core.steps.disentangled import RelativeTerms

T, D, R, N = 5, 4, 6, 2  # positions, head width, relative positions, heads
C = 1 / math.sqrt(3 * D)


def index_tables(t: int, span: int = 3):
    """δ_c as Hugging Face computes it without buckets, clamp(i − j + span); δ_p any other
    table (for DeBERTa it equals δ_c; a different one shows which term reads which)."""
    rel = np.arange(t)[:, None] - np.arange(t)[None, :]
    c2p = np.clip(rel + span, 0, 2 * span - 1)
    p2c = np.random.default_rng(t).integers(0, 2 * span, (t, t))
    return c2p, p2c


def make(rng, heads=1, c2p=True, p2c=True):
    kr, qr = rng.normal(size=(2, heads, R, D))
    i_c, i_p = index_tables(T)
    return S.Disentangled(kr if c2p else (), qr if p2c else (), i_c if c2p else (),
                          i_p if p2c else (), C), kr, qr, i_c, i_p


def loop_scores(q, k, kr, qr, i_c, i_p):
    out = np.zeros((T, T))
    for i in range(T):
        for j in range(T):
            s = sum(q[i, m] * k[j, m] for m in range(D)) * C
            s += C * sum(q[i, m] * kr[i_c[i, j], m] for m in range(D))
            s += C * sum(k[j, m] * qr[i_p[i, j], m] for m in range(D))
            out[i, j] = s
    return out


def test_it_adds_both_terms_as_the_loops_do():
    rng = np.random.default_rng(1)
    step, kr, qr, i_c, i_p = make(rng)
    q, k, v = rng.normal(size=(3, T, D))
    tr = S.run_head([S.Scale(C), step], q, k, v)
    np.testing.assert_allclose(tr.scaled, loop_scores(q, k, kr[0], qr[0], i_c, i_p), rtol=0,
                               atol=1e-13)
    for kept in ({"c2p": False}, {"p2c": False}):  # each term matters
        alone = make(np.random.default_rng(1), **kept)[0]
        other = S.run_head([S.Scale(C), alone], q, k, v)
        assert np.abs(other.weights - tr.weights).max() > 1e-2


def loss_of(steps, q, k, v, d_out, d_w):
    tr = S.run_head(steps, q, k, v)
    return float(np.sum(tr.output * d_out) + np.sum(tr.weights * d_w))


@pytest.mark.parametrize("terms", [dict(), dict(c2p=False), dict(p2c=False)])
def test_head_backward_matches_finite_differences(terms):
    rng = np.random.default_rng(2)
    step = make(rng, **terms)[0]
    steps = [S.Scale(C), step, S.Causal()]
    q, k, v = rng.normal(size=(3, T, D))
    d_out, d_w = rng.normal(size=(T, D)), rng.normal(size=(T, T))
    g = S.head_backward(steps, S.run_head(steps, q, k, v), d_out, d_weights=d_w)
    eps = 1e-6
    for which, grad in (("q", g.d_q_in), ("k", g.d_k_in)):
        num = np.zeros((T, D))
        for idx in np.ndindex(num.shape):
            ends = []
            for sign in (1, -1):
                a = dict(q=q.copy(), k=k.copy())
                a[which][idx] += sign * eps
                ends.append(loss_of(steps, a["q"], a["k"], v, d_out, d_w))
            num[idx] = (ends[0] - ends[1]) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-7)


def torch_layer(torch, q, k, v, kr, qr, i_c, i_p, w_o):
    """Every head as Hugging Face computes it: gather of q·K^rᵀ by δ_c, of k·Q^rᵀ by δ_p
    transposed, all over √(3 d_k); then softmax, the values and W_O."""
    s = q @ k.transpose(-1, -2) * C  # (n, t, t)
    c2p = torch.gather(q @ kr.transpose(-1, -2), -1, torch.tensor(i_c).expand(N, T, T))
    p2c = torch.gather(k @ qr.transpose(-1, -2), -1,
                       torch.tensor(i_p.T).expand(N, T, T)).transpose(-1, -2)
    p = torch.softmax(s + C * (c2p + p2c), dim=-1)
    return p, (p @ v).transpose(0, 1).reshape(T, -1) @ w_o


def test_the_layers_backward_is_autograd():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    step, kr, qr, i_c, i_p = make(rng, heads=N)
    q_h, k_h, v_h = rng.normal(size=(3, N, T, D))
    w_o = rng.normal(size=(N * D, 3))
    steps = [S.Heads(N, N, project_out=True), S.Scale(C), step]
    res = S.attend_steps(steps, q_h, k_h, v_h, w_o=w_o)
    d_out, d_w = rng.normal(size=(T, 3)), rng.normal(size=(N, T, T))
    grads = attention_backward(res, d_out, d_weights=d_w)

    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q_h, k_h, v_h))
    p, out = torch_layer(torch, tq, tk, tv, torch.tensor(kr), torch.tensor(qr), i_c, i_p,
                         torch.tensor(w_o))
    ((out * torch.tensor(d_out)).sum() + (p * torch.tensor(d_w)).sum()).backward()
    np.testing.assert_allclose(res.weights, p.detach().numpy(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(grads.d_q, tq.grad.numpy(), rtol=0, atol=1e-11)
    np.testing.assert_allclose(grads.d_k, tk.grad.numpy(), rtol=0, atol=1e-11)
    for h in range(N):  # one head alone: the same weights and gradients
        tr = S.run_head(steps, q_h[h], k_h[h], v_h[h], head=h, n_heads=N)
        np.testing.assert_allclose(tr.weights, res.weights[h], rtol=0, atol=1e-15)
        g = S.head_backward(steps, tr, d_weights=d_w[h])
        assert np.abs(g.d_q_in).max() > 0


def test_it_writes_its_formula_and_traces_a_cell():
    rng = np.random.default_rng(4)
    step = make(rng)[0]
    assert r"q_i \cdot K^r_{\delta_c(i,j)}" in step.written()
    assert r"k_j \cdot Q^r_{\delta_p(i,j)}" in step.written()
    assert "Q^r_" not in make(rng, p2c=False)[0].written()
    q, k, v = rng.normal(size=(3, T, D))
    res = S.attend_steps([S.Scale(C), step], q[None], k[None], v[None])
    (mod,) = [m for m in res.score_mods if isinstance(m, RelativeTerms)]
    from attnviz.core.score_mods import At
    at = At(np.intp(0), np.intp(2), np.intp(1))
    before = float(res.scores[2, 1] * C)
    traced = mod.traced(before, float(res.scaled[2, 1]), at, lambda x: f"{x:.3f}")
    assert "c2p" in traced and "p2c" in traced and f"{res.scaled[2, 1]:.3f}" in traced


def test_it_reads_and_writes_as_a_small_dictionary():
    step = make(np.random.default_rng(5))[0]
    (back,) = S.from_dicts(S.to_dicts([step]))
    assert back.to_dict() == step.to_dict()


@pytest.mark.parametrize(("kwargs", "words"), [
    (dict(c2p=np.zeros((3, 3), int)), r"holds relative positions for 3 × 3 queries and keys; "
                                      r"this sequence has 5 × 5"),
    (dict(pos_key=np.zeros((1, R, 3))), r"are 3 wide; they do not fit heads of width 4"),
    (dict(c2p=np.full((T, T), R)), r"index reads row 6 of 6 projected positions"),
])
def test_settings_that_do_not_fit_are_refused_in_a_sentence(kwargs, words):
    rng = np.random.default_rng(6)
    kr, qr = rng.normal(size=(2, 1, R, D))
    i_c, i_p = index_tables(T)
    settings = dict(pos_key=kr, pos_query=qr, c2p=i_c, p2c=i_p, scale=C) | kwargs
    x = np.ones((T, D))
    with pytest.raises(ValueError, match=words):
        S.run_head([S.Disentangled(**settings)], x, x, x)
    with pytest.raises(ValueError, match=r"needs both its projected positions and its index"):
        S.Disentangled(pos_key=kr)
    with pytest.raises(ValueError, match=r"need the projected positions and their index"):
        S.Disentangled()
    with pytest.raises(ValueError, match=r"whole numbers >= 0"):
        S.Disentangled(pos_key=kr, c2p=-np.ones((T, T)))
