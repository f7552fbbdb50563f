"""Rotary position embedding (RoPE; Su et al., 2021, RoFormer §3.4): q and k rotated by position.

Each pair of dimensions of every query and key is rotated by position·θ_i with
θ_i = base^(−2i/d_rot) (:mod:`attnviz.core.rope`), after the projections and before the
scores; the values are not rotated. The scores then depend on the positions only through
their difference: the ``offset`` setting shifts every position and leaves the weights as they
are (the demonstration the preset is built for), whereas the sinusoidal encoding added to x
(the "positional encoding" switch) does change them.

NoPE — no positional information at all — is the scaled dot-product variant with the
positional encoding switched off; it is not a variant of its own.

With a soft-cap c > 0 (``rope_softcap``; 0, the default, is none) the scaled scores pass
through c·tanh(s / c) as in the soft-capping variant: Gemma 2 rotates and caps, and a head of
a real Gemma 2 model opens as this variant (:func:`attnviz.scenarios.from_model.layer_scenario`).

A real model's scaled RoPE (linear, YaRN, Llama 3, LongRoPE: Hugging Face's ``rope_type``)
turns pair i by position·θ_i with frequencies of its own: ``rope_inv_freq`` holds them (one per
rotated pair, Hugging Face's ``rotary_emb.inv_freq``, each in (0, :data:`MAX_INV_FREQ`];
empty, the default, = b^(−2i/d) from ``rope_base``), and ``rope_attention_scaling`` a
multiplies the rotated q and k (YaRN's and LongRoPE's ``attention_scaling``; q·k then scales
by a²). A head of such a model opens with both
(:func:`attnviz.scenarios.from_model.layer_scenario`); the backward pass undoes the same
rotation and scaling.

The dashboard rotates the largest even number of dimensions within ``rotary_fraction`` of the
head width (a head of width 3 rotates one pair and passes the third dimension through), so the
variant computes for every scenario; the core's :func:`~attnviz.core.rope.apply_rope` refuses
an odd count given as a fraction, as the libraries do.
"""

import math

import numpy as np

from attnviz.core import steps as S
from attnviz.core.initializers import init_weights
from attnviz.core.rope import LAYOUTS, apply_rope
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import (
    PROJECTIONS,
    Written,
    number,
    scaled,
    sdpa,
    softmax,
)
from attnviz.scenarios.variant import Inputs, Param, Preset, Variant, dot_product_backward, draft
from attnviz.scenarios.variants.heads import attend, project_heads

MAX_INV_FREQ = 1e3  # the largest frequency θ_i rope_inv_freq may give
PARAMS = (
    Param("rope_base", "RoPE base", 10000.0, low=1.0, high=1e6, overridden_by="rope_inv_freq"),
    Param("rope_layout", "Pair layout", "split_half", choices=LAYOUTS),
    Param("rope_fraction", "Rotated fraction of each head", 1.0, low=0.0, high=1.0),
    Param("rope_offset", "Position offset", 0, low=0, high=4096),
    Param("rope_softcap", "Soft-cap c (0 = none)", 0.0, low=0.0, high=1000.0),
    # θ_i: a real model's lie in (0, 1] (θ_0 = b^0 = 1; scaled RoPE only lowers them); up to
    # MAX_INV_FREQ leaves room for experiments and keeps position·θ_i (positions up to 4096 +
    # 256) far from overflow (1e308 would make every angle inf and q, k NaN)
    Param("rope_inv_freq", "θ_i from the model", (), high=MAX_INV_FREQ),
    Param("rope_attention_scaling", "Attention scaling a", 1.0, low=0.01, high=100.0),
)


