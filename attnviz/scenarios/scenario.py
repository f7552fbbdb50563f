"""The scenario: everything a user can edit, and the one function that computes it.

A :class:`Scenario` holds tokens, embeddings, weight matrices, the variant and its settings.
It is immutable: edits make a new scenario with :func:`dataclasses.replace` or :func:`resize`.
:func:`run_scenario` turns it into a :class:`ScenarioResult` by calling the core function the
variant registry names, so every page shows numbers from the same place.

Two input modes:

* ``direct=False`` (default): q = x·W_Q, k = x·W_K, v = x·W_V, as the seed notebooks write
  ``words @ W_Q``; cross-attention and additive attention take keys and values from the source
  sequence (``source_tokens``, ``source_x``).
* ``direct=True``: Q, K and V are given as they are (``q_in``, ``k_in``, ``v_in``), as in seed
  001's causal example and seed 004's single query.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from attnviz.core.additive import (
    AdditiveResult,
    PoolingResult,
    additive_attention,
    attention_pooling,
)
from attnviz.core.attention import (
    AttentionResult,
    MultiHeadResult,
    mix_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    self_attention,
)
from attnviz.core.masks import causal_mask, padding_mask, window_mask
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.scenarios.registry import VARIANTS, Variant

Array = NDArray[np.float64]

SCALE_MODES = ("sqrt_dk", "none", "custom")
MASK_KINDS = ("none", "causal", "padding", "window", "custom")


def _empty() -> Array:
    return np.zeros((0, 0))


@dataclass(frozen=True, eq=False)
class Scenario:
    """Everything the user can edit. Shapes use t = len(tokens), t_s = len(source_tokens).

    Attributes
    ----------
    tokens : tuple of str
        Labels of the main sequence (the queries; the target in encoder–decoder attention).
    x : ndarray of shape (t, d_model)
    w_q, w_k : ndarray of shape (d_model, n_heads·d_k)
    w_v : ndarray of shape (d_model, n_heads·d_v)
    w_o : ndarray of shape (n_heads·d_v, d_out)
        Output projection of multi-head attention.
    variant : str
        A key of :data:`attnviz.scenarios.registry.VARIANTS`.
    n_heads : int
    head_mix : ndarray of shape (n_heads,) or None
        Seed 004's alternative to W_O: one weight per head.
    scale_mode : {"sqrt_dk", "none", "custom"}
        1/sqrt(d_k), 1, or ``custom_scale``.
    temperature : float
    use_pe, pe_base
        Add the sinusoidal positional encoding (with this base) to x and source_x.
    mask_kind : {"none", "causal", "padding", "window", "custom"}
        The user's mask, combined (logical and) with the variant's own (causal for "causal").
    valid_len : int
        Padding: number of real keys.
    window : int
        Sliding window: visible neighbours on each side.
    custom_mask : ndarray of bool, shape (t_q, t_k)
    source_tokens, source_x : tuple of str, ndarray of shape (t_s, d_model)
        The second sequence (encoder side) for cross and additive attention.
    w_a_q, w_a_k : ndarray of shape (d_model, d_a); v_a : ndarray of shape (d_a,)
        Additive attention's alignment model.
    pool_w : ndarray of shape (d_model,); pool_b : ndarray of shape (t,)
        Seed 004's attention-pooling layer.
    direct : bool
        Use q_in, k_in, v_in as they are instead of projecting x.
    q_in : (t, d_k); k_in : (t_s, d_k); v_in : (t_s, d_v)
        Direct mode: query labels are ``tokens``, key labels ``source_tokens``.
    title, description : str
        Shown where the scenario came from a preset.
    """

    tokens: tuple[str, ...]
    x: Array
    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array
    variant: str = "scaled_dot_product"
    n_heads: int = 1
    head_mix: Array | None = None
    scale_mode: str = "sqrt_dk"
    custom_scale: float = 1.0
    temperature: float = 1.0
    use_pe: bool = False
    pe_base: float = 10000.0
    mask_kind: str = "none"
    valid_len: int = 1
    window: int = 1
    custom_mask: NDArray[np.bool_] | None = None
    source_tokens: tuple[str, ...] = ()
    source_x: Array = field(default_factory=_empty)
    w_a_q: Array = field(default_factory=_empty)
    w_a_k: Array = field(default_factory=_empty)
    v_a: Array = field(default_factory=lambda: np.zeros(0))
    pool_w: Array = field(default_factory=lambda: np.zeros(0))
    pool_b: Array = field(default_factory=lambda: np.zeros(0))
    direct: bool = False
    q_in: Array = field(default_factory=_empty)
    k_in: Array = field(default_factory=_empty)
    v_in: Array = field(default_factory=_empty)
    title: str = ""
    description: str = ""

    @property
    def t(self) -> int:
        """Number of main-sequence tokens."""
        return len(self.tokens)

    @property
    def d_model(self) -> int:
        """Embedding width."""
        return int(self.x.shape[1]) if self.x.ndim == 2 else 0

    @property
    def spec(self) -> Variant:
        """The registry entry of the chosen variant."""
        return VARIANTS[self.variant]

    @property
    def key_tokens(self) -> tuple[str, ...]:
        """Labels of the keys: the source sequence when the variant or mode reads it."""
        return self.source_tokens if (self.direct or self.spec.uses_source) else self.tokens


@dataclass(frozen=True, eq=False)
class ScenarioResult:
    """What a page needs to draw a scenario.

    Attributes
    ----------
    x : ndarray of shape (t, d_model)
        Embeddings as fed to the projections (with PE added when ``use_pe``).
    pe : ndarray of shape (t, d_model) or None
    source_x : ndarray of shape (t_s, d_model) or None
        Source embeddings as fed to the projections (with PE when ``use_pe``).
    attention : AttentionResult, MultiHeadResult or AdditiveResult
    pooling : PoolingResult or None
        Seed 004's attention pooling over x, when the scenario has pooling weights.
    mixed : ndarray of shape (t, d_v) or None
        Head outputs combined with ``head_mix`` (multi-head only).
    q_labels, k_labels : list of str
        Query and key labels made unique by position ("0:the", "3:the").
    mask : ndarray of bool, shape (t_q, t_k)
    """

    x: Array
    pe: Array | None
    source_x: Array | None
    attention: AttentionResult | MultiHeadResult | AdditiveResult
    pooling: PoolingResult | None
    mixed: Array | None
    q_labels: list[str]
    k_labels: list[str]
    mask: NDArray[np.bool_]


def position_labels(tokens) -> list[str]:
    """Labels unique by position: ``["0:the", "1:cat", "2:the"]`` (plotly needs unique labels)."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def scale_of(scenario: Scenario) -> float | None:
    """The scale factor the variant and scale mode ask for (None = 1/sqrt(d_k))."""
    fixed = scenario.spec.fixed.get("scale", "free")
    if fixed != "free":
        return fixed
    return {"sqrt_dk": None, "none": 1.0}.get(scenario.scale_mode, scenario.custom_scale)


