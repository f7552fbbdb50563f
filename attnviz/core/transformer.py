"""A small attention-only transformer: forward, loss and exact backward in numpy.

Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits"
(https://transformer-circuits.pub/2021/framework/index.html) and Olsson et al. (2022),
"In-context Learning and Induction Heads": token embedding (+ positional information), layers
of multi-head causal attention that each *add* their heads' outputs into a residual stream, an
unembedding to next-token logits. No MLPs, no biases in the projections. Row-vector
convention, a batch axis first, heads on the second axis::

    x₀ = E[tokens] (+ P[:t] learned or sinusoidal)                   (batch, t, d_model)
    for each layer ℓ:   h = LN_ℓ(x_ℓ) (or x_ℓ without layer norm)
        q_h = h W_Q^h,  k_h = h W_K^h,  v_h = h W_V^h                  (batch, n_heads, t, d_head)
        (RoPE: q_h, k_h rotated by their positions)
        A_h = softmax(causal(q_h k_hᵀ / √d_head (− m_h (i − j), ALiBi)))  (batch, n_heads, t, t)
        x_ℓ₊₁ = x_ℓ + Σ_h keep[ℓ, h] · (A_h v_h) W_O^h                  (the residual stream)
    logits = LN_f(x_L) U                                                 (batch, t, vocab)
    loss = mean over the loss mask of −log softmax(logits[:, i])[tokens[:, i + 1]]

``keep`` is the head mask: False zeroes a head's output (ablation). Layer norm, when on, is
pre-norm (GPT-2's placement) with PyTorch's ε = 1e-5.

Every head attends through a list of steps (:mod:`attnviz.core.steps`,
:meth:`TransformerConfig.attention_steps`): RoPE as a change of q and k, the scale and ALiBi as
changes of the scores, the causal mask, the softmax — the same steps, forward
(:func:`~attnviz.core.steps.run_head`) and backward
(:func:`~attnviz.core.steps.head_backward`), as every head of the dashboard, a layer's heads
run at once over the whole batch. The backward pass (:func:`backward`) is written step by step
below around the heads' own; tests check every parameter's gradient against PyTorch autograd to
1e-10 in float64.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.core.alibi import alibi_slopes
from attnviz.core.checks import check_count, check_flag, check_positive
from attnviz.core.numerics import read_only
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.core.steps import (
    ALiBi,
    Causal,
    HeadTrace,
    RoPE,
    Scale,
    Softmax,
    Step,
    head_backward,
    run_head,
)

Array = NDArray[np.float64]

POSITIONAL = ("learned", "sinusoidal", "rope", "alibi", "none")
LN_EPS = 1e-5
MAX_LAYERS = 3
MAX_HEADS = 8
MAX_WIDTH = 256  # d_model, d_head
MAX_VOCAB = 1024
MAX_CONTEXT = 512


# ------------------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class TransformerConfig:
    """The sizes and choices of a model (validated when made).

    Attributes
    ----------
    vocab_size : int
        Number of token ids, 2 .. :data:`MAX_VOCAB`.
    n_ctx : int
        Longest sequence, 2 .. :data:`MAX_CONTEXT` (the learned positional table's rows).
    d_model : int
        Residual-stream width.
    n_layers : int
        1 .. :data:`MAX_LAYERS`.
    n_heads : int
        Heads per layer, 1 .. :data:`MAX_HEADS`.
    d_head : int
        Query, key and value width of one head (even with RoPE).
    positional : {"learned", "sinusoidal", "rope", "alibi", "none"}
        Positional information: a learned table or the sinusoidal encoding added to the
        embeddings, RoPE turning q and k, ALiBi's per-head bias on the scores, or none.
    layer_norm : bool
        Pre-norm before every layer and before the unembedding.
    rope_base : float
        RoPE's θ base (>= 1).
    """

    vocab_size: int
    n_ctx: int
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 2
    d_head: int = 16
    positional: str = "learned"
    layer_norm: bool = False
    rope_base: float = 10000.0

    def __post_init__(self) -> None:
        for name, low, high in (("vocab_size", 2, MAX_VOCAB), ("n_ctx", 2, MAX_CONTEXT),
                                ("d_model", 1, MAX_WIDTH), ("n_layers", 1, MAX_LAYERS),
                                ("n_heads", 1, MAX_HEADS), ("d_head", 1, MAX_WIDTH)):
            value = check_count(name, getattr(self, name), minimum=low)
            if value > high:
                raise ValueError(f"{name} must be at most {high}, got {value}")
        if self.positional not in POSITIONAL:
            raise ValueError(f"positional must be one of {', '.join(POSITIONAL)}, got "
                             f"{self.positional!r:.40}")
        if self.positional == "rope" and self.d_head % 2:
            raise ValueError(f"RoPE rotates pairs of dimensions: d_head must be even, got "
                             f"{self.d_head}")
        check_flag("layer_norm", self.layer_norm)
        check_positive("rope_base", self.rope_base)
        self.attention_steps()  # the steps' own checks (RoPE's base)

    def attention_steps(self) -> tuple[Step, ...]:
        """Every head's attention as a list of steps, in the order a head computes it: RoPE
        turning q and k (``positional="rope"``, base ``rope_base``, split halves), the scale
        1/√d_head, ALiBi's bias −m_h·(i − j) (``positional="alibi"``, the paper's slopes for
        ``n_heads``), the causal mask, the softmax."""
        steps: list[Step] = []
        if self.positional == "rope":
            steps.append(RoPE(base=self.rope_base))
        steps.append(Scale())
        if self.positional == "alibi":
            steps.append(ALiBi())
        return (*steps, Causal(), Softmax())

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every parameter's name and shape, in a fixed order (the order they are drawn in)."""
        d, h, e, vocab = self.d_model, self.n_heads, self.d_head, self.vocab_size
        shapes: dict[str, tuple[int, ...]] = {"embed": (vocab, d)}
        if self.positional == "learned":
            shapes["pos"] = (self.n_ctx, d)
        for layer in range(self.n_layers):
            if self.layer_norm:
                shapes[f"{layer}.ln_gain"] = (d,)
                shapes[f"{layer}.ln_bias"] = (d,)
            for w in ("w_q", "w_k", "w_v"):
                shapes[f"{layer}.{w}"] = (h, d, e)
            shapes[f"{layer}.w_o"] = (h, e, d)
        if self.layer_norm:
            shapes["final.ln_gain"] = (d,)
            shapes["final.ln_bias"] = (d,)
        shapes["unembed"] = (d, vocab)
        return shapes


