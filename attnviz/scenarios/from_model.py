"""One head of a trained transformer as a dashboard scenario, so every page can open it.

A head of :mod:`attnviz.core.transformer` is a single-head causal self-attention on the residual
stream entering its layer (:func:`~attnviz.core.transformer.head_view`): its input x, W_Q, W_K,
W_V of shape (d_model, d_k) and W_O of shape (d_v, d_model), scale 1/√d_k. Put into a
:class:`~attnviz.scenarios.scenario.Scenario` with the variant "causal" (or "rope" with a causal
mask, when the model rotates q and k), :func:`~attnviz.scenarios.scenario.run_scenario`
computes the same weights as the model did, and its output times W_O is what the head writes
into the stream (tests/scenarios/test_from_model.py checks both to 1e-12).

The sequence is the induction task's held-out repeated sequence
(:func:`attnviz.scenarios.induction.heldout_sequence`); its token ids become the labels
"t5", "t12", ... (the pages make them unique by position).

:func:`layer_scenario` does the same for one head of a real Hugging Face model's layer, read by
:func:`attnviz.io.hf_layers.layer_inputs` (the architectures of its ``ARCHITECTURES``): the
head's own columns of W_Q, and of W_K and W_V those of the key/value head it reads (GQA), the
model's scale, RoPE (split-half or interleaved pairs, a rotated fraction; scaled ones —
linear, YaRN, Llama 3, LongRoPE — with the model's own frequencies and attention scaling),
causal mask, sliding window (causal, or symmetric for a bidirectional local layer), soft-cap
and ALiBi. A head that combines ideas no single variant has — QK-norm with a gain per
dimension (Qwen 3, Gemma 3), learned sink logits (gpt-oss), a soft-cap without RoPE, ALiBi of
any slope (BLOOM, Falcon) — opens as a list of attention steps (:func:`layer_steps`, the
``steps`` variant): its QK-norm, RoPE, ALiBi (the model's m_h·j), cap, causal mask, window,
padding and sink, each a step. A causal ALiBi head of slope 2^−8 without RoPE opens with the
ALiBi variant, which adds −m·(i − j) where the model adds m·j (a constant per query row, which
the softmax removes). Projection
biases go in by the *bias trick*: x gets a last column of ones and each W a last row holding
its bias, so x'·W' = x·W + b exactly and every page (and every editor) works unchanged. What
a layer is made of, :class:`LayerInputs` (with its :class:`Rope`), is defined here, in the
scenarios layer that reads it, and filled by :mod:`attnviz.io.hf_layers` (io imports
scenarios, never the reverse).

:func:`cross_scenario` opens one head of an encoder–decoder model's cross-attention
(:class:`CrossInputs`) with the "cross" variant: queries from the decoder's hidden states,
keys and values from the encoder's output, the model's scale (T5: 1; BART: 1/√d_k) and the
bias trick on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from attnviz.core import steps as S
from attnviz.core.alibi import alibi_slopes
from attnviz.core.masks import causal_mask, sliding_window_mask, window_mask
from attnviz.core.rope import LAYOUTS
from attnviz.core.transformer import Params, head_view
from attnviz.scenarios import limits
from attnviz.scenarios.induction import InductionSettings, heldout_forward
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.scenario import Scenario, projected
from attnviz.scenarios.tokens import without_bidi


class TrainedModel(Protocol):
    """Anything with a model's parameters and the settings it was trained with: a shipped
    :class:`~attnviz.io.examples.make_induction_model.InductionModel` or an
    :class:`~attnviz.scenarios.induction.InductionRun`."""

    params: Params
    settings: InductionSettings


def token_labels(tokens) -> tuple[str, ...]:
    """Token ids as labels: ``[5, 12]`` -> ``("t5", "t12")``."""
    return tuple(f"t{int(i)}" for i in np.asarray(tokens).reshape(-1))


def head_scenario(model: TrainedModel, layer: int, head: int, *, title: str = "",
                  description: str = "") -> Scenario:
    """Head ``head`` of layer ``layer`` on the held-out sequence, as a scenario.

    Parameters
    ----------
    model : InductionModel or InductionRun
        Its ``params`` and ``settings``.
    layer, head : int
        Indices from 0.
    title, description : str
        Shown where the scenario is named (the sidebar, the pages' captions).

    Returns
    -------
    Scenario
        tokens: the held-out sequence's ids as labels; x: the head's input (the residual stream
        entering the layer, after its layer norm when the model has one); w_q, w_k, w_v: the
        head's (d_model, d_k) matrices; w_o: its (d_v, d_model) W_O; variant "causal", scale
        1/√d_k; with RoPE the variant "rope" with the model's base, split-half pairs, every
        dimension rotated, positions from 0, and the causal mask; with ALiBi the variant
        "steps": ALiBi with the head's slope, the causal mask.

    Raises
    ------
    ValueError
        A layer or head out of range; a RoPE base outside what the RoPE variant accepts.
    """
    params = model.params
    config = params.config
    result = heldout_forward(params, model.settings)
    view = head_view(result, layer, head)
    tokens = token_labels(result.tokens[0])
    fields: dict = dict(w_o=np.array(view.w_o), title=title, description=description,
                        variant="causal", scale_mode="sqrt_dk")
    if view.rope:
        rope = dict(rope_base=float(config.rope_base), rope_layout="split_half",
                    rope_fraction=1.0, rope_offset=0)  # the core's apply_rope as the model uses it
        for name, value in rope.items():
            VARIANTS["rope"].param(name).check(value)  # a base the variant refuses: a sentence
        fields.update(variant="rope", mask_kind="causal", params=rope)
    if view.alibi_slope is not None:  # the head's own slope: the ALiBi variant has the paper's
        steps = (S.Heads(), S.ALiBi((view.alibi_slope,)), S.Causal())  # for its head count
        fields.update(variant="steps", params={"steps": steps})
    return projected(tokens, view.x, view.w_q, view.w_k, view.w_v, **fields)


# ---------------------------------------------------------------------------------------------
# One head of a real model's layer
# ---------------------------------------------------------------------------------------------

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Rope:
    """A layer's rotary position embedding, as :func:`attnviz.core.rope.apply_rope` takes it.

    Attributes
    ----------
    inv_freq : ndarray of shape (d_rot / 2,)
        The model's inverse frequencies (``rotary_emb.inv_freq``, after the forward pass: a
        dynamic RoPE updates them), float64.
    attention_scaling : float
        Multiplies cos and sin (``rotary_emb.attention_scaling``; 1 except YaRN, LongRoPE).
    layout : str
        ``"split_half"``: Hugging Face's ``rotate_half``; ``"interleaved"``: GPT-J's
        ``rotate_every_two``.
    rope_type : str
        The model's ``rope_type`` ("default", "linear", "dynamic", "yarn", "llama3", ...).
    base : float or None
        The model's ``rope_theta``: for the default type, ``inv_freq`` is base^(−2i/d_rot)
        (computed by Hugging Face in float32). None when the config does not name one.
    """

    inv_freq: Array
    attention_scaling: float
    layout: str = "split_half"
    rope_type: str = "default"
    base: float | None = None


@dataclass(frozen=True, eq=False)
class LayerInputs:
    """Everything one attention layer of a model computes from, for one sequence, in float64.

    Attributes
    ----------
    model_type : str
    layer : int
    tokens : tuple of str
        The sequence's tokens, padding included (``padding`` says which are real).
    x : ndarray of shape (t, d_model)
        The hidden states entering the attention (after the layer's input norm).
    w_q : ndarray of shape (d_model, n_heads·head_dim)
    w_k, w_v : ndarray of shape (d_model, n_kv_heads·head_dim)
    w_o : ndarray of shape (n_heads·head_dim, d_model)
    b_q, b_k, b_v, b_o : ndarray of shape (columns,) or None
        Row-vector convention: ``q = x @ w_q + b_q``.
    n_heads, n_kv_heads, head_dim : int
    scale : float
        Multiplies q·kᵀ.
    causal : bool
    sliding_window : int or None
        Hugging Face's W: a causal query i sees keys i − W < j <= i; a bidirectional one
        (ModernBERT's local layers) keys |i − j| <= W.
    softcap : float or None
        The cap c of c·tanh(s / c), applied after the scale.
    rope : Rope or None
    positions : ndarray of shape (t,)
        The positions RoPE turns by (0..t−1 of the padded batch, as Hugging Face's default
        ``position_ids``).
    q_norm, k_norm : ndarray of shape (head_dim,) or None
        QK-norm gains (RMSNorm of each head's q and k before RoPE), with ``norm_eps``; with
        ``norm_across``, the gains of one RMSNorm over every head's q together, shape
        (n_heads·head_dim,), and over every key/value head's k, (n_kv_heads·head_dim,)
        (OLMo 2).
    norm_eps : float or None
    sinks : ndarray of shape (n_heads,) or None
        Each head's sink logit (gpt-oss), or None.
    padding : ndarray of bool, shape (t,)
        True = a real token; False = padding (masked as a key).
    model_weights : ndarray of shape (n_heads, t, t)
        The model's own attention probabilities for this layer and sequence (``capture``'s,
        from ``output_attentions``), NaN where the query or the key is padding.
    model_output : ndarray of shape (t, d_model)
        The model's attention block output (after the output projection, before the
        residual).
    alibi : ndarray of shape (n_heads,) or None
        ALiBi (BLOOM, Falcon): head h adds alibi[h] times the key's position to its scaled
        scores (−alibi[h]·(i − j) up to a constant per query row, which the softmax removes).
    position_bias : ndarray of shape (n_heads, t, t) or None
        A learned bias added to each head's scaled scores (T5's relative position bias, from
        bucketed distances j − i; MPNet's), or None.
    norm_across : bool
        True when ``q_norm`` and ``k_norm`` normalise all heads together (OLMo 2).
    relative : dict or None
        DeBERTa's disentangled terms: ``pos_key`` (K^r) and ``pos_query`` (Q^r), the layer's
        relative position embeddings projected per head, (n_heads, r, head_dim) or None for a
        term the model has not; ``c2p`` and ``p2c``, (t, t) rows of them each query i and key
        j read; ``scale``, the c the terms are multiplied by. Or None.
    layer_norm : dict or None
        A LayerNorm of each head's q and k before RoPE (Phi's and StableLM's
        ``qk_layernorm``): ``q_gain``, ``q_bias`` of shape (1 or n_heads, head_dim), ``k_gain``,
        ``k_bias`` of shape (1 or n_kv_heads, head_dim) — one row for every head, or one per
        head — and ``eps``; or None.
    """

    model_type: str
    layer: int
    tokens: tuple[str, ...]
    x: Array
    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array
    b_q: Array | None
    b_k: Array | None
    b_v: Array | None
    b_o: Array | None
    n_heads: int
    n_kv_heads: int
    head_dim: int
    scale: float
    causal: bool
    sliding_window: int | None
    softcap: float | None
    rope: Rope | None
    positions: Array
    q_norm: Array | None
    k_norm: Array | None
    norm_eps: float | None
    sinks: Array | None
    padding: NDArray[np.bool_]
    model_weights: Array
    model_output: Array
    alibi: Array | None = None
    position_bias: Array | None = None
    layer_norm: dict | None = None
    norm_across: bool = False
    relative: dict | None = None

    @property
    def mask(self) -> NDArray[np.bool_]:
        """(t, t), True = may attend: real keys, and earlier keys (causal) within the window
        (the last W keys when causal, the keys at most W away on either side when not)."""
        t = self.x.shape[0]
        mask = np.broadcast_to(self.padding[None, :], (t, t)).copy()
        if self.causal:
            mask &= causal_mask(t)
        if self.sliding_window is not None:
            mask &= sliding_window_mask(t, self.sliding_window) if self.causal else \
                window_mask(t, width=self.sliding_window)
        return mask


#: Relative difference allowed between a model's inverse frequencies and base^(−2i/d): Hugging
#: Face computes them in float32 (a relative rounding of ~6e-8); a scaled RoPE differs by far more.
ROPE_FREQ_RTOL = 1e-6


def kv_head(n_heads: int, n_kv_heads: int, head: int) -> int:
    """The key/value head query head ``head`` reads: head // (n_heads / n_kv_heads), as Hugging
    Face's ``repeat_kv`` (repeat_interleave) maps them."""
    return head // (n_heads // n_kv_heads)


