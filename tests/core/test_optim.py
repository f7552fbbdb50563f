"""SGD and Adam (attnviz.core.optim) against the update rules written out and against
torch.optim (float64, to 1e-12), over many steps."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.core.optim import adam_step, sgd_step


def test_sgd_is_p_minus_lr_g_and_leaves_its_inputs_alone():
    p, g = {"w": np.array([1.0, -2.0])}, {"w": np.array([0.5, 4.0])}
    new = sgd_step(p, g, 0.1)
    np.testing.assert_array_equal(new["w"], [0.95, -2.4])
    np.testing.assert_array_equal(p["w"], [1.0, -2.0])


def test_adam_first_step_moves_each_entry_by_about_lr():
    p, g = {"w": np.array([1.0, -2.0, 3.0])}, {"w": np.array([0.5, -4.0, 0.0])}
    new, state = adam_step(p, g, 0.01)
    # step 1: m̂ = g, v̂ = g², so the move is lr·g/(|g| + ε)
    np.testing.assert_allclose(new["w"], [1.0 - 0.01 * 0.5 / (0.5 + 1e-8),
                                          -2.0 + 0.01 * 4 / (4 + 1e-8), 3.0], rtol=1e-15)
    assert state.t == 1


def test_mismatched_gradients_are_refused():
    with pytest.raises(ValueError, match="no gradient"):
        sgd_step({"w": np.zeros(2)}, {}, 0.1)
    with pytest.raises(ValueError, match="shape"):
        adam_step({"w": np.zeros(2)}, {"w": np.zeros(3)}, 0.1)
    with pytest.raises(ValueError, match="lr"):
        sgd_step({"w": np.zeros(2)}, {"w": np.zeros(2)}, -1.0)


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_many_steps_match_torch_optim(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    start = {"a": rng.normal(size=(3, 2)), "b": rng.normal(size=4)}
    ours = dict(start)
    tensors = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in start.items()}
    opt = (torch.optim.SGD if name == "sgd" else torch.optim.Adam)(tensors.values(), lr=0.05)
    state = None
    for _ in range(25):
        grads = {k: rng.normal(size=v.shape) for k, v in start.items()}
        if name == "sgd":
            ours = sgd_step(ours, grads, 0.05)
        else:
            ours, state = adam_step(ours, grads, 0.05, state)
        opt.zero_grad()
        for k, t in tensors.items():
            t.grad = torch.tensor(grads[k])
        opt.step()
    for k, t in tensors.items():
        np.testing.assert_allclose(ours[k], t.detach().numpy(), rtol=1e-12, atol=1e-12)