class Params(Mapping):
    """The parameters of a model: a read-only mapping of name to float64 array, with its config.

    Names: ``embed`` (vocab_size, d_model); ``pos`` (n_ctx, d_model) with learned positions;
    per layer ``"{ℓ}.w_q"``, ``"{ℓ}.w_k"``, ``"{ℓ}.w_v"`` (n_heads, d_model, d_head) and
    ``"{ℓ}.w_o"`` (n_heads, d_head, d_model); with layer norm ``"{ℓ}.ln_gain"``,
    ``"{ℓ}.ln_bias"`` and ``"final.ln_gain"``, ``"final.ln_bias"`` (d_model,); ``unembed``
    (d_model, vocab_size). :func:`attnviz.core.optim.adam_step` takes it as it is; wrap its
    dict with :meth:`replace`.
    """

    __slots__ = ("_arrays", "config")

    def __init__(self, config: TransformerConfig, arrays: Mapping[str, Array]) -> None:
        shapes = config.shapes()
        if set(arrays) != set(shapes):
            missing = sorted(set(shapes) - set(arrays))
            extra = sorted(set(arrays) - set(shapes))
            raise ValueError(f"the parameters do not fit the config: missing {missing}, "
                             f"unexpected {extra}")
        checked = {}
        for name, shape in shapes.items():
            a = np.array(arrays[name], dtype=np.float64)  # a copy, made read-only
            if a.shape != shape:
                raise ValueError(f"parameter {name!r} must have shape {shape}, got {a.shape}")
            if not np.isfinite(a).all():
                raise ValueError(f"parameter {name!r} must hold finite numbers")
            read_only(a)
            checked[name] = a
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "_arrays", checked)

    def __setattr__(self, name, value):
        raise AttributeError("Params are read-only; make new ones with replace()")

    def __getitem__(self, name: str) -> Array:
        return self._arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        return f"Params({self.config!r}, {self.n_parameters():,} numbers)"

    def replace(self, arrays: Mapping[str, Array]) -> Params:
        """New parameters of the same config (e.g. the dict an optimiser step returns)."""
        return Params(self.config, arrays)

    def n_parameters(self) -> int:
        """The number of trainable numbers."""
        return sum(a.size for a in self._arrays.values())

    def layer(self, layer: int) -> dict[str, Array]:
        """The attention weights of one layer: ``w_q``, ``w_k``, ``w_v``, ``w_o``."""
        return {w: self._arrays[f"{layer}.{w}"] for w in ("w_q", "w_k", "w_v", "w_o")}