def _columns(w: np.ndarray, block: int, width: int) -> np.ndarray:
    return np.array(w[:, block * width:(block + 1) * width], dtype=float)


def _with_bias(w: np.ndarray, b: np.ndarray | None, block: int, width: int) -> np.ndarray:
    """The head's block of W with its bias as an extra last row (0 where the model has none)."""
    row = np.zeros(width) if b is None else np.asarray(b, dtype=float)[block * width:
                                                                        (block + 1) * width]
    return np.vstack([_columns(w, block, width), row[None, :]])


def _head_blocks(inputs: LayerInputs | CrossInputs, head: int, kv: int):
    """One head's blocks of a layer's projections: its own of W_Q and its rows of W_O, its
    key/value head ``kv``'s of W_K and W_V. When any projection has a bias, each W gets it as a
    last row (the *bias trick*: [x, 1]·[W; b] = x·W + b; a zero row where the model has none)
    and ``biased`` is True: the inputs then need a last column of ones (:func:`_with_ones`).

    Returns
    -------
    biased : bool
    w_q, w_k, w_v : ndarray of shape (d_model (+ 1 when biased), head_dim)
    w_o : ndarray of shape (head_dim, d_model)
    """
    d = inputs.head_dim
    biased = any(b is not None for b in (inputs.b_q, inputs.b_k, inputs.b_v))
    sides = ((inputs.w_q, inputs.b_q, head), (inputs.w_k, inputs.b_k, kv),
             (inputs.w_v, inputs.b_v, kv))
    if biased:
        w_q, w_k, w_v = (_with_bias(w, b, block, d) for w, b, block in sides)
    else:
        w_q, w_k, w_v = (_columns(w, block, d) for w, _, block in sides)
    w_o = np.array(inputs.w_o[head * d:(head + 1) * d], dtype=float)  # (head_dim, d_model)
    return biased, w_q, w_k, w_v, w_o