def user_mask(scenario: Scenario, t_q: int, t_k: int) -> NDArray[np.bool_] | None:
    """The mask chosen by ``mask_kind`` for a (t_q, t_k) score matrix (None = no mask).

    Raises
    ------
    ValueError
        If a custom mask does not match the scores' shape.
    """
    kind = scenario.mask_kind
    if kind == "causal":
        return causal_mask(t_q, t_k)
    if kind == "padding":
        return padding_mask(min(max(scenario.valid_len, 0), t_k), t_k, t_q)
    if kind == "window":
        return window_mask(t_q, t_k, width=max(scenario.window, 0))
    if kind == "custom":
        m = scenario.custom_mask
        if m is None or m.shape != (t_q, t_k):
            got = "none" if m is None else str(m.shape)
            raise ValueError(f"the custom mask must have shape (t_q, t_k) = ({t_q}, {t_k}), "
                             f"got {got}; reset it on the Masks page")
        return m
    return None


def _with_pe(x: Array, scenario: Scenario) -> tuple[Array, Array | None]:
    """x + PE when positional encoding is on (PE has x's shape), else x unchanged."""
    if not scenario.use_pe:
        return x, None
    pe = sinusoidal_positional_encoding(x.shape[0], x.shape[1], base=scenario.pe_base)
    return x + pe, pe