def init_params(config: TransformerConfig, *, seed: int = 0) -> Params:
    """Random starting parameters, drawn in :meth:`TransformerConfig.shapes` order.

    Embeddings (token, learned position) ~ N(0, 1); every projection and the unembedding
    ~ U(−1/√fan_in, 1/√fan_in) (PyTorch's ``nn.Linear`` default); layer-norm gains 1, biases 0.

    Parameters
    ----------
    config : TransformerConfig
    seed : int
        ``np.random.default_rng(seed)``; same seed, same parameters.
    """
    seed = check_count("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in config.shapes().items():
        if name in ("embed", "pos"):
            arrays[name] = rng.standard_normal(shape)
        elif name.endswith("ln_gain"):
            arrays[name] = np.ones(shape)
        elif name.endswith("ln_bias"):
            arrays[name] = np.zeros(shape)
        else:
            bound = 1.0 / np.sqrt(shape[-2])  # fan_in: the rows a vector is multiplied by
            arrays[name] = rng.uniform(-bound, bound, size=shape)
    return Params(config, arrays)


# ------------------------------------------------------------------------------ results


@dataclass(frozen=True, eq=False)
class LayerNormResult:
    """y = (x − mean) / √(var + ε) · gain + bias over the last axis.

    Attributes
    ----------
    x_hat : ndarray of shape (batch, t, d_model)
        The normalised input (before gain and bias).
    inv_std : ndarray of shape (batch, t, 1)
        1 / √(var + ε).
    output : ndarray of shape (batch, t, d_model)
    """

    x_hat: Array
    inv_std: Array
    output: Array


@dataclass(frozen=True, eq=False)
class LayerResult:
    """Every intermediate of one attention layer of the residual stream.

    Attributes
    ----------
    x_in : ndarray of shape (batch, t, d_model)
        The residual stream entering the layer.
    norm : LayerNormResult or None
        The layer norm (None without).
    q, k, v : ndarray of shape (batch, n_heads, t, d_head)
        Projections of the (normed) stream; q and k after RoPE when RoPE is on.
    scores : ndarray of shape (batch, n_heads, t, t)
        q·kᵀ.
    scaled : ndarray of shape (batch, n_heads, t, t)
        scores · 1/√d_head (with ALiBi, then − m_h·(i − j)).
    masked : ndarray of shape (batch, n_heads, t, t)
        scaled with −inf above the diagonal (causal).
    weights : ndarray of shape (batch, n_heads, t, t)
        softmax(masked): rows sum to 1, zero above the diagonal.
    mixed : ndarray of shape (batch, n_heads, t, d_head)
        weights @ v.
    head_outputs : ndarray of shape (batch, n_heads, t, d_model)
        mixed @ W_O^h: what each head would write into the stream (before the head mask).
    keep : ndarray of bool, shape (n_heads,)
        False = the head is ablated (its output not added).
    output : ndarray of shape (batch, t, d_model)
        Σ_h keep[h] · head_outputs[:, h]: what the layer adds to the stream.
    x_out : ndarray of shape (batch, t, d_model)
        x_in + output.
    trace : HeadTrace
        The heads' run through the steps (every head and sequence at once), what the backward
        pass reads.
    """

    x_in: Array
    norm: LayerNormResult | None
    q: Array
    k: Array
    v: Array
    scores: Array
    scaled: Array
    masked: Array
    weights: Array
    mixed: Array
    head_outputs: Array
    keep: NDArray[np.bool_]
    output: Array
    x_out: Array
    trace: HeadTrace


@dataclass(frozen=True, eq=False)
class TransformerResult:
    """Every intermediate of a forward pass and the next-token loss.

    Attributes
    ----------
    params : Params
        The parameters used.
    tokens : ndarray of int, shape (batch, t)
    embedded : ndarray of shape (batch, t, d_model)
        E[tokens] (+ the positional rows): the residual stream before layer 0.
    positional : ndarray of shape (t, d_model) or None
        The positional rows added (learned or sinusoidal); None with RoPE or none.
    layers : tuple of LayerResult
    final_norm : LayerNormResult or None
    logits : ndarray of shape (batch, t, vocab_size)
        Position i predicts token i + 1.
    log_probs : ndarray of shape (batch, t, vocab_size)
    nll : ndarray of shape (batch, t − 1)
        −log p(tokens[:, i + 1]) at every position i (whether the mask counts it or not).
    loss_mask : ndarray of bool, shape (batch, t − 1)
        Which predictions the loss averages.
    loss : float
        Mean of ``nll`` over ``loss_mask``.
    head_mask : ndarray of bool, shape (n_layers, n_heads)
        True = the head writes into the stream.
    """

    params: Params
    tokens: NDArray[np.int_]
    embedded: Array
    positional: Array | None
    layers: tuple[LayerResult, ...]
    final_norm: LayerNormResult | None
    logits: Array
    log_probs: Array
    nll: Array
    loss_mask: NDArray[np.bool_]
    loss: float
    head_mask: NDArray[np.bool_]

    @property
    def weights(self) -> Array:
        """Every head's attention, shape (n_layers, batch, n_heads, t, t)."""
        return np.stack([layer.weights for layer in self.layers])

    @property
    def residual(self) -> Array:
        """The residual stream before each layer and after the last: (n_layers + 1, batch, t,
        d_model)."""
        return np.stack([self.embedded] + [layer.x_out for layer in self.layers])


@dataclass(frozen=True, eq=False)
class LayerGradients:
    """The gradients of the loss with respect to one layer's intermediates.

    Attributes
    ----------
    d_x_out : ndarray of shape (batch, t, d_model)
        ∂L/∂(the stream leaving the layer).
    d_mixed : ndarray of shape (batch, n_heads, t, d_head)
    d_weights : ndarray of shape (batch, n_heads, t, t)
    d_scaled : ndarray of shape (batch, n_heads, t, t)
        Through the softmax; 0 above the diagonal; rows sum to 0.
    d_q, d_k, d_v : ndarray of shape (batch, n_heads, t, d_head)
        Of the projections (before RoPE for q and k).
    d_x_in : ndarray of shape (batch, t, d_model)
        ∂L/∂(the stream entering the layer): d_x_out plus the path through the heads.
    """

    d_x_out: Array
    d_mixed: Array
    d_weights: Array
    d_scaled: Array
    d_q: Array
    d_k: Array
    d_v: Array
    d_x_in: Array


@dataclass(frozen=True, eq=False)
class TransformerGradients:
    """The gradient of the loss with respect to every parameter and every intermediate.

    Attributes
    ----------
    params : dict of str to ndarray
        Keyed and shaped like :class:`Params` (what an optimiser step takes).
    d_logits : ndarray of shape (batch, t, vocab_size)
    layers : tuple of LayerGradients
    d_embedded : ndarray of shape (batch, t, d_model)
    """

    params: dict[str, Array]
    d_logits: Array
    layers: tuple[LayerGradients, ...]
    d_embedded: Array


# ------------------------------------------------------------------------------ forward


def forward(params: Params, tokens, *, loss_mask=None, head_mask=None) -> TransformerResult:
    """Run the model on a batch of token sequences and score its next-token predictions.

    Parameters
    ----------
    params : Params
    tokens : array_like of int, shape (batch, t) or (t,)
        Token ids 0 .. vocab_size − 1; 2 <= t <= n_ctx. One sequence becomes a batch of one.
    loss_mask : array_like of bool, shape (batch, t − 1), optional
        True where the prediction of token i + 1 at position i counts; None = all.
    head_mask : array_like of bool, shape (n_layers, n_heads), optional
        False zeroes a head's output (ablation); None = every head on.

    Returns
    -------
    TransformerResult

    Raises
    ------
    ValueError
        Tokens that are not whole numbers in range, a sequence too short or too long, masks
        of the wrong shape, a loss mask with no True entry.
    """
    if not isinstance(params, Params):
        raise ValueError(f"params must be Params (see init_params), got {type(params).__name__}")
    config = params.config
    tokens = _check_tokens(tokens, config)
    batch, t = tokens.shape
    loss_mask = _check_bool("loss_mask", loss_mask, (batch, t - 1), default=True)
    if not loss_mask.any():
        raise ValueError("loss_mask must mark at least one prediction to score")
    head_mask = _check_bool("head_mask", head_mask, (config.n_layers, config.n_heads),
                            default=True)
    return _forward(params, tokens, loss_mask, head_mask)


def _forward(params: Params, tokens: NDArray[np.int_], loss_mask: NDArray[np.bool_],
             head_mask: NDArray[np.bool_]) -> TransformerResult:
    """The forward pass on checked inputs."""
    config = params.config
    t = tokens.shape[1]
    # 1) embed the tokens, add the positional rows
    x = params["embed"][tokens]  # (batch, t, d_model)
    positional = None
    if config.positional == "learned":
        positional = params["pos"][:t]
    elif config.positional == "sinusoidal":
        positional = sinusoidal_positional_encoding(t, config.d_model)
    if positional is not None:
        x = x + positional
    embedded = x
    # 2) the layers, each adding into the residual stream
    layers = []
    for layer in range(config.n_layers):
        result = _layer_forward(params, layer, x, head_mask[layer])
        layers.append(result)
        x = result.x_out
    # 3) unembed, 4) next-token cross-entropy
    final_norm = None
    if config.layer_norm:
        final_norm = _layer_norm(x, params["final.ln_gain"], params["final.ln_bias"])
        x = final_norm.output
    logits = x @ params["unembed"]  # (batch, t, vocab)
    log_probs = _log_softmax(logits)
    nll = -np.take_along_axis(log_probs[:, :-1], tokens[:, 1:, None], axis=2)[..., 0]
    loss = float(nll[loss_mask].mean())
    read_only(embedded, logits, log_probs, nll, tokens, loss_mask, head_mask)
    if positional is not None:
        read_only(positional)
    return TransformerResult(params, tokens, embedded, positional, tuple(layers), final_norm,
                             logits, log_probs, nll, loss_mask, loss, head_mask)


def _layer_forward(params: Params, layer: int, x: Array, keep: NDArray[np.bool_]
                   ) -> LayerResult:
    """One attention layer: normalise, project, attend, write into the stream."""
    config = params.config
    w = params.layer(layer)
    norm = None
    h = x
    if config.layer_norm:
        norm = _layer_norm(x, params[f"{layer}.ln_gain"], params[f"{layer}.ln_bias"])
        h = norm.output
    # 1) project into every head
    q, k, v = (_to_heads(h, w[name]) for name in ("w_q", "w_k", "w_v"))  # (b, n, t, d_head)
    # 2) every head through the steps (RoPE, score, scale, ALiBi, causal mask, softmax, mix the
    # values), all heads and sequences at once
    n = config.n_heads
    trace = run_head(config.attention_steps(), q, k, v, head=np.arange(n), n_heads=n)
    q, k, mixed = trace.q, trace.k, trace.output  # (batch, n_heads, t, d_head)
    scores, scaled, masked, weights = trace.scores, trace.scaled, trace.masked, trace.weights
    # 3) project each head back into the stream
    head_outputs = mixed @ w["w_o"]  # (batch, n_heads, t, d_model)
    output = (head_outputs * keep[:, None, None]).sum(axis=1)  # (batch, t, d_model)
    x_out = x + output
    arrays = [q, k, v, scores, scaled, masked, weights, mixed, head_outputs, output, x_out]
    read_only(*arrays)
    return LayerResult(x, norm, q, k, v, scores, scaled, masked, weights, mixed, head_outputs,
                       keep, output, x_out, trace)


def _to_heads(h: Array, w: Array) -> Array:
    """(batch, t, d_model) @ W^h for every head at once: (batch, n_heads, t, d_head)."""
    b, t, _ = h.shape
    n, d, e = w.shape
    flat = h.reshape(b * t, d) @ w.transpose(1, 0, 2).reshape(d, n * e)  # (b·t, n·d_head)
    return flat.reshape(b, t, n, e).transpose(0, 2, 1, 3)


def _from_heads(x: Array) -> Array:
    """(batch, n_heads, t, e) → (batch, t, n_heads·e): the heads side by side."""
    b, n, t, e = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, n * e)