def _with_ones(x: np.ndarray, biased: bool) -> np.ndarray:
    """``x`` as floats, with a last column of ones when the head's W carry their biases."""
    x = np.array(x, dtype=float)
    return np.hstack([x, np.ones((x.shape[0], 1))]) if biased else x


def _check_real_layer(li: LayerInputs, head: int) -> None:
    """A ValueError sentence for what the dashboard cannot open exactly, or its limits."""
    what = f"{li.model_type} layer {li.layer}"
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) \
            or not 0 <= head < li.n_heads:
        raise ValueError(f"head must be a whole number from 0 to {li.n_heads - 1} ({what} has "
                         f"{li.n_heads} heads), got {head!r:.40}")
    if li.rope is not None and not np.array_equal(li.positions, np.arange(li.x.shape[0])):
        raise ValueError(f"{what} turns its tokens by positions other than 0, 1, 2, ...; the "
                         f"RoPE variant cannot express them")
    t, d_model = li.x.shape
    if t > limits.MAX_TOKENS:
        raise ValueError(f"the text has {t} tokens; a head opens with at most "
                         f"{limits.MAX_TOKENS} tokens (shorten the text)")
    if d_model > limits.MAX_REAL_D_MODEL:
        raise ValueError(f"{what} has a hidden size of {d_model}; a real head opens with a "
                         f"hidden size of at most {limits.MAX_REAL_D_MODEL} (MAX_REAL_D_MODEL), "
                         f"so this model's heads open only on the Model view page")
    if li.head_dim > limits.MAX_WIDTH:
        raise ValueError(f"{what} has heads of width {li.head_dim}; the dashboard edits at most "
                         f"{limits.MAX_WIDTH} (MAX_WIDTH)")