def _check_settings(scenario: Scenario) -> None:
    """Raise a ValueError for settings the computation cannot use (the arrays are checked by
    the core functions themselves)."""
    for name, value, allowed in (("variant", scenario.variant, tuple(VARIANTS)),
                                 ("mask_kind", scenario.mask_kind, MASK_KINDS),
                                 ("scale_mode", scenario.scale_mode, SCALE_MODES)):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    if not scenario.tokens:
        raise ValueError("there are no tokens; add at least one token")
    if not scenario.direct and np.ndim(scenario.x) == 2 and len(scenario.x) != scenario.t:
        raise ValueError(f"x must have one row per token: {scenario.t} tokens but "
                         f"{len(scenario.x)} rows")
    if scenario.spec.uses_source and not scenario.source_tokens:
        raise ValueError("this variant needs a source sequence; add at least one source token")
    if scenario.spec.uses_source and np.ndim(scenario.source_x) == 2 and \
            len(scenario.source_x) != len(scenario.source_tokens):
        raise ValueError(f"source_x must have one row per source token: "
                         f"{len(scenario.source_tokens)} tokens but {len(scenario.source_x)} rows")


def run_scenario(scenario: Scenario) -> ScenarioResult:
    """Compute the scenario with the core function its variant names.

    Raises
    ------
    ValueError
        With a sentence saying what is wrong (sizes, non-finite values, n_heads, ...).
    """
    _check_settings(scenario)
    spec = scenario.spec
    x, pe = _with_pe(np.asarray(scenario.x, dtype=float), scenario)
    source = None
    if spec.uses_source:
        if not scenario.source_tokens:
            raise ValueError("this variant needs a source sequence; add at least one source token")
        source, _ = _with_pe(np.asarray(scenario.source_x, dtype=float), scenario)
    t_q = len(scenario.tokens)
    t_k = len(scenario.key_tokens)
    mask = user_mask(scenario, t_q, t_k)
    kwargs = {k: v for k, v in spec.fixed.items() if k != "scale"}
    if spec.kind == "additive":
        result = additive_attention(x, source, source, scenario.w_a_q, scenario.w_a_k,
                                    scenario.v_a, mask=mask)
    elif scenario.direct:
        result = _run_direct(scenario, mask)
    elif spec.kind == "multi_head":
        result = spec.function(x, None, scenario.w_q, scenario.w_k, scenario.w_v, scenario.w_o,
                               n_heads=scenario.n_heads, mask=mask, scale=scale_of(scenario),
                               temperature=scenario.temperature, **kwargs)
    elif spec.kind == "cross":
        result = spec.function(x, source, scenario.w_q, scenario.w_k, scenario.w_v, mask=mask,
                               scale=scale_of(scenario), temperature=scenario.temperature)
    else:
        result = spec.function(x, scenario.w_q, scenario.w_k, scenario.w_v, mask=mask,
                               scale=scale_of(scenario), temperature=scenario.temperature,
                               **kwargs)
    mixed = None
    if isinstance(result, MultiHeadResult) and scenario.head_mix is not None:
        mixed = mix_heads(result.head_outputs, scenario.head_mix)
    pooling = None
    if scenario.pool_w.size and not scenario.direct:
        pooling = attention_pooling(x, scenario.pool_w,
                                    scenario.pool_b if scenario.pool_b.size else 0.0)
    return ScenarioResult(x=x, pe=pe, source_x=source, attention=result, pooling=pooling,
                          mixed=mixed, q_labels=position_labels(scenario.tokens),
                          k_labels=position_labels(scenario.key_tokens),
                          mask=np.asarray(result.mask))


