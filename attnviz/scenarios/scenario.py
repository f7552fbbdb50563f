"""The scenario: everything a user can edit, and the one function that computes it.

A :class:`Scenario` holds tokens, embeddings, weight matrices, the variant and its settings.
It is immutable: edits make a new scenario with :func:`dataclasses.replace` or :func:`resize`.
:func:`run_scenario` turns it into a :class:`ScenarioResult`: it prepares the inputs every
variant shares (positional encoding added here and only here, the mask, the scale) and calls the
chosen variant's ``compute`` (:mod:`attnviz.scenarios.variants`), so every page shows numbers
from the same place.

Two input modes:

* ``direct=False`` (default): q = x·W_Q, k = x·W_K, v = x·W_V, as the seed notebooks write
  ``words @ W_Q``; cross-attention and additive attention take keys and values from the source
  sequence (``source_tokens``, ``source_x``).
* ``direct=True``: Q, K and V are given as they are (``q_in``, ``k_in``, ``v_in``), as in seed
  001's causal example and seed 004's single query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.core.additive import AdditiveResult, PoolingResult, attention_pooling
from attnviz.core.attention import AttentionResult, MultiHeadResult, mix_heads, self_attention
from attnviz.core.initializers import init_weights
from attnviz.core.masks import causal_mask, padding_mask, window_mask
from attnviz.core.positional import sinusoidal_positional_encoding
from attnviz.scenarios.formulas import Written
from attnviz.scenarios.registry import VARIANTS
from attnviz.scenarios.variant import PARTS, Inputs, Variant, dot_product
from attnviz.scenarios.variants.steps import KEYS as STEP_VARIANTS
from attnviz.scenarios.variants.steps import own_steps

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
    params : mapping of str to number, bool or text
        The variant's own settings (its ``Variant.params``); missing ones take their default.

    The fields are grouped: the common inputs (tokens, x, weights, settings) and optional parts
    (:data:`attnviz.scenarios.variant.PARTS`: source, additive, pooling, direct) that a variant
    declares it reads. A part whose arrays are empty is absent; :func:`with_parts` fills it.
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
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        # frozen: a plain dict given by a caller becomes a read-only copy
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

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
    def always_heads(self) -> bool:
        """True when the scenario runs its heads and W_O (a multi-head result): the variant's
        ``always_heads``, or what its settings say (a list of steps' heads step)."""
        spec = self.spec
        return spec.heads_of(self) if spec.heads_of is not None else spec.always_heads

    @property
    def key_tokens(self) -> tuple[str, ...]:
        """Labels of the keys: the source sequence when the variant or mode reads it."""
        return self.source_tokens if (self.direct or self.spec.uses_source) else self.tokens

    def param(self, name: str) -> Any:
        """The variant's setting ``name``: the scenario's value, else the declared default."""
        return self.params.get(name, self.spec.param(name).default)

    def has_part(self, part: str) -> bool:
        """True when the optional part (a key of ``PARTS``) is filled: one of its fields has a
        non-zero size along some axis (a (3, 0) matrix is a filled part with no columns)."""
        return any(any(np.shape(getattr(self, f))) for f in PARTS[part])


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


def projected(tokens, x, w_q, w_k, w_v, **fields) -> Scenario:
    """A scenario that projects X with W_Q, W_K, W_V, with W_O = identity unless given.

    The arrays are copied (no two scenarios share a matrix); ``fields`` are any other Scenario
    fields. Optional parts are left out unless given (a pooling ``pool_w`` without ``pool_b``
    gets b = 0).
    """
    x = np.array(x, dtype=float)
    w_v = np.array(w_v, dtype=float)
    fields.setdefault("w_o", np.eye(w_v.shape[1], x.shape[1]))
    if np.size(fields.get("pool_w", ())) and not np.size(fields.get("pool_b", ())):
        fields["pool_b"] = np.zeros(len(tokens))
    return Scenario(tokens=tuple(tokens), x=x, w_q=np.array(w_q, dtype=float),
                    w_k=np.array(w_k, dtype=float), w_v=w_v, **fields)


def position_labels(tokens) -> list[str]:
    """Labels unique by position: ``["0:the", "1:cat", "2:the"]`` (plotly needs unique labels)."""
    return [f"{i}:{tok}" for i, tok in enumerate(tokens)]


def scale_of(scenario: Scenario) -> float | None:
    """The scale factor the variant and scale mode ask for (None = 1/sqrt(d_k))."""
    if scenario.spec.scale_fixed is not None:
        return scenario.spec.scale_fixed
    return {"sqrt_dk": None, "none": 1.0}.get(scenario.scale_mode, scenario.custom_scale)


def written(scenario: Scenario, mask: NDArray[np.bool_] | None = None) -> Written:
    """What the variant's formula writes for this scenario: its scale (√d_k, none, or the
    custom number), τ when it is not 1, the mask when ``mask`` (the result's) masks a pair
    (without one, when the scenario or the variant asks for a mask), and the steps the variant
    writes from its own settings (:func:`written_steps`)."""
    scale = scale_of(scenario)
    kind = "sqrt_dk" if scale is None else "none" if scale == 1.0 else "custom"
    masked = (not bool(np.all(mask)) if mask is not None
              else scenario.mask_kind != "none" or scenario.spec.causal)
    return Written(scale=kind, custom=scale if kind == "custom" else None,
                   tempered=scenario.temperature != 1.0, masked=masked,
                   steps=written_steps(scenario))


def written_steps(scenario: Scenario) -> tuple:
    """The steps a scenario's variant makes of its own settings (``Variant.to_steps``; a
    scenario of attention steps: its list): only the variant knows what its settings are."""
    if scenario.variant in STEP_VARIANTS:
        return own_steps(scenario)
    to_steps = scenario.spec.to_steps
    return tuple(to_steps(scenario)) if to_steps is not None else ()


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


def with_positions(x: Array, scenario: Scenario) -> tuple[Array, Array | None]:
    """``(x + PE, PE)`` when the scenario's positional encoding is on, else ``(x, None)``.

    The one place the dashboard adds the sinusoidal encoding (base ``scenario.pe_base``) to a
    sequence's embeddings; ``x`` is (t, d_model) and so is PE.
    """
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
    spec = scenario.spec
    for name, value in scenario.params.items():
        spec.param(name).check(value)
    if not scenario.tokens:
        raise ValueError("there are no tokens; add at least one token")
    if not scenario.direct and np.ndim(scenario.x) == 2 and len(scenario.x) != scenario.t:
        raise ValueError(f"x must have one row per token: {scenario.t} tokens but "
                         f"{len(scenario.x)} rows")
    if scenario.direct and spec.projections and not spec.direct:
        raise ValueError(f"{spec.name} needs embeddings and weights; switch off "
                         "'Q, K, V given directly' or pick a single-head variant")
    if scenario.direct and not (scenario.q_in.shape[0] == scenario.t
                                and scenario.k_in.shape[0] == len(scenario.source_tokens)):
        raise ValueError("Q must have one row per query token and K one row per key token")
    if spec.uses_source and not scenario.source_tokens:
        raise ValueError("this variant needs a source sequence; add at least one source token")
    if spec.uses_source and np.ndim(scenario.source_x) == 2 and \
            len(scenario.source_x) != len(scenario.source_tokens):
        raise ValueError(f"source_x must have one row per source token: "
                         f"{len(scenario.source_tokens)} tokens but {len(scenario.source_x)} rows")


def scenario_inputs(scenario: Scenario, *, heads: int | None = None) -> Inputs:
    """The checked :class:`Inputs` a variant computes from (see :func:`run_scenario`).

    Raises
    ------
    ValueError
        For settings the computation cannot use.
    """
    _check_settings(scenario)
    spec = scenario.spec
    if heads is not None and scenario.direct:
        raise ValueError("multi-head attention needs token embeddings and weight matrices, but "
                         "this scenario gives Q, K and V directly")
    x, _ = with_positions(np.asarray(scenario.x, dtype=float), scenario)
    source = None
    if spec.uses_source and heads is None:
        source, _ = with_positions(np.asarray(scenario.source_x, dtype=float), scenario)
    n_heads = heads if heads is not None else (scenario.n_heads if spec.always_heads else 1)
    t_k = scenario.t if heads is not None else len(scenario.key_tokens)
    return Inputs(scenario=scenario, x=x, source=source,
                  mask=user_mask(scenario, scenario.t, t_k), scale=scale_of(scenario),
                  temperature=scenario.temperature, n_heads=n_heads)


def run_scenario(scenario: Scenario, *, heads: int | None = None) -> ScenarioResult:
    """Compute the scenario with its variant: the one run path of every page.

    Parameters
    ----------
    scenario : Scenario
    heads : int, optional
        Multi-head self-attention of the main sequence with this many heads (and W_O), with the
        variant's scale and causal mask, whatever the scenario's own choice: the Multi-head
        page and Compare's "1 vs several heads". Variants with no multi-head form of their own
        (``Variant.heads`` False: cross, additive) give the scaled dot-product one.

    Raises
    ------
    ValueError
        With a sentence saying what is wrong (sizes, non-finite values, n_heads, ...).
    """
    # 1) inputs every variant shares: PE added in this one place, the mask, the scale
    inputs = scenario_inputs(scenario, heads=heads)
    spec = scenario.spec
    x, source = inputs.x, inputs.source
    _, pe = with_positions(np.asarray(scenario.x, dtype=float), scenario)  # PE to show
    # 2) the variant's computation (or its multi-head form)
    if heads is None:
        result = spec.compute(inputs)
    elif spec.compute_heads is not None:
        result = spec.compute_heads(inputs)
    else:
        result = dot_product(inputs, causal=spec.causal, scale=spec.scale_fixed,
                             always_heads=True)
    # 3) what some pages add: seed 004's head mix and attention pooling
    mixed = None
    if isinstance(result, MultiHeadResult) and scenario.head_mix is not None and heads is None:
        mixed = mix_heads(result.head_outputs, scenario.head_mix)
    pooling = None
    if scenario.pool_w.size and not scenario.direct:
        pooling = attention_pooling(x, scenario.pool_w,
                                    scenario.pool_b if scenario.pool_b.size else 0.0)
    return ScenarioResult(x=x, pe=pe, source_x=source, attention=result, pooling=pooling,
                          mixed=mixed, q_labels=position_labels(scenario.tokens),
                          k_labels=position_labels(scenario.tokens if heads is not None
                                                   else scenario.key_tokens),
                          mask=np.asarray(result.mask))


def _fill_part(scenario: Scenario, part: str) -> dict[str, Any]:
    """Field values of a missing optional part, made from the scenario itself.

    source: the main sequence again; additive: W_q, W_k, v_a ~ N(0, 1) with seed 7 and d_a = 3;
    pooling: w = 0.5 everywhere and b = 0 (seed 004's pooling layer at rest).
    """
    x = np.asarray(scenario.x, dtype=float)
    if part == "source":
        return dict(source_tokens=tuple(scenario.tokens), source_x=x.copy())
    if part == "additive":
        w_a_q, w_a_k, v_a = init_weights("normal", [(scenario.d_model, 3)] * 2 + [(1, 3)],
                                         seed=7)
        return dict(w_a_q=w_a_q, w_a_k=w_a_k, v_a=v_a[0])
    if part == "pooling":
        return dict(pool_w=np.full(scenario.d_model, 0.5), pool_b=np.zeros(scenario.t))
    raise ValueError(f"the {part} part has no default; it comes from a file or a preset")


def with_parts(scenario: Scenario, parts) -> Scenario:
    """The scenario with every listed optional part filled (the ones it has are kept)."""
    changes: dict[str, Any] = {}
    for part in parts:
        if not scenario.has_part(part):
            changes.update(_fill_part(scenario, part))
    return replace(scenario, **changes) if changes else scenario


def with_variant(scenario: Scenario, key: str) -> Scenario:
    """The scenario switched to variant ``key``, with the parts that variant reads filled and
    only the settings that variant declares kept (another variant's ``tile`` or ``rope_base``
    would make it refuse to compute).

    Raises
    ------
    ValueError
        For an unknown key.
    """
    if key not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}; got {key!r}")
    declared = {p.name for p in VARIANTS[key].params}  # the old variant's own settings go
    params = {name: value for name, value in scenario.params.items() if name in declared}
    return with_parts(replace(scenario, variant=key, params=params), VARIANTS[key].parts)


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
    An optional part the scenario does not have (``Scenario.has_part``) stays empty: sized, an
    empty source would become a "filled" source of no tokens, and pages that fill the parts
    they show would keep it.
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
    for part in ("source", "additive"):  # (pooling and direct are sized only when present)
        if not scenario.has_part(part):
            for name in PARTS[part]:
                changes.pop(name, None)
    if scenario.custom_mask is not None:
        changes["custom_mask"] = _fit(scenario.custom_mask.astype(float), t, t_k,
                                      fill=1.0).astype(bool)
    if scenario.direct:
        changes.update(q_in=_fit(scenario.q_in, t, scenario.q_in.shape[1]),
                       k_in=_fit(scenario.k_in, ts, scenario.k_in.shape[1]),
                       v_in=_fit(scenario.v_in, ts, scenario.v_in.shape[1]))
    return replace(scenario, **changes)


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
    if with_pe:  # the encoding of each position, added after shuffling
        on = replace(scenario, use_pe=True)
        (x, _), (shuffled, _) = with_positions(x, on), with_positions(shuffled, on)
    kw = dict(scale=scale_of(scenario), temperature=scenario.temperature)
    out = self_attention(x, scenario.w_q, scenario.w_k, scenario.w_v, **kw).output
    out_shuffled = self_attention(shuffled, scenario.w_q, scenario.w_k, scenario.w_v,
                                  **kw).output
    unpermuted = out_shuffled[np.argsort(perm)]
    return PermutationCheck(perm, out, out_shuffled, unpermuted,
                            float(np.max(np.abs(unpermuted - out), initial=0.0)))