def _stack_heads(w: Array) -> Array:
    """(n_heads, e, d) → (n_heads·e, d): the heads' matrices stacked row-wise."""
    n, e, d = w.shape
    return w.reshape(n * e, d)


def _flat(x: Array) -> Array:
    """(batch, t, d) → (batch·t, d)."""
    return x.reshape(-1, x.shape[-1])


def _heads_flat(x: Array) -> Array:
    """(batch, n_heads, t, e) → (n_heads, batch·t, e)."""
    b, n, t, e = x.shape
    return x.transpose(1, 0, 2, 3).reshape(n, b * t, e)


def _layer_norm(x: Array, gain: Array, bias: Array) -> LayerNormResult:
    """Layer norm over the last axis (biased variance, ε = :data:`LN_EPS`)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)
    x_hat = centred * inv_std
    output = x_hat * gain + bias
    read_only(x_hat, inv_std, output)
    return LayerNormResult(x_hat, inv_std, output)


def _log_softmax(logits: Array) -> Array:
    """log softmax over the last axis, stable."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


# ------------------------------------------------------------------------------ backward


def backward(result: TransformerResult) -> TransformerGradients:
    """The gradient of ``result.loss`` with respect to every parameter and intermediate.

    Reverse mode through :func:`forward`, step by step::

        dlogits[:, i] = (softmax(logits[:, i]) − onehot(tokens[:, i+1])) · mask[:, i] / Σ mask
        dU = Σ_{b,t} h_fᵀ dlogits        dx_L = dlogits Uᵀ   (through LN_f when on)
        per layer, from the last:  d(output) = dx_out;  dW_O^h = keep_h · mixed_hᵀ dx_out
            d mixed_h = keep_h · dx_out W_O^hᵀ;  dA_h = d mixed_h v_hᵀ;  dv_h = A_hᵀ d mixed_h
            dS_h = softmax_backward(A_h, dA_h) / √d_head;  dq_h = dS_h k_h;  dk_h = dS_hᵀ q_h
            (RoPE: dq, dk rotated back): the steps' backward, :func:`head_backward`
            dW_Q^h = hᵀ dq_h ... ;  dx_in = dx_out + dh (via LN)
        dE[token] += dx_0 at each of its positions;  dP[:t] = Σ_batch dx_0 (learned positions)

    Parameters
    ----------
    result : TransformerResult

    Returns
    -------
    TransformerGradients
    """
    params, config = result.params, result.params.config
    tokens = result.tokens
    batch, t = tokens.shape
    grads: dict[str, Array] = {}
    # 1) the cross-entropy's gradient of the logits
    d_logits = _cross_entropy_backward(result.log_probs, tokens, result.loss_mask)
    # 2) the unembedding (and the final layer norm)
    h_final = result.layers[-1].x_out if result.final_norm is None else result.final_norm.output
    grads["unembed"] = _flat(h_final).T @ _flat(d_logits)
    dx = d_logits @ params["unembed"].T  # (batch, t, d_model)
    if result.final_norm is not None:
        dx, grads["final.ln_gain"], grads["final.ln_bias"] = _layer_norm_backward(
            result.final_norm, params["final.ln_gain"], dx)
    # 3) the layers, last to first
    layer_grads: list[LayerGradients] = []
    for layer in reversed(range(config.n_layers)):
        lg = _layer_backward(params, layer, result.layers[layer], dx, grads)
        layer_grads.append(lg)
        dx = lg.d_x_in
    # 4) the embeddings
    d_embed = np.zeros((config.vocab_size, config.d_model))
    np.add.at(d_embed, tokens.reshape(-1), dx.reshape(batch * t, -1))
    grads["embed"] = d_embed
    if config.positional == "learned":
        d_pos = np.zeros((config.n_ctx, config.d_model))
        d_pos[:t] = dx.sum(axis=0)
        grads["pos"] = d_pos
    ordered = {name: grads[name] for name in config.shapes()}
    read_only(d_logits, dx, *ordered.values())
    return TransformerGradients(ordered, d_logits, tuple(reversed(layer_grads)), dx)