def _run_direct(scenario: Scenario, mask) -> AttentionResult:
    """Direct mode: attention on the given Q, K, V with the variant's fixed settings."""
    if scenario.spec.kind not in ("self",):
        raise ValueError(f"{scenario.spec.name} needs embeddings and weights; switch off "
                         "'Q, K, V given directly' or pick a single-head variant")
    if scenario.q_in.shape[0] != len(scenario.tokens) or \
            scenario.k_in.shape[0] != len(scenario.source_tokens):
        raise ValueError("Q must have one row per query token and K one row per key token")
    if scenario.spec.fixed.get("causal"):
        tri = causal_mask(scenario.q_in.shape[0], scenario.k_in.shape[0])
        mask = tri if mask is None else (tri & mask)
    return scaled_dot_product_attention(scenario.q_in, scenario.k_in, scenario.v_in, mask=mask,
                                        scale=scale_of(scenario),
                                        temperature=scenario.temperature)


def _fit(a: Array, rows: int, cols: int | None = None, fill: float = 0.0) -> Array:
    """Grow or shrink a 1-D/2-D array to a new size, keeping the values that still fit."""
    if a.ndim == 1 or cols is None:
        out = np.full(rows, fill, dtype=float)
        n = min(rows, a.shape[0])
        out[:n] = a[:n]
        return out
    out = np.full((rows, cols), fill, dtype=a.dtype)
    r, c = min(rows, a.shape[0]), min(cols, a.shape[1])
    out[:r, :c] = a[:r, :c]
    return out


def _fit_tokens(tokens: tuple[str, ...], n: int, prefix: str) -> tuple[str, ...]:
    """Keep the first n labels, adding ``prefix{i}`` labels when growing."""
    return tuple(tokens[:n]) + tuple(f"{prefix}{i}" for i in range(len(tokens), n))


def resize(scenario: Scenario, *, t: int | None = None, d_model: int | None = None,
           d_k: int | None = None, d_v: int | None = None,
           t_source: int | None = None) -> Scenario:
    """A new scenario with other sizes; every value that still fits is kept, new cells are 0.

    ``d_k`` and ``d_v`` are the total widths of the projections (n_heads·d_k, n_heads·d_v).
    """
    t = scenario.t if t is None else t
    dm = scenario.d_model if d_model is None else d_model
    dk = scenario.w_q.shape[1] if d_k is None else d_k
    dv = scenario.w_v.shape[1] if d_v is None else d_v
    ts = len(scenario.source_tokens) if t_source is None else t_source
    d_out = scenario.w_o.shape[1] if scenario.w_o.ndim == 2 and scenario.w_o.size else dm
    if d_model is not None and scenario.w_o.shape[1:] == (scenario.d_model,):
        d_out = dm  # W_O maps back to d_model: follow it
    d_a = scenario.w_a_q.shape[1] if scenario.w_a_q.ndim == 2 else 0
    t_k = ts if (scenario.direct or scenario.spec.uses_source) else t  # keys: source or main
    changes = dict(
        tokens=_fit_tokens(scenario.tokens, t, "tok"),
        x=_fit(scenario.x, t, dm), w_q=_fit(scenario.w_q, dm, dk), w_k=_fit(scenario.w_k, dm, dk),
        w_v=_fit(scenario.w_v, dm, dv), w_o=_fit(scenario.w_o, dv, d_out),
        source_tokens=_fit_tokens(scenario.source_tokens, ts, "src"),
        source_x=_fit(scenario.source_x, ts, dm),
        w_a_q=_fit(scenario.w_a_q, dm, d_a), w_a_k=_fit(scenario.w_a_k, dm, d_a),
        pool_w=_fit(scenario.pool_w, dm) if scenario.pool_w.size else scenario.pool_w,
        pool_b=_fit(scenario.pool_b, t) if scenario.pool_b.size else scenario.pool_b,
        valid_len=min(scenario.valid_len, t_k),  # padding counts keys
    )
    if scenario.custom_mask is not None:
        changes["custom_mask"] = _fit(scenario.custom_mask.astype(float), t, t_k,
                                      fill=1.0).astype(bool)
    if scenario.direct:
        changes.update(q_in=_fit(scenario.q_in, t, scenario.q_in.shape[1]),
                       k_in=_fit(scenario.k_in, ts, scenario.k_in.shape[1]),
                       v_in=_fit(scenario.v_in, ts, scenario.v_in.shape[1]))
    return replace(scenario, **changes)


