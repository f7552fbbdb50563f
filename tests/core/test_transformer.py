"""The attention-only transformer (attnviz.core.transformer): every parameter's gradient against
PyTorch autograd (float64, to 1e-10) for 1–3 layers, with and without layer norm, every
positional choice, with heads ablated; central finite differences on one small case without
torch; properties of the forward (causality, the residual stream, ablation, the loss mask) and
the validation messages.

The torch forward is written here from the module docstring's formulas (nothing imported from
attnviz but the parameters), so the two implementations agree only if both follow them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.core.optim import adam_step
from attnviz.core.transformer import (
    Params,
    TransformerConfig,
    backward,
    copying_score,
    forward,
    head_view,
    init_params,
    loss_and_gradients,
    ov_circuit,
)

TOL = 1e-10


def random_case(seed: int, *, n_layers: int, layer_norm: bool, positional: str,
                ablate: bool):
    """A random model (parameters perturbed away from their init), batch, masks."""
    rng = np.random.default_rng(seed)
    vocab, n_ctx = int(rng.integers(3, 9)), int(rng.integers(5, 9))
    config = TransformerConfig(vocab_size=vocab, n_ctx=n_ctx, d_model=int(rng.integers(3, 7)),
                               n_layers=n_layers, n_heads=int(rng.integers(1, 4)),
                               d_head=2 * int(rng.integers(1, 3)), positional=positional,
                               layer_norm=layer_norm)
    params = init_params(config, seed=seed)
    # gains and biases away from 1 and 0, so their gradients are tested in general position
    params = params.replace({k: a + 0.3 * rng.standard_normal(a.shape) for k, a in
                             params.items()})
    batch, t = int(rng.integers(1, 4)), int(rng.integers(2, n_ctx + 1))
    tokens = rng.integers(0, vocab, size=(batch, t))
    loss_mask = rng.random((batch, t - 1)) < 0.6
    loss_mask[0, 0] = True
    head_mask = None
    if ablate:
        head_mask = rng.random((n_layers, config.n_heads)) < 0.6
        head_mask[-1, 0] = False
    return params, tokens, loss_mask, head_mask


# ------------------------------------------------------------------------------ torch reference


def torch_loss(torch, params: Params, tokens, loss_mask, head_mask):
    """The loss in torch, from the formulas; returns (loss, the leaf tensors by name)."""
    config = params.config
    leaves = {k: torch.tensor(np.array(a), requires_grad=True) for k, a in params.items()}
    tok = torch.from_numpy(np.asarray(tokens))
    batch, t = tok.shape
    x = leaves["embed"][tok]
    if config.positional == "learned":
        x = x + leaves["pos"][:t]
    elif config.positional == "sinusoidal":
        pos = torch.arange(t, dtype=torch.float64)[:, None]
        i = torch.arange(config.d_model, dtype=torch.float64)
        angle = pos / 10000.0 ** (2.0 * torch.div(i, 2, rounding_mode="floor") / config.d_model)
        x = x + torch.where(i.long() % 2 == 0, torch.sin(angle), torch.cos(angle))
    keep = torch.ones(config.n_layers, config.n_heads, dtype=torch.float64) if head_mask is None \
        else torch.from_numpy(np.asarray(head_mask, dtype=np.float64))
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))

    def norm(x, name):
        return torch.nn.functional.layer_norm(x, (config.d_model,), leaves[f"{name}.ln_gain"],
                                              leaves[f"{name}.ln_bias"], eps=1e-5)

    def rope(x):  # split-half layout, θ_i = base^(−2i/d)
        e = x.shape[-1]
        theta = config.rope_base ** (-torch.arange(0, e, 2, dtype=torch.float64) / e)
        ang = torch.arange(t, dtype=torch.float64)[:, None] * theta
        a, b = x[..., : e // 2], x[..., e // 2:]
        return torch.cat([a * ang.cos() - b * ang.sin(), a * ang.sin() + b * ang.cos()], -1)

    for layer in range(config.n_layers):
        h = norm(x, layer) if config.layer_norm else x
        q, k, v = (torch.einsum("btd,hde->bhte", h, leaves[f"{layer}.{w}"])
                   for w in ("w_q", "w_k", "w_v"))
        if config.positional == "rope":
            q, k = rope(q), rope(k)
        s = q @ k.transpose(-1, -2) / config.d_head ** 0.5
        if config.positional == "alibi":  # − m_h·(i − j) after the scale
            m = torch.tensor(paper_slopes(config.n_heads), dtype=torch.float64)
            ij = torch.arange(t, dtype=torch.float64)
            s = s - m[:, None, None] * (ij[:, None] - ij[None, :])
        s = s.masked_fill(~causal, float("-inf"))
        out = torch.einsum("bhte,hed->bhtd", torch.softmax(s, -1) @ v, leaves[f"{layer}.w_o"])
        x = x + torch.einsum("bhtd,h->btd", out, keep[layer])
    if config.layer_norm:
        x = norm(x, "final")
    logits = x @ leaves["unembed"]
    nll = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, config.vocab_size),
                                            tok[:, 1:].reshape(-1), reduction="none")
    m = torch.from_numpy(np.asarray(loss_mask)).reshape(-1)
    return nll[m].mean(), leaves


def paper_slopes(n: int) -> list[float]:
    """ALiBi's slopes as the paper's reference code writes them (get_slopes): a geometric
    sequence starting at 2^(−8/n) for a power of two, else the nearest lower power's slopes
    followed by every other slope of twice that power."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + paper_slopes(2 * closest)[0::2][:n - closest]