def _rope_params(li: LayerInputs) -> dict[str, Any]:
    """The RoPE variant's settings reproducing the model's rotation, or a ValueError sentence
    when its RoPE is one the variant (split-half or interleaved pairs on a leading fraction of
    each head, positions from 0) cannot express.

    The frequencies decide, not the ``rope_type``'s name: frequencies that are
    base^(−2i/d) (to Hugging Face's float32 rounding) with no attention scaling open as the
    default RoPE from its base — dynamic NTK on a text within the model's
    max_position_embeddings, the only texts a capture takes (its frequencies change only beyond
    them). Any other (linear, YaRN, Llama 3, LongRoPE; frequencies of no named base, or of a
    base beyond the RoPE base's range) opens with the model's own frequencies
    (``rope_inv_freq``) and attention scaling (``rope_attention_scaling``); partial rotary
    with the rotated fraction."""
    rope = li.rope
    what = f"{li.model_type} layer {li.layer}"
    inv_freq = np.asarray(rope.inv_freq, dtype=float)
    d_rot = 2 * inv_freq.size
    fraction = d_rot / li.head_dim
    if rope.layout not in LAYOUTS or d_rot > li.head_dim or \
            2 * (int(li.head_dim * fraction) // 2) != d_rot:
        raise ValueError(f"{what} rotates {d_rot} of {li.head_dim} dimensions in its "
                         f"{rope.layout} layout; the RoPE variant cannot express that")
    if not np.array_equal(li.positions, np.arange(li.x.shape[0])):
        raise ValueError(f"{what} turns its tokens by positions other than 0, 1, 2, ...; the "
                         f"RoPE variant cannot express them")
    bounds = VARIANTS["rope"].param("rope_base")
    in_range = rope.base is not None and bounds.low <= rope.base <= bounds.high
    as_base = in_range and np.allclose(
        inv_freq, rope.base ** (-np.arange(0, d_rot, 2) / d_rot), rtol=ROPE_FREQ_RTOL, atol=0)
    params: dict[str, Any] = dict(rope_layout=rope.layout, rope_fraction=fraction,
                                  rope_offset=0)
    if as_base and rope.attention_scaling == 1.0:
        params["rope_base"] = float(rope.base)
    else:  # a scaled RoPE, or a base beyond the base box's range: the frequencies themselves
        params.update(rope_inv_freq=tuple(float(f) for f in inv_freq),
                      rope_attention_scaling=float(rope.attention_scaling))
        if in_range:
            params["rope_base"] = float(rope.base)  # shown, disabled: the frequencies decide
    if li.softcap is not None:
        params["rope_softcap"] = float(li.softcap)
    for name, value in params.items():
        params[name] = VARIANTS["rope"].param(name).check(value)  # out of range: a sentence
    return params


def _alibi_variant(li: LayerInputs, head: int) -> bool:
    """True for a causal ALiBi head without RoPE whose slope is the ALiBi variant's 2^−8."""
    return li.alibi is not None and li.causal and li.rope is None and bool(np.isclose(
        float(li.alibi[head]), float(alibi_slopes(1)[0]), rtol=1e-12, atol=0))


def needs_steps(li: LayerInputs, head: int) -> bool:
    """True when the head combines ideas no single variant computes (QK-norm with a gain per
    dimension, sink logits, a learned position bias, DeBERTa's relative terms, a soft-cap
    without RoPE, ALiBi of another slope): it opens as a list of steps."""
    return (li.q_norm is not None or li.sinks is not None or li.position_bias is not None
            or li.layer_norm is not None or li.relative is not None
            or (li.softcap is not None and li.rope is None)
            or (li.alibi is not None and not _alibi_variant(li, head)))


def layer_steps(li: LayerInputs, head: int | None = None) -> tuple:
    """The layer's attention as a list of steps (:mod:`attnviz.core.steps`), without the scale
    (a scenario's scale mode holds it): every head (``head`` None: n_heads on n_kv_heads, W_O)
    or one query head (its ALiBi slope and sink logit). QK-norm with the model's gains before
    RoPE with its own frequencies, layout and attention scaling; ALiBi as the model adds it
    (m_h·j); the cap; the causal mask, the window (W keys when causal, |i − j| ≤ W when not)
    and the padding; the sink logits."""
    heads = range(li.n_heads) if head is None else [head]
    out: list = [S.Heads(li.n_heads, li.n_kv_heads, project_out=True) if head is None
                 else S.Heads()]
    if li.q_norm is not None and li.norm_across:
        out.append(_norm_across_step(li, heads))
    elif li.q_norm is not None:
        out.append(S.QKNorm(tuple(np.asarray(li.q_norm, float).tolist()),
                            tuple(np.asarray(li.k_norm, float).tolist()), float(li.norm_eps)))
    if li.layer_norm is not None:
        out.append(_layer_norm_step(li, heads))
    if li.rope is not None:
        start = float(li.positions[0]) if len(li.positions) else 0.0
        if not np.array_equal(li.positions, start + np.arange(len(li.positions))):
            raise ValueError(f"{li.model_type} layer {li.layer} turns its tokens by positions "
                             f"that do not follow one another; the RoPE step turns positions "
                             f"p, p + 1, p + 2, ...")
        out.append(S.RoPE(inv_freq=tuple(np.asarray(li.rope.inv_freq, float).tolist()),
                          layout=li.rope.layout,
                          attention_scaling=float(li.rope.attention_scaling), offset=start))
    if li.alibi is not None:
        out.append(S.ALiBi(tuple(float(li.alibi[h]) for h in heads), form="key"))
    if li.position_bias is not None:  # T5's or MPNet's relative position bias, (n_heads, t, t)
        bias = np.asarray(li.position_bias, dtype=float)
        out.append(S.AddBias(bias if head is None else bias[head:head + 1]))
    if li.relative is not None:  # DeBERTa's content-to-position and position-to-content
        out.append(_disentangled_step(li, heads))
    if li.softcap is not None:
        out.append(S.SoftCap(float(li.softcap)))
    if li.causal:
        out.append(S.Causal())
    if li.sliding_window is not None:
        out.append(S.Window(int(li.sliding_window), keys=li.causal))
    if not np.all(li.padding):
        out.append(S.Padding(tuple(bool(p) for p in li.padding)))
    if li.sinks is not None:
        out.append(S.SinkSoftmax(tuple(float(li.sinks[h]) for h in heads)))
    return tuple(out)


def _norm_across_step(li: LayerInputs, heads) -> S.QKNormAcross:
    """The layer's RMSNorm over all heads together (OLMo 2) as each query head sees it: its
    slice of the gains and, per position, the other heads' sum of squares of the projection
    (recorded from the layer's input, held fixed); the key's of the key/value head it reads."""
    d = li.head_dim

    def side(w, b, gain, n, pick):
        p = li.x @ w if b is None else li.x @ w + b  # (t, n·d)
        own = np.sum(p.reshape(p.shape[0], n, d) ** 2, axis=2)  # (t, n)
        rest = [np.sum(np.delete(own, g, axis=1), axis=1) for g in pick]
        gains = np.asarray(gain, dtype=float).reshape(n, d)[pick]
        return gains.tolist(), np.array(rest).tolist(), n * d

    q_gain, q_rest, q_width = side(li.w_q, li.b_q, li.q_norm, li.n_heads, list(heads))
    k_gain, k_rest, k_width = side(li.w_k, li.b_k, li.k_norm, li.n_kv_heads,
                                   [kv_head(li.n_heads, li.n_kv_heads, h) for h in heads])
    return S.QKNormAcross(q_gain, k_gain, q_rest, k_rest, q_width, k_width, float(li.norm_eps))


def _disentangled_step(li: LayerInputs, heads) -> S.Disentangled:
    """DeBERTa's relative terms for the query heads ``heads``: their tables of projected
    positions, cut to the rows the sequence reads (at most 2t − 1 of them), the indices
    renumbered to match."""
    rel = li.relative
    heads = list(heads)

    def side(table, index):
        if table is None:
            return (), ()
        index = np.asarray(index, dtype=int)
        used, renumbered = np.unique(index, return_inverse=True)
        return (np.asarray(table, dtype=float)[heads][:, used],
                renumbered.reshape(index.shape))

    pos_key, c2p = side(rel["pos_key"], rel["c2p"])
    pos_query, p2c = side(rel["pos_query"], rel["p2c"])
    return S.Disentangled(pos_key, pos_query, c2p, p2c, float(rel["scale"]))


def _layer_norm_step(li: LayerInputs, heads) -> S.QKLayerNorm:
    """The layer's QK-LayerNorm for the query heads ``heads``: a shared row as it is, else
    each query head's row and the row of the key/value head it reads."""
    ln = li.layer_norm

    def rows(side: str, what: str):
        table = np.asarray(ln[f"{side}_{what}"], dtype=float)
        if table.shape[0] == 1:
            return table.tolist()
        pick = [h if side == "q" else kv_head(li.n_heads, li.n_kv_heads, h) for h in heads]
        return table[pick].tolist()

    return S.QKLayerNorm(rows("q", "gain"), rows("k", "gain"), rows("q", "bias"),
                         rows("k", "bias"), float(ln["eps"]))


def layer_scenario(inputs: LayerInputs, head: int, *, title: str = "",
                   description: str = "") -> Scenario:
    """Head ``head`` of a real model's layer (read by :func:`attnviz.io.hf_layers.layer_inputs`)
    as a scenario whose run computes the model's own probabilities for that head.

    Parameters
    ----------
    inputs : LayerInputs
        One layer of one sequence (the first of a batch; padding is masked as keys).
    head : int
        The query head, from 0.
    title, description : str
        Shown where the scenario is named; say there that the bias trick was used (see
        Returns).

    Returns
    -------
    Scenario
        tokens: the model's tokens (bidi controls removed, cut to MAX_LABEL_CHARS); x: the
        hidden states entering the attention (after the layer's input norm); w_q: the head's
        (d_model, head_dim) block; w_k, w_v: the block of its key/value head
        (:func:`kv_head`); w_o: its (head_dim, d_model) rows of the output projection. When the
        layer has projection biases, x gets a last column of ones and w_q, w_k, w_v a last row
        holding their biases (0 for a projection without one): the *bias trick*. Scale
        1/√head_dim ("sqrt_dk") or the model's own ("custom": Gemma 2's
        query_pre_attn_scalar^−½, GPT-2's layer-index scaling, GPT-Neo's 1); variant "rope"
        (the model's base — or, for a scaled RoPE, its own frequencies and attention scaling —
        its pair layout, its rotated fraction, positions from 0, its soft-cap) for a rotary
        model, "alibi" for an ALiBi head of slope 2^−8 (its scaled scores are the model's
        minus m·i per query row i; the weights are the model's), "steps" for a head that
        combines ideas (:func:`needs_steps`: its :func:`layer_steps`, the mask among them),
        else "causal" or
        "scaled_dot_product"; the mask "causal", or "custom" (causal, Hugging Face's sliding
        window — W keys when causal, |i − j| <= W when not — padding) when the layer has a
        window or the sequence padding.

    Raises
    ------
    ValueError
        A head out of range; RoPE turning positions other than 0, 1, 2, ...; more tokens than
        MAX_TOKENS, a hidden size above MAX_REAL_D_MODEL (GPT-2 medium's 1024; the bias column
        may come on top) or a head wider than MAX_WIDTH.
    """
    li = inputs
    _check_real_layer(li, head)
    head = int(head)
    d = li.head_dim
    # 1) the head's blocks: its own of W_Q, its key/value head's of W_K and W_V
    biased, w_q, w_k, w_v, w_o = _head_blocks(li, head, kv_head(li.n_heads, li.n_kv_heads,
                                                                head))
    x = _with_ones(li.x, biased)
    # 2) the scale: 1/√d_k when it is the model's (to rounding), else the model's number
    sqrt_dk = bool(np.isclose(li.scale, d ** -0.5, rtol=1e-15, atol=0))
    fields: dict[str, Any] = dict(w_o=w_o, title=title, description=description,
                                  scale_mode="sqrt_dk" if sqrt_dk else "custom",
                                  custom_scale=1.0 if sqrt_dk else float(li.scale))
    # 3) the mask: the variant's causal one, or the whole mask when a window or padding hides
    #    more
    mask = np.asarray(li.mask, dtype=bool)
    plain = li.sliding_window is None and bool(np.all(li.padding))
    if needs_steps(li, head):  # every part, the mask's too, a step of the list
        fields.update(variant="steps", params={"steps": layer_steps(li, head)})
        plain = True
    elif li.rope is not None:  # the RoPE variant has no mask of its own
        fields.update(variant="rope", params=_rope_params(li),
                      mask_kind="causal" if li.causal else "none")
    elif li.alibi is not None:  # causal, −m(i − j): the model's m·j up to a row constant
        fields.update(variant="alibi")
    else:
        fields.update(variant="causal" if li.causal else "scaled_dot_product")
    if not plain:
        fields.update(mask_kind="custom", custom_mask=mask)
    tokens = [without_bidi(str(tok))[:limits.MAX_LABEL_CHARS] for tok in li.tokens]
    return projected(tokens, x, w_q, w_k, w_v, **fields)


# ---------------------------------------------------------------------------------------------
# One head of a real encoder–decoder model's cross-attention
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class CrossInputs:
    """Everything one cross-attention layer of an encoder–decoder model computes from, for one
    source and one target, in float64 (filled by :func:`attnviz.io.hf_layers.seq2seq_layer_inputs`).

    Attributes
    ----------
    model_type : str
    layer : int
        The decoder layer.
    tokens : tuple of str
        The decoder's input (the queries): its start token, then the target's tokens.
    source_tokens : tuple of str
        The encoder's tokens (the keys and values).
    x : ndarray of shape (t, d_model)
        The decoder's hidden states entering the cross-attention (after its norm, if any).
    source : ndarray of shape (t_s, d_model)
        The encoder's output, which the keys and values are projected from.
    w_q, w_k, w_v : ndarray of shape (d_model, n_heads·head_dim)
    w_o : ndarray of shape (n_heads·head_dim, d_model)
    b_q, b_k, b_v, b_o : ndarray or None
        Row-vector convention: ``q = x @ w_q + b_q``, ``k = source @ w_k + b_k``.
    n_heads, head_dim : int
    scale : float
        Multiplies q·kᵀ (T5: 1; BART: 1/√head_dim).
    model_weights : ndarray of shape (n_heads, t, t_s)
        The model's own cross-attention probabilities (``cross_attentions``).
    model_output : ndarray of shape (t, d_model)
        The block's output (after the output projection, before the residual).
    """

    model_type: str
    layer: int
    tokens: tuple[str, ...]
    source_tokens: tuple[str, ...]
    x: Array
    source: Array
    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array
    b_q: Array | None
    b_k: Array | None
    b_v: Array | None
    b_o: Array | None
    n_heads: int
    head_dim: int
    scale: float
    model_weights: Array
    model_output: Array


def cross_scenario(inputs: CrossInputs, head: int, *, title: str = "",
                   description: str = "") -> Scenario:
    """Head ``head`` of a real encoder–decoder model's cross-attention as a scenario of the
    "cross" variant whose run computes the model's own probabilities for that head.

    Parameters
    ----------
    inputs : CrossInputs
    head : int
        From 0.
    title, description : str

    Returns
    -------
    Scenario
        tokens, x: the decoder's input and its hidden states (the queries); source_tokens,
        source_x: the encoder's tokens and output (keys and values); w_q, w_k, w_v: the
        head's (d_model, head_dim) blocks, w_o its (head_dim, d_model) rows; with projection
        biases, x and source_x get a last column of ones and each W a last row holding its
        bias (the *bias trick*, as :func:`layer_scenario`). Scale 1/√head_dim ("sqrt_dk") when
        it is the model's (BART), else the model's own ("custom": T5's 1). No mask: every
        target token sees every source token.

    Raises
    ------
    ValueError
        A head out of range, more tokens than MAX_TOKENS on either side, a hidden size above
        MAX_REAL_D_MODEL or a head wider than MAX_WIDTH.
    """
    ci = inputs
    what = f"{ci.model_type} cross-attention layer {ci.layer}"
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) \
            or not 0 <= head < ci.n_heads:
        raise ValueError(f"head must be a whole number from 0 to {ci.n_heads - 1} ({what} has "
                         f"{ci.n_heads} heads), got {head!r:.40}")
    longest = max(ci.x.shape[0], ci.source.shape[0])
    if longest > limits.MAX_TOKENS:
        raise ValueError(f"a text has {longest} tokens; a head opens with at most "
                         f"{limits.MAX_TOKENS} tokens (shorten the text)")
    if ci.x.shape[1] > limits.MAX_REAL_D_MODEL:
        raise ValueError(f"{what} has a hidden size of {ci.x.shape[1]}; a real head opens with "
                         f"a hidden size of at most {limits.MAX_REAL_D_MODEL} "
                         f"(MAX_REAL_D_MODEL)")
    if ci.head_dim > limits.MAX_WIDTH:
        raise ValueError(f"{what} has heads of width {ci.head_dim}; the dashboard edits at most "
                         f"{limits.MAX_WIDTH} (MAX_WIDTH)")
    head, d = int(head), ci.head_dim
    # 1) the head's blocks; the bias trick when a projection has a bias
    biased, w_q, w_k, w_v, w_o = _head_blocks(ci, head, head)
    x, source = _with_ones(ci.x, biased), _with_ones(ci.source, biased)
    # 2) the scale: 1/√d_k when it is the model's (to rounding), else the model's number
    sqrt_dk = bool(np.isclose(ci.scale, d ** -0.5, rtol=1e-15, atol=0))

    def labels(tokens):
        return tuple(without_bidi(str(tok))[:limits.MAX_LABEL_CHARS] for tok in tokens)

    return projected(labels(ci.tokens), x, w_q, w_k, w_v, w_o=w_o, variant="cross",
                     source_tokens=labels(ci.source_tokens), source_x=source,
                     scale_mode="sqrt_dk" if sqrt_dk else "custom",
                     custom_scale=1.0 if sqrt_dk else float(ci.scale), title=title,
                     description=description)