def run_multi_head(scenario: Scenario, n_heads: int | None = None) -> MultiHeadResult:
    """Multi-head self-attention on the scenario's tokens, whatever variant it has chosen.

    Uses x (+ PE when ``use_pe``), w_q, w_k, w_v, w_o, the user's mask (and the causal mask
    when the variant is causal), the scale and the temperature of the scenario.

    Parameters
    ----------
    scenario : Scenario
    n_heads : int, optional
        Overrides ``scenario.n_heads``.

    Raises
    ------
    ValueError
        In direct mode (no embeddings or weights), or when n_heads does not divide the widths.
    """
    if scenario.direct:
        raise ValueError("multi-head attention needs token embeddings and weight matrices, but "
                         "this scenario gives Q, K and V directly")
    if not scenario.tokens:
        raise ValueError("there are no tokens; add at least one token")
    x, _ = _with_pe(np.asarray(scenario.x, dtype=float), scenario)
    t = len(scenario.tokens)
    return multi_head_attention(
        x, None, scenario.w_q, scenario.w_k, scenario.w_v, scenario.w_o,
        n_heads=scenario.n_heads if n_heads is None else n_heads,
        mask=user_mask(scenario, t, t), scale=scale_of(scenario),
        temperature=scenario.temperature, causal=bool(scenario.spec.fixed.get("causal", False)))


@dataclass(frozen=True, eq=False)
class PermutationCheck:
    """Self-attention on the tokens and on the same tokens shuffled.

    Attributes
    ----------
    perm : ndarray of int, shape (t,)
        Shuffled position i holds original token ``perm[i]``.
    output : ndarray of shape (t, d_v)
        Output on the tokens in their order.
    shuffled_output : ndarray of shape (t, d_v)
        Output on ``x[perm]`` (plus the PE of the positions, when used).
    unpermuted : ndarray of shape (t, d_v)
        ``shuffled_output`` with its rows put back in the original order.
    max_diff : float
        max |unpermuted − output|: 0 without PE (attention is permutation-equivariant),
        usually not 0 with PE.
    """

    perm: NDArray[np.intp]
    output: Array
    shuffled_output: Array
    unpermuted: Array
    max_diff: float


def permutation_check(scenario: Scenario, perm, *, with_pe: bool) -> PermutationCheck:
    """Shuffle the tokens, attend, un-shuffle the output rows, and compare.

    Single-head self-attention with the scenario's W_Q, W_K, W_V, scale and temperature and no
    mask (a causal mask is itself a statement about positions). With ``with_pe`` the PE of each
    *position* (base ``scenario.pe_base``) is added after shuffling, as in a transformer.

    Raises
    ------
    ValueError
        In direct mode, or when ``perm`` is not a permutation of range(t).
    """
    if scenario.direct:
        raise ValueError("the permutation demo needs token embeddings and weight matrices")
    x = np.asarray(scenario.x, dtype=float)
    perm = np.asarray(perm, dtype=np.intp)
    if perm.shape != (x.shape[0],) or not np.array_equal(np.sort(perm), np.arange(x.shape[0])):
        raise ValueError(f"perm must be a permutation of 0..{x.shape[0] - 1}")
    shuffled = x[perm]
    if with_pe:
        pe = sinusoidal_positional_encoding(x.shape[0], x.shape[1], base=scenario.pe_base)
        x, shuffled = x + pe, shuffled + pe
    kw = dict(scale=scale_of(scenario), temperature=scenario.temperature)
    out = self_attention(x, scenario.w_q, scenario.w_k, scenario.w_v, **kw).output
    out_shuffled = self_attention(shuffled, scenario.w_q, scenario.w_k, scenario.w_v,
                                  **kw).output
    unpermuted = out_shuffled[np.argsort(perm)]
    return PermutationCheck(perm, out, out_shuffled, unpermuted,
                            float(np.max(np.abs(unpermuted - out), initial=0.0)))