POSITIONS = ("learned", "sinusoidal", "rope", "alibi", "none")
CASES = [(n_layers, layer_norm, positional, ablate)
         for n_layers in (1, 2, 3) for layer_norm in (False, True)
         for positional in POSITIONS
         for ablate in (False, True)
         if (n_layers + POSITIONS.index(positional) + ablate) % 2 == 0 or n_layers == 2]


@pytest.mark.parametrize(("n_layers", "layer_norm", "positional", "ablate"), CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_match_autograd(seed, n_layers, layer_norm, positional, ablate):
    torch = pytest.importorskip("torch")
    params, tokens, loss_mask, head_mask = random_case(
        seed * 97 + n_layers, n_layers=n_layers, layer_norm=layer_norm, positional=positional,
        ablate=ablate)
    result, grads = loss_and_gradients(params, tokens, loss_mask=loss_mask, head_mask=head_mask)
    loss, leaves = torch_loss(torch, params, tokens, loss_mask, head_mask)
    assert abs(result.loss - loss.item()) <= TOL * max(1.0, abs(result.loss))
    loss.backward()
    assert set(grads.params) == set(leaves)
    for name, leaf in leaves.items():
        np.testing.assert_allclose(grads.params[name], leaf.grad.numpy(), rtol=TOL, atol=TOL,
                                   err_msg=name)


def test_every_configuration_is_covered_by_the_torch_cases():
    # each layer count meets layer norm on and off, every positional choice, ablation on and off
    for n_layers in (1, 2, 3):
        rows = [c for c in CASES if c[0] == n_layers]
        assert {c[1] for c in rows} == {False, True}
        assert {c[2] for c in rows} == set(POSITIONS)
        assert {c[3] for c in rows} == {False, True}


@pytest.mark.parametrize("positional", ["rope", "alibi"])
def test_training_a_few_steps_keeps_matching_autograd(positional):
    """Adam steps on a tiny model with RoPE (a change of q and k) or ALiBi (a change of the
    scores): at every step the loss and every gradient match the torch model's."""
    torch = pytest.importorskip("torch")
    params, tokens, loss_mask, _ = random_case(11, n_layers=2, layer_norm=True,
                                               positional=positional, ablate=False)
    state = None
    for _ in range(4):
        result, grads = loss_and_gradients(params, tokens, loss_mask=loss_mask)
        loss, leaves = torch_loss(torch, params, tokens, loss_mask, None)
        assert abs(result.loss - loss.item()) <= TOL * max(1.0, abs(result.loss))
        loss.backward()
        for name, leaf in leaves.items():
            np.testing.assert_allclose(grads.params[name], leaf.grad.numpy(), rtol=TOL,
                                       atol=TOL, err_msg=name)
        new, state = adam_step(params, grads.params, 3e-2, state)
        params = params.replace(new)


@pytest.mark.parametrize("positional", POSITIONS)
def test_every_head_attends_through_the_configs_steps(positional):
    """The config's list of steps (RoPE a change of q and k, ALiBi one of the scores after the
    scale) run one head and one sequence at a time gives the layer's weights and q."""
    from attnviz.core.steps import run_head

    params = small_model(positional=positional)
    steps = params.config.attention_steps()
    position = {"rope": ["rope", "scale"], "alibi": ["scale", "alibi"]}.get(positional,
                                                                           ["scale"])
    assert [s.name for s in steps] == [*position, "causal", "softmax"]
    tokens = np.array([[0, 1, 2, 3, 1, 2, 3], [6, 5, 4, 3, 5, 4, 3]])
    result = forward(params, tokens)
    for layer, r in enumerate(result.layers):
        w = params.layer(layer)
        for b in range(2):
            for head in range(2):
                x = r.x_in[b]
                one = run_head(steps, x @ w["w_q"][head], x @ w["w_k"][head],
                               x @ w["w_v"][head], head=head, n_heads=2)
                np.testing.assert_allclose(r.weights[b, head], one.weights, atol=1e-13)
                np.testing.assert_allclose(r.q[b, head], one.q, atol=1e-13)


def test_a_rope_model_learns_to_copy_a_repeated_sequence():
    """RoPE as the only position: Adam on fresh sequences that repeat their first half (a few
    seconds) brings the loss of held-out repeats from chance (ln vocab) near zero: the model
    copies, it has not memorised its batches."""
    config = TransformerConfig(vocab_size=8, n_ctx=12, d_model=16, n_layers=2, n_heads=2,
                               d_head=8, positional="rope")
    params = init_params(config, seed=0)

    def repeats(rng, n):
        half = rng.integers(0, 8, size=(n, 6))
        loss_mask = np.zeros((n, 11), dtype=bool)
        loss_mask[:, 6:] = True  # the predictions the first half decides
        return np.concatenate([half, half], axis=1), loss_mask

    held_out = repeats(np.random.default_rng(99), 64)
    start = forward(params, held_out[0], loss_mask=held_out[1]).loss
    rng, state = np.random.default_rng(0), None
    for _ in range(100):
        tokens, loss_mask = repeats(rng, 16)
        _, g = loss_and_gradients(params, tokens, loss_mask=loss_mask)
        new, state = adam_step(params, g.params, 2e-2, state)
        params = params.replace(new)
    end = forward(params, held_out[0], loss_mask=held_out[1]).loss
    assert start > 0.9 * math.log(8) and end < 0.1 * math.log(8), (start, end)


# ------------------------------------------------------------------------------ finite differences


def test_gradients_match_finite_differences_without_torch():
    params, tokens, loss_mask, head_mask = random_case(5, n_layers=2, layer_norm=True,
                                                       positional="rope", ablate=False)
    _, grads = loss_and_gradients(params, tokens, loss_mask=loss_mask)
    eps = 1e-6
    rng = np.random.default_rng(0)
    for name, a in params.items():
        for _ in range(3):  # three random entries of every parameter
            idx = tuple(int(rng.integers(0, n)) for n in a.shape)
            up, down = np.array(a), np.array(a)
            up[idx] += eps
            down[idx] -= eps
            l_up = forward(params.replace({**params, name: up}), tokens, loss_mask=loss_mask).loss
            l_dn = forward(params.replace({**params, name: down}), tokens,
                           loss_mask=loss_mask).loss
            numeric = (l_up - l_dn) / (2 * eps)
            assert grads.params[name][idx] == pytest.approx(numeric, abs=1e-7, rel=1e-6), name


# ------------------------------------------------------------------------------ properties


def small_model(**kwargs) -> Params:
    config = TransformerConfig(**{"vocab_size": 7, "n_ctx": 10, "d_model": 8, "n_layers": 2,
                                  "n_heads": 2, "d_head": 4, **kwargs})
    return init_params(config, seed=3)


def test_attention_is_causal_and_rows_sum_to_one():
    params = small_model()
    result = forward(params, np.arange(9) % 7)
    w = result.weights  # (layers, batch, heads, t, t)
    assert w.shape == (2, 1, 2, 9, 9)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-14)
    assert np.all(np.triu(np.ones((9, 9)), 1).astype(bool) <= (w == 0))