def _cross_entropy_backward(log_probs: Array, tokens: NDArray[np.int_],
                            loss_mask: NDArray[np.bool_]) -> Array:
    """∂(mean masked next-token NLL)/∂logits: (softmax − onehot) · mask / count; 0 at the
    last position (it predicts nothing)."""
    batch, t, _ = log_probs.shape
    d = np.exp(log_probs[:, :-1])  # (batch, t − 1, vocab)
    b_idx, t_idx = np.meshgrid(np.arange(batch), np.arange(t - 1), indexing="ij")
    d[b_idx, t_idx, tokens[:, 1:]] -= 1.0
    d *= loss_mask[..., None] / loss_mask.sum()
    return np.concatenate([d, np.zeros((batch, 1, log_probs.shape[2]))], axis=1)


def _layer_backward(params: Params, layer: int, r: LayerResult, d_x_out: Array,
                    grads: dict[str, Array]) -> LayerGradients:
    """One layer's backward; writes its parameters' gradients into ``grads``."""
    config = params.config
    w = params.layer(layer)
    keep = r.keep.astype(np.float64)
    # 1) through W_O and the head mask (the stream's own path passes d_x_out on unchanged)
    grads[f"{layer}.w_o"] = (_heads_flat(r.mixed).swapaxes(1, 2) @ _flat(d_x_out)
                             ) * keep[:, None, None]  # (n_heads, d_head, d_model)
    d_mixed = (d_x_out[:, None] @ np.swapaxes(w["w_o"], -1, -2)
               ) * keep[None, :, None, None]  # (batch, n_heads, t, d_head)
    # 2) through the weighted sum of the values, 3) the softmax (0 where masked), every
    # change of the scores (the scale, ALiBi's bias), q·kᵀ and RoPE: every head's steps
    g = head_backward(config.attention_steps(), r.trace, d_mixed)
    d_weights, d_scaled, d_q, d_k, d_v = g.d_weights, g.d_scaled, g.d_q_in, g.d_k_in, g.d_v
    # 4) through the projections of the (normed) stream
    h = r.x_in if r.norm is None else r.norm.output
    d_h = np.zeros_like(h)
    for name, d in (("w_q", d_q), ("w_k", d_k), ("w_v", d_v)):
        grads[f"{layer}.{name}"] = _flat(h).T @ _heads_flat(d)  # (n_heads, d_model, d_head)
        d_h += _from_heads(d) @ _stack_heads(np.swapaxes(w[name], -1, -2))  # (b, t, d_model)
    # 5) through the layer norm, then join the stream's own path
    if r.norm is not None:
        d_h, grads[f"{layer}.ln_gain"], grads[f"{layer}.ln_bias"] = _layer_norm_backward(
            r.norm, params[f"{layer}.ln_gain"], d_h)
    d_x_in = d_x_out + d_h
    arrays = [d_mixed, d_weights, d_scaled, d_q, d_k, d_v, d_x_in]
    read_only(*arrays)
    return LayerGradients(d_x_out, d_mixed, d_weights, d_scaled, d_q, d_k, d_v, d_x_in)


