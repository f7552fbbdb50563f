"""QK-LayerNorm as a step (Phi's and StableLM's qk_layernorm): its forward is torch's
LayerNorm per head, and a head's backward through it (with partial RoPE after it, as those
models apply it) is torch.autograd's, float64. A gain and bias per head pick the head's row;
settings that do not fit are refused in a sentence."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_steps_torch import torch_rope  # noqa: E402 - after the importorskip

from attnviz.core import steps as S  # noqa: E402


@pytest.mark.parametrize("per_head", [False, True])
def test_head_backward_through_qk_layernorm_matches_autograd(per_head):
    rng = np.random.default_rng(11)
    t, d, n = 6, 4, 3
    head = 2 if per_head else 0
    gq, gk, bq, bk = rng.normal(1, 0.5, (4, n if per_head else 1, d))
    if not per_head:
        bk = np.zeros_like(bk)  # Phi has a bias, StableLM none
    step = S.QKLayerNorm(gq.tolist(), gk.tolist(), bq.tolist(), bk.tolist(), 1e-5)
    inv_freq = np.array([0.7])  # rotates 2 of 4 dimensions
    steps = [S.Heads(), step, S.RoPE(inv_freq=tuple(inv_freq)), S.Scale(), S.Causal()]
    q, k, v = rng.normal(size=(3, t, d))
    d_out, d_w = rng.normal(size=(t, d)), rng.normal(size=(t, t))
    trace = S.run_head(steps, q, k, v, head=head, n_heads=n)
    grads = S.head_backward(steps, trace, d_out, d_weights=d_w)

    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    r = head if per_head else 0

    def norm(x, g, b):
        return torch.nn.functional.layer_norm(x, (d,), torch.tensor(g[r]), torch.tensor(b[r]),
                                              1e-5)

    fq = torch_rope(norm(tq, gq, bq), "split_half", 2, torch.tensor(inv_freq), 1.0, 0.0)
    fk = torch_rope(norm(tk, gk, bk), "split_half", 2, torch.tensor(inv_freq), 1.0, 0.0)
    s = (fq @ fk.T / np.sqrt(d)).masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(),
                                             float("-inf"))
    p = torch.softmax(s, dim=1)
    loss = (p @ tv * torch.tensor(d_out)).sum() + (p * torch.tensor(d_w)).sum()
    loss.backward()
    np.testing.assert_allclose(trace.q_stages[1], norm(tq, gq, bq).detach().numpy(), atol=1e-14)
    np.testing.assert_allclose(trace.weights, p.detach().numpy(), atol=1e-13)
    np.testing.assert_allclose(grads.d_q_in, tq.grad.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(grads.d_k_in, tk.grad.numpy(), rtol=0, atol=1e-10)


def test_it_reads_and_writes_as_a_small_dictionary():
    step = S.QKLayerNorm([1.0, 2.0], 0.5, [[0.1, 0.2], [0.3, 0.4]], 0.0, 1e-6)
    assert step.q_gain == ((1.0, 2.0),) and step.k_gain == ((0.5,),)
    (back,) = S.from_dicts(S.to_dicts([step]))
    assert back.to_dict() == step.to_dict() and back.q_bias == ((0.1, 0.2), (0.3, 0.4))
    assert "var" in step.written()


@pytest.mark.parametrize(("kwargs", "head", "words"), [
    (dict(q_gain=[1.0, 2.0, 3.0]), 0, r"holds 3 numbers; it does not fit heads of width 4"),
    (dict(k_bias=[[0.0], [1.0]]), 2, r"holds 2 rows of the key bias, one per head; it has none "
                                     r"for head 2"),
])
def test_settings_that_do_not_fit_are_refused_in_a_sentence(kwargs, head, words):
    steps = [S.Heads(), S.QKLayerNorm(**kwargs), S.Causal()]
    x = np.ones((3, 4)) * np.arange(4)
    with pytest.raises(ValueError, match=words):
        S.run_head(steps, x, x, x, head=head, n_heads=3)
    with pytest.raises(ValueError, match=r"the query gain must be a table of finite numbers"):
        S.QKLayerNorm(q_gain=[[1.0, float("nan")]])