def test_a_prediction_depends_only_on_earlier_tokens():
    params = small_model(positional="rope", layer_norm=True)
    a = np.array([[1, 2, 3, 4, 5, 6, 0]])
    b = a.copy()
    b[0, 4:] = [0, 1, 2]
    la, lb = forward(params, a).logits, forward(params, b).logits
    np.testing.assert_array_equal(la[:, :4], lb[:, :4])
    assert not np.allclose(la[:, 4:], lb[:, 4:])


def test_residual_stream_adds_each_layer_output():
    params = small_model()
    result = forward(params, [[0, 1, 2, 3, 4]])
    stream = result.residual
    assert stream.shape == (3, 1, 5, 8)
    for layer, lr in enumerate(result.layers):
        np.testing.assert_array_equal(stream[layer + 1], stream[layer] + lr.output)
        np.testing.assert_allclose(lr.output, lr.head_outputs.sum(axis=1), atol=1e-14)
    np.testing.assert_allclose(result.logits, stream[-1] @ params["unembed"], atol=1e-13)


def test_ablating_a_head_removes_exactly_its_output_and_its_gradients():
    params = small_model()
    tokens = np.array([[0, 1, 2, 3, 1, 2, 3]])
    keep = np.array([[True, True], [False, True]])
    result = forward(params, tokens, head_mask=keep)
    layer = result.layers[1]
    np.testing.assert_allclose(layer.output, layer.head_outputs[:, 1], atol=1e-14)
    grads = backward(result)
    assert not grads.params["1.w_o"][0].any()  # the ablated head learns nothing
    assert not grads.params["1.w_q"][0].any()
    assert grads.params["1.w_o"][1].any()
    # ablating nothing is the same as no mask
    full = forward(params, tokens, head_mask=np.ones((2, 2), bool))
    assert full.loss == forward(params, tokens).loss