def _layer_norm_backward(norm: LayerNormResult, gain: Array, d_y: Array
                         ) -> tuple[Array, Array, Array]:
    """(∂L/∂x, ∂L/∂gain, ∂L/∂bias) of layer norm, from ∂L/∂y:
    dx = inv_std · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ∘ x̂)) with dx̂ = dy ∘ gain."""
    d_gain = (d_y * norm.x_hat).sum(axis=(0, 1))
    d_bias = d_y.sum(axis=(0, 1))
    d_hat = d_y * gain
    d_x = norm.inv_std * (d_hat - d_hat.mean(axis=-1, keepdims=True)
                          - norm.x_hat * (d_hat * norm.x_hat).mean(axis=-1, keepdims=True))
    return d_x, d_gain, d_bias


def loss_and_gradients(params: Params, tokens, *, loss_mask=None, head_mask=None
                       ) -> tuple[TransformerResult, TransformerGradients]:
    """:func:`forward` then :func:`backward` (the same arguments as :func:`forward`)."""
    result = forward(params, tokens, loss_mask=loss_mask, head_mask=head_mask)
    return result, backward(result)


# ------------------------------------------------------------------------------ one head


@dataclass(frozen=True, eq=False)
class HeadView:
    """One head of one sequence, as a single-head self-attention the core's other functions
    (and the dashboard's pages) can open: ``weights = softmax(causal(q kᵀ · scale))`` with
    ``q = x @ w_q``, ``k = x @ w_k`` (then rotated when ``rope``), ``v = x @ w_v``.

    Attributes
    ----------
    layer, head, sequence : int
    x : ndarray of shape (t, d_model)
        The head's input: the residual stream entering the layer (after its layer norm).
    w_q, w_k, w_v : ndarray of shape (d_model, d_head)
    w_o : ndarray of shape (d_head, d_model)
    q, k, v : ndarray of shape (t, d_head)
        As the model computed them (q and k after RoPE when ``rope``).
    weights : ndarray of shape (t, t)
    output : ndarray of shape (t, d_model)
        What the head writes into the stream (zero when ablated).
    scale : float
        1 / √d_head.
    rope : bool
        q and k were rotated by position (RoPE, split-half layout, base ``rope_base``).
    ablated : bool
    alibi_slope : float or None
        With ALiBi, the head's slope m_h: its scores got −m_h·(i − j) after the scale.
    """

    layer: int
    head: int
    sequence: int
    x: Array
    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array
    q: Array
    k: Array
    v: Array
    weights: Array
    output: Array
    scale: float
    rope: bool
    ablated: bool
    alibi_slope: float | None = None