def rotated_dims(d_k: int, fraction: float) -> int:
    """The even number of dimensions the dashboard rotates: 2·⌊int(d_k·fraction) / 2⌋.

    Raises
    ------
    ValueError
        If that leaves no pair to rotate.
    """
    d_rot = 2 * (int(d_k * fraction) // 2)
    if d_rot < 2:
        raise ValueError(f"rope_fraction {fraction:g} of the head width d_k = {d_k} rotates no "
                         f"pair of dimensions; raise rope_fraction or widen W_Q and W_K")
    return d_rot


def _rope_settings(inputs: Inputs, d_k: int) -> dict:
    """The keyword arguments of :func:`apply_rope` for this scenario and head width: the
    frequencies from the base, or the given ``rope_inv_freq`` (one per rotated pair), and the
    attention scaling.

    Raises
    ------
    ValueError
        Given frequencies whose number is not the head's rotated pairs.
    """
    sc = inputs.scenario
    d_rot = rotated_dims(d_k, sc.param("rope_fraction"))
    kw = dict(layout=sc.param("rope_layout"), offset=sc.param("rope_offset"),
              attention_scaling=sc.param("rope_attention_scaling"))
    freq = sc.param("rope_inv_freq")
    if not freq:
        return kw | dict(base=sc.param("rope_base"), d_rot=d_rot)
    if len(freq) != d_rot // 2:
        raise ValueError(f"rope_inv_freq holds {len(freq)} frequencies, but a head of width "
                         f"d_k = {d_k} rotating the fraction {sc.param('rope_fraction'):g} has "
                         f"{d_rot // 2} pairs; set the head width back to the model's, or drop "
                         f"the model's frequencies (then θ_i comes from the base)")
    return kw | dict(inv_freq=np.array(freq, dtype=float))


def _softcap(inputs: Inputs) -> float | None:
    """The soft-cap c, or None when the setting is 0 (no cap)."""
    cap = inputs.scenario.param("rope_softcap")
    return float(cap) if cap > 0 else None


def _rope(w: Written) -> S.RoPE:
    """The RoPE step the settings wrote (a plain one where ``w`` holds none: the general
    formula, θ_i from the base and no attention scaling)."""
    return next((s for s in w.steps if isinstance(s, S.RoPE)), S.RoPE())


def _scaling(w: Written) -> str:
    """The attention scaling a as a factor of the rotated vectors (empty when it is 1)."""
    return "" if _rope(w).attention_scaling == 1.0 else r"a\,"


def _formula(w: Written) -> str:
    """The rotated scores through the softmax, soft-capped when the settings wrote a cap, with
    the attention scaling a when it is not 1."""
    a = _scaling(w)
    qk = rf"({a}R_{{\Theta,m}}\,q_m)^\top ({a}R_{{\Theta,n}}\,k_n)"
    if not any(isinstance(s, S.SoftCap) for s in w.steps):
        return sdpa(w, qk)
    return softmax(r"c\,\tanh\!\left(" + scaled(qk, w, by="c") + r"\right)", w) + "V"


def _rotated(w: Written) -> str:
    """The query and key that reach the scores: the projections rotated pair by pair by their
    positions, times the attention scaling a when it is not 1."""
    a = _scaling(w)
    return rf"q_i = {a}R(p_i)\,(x_i W_Q),\quad k_j = {a}R(p_j)\,(x_j W_K)"


def _frequencies(w: Written) -> str:
    """Where θ_i comes from: the base, or the model (its own frequencies; the base unused)."""
    rope = _rope(w)
    if not rope.inv_freq:
        theta = r",\quad \theta_i = b^{-2i/d}"
    else:
        theta = r",\quad \theta_i\ \text{from the model (not from the base } b\text{)}"
    if rope.attention_scaling != 1.0:
        theta += rf",\quad a = {number(rope.attention_scaling)}"
    return theta


def compute(inputs: Inputs):
    """softmax(R_m q_m · (R_n k_n)ᵀ · scale / τ + M) V with R the rotation of each position
    (the scaled scores soft-capped, c·tanh(s / c), when ``rope_softcap`` > 0)."""
    q_h, k_h, v_h = project_heads(inputs)
    kw = _rope_settings(inputs, q_h.shape[2])
    return attend(inputs, apply_rope(q_h, **kw), apply_rope(k_h, **kw), v_h,
                  softcap=_softcap(inputs))


def unrotate(inputs: Inputs, d_q_h, d_k_h):
    """The gradients of the rotated q and k carried back to q and k: R_mᵀ = R_{−m}.

    A rotation's transpose is the rotation by the opposite angle, so the gradient is rotated
    by −(position + offset)·θ_i (positions given negated, offset 0).
    """
    kw = _rope_settings(inputs, d_q_h.shape[2])
    back = -(np.arange(d_q_h.shape[1], dtype=float) + kw.pop("offset"))
    return apply_rope(d_q_h, back, **kw), apply_rope(d_k_h, back, **kw)


def backward(inputs: Inputs, result, d_output, d_weights):
    """The dot-product backward pass, with the rotation undone on dQ and dK."""
    return dot_product_backward(inputs, result, d_output, d_weights, pullback=unrotate)


def shift():
    """Hand-built: the same word four times; RoPE tells the copies apart by relative position."""
    tokens = ["the", "cat", "the", "cat", "the", "cat"]
    x = np.array([[1.0, 0, 1, 0], [0, 1, 0, 1]] * 3)
    w_q, w_k, w_v = init_weights("glorot_uniform", [(4, 4)] * 3, seed=3)
    return draft(tokens, x, w_q * 2, w_k * 2, w_v, variant="rope",
                     params={"rope_base": 4.0, "rope_offset": 0},
                     title="RoPE: shifting every position changes nothing",
                     description="Repeated words get different weights only through their "
                                 "distance. Change the position offset: the weights stay "
                                 "exactly the same; switch on the sinusoidal encoding instead "
                                 "and they change.")



def loop_reference(inputs: Inputs):
    """Explicit loops on q and k rotated pair by pair at position index + offset."""

    def rotate(q, k, h):
        kw = _rope_settings(inputs, q.shape[1])
        freq = kw.get("inv_freq")
        d_rot = kw["d_rot"] if freq is None else 2 * len(freq)

        def turn(rows):
            return np.array([reference.rotate(row, p + kw["offset"], d_rot, kw.get("base"),
                                              kw["layout"], freq, kw["attention_scaling"])
                             for p, row in enumerate(rows)])

        return turn(q), turn(k)

    cap = _softcap(inputs)

    def logit(d_k):
        scaled_by = reference.scaled_logit(inputs, d_k)
        if cap is None:
            return scaled_by
        return lambda s, h, i, j: cap * math.tanh(scaled_by(s, h, i, j) / cap)

    return reference.multi_head(inputs, logit, change=rotate, w_o=inputs.n_heads > 1)


def to_steps(scenario) -> tuple:
    """RoPE as a step (and the soft-cap, when set)."""
    p = scenario.param
    rope = S.RoPE(base=p("rope_base"), inv_freq=tuple(p("rope_inv_freq")),
                  fraction=p("rope_fraction"), layout=p("rope_layout"),
                  attention_scaling=p("rope_attention_scaling"), offset=p("rope_offset"))
    return (rope, S.SoftCap(float(p("rope_softcap")))) if p("rope_softcap") > 0 else (rope,)


VARIANT = Variant(
    key="rope", name="RoPE (rotary positions)", order=80,
    description="Queries and keys are rotated by an angle proportional to their position, so "
                "the scores depend only on how far apart two tokens are (NoPE: scaled "
                "dot-product without positional encoding).",
    formula=lambda w: _formula(w) + _frequencies(w) + r",\quad " + PROJECTIONS,
    compute=compute, backward=backward, params=PARAMS,
    presets=(Preset("rope_shift", "RoPE: a shift of positions changes nothing", "hand-built",
                    shift),),
    reference=loop_reference,
    # the vector in the scores: the projection rotated pair by pair by its position p_i
    query_formula=_rotated, to_steps=to_steps,
)