def test_loss_is_the_mean_over_the_loss_mask():
    params = small_model()
    tokens = np.array([[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
    mask = np.array([[True, False, False, True], [False, False, True, False]])
    result = forward(params, tokens, loss_mask=mask)
    assert result.loss == pytest.approx(result.nll[mask].mean(), rel=1e-15)
    probs = np.exp(result.log_probs)
    assert result.nll[1, 2] == pytest.approx(-np.log(probs[1, 2, 1]), rel=1e-13)
    # predictions outside the mask get no gradient through the logits
    grads = backward(result)
    assert not grads.d_logits[0, 1].any() and not grads.d_logits[:, -1].any()


def test_batch_rows_are_independent():
    params = small_model(positional="sinusoidal")
    tokens = np.array([[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0]])
    both = forward(params, tokens)
    for row in range(2):
        alone = forward(params, tokens[row])
        np.testing.assert_allclose(both.logits[row], alone.logits[0], atol=1e-13)


def test_the_sum_of_two_single_sequence_losses_matches_a_batch_of_two():
    # gradients average over the masked predictions of the whole batch
    params = small_model(n_layers=1)
    tokens = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
    _, g = loss_and_gradients(params, tokens)
    _, g0 = loss_and_gradients(params, tokens[:1])
    _, g1 = loss_and_gradients(params, tokens[1:])
    for name in params:
        np.testing.assert_allclose(g.params[name], (g0.params[name] + g1.params[name]) / 2,
                                   atol=1e-13)


def test_adam_lowers_the_loss_on_a_fixed_batch():
    params = small_model(layer_norm=True)
    tokens = np.random.default_rng(1).integers(0, 7, size=(8, 10))
    start = forward(params, tokens).loss
    state = None
    for _ in range(30):
        _, g = loss_and_gradients(params, tokens)
        new, state = adam_step(params, g.params, 1e-2, state)
        params = params.replace(new)
    assert forward(params, tokens).loss < 0.7 * start


def test_results_and_parameters_are_read_only():
    params = small_model()
    with pytest.raises(ValueError):
        params["embed"][0, 0] = 1.0
    with pytest.raises(AttributeError):
        params.config = None
    result = forward(params, [0, 1, 2])
    with pytest.raises(ValueError):
        result.layers[0].weights[0, 0, 0, 0] = 2.0


def test_init_is_reproducible_and_drawn_in_order():
    config = TransformerConfig(vocab_size=5, n_ctx=6, d_model=4, d_head=2)
    a, b = init_params(config, seed=7), init_params(config, seed=7)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert list(a) == list(config.shapes())
    assert a.n_parameters() == sum(np.prod(s) for s in config.shapes().values())


@pytest.mark.parametrize("positional", ["learned", "rope"])
def test_a_head_opens_as_single_head_self_attention(positional):
    from attnviz.core.attention import self_attention
    from attnviz.core.rope import apply_rope

    params = small_model(positional=positional, layer_norm=True)
    tokens = np.array([[0, 1, 2, 3, 1, 2], [3, 2, 1, 0, 6, 5]])
    keep = np.array([[True, True], [True, False]])
    result = forward(params, tokens, head_mask=keep)
    view = head_view(result, 1, 0, sequence=1)
    assert view.rope == (positional == "rope")
    if positional == "learned":
        single = self_attention(view.x, view.w_q, view.w_k, view.w_v, causal=True,
                                scale=view.scale)
        np.testing.assert_allclose(single.weights, view.weights, atol=1e-14)
        np.testing.assert_allclose(single.output @ view.w_o, view.output, atol=1e-13)
    else:
        np.testing.assert_allclose(apply_rope(view.x @ view.w_q), view.q, atol=1e-14)
    np.testing.assert_array_equal(view.weights, result.layers[1].weights[1, 0])
    ablated = head_view(result, 1, 1)
    assert ablated.ablated and not ablated.output.any()
    with pytest.raises(ValueError, match="head must be between 0 and 1, got 2"):
        head_view(result, 0, 2)


def test_copying_score_of_an_identity_and_a_negated_ov_circuit():
    config = TransformerConfig(vocab_size=4, n_ctx=4, d_model=4, n_layers=1, n_heads=2,
                               d_head=4)
    arrays = dict(init_params(config, seed=0))
    arrays["embed"] = np.eye(4)
    arrays["unembed"] = np.eye(4)
    w_v = np.stack([np.eye(4), np.eye(4)])
    w_o = np.stack([np.diag([1.0, 2.0, 3.0, 4.0]), -np.eye(4)])
    arrays["0.w_v"], arrays["0.w_o"] = w_v, w_o
    params = Params(config, arrays)
    np.testing.assert_allclose(ov_circuit(params, 0, 0), np.diag([1.0, 2.0, 3.0, 4.0]))
    assert copying_score(params, 0, 0) == pytest.approx(1.0)
    assert copying_score(params, 0, 1) == pytest.approx(-1.0)


# ------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_layers": 4}, "n_layers must be at most 3, got 4"),
    ({"n_heads": 0}, "n_heads must be a whole number >= 1"),
    ({"positional": "xpos"}, "positional must be one of learned, sinusoidal, rope, alibi, none"),
    ({"positional": "rope", "d_head": 3}, "d_head must be even"),
    ({"layer_norm": 1}, "layer_norm must be True or False"),
    ({"vocab_size": 1}, "vocab_size must be a whole number >= 2"),
])
def test_config_refuses_bad_settings_in_words(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerConfig(**{"vocab_size": 5, "n_ctx": 6, **kwargs})


@pytest.mark.parametrize(("tokens", "kwargs", "message"), [
    ([0.5, 1.0], {}, "tokens must be whole numbers"),
    ([0, 7, 1], {}, "token ids must be between 0 and vocab_size − 1 = 6"),
    ([1], {}, "a sequence must have 2 to n_ctx = 10 tokens, got 1"),
    (list(range(7)) * 2, {}, "a sequence must have 2 to n_ctx = 10 tokens, got 14"),
    ([0, 1, 2], {"loss_mask": np.zeros((1, 2), bool)}, "at least one prediction"),
    ([0, 1, 2], {"loss_mask": np.ones((1, 3), bool)}, r"loss_mask must have shape \(1, 2\)"),
    ([0, 1, 2], {"head_mask": np.ones((2, 2))}, "head_mask must be boolean"),
])
def test_forward_refuses_bad_input_in_words(tokens, kwargs, message):
    with pytest.raises(ValueError, match=message):
        forward(small_model(), tokens, **kwargs)


def test_params_refuse_a_wrong_shape_or_a_missing_array():
    params = small_model()
    with pytest.raises(ValueError, match=r"parameter 'embed' must have shape \(7, 8\)"):
        params.replace({**params, "embed": np.zeros((7, 9))})
    arrays = dict(params)
    del arrays["pos"]
    with pytest.raises(ValueError, match=r"missing \['pos'\]"):
        params.replace(arrays)