def head_view(result: TransformerResult, layer: int, head: int, sequence: int = 0) -> HeadView:
    """Head ``head`` of layer ``layer`` on sequence ``sequence`` of a forward result."""
    config = result.params.config
    layer = _check_index("layer", layer, config.n_layers)
    head = _check_index("head", head, config.n_heads)
    sequence = _check_index("sequence", sequence, result.tokens.shape[0])
    r = result.layers[layer]
    x = (r.x_in if r.norm is None else r.norm.output)[sequence]
    w = result.params.layer(layer)
    keep = bool(r.keep[head])
    output = r.head_outputs[sequence, head] if keep else np.zeros_like(r.x_in[sequence])
    return HeadView(layer, head, sequence, x, w["w_q"][head], w["w_k"][head], w["w_v"][head],
                    w["w_o"][head], r.q[sequence, head], r.k[sequence, head],
                    r.v[sequence, head], r.weights[sequence, head], output,
                    1.0 / float(np.sqrt(config.d_head)), config.positional == "rope", not keep,
                    float(alibi_slopes(config.n_heads)[head]) if config.positional == "alibi"
                    else None)


# ------------------------------------------------------------------------------ circuits


def ov_circuit(params: Params, layer: int, head: int) -> Array:
    """The head's token-to-logit OV circuit E W_V^h W_O^h U, shape (vocab_size, vocab_size).

    Row a: how the head's output, when it attends to a token a (its embedding alone, no
    position, no layer norm), changes every logit (Elhage et al. 2021, "OV circuit").
    """
    config = params.config
    layer = _check_index("layer", layer, config.n_layers)
    head = _check_index("head", head, config.n_heads)
    w = params.layer(layer)
    return params["embed"] @ w["w_v"][head] @ w["w_o"][head] @ params["unembed"]


def copying_score(params: Params, layer: int, head: int) -> float:
    """Σλ / Σ|λ| over the eigenvalues λ of the head's OV circuit (:func:`ov_circuit`).

    Elhage et al. (2021) read a copying head from the eigenvalues of its OV circuit: a head
    whose output raises the logit of the token it attends to has mostly positive eigenvalues.
    The score is 1 for a pure copier (all λ > 0), −1 for a head that lowers the attended
    token, near 0 for one with no preference. Complex pairs add only their real parts.
    """
    eig = np.linalg.eigvals(ov_circuit(params, layer, head))
    total = np.abs(eig).sum()
    return float(eig.real.sum() / total) if total > 0 else 0.0


# ------------------------------------------------------------------------------ validation


def _check_tokens(tokens, config: TransformerConfig) -> NDArray[np.int_]:
    """Token ids as an int64 array of shape (batch, t), in range, 2 <= t <= n_ctx."""
    arr = np.asarray(tokens)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"tokens must be whole numbers (token ids), got values of type "
                         f"{arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"tokens must have shape (batch, t) or (t,), got {np.shape(tokens)}")
    t = arr.shape[1]
    if not 2 <= t <= config.n_ctx:
        raise ValueError(f"a sequence must have 2 to n_ctx = {config.n_ctx} tokens, got {t}")
    if arr.min() < 0 or arr.max() >= config.vocab_size:
        raise ValueError(f"token ids must be between 0 and vocab_size − 1 = "
                         f"{config.vocab_size - 1}, got {arr.min()} .. {arr.max()}")
    return arr.astype(np.int64)  # a copy the result may freeze


def _check_bool(name: str, value, shape: tuple[int, ...], *, default: bool
                ) -> NDArray[np.bool_]:
    """A boolean array of ``shape`` (a copy); None = all ``default``."""
    if value is None:
        return np.full(shape, default)
    arr = np.asarray(value)
    if arr.dtype != np.bool_:
        raise ValueError(f"{name} must be boolean, got values of type {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr.copy()


def _check_index(name: str, value, n: int) -> int:
    """A whole number in 0 .. n − 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not 0 <= value < n:
        raise ValueError(f"{name} must be between 0 and {n - 1}, got {value}")
    return int(value)
