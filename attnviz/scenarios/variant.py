"""What a variant declares: the building block of :mod:`attnviz.scenarios.variants`.

A variant is one small module in ``attnviz/scenarios/variants/`` that defines ``VARIANT`` (or
``VARIANTS``, a tuple, for a family): a :class:`Variant` naming its core computation, what it
needs from the scenario, its formula, its one-line description, its settings and its presets.
The registry (:mod:`attnviz.scenarios.registry`) collects every such module; pages, files,
links and tests read the registry only. See the README's "How to add a variant".

The run path (:func:`attnviz.scenarios.scenario.run_scenario`) prepares the inputs every
variant shares — embeddings with positional encoding added, the source sequence, the mask, the
scale — as one :class:`Inputs`, and calls the variant's ``compute`` with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.core.attention import (
    AttentionResult,
    MultiHeadResult,
    cross_attention,
    multi_head_attention,
    scaled_dot_product_attention,
    self_attention,
)
from attnviz.core.backward import AttentionGradients, attention_backward, linear_backward
from attnviz.core.masks import causal_mask, combine
from attnviz.scenarios import limits
from attnviz.scenarios.formulas import GENERAL, Written

# A scenario (attnviz.scenarios.scenario.Scenario) as this module names it: the scenario module
# sits above this one (it reads the registry of variants), so nothing here imports it.
ScenarioT = Any

Array = NDArray[np.float64]

# The optional parts of a scenario a variant may read, and the scenario fields of each. A part
# whose fields are empty is absent; presets and files fill only the parts they use, and
# :func:`attnviz.scenarios.scenario.with_parts` fills a missing part from the scenario itself
# when a variant (or a page) needs it.
PARTS: Mapping[str, tuple[str, ...]] = {
    "source": ("source_tokens", "source_x"),
    "additive": ("w_a_q", "w_a_k", "v_a"),
    "pooling": ("pool_w", "pool_b"),
    "direct": ("q_in", "k_in", "v_in"),
}


@dataclass(frozen=True)
class Param:
    """A setting of one variant, stored in ``Scenario.params[name]``.

    Attributes
    ----------
    name : str
        Key in ``Scenario.params`` (and in scenario files and links).
    label : str
        Shown beside the control.
    default : float, int, bool, str or tuple
        A tuple (empty: "not given") makes the setting a vector: a list of at most
        :data:`MAX_VECTOR` positive finite numbers (a model's RoPE frequencies), each at most
        ``high`` when it is given, stored as a tuple of floats; its length is checked where the
        head width is known.
    low, high : float, optional
        Bounds of a number (inclusive); of a vector, ``high`` bounds every number.
    choices : tuple of str
        The allowed values of a text setting.
    overridden_by : str
        The name of a vector setting that, when given (not empty), replaces this one: the
        controls show this one disabled and say why ("" = none).
    parse : callable(value) -> value, optional
        A structured setting (a list of attention steps): reads any value given (a file's
        list of objects, or the value itself) or raises a ValueError sentence; then ``dump``
        writes it as JSON and ``describe`` in words, and the controls show it, not edit it.
    dump, describe : callable(value) -> JSON value or str, optional
    """

    name: str
    label: str
    default: float | int | bool | str | tuple
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    overridden_by: str = ""
    parse: Callable[[Any], Any] | None = None
    dump: Callable[[Any], Any] | None = None
    describe: Callable[[Any], str] | None = None

    @property
    def structured(self) -> bool:
        """True for a structured setting (read by ``parse``), not a number, flag or text."""
        return self.parse is not None

    def check(self, value: Any) -> float | int | bool | str:
        """The value if it is allowed, else a ValueError naming the setting and its limits.

        Any value may come in (from a scenario file or a link): a whole number of any size
        (``10**400`` is compared exactly, never converted to float first), a float NaN or ±inf,
        text, a list or an object — each is refused in a sentence, never with another error.
        """
        if self.parse is not None:
            return self.parse(value)
        kind = type(self.default)
        if kind is tuple:
            return self._check_vector(value)
        ok_type = (isinstance(value, bool) if kind is bool else
                   isinstance(value, str) if kind is str else
                   isinstance(value, int) and not isinstance(value, bool) if kind is int else
                   isinstance(value, (int, float)) and not isinstance(value, bool))
        if not ok_type:
            raise ValueError(f"{self.name} must be {_KIND_WORDS[kind]}, got {_shown(value)}")
        if kind is str and value not in self.choices:
            raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}, "
                             f"got {_shown(value)}")
        if kind in (int, float):
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{self.name} must be a finite number, got {_shown(value)}")
            # a Python int of any size compares exactly with the float bounds
            if (self.low is not None and value < self.low) or \
                    (self.high is not None and value > self.high):
                raise ValueError(f"{self.name} must be {self._range()}, got {_shown(value)}")
        return float(value) if kind is float else value

    def _check_vector(self, value: Any) -> tuple[float, ...]:
        """A vector setting's value as a tuple of floats, or a ValueError sentence: a list (or
        tuple, or 1-D array) of at most MAX_VECTOR numbers, each finite, > 0 and at most
        ``high`` (when given). A message shows the number as it was given, not converted."""
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{self.name} must be a list of positive numbers, got "
                             f"{_shown(value)}")
        if len(value) > MAX_VECTOR:
            raise ValueError(f"{self.name} holds {len(value)} numbers; at most {MAX_VECTOR} "
                             f"(a head of the widest width has no more pairs)")
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise ValueError(f"{self.name}[{i}] must be a number, got {_shown(v)}")
            given = _shown(v)
            # a whole number of any size compares exactly (float() of 10**400 raises)
            number = v if isinstance(v, (int, np.integer)) else float(v)
            if (isinstance(number, float) and not math.isfinite(number)) or number <= 0:
                raise ValueError(f"{self.name}[{i}] must be a positive finite number, got "
                                 f"{given}")
            if self.high is not None and number > self.high:
                raise ValueError(f"{self.name}[{i}] must be at most {self.high:g}, got {given}")
            if isinstance(number, int) and number.bit_length() > 1000:  # float() overflows
                raise ValueError(f"{self.name}[{i}] must be a finite number, got {given}")
        return tuple(float(v) for v in value)

    def _range(self) -> str:
        """The allowed range in words ("between 1 and 256", "at least 0")."""
        if self.low is not None and self.high is not None:
            return f"between {self.low:g} and {self.high:g}"
        return f"at least {self.low:g}" if self.low is not None else f"at most {self.high:g}"


def _shown(value: Any) -> str:
    """A short, safe description of any value for a message: a huge whole number by its
    number of digits (``repr`` of a 5,000-digit int raises), containers by their kind, text
    cut to 20 characters with every character but letters, digits, spaces and ``_ . -`` shown
    as ``?`` (the message may be rendered as Markdown: no link, image or HTML can get in)."""
    if isinstance(value, (np.number, np.bool_)):
        return _shown(value.item())  # nan, not np.float64(nan)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        digits = int(value.bit_length() * math.log10(2)) + 1
        return f"a whole number of about {digits:,} digits"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "an object"
    if isinstance(value, str):
        shown = re.sub(r"[^A-Za-z0-9 _.-]", "?", value[:20])
        return f"'{shown}'" + ("..." if len(value) > 20 else "")
    return f"{value!r:.40}"


#: The most numbers a vector setting holds: one per pair of the widest head.
MAX_VECTOR = limits.MAX_WIDTH // 2

_KIND_WORDS = {bool: "true or false", str: "text", int: "a whole number", float: "a number"}


@dataclass(frozen=True, eq=False)
class Draft:
    """A variant's preset before it is a scenario: the tokens, x, W_Q, W_K, W_V and any other
    Scenario fields, as :func:`attnviz.scenarios.scenario.projected` takes them. A variant's
    preset returns one (:func:`draft`) and :mod:`attnviz.scenarios.presets` makes the Scenario,
    so no variant module needs the scenario module (which reads the registry of variants).
    """

    tokens: tuple[str, ...]
    x: Any
    w_q: Any
    w_k: Any
    w_v: Any
    fields: Mapping[str, Any]

    def with_fields(self, **more: Any) -> Draft:
        """The same draft with ``more`` Scenario fields set (a preset built on another's)."""
        return replace(self, fields=MappingProxyType({**self.fields, **more}))


def draft(tokens, x, w_q, w_k, w_v, **fields: Any) -> Draft:
    """A preset's scenario, written as :func:`attnviz.scenarios.scenario.projected` is called."""
    return Draft(tuple(tokens), x, w_q, w_k, w_v, MappingProxyType(dict(fields)))


@dataclass(frozen=True)
class Preset:
    """A one-click scenario.

    Attributes
    ----------
    key : str
    title : str
    source : str
        Where it comes from ("seed 000", "hand-built", ...).
    build : callable returning Scenario or Draft
        A variant's preset returns a :class:`Draft`; :data:`attnviz.scenarios.presets.PRESETS`
        holds every preset with a ``build`` that returns the Scenario.
    fidelity : str
        For a seed notebook's example: where the preset differs from the notebook and why,
        with the notebook's own printed value where it has one ("" = reproduces it).
    """

    key: str
    title: str
    source: str
    build: Callable[[], ScenarioT | Draft]
    fidelity: str = ""


@dataclass(frozen=True, eq=False)
class Inputs:
    """What the run path hands a variant's ``compute``.

    Attributes
    ----------
    scenario : Scenario
        For the variant's own parts and ``params``.
    x : ndarray of shape (t_q, d_model)
        The main sequence, with the positional encoding added when it is on.
    source : ndarray of shape (t_k, d_model) or None
        The source sequence (PE added likewise) for variants whose keys come from it.
    mask : ndarray of bool, shape (t_q, t_k), or None
        The user's mask (the variant adds its own, e.g. causal).
    scale : float or None
        The scale factor (None = 1/√d_k), already resolved from the scale mode.
    temperature : float
    n_heads : int
        The number of heads to compute (1 = single head).
    """

    scenario: ScenarioT
    x: Array
    source: Array | None
    mask: NDArray[np.bool_] | None
    scale: float | None
    temperature: float
    n_heads: int


Result = Any  # AttentionResult, MultiHeadResult or AdditiveResult: they share one protocol


@dataclass(frozen=True)
class Variant:
    """One attention variant.

    Attributes
    ----------
    key : str
        Identifier stored in scenarios, files and links.
    name : str
        Human name.
    description : str
        One sentence.
    formula : str or callable(Written) -> str
        LaTeX of what ``compute`` computes; a function of what the settings make it write
        (:mod:`attnviz.scenarios.formulas`: no √d_k at scale 1, no τ at τ = 1, no
        mask when nothing is masked). Read it with :meth:`written`.
    compute : callable(Inputs) -> result
        The computation, from prepared inputs to a core result.
    order : int
        Position in the variant picker.
    keys_from_source : bool
        Keys and values come from the source sequence (cross, additive).
    projections : bool
        The scores come from Q = X·W_Q and K = X·W_K (every dot-product variant; not additive).
    scale_fixed : float or None
        A scale the variant fixes (the unscaled variant: 1), overriding the scale mode.
    causal : bool
        The variant adds a causal mask to the user's.
    heads : bool
        Can run with several heads (``run_scenario(..., heads=n)``, Multi-head, Compare).
    always_heads : bool
        Runs with ``scenario.n_heads`` heads and W_O whatever the caller asks (Multi-head).
    direct : bool
        Can take Q, K and V as given (the scenario's ``direct`` part) instead of projecting X.
    parts : tuple of str
        Optional scenario parts (keys of :data:`PARTS`) it reads.
    params : tuple of Param
        Its own settings, stored in ``Scenario.params``.
    presets : tuple of Preset
        Classroom scenarios that show it.
    same_as : str
        The key of a variant that computes the same thing, when there is one (said on screen).
    backward : callable(Inputs, result, d_output, d_weights) -> (gradients, params), optional
        The backward pass of ``compute`` (:mod:`attnviz.core.backward`): given ∂L/∂output and a
        loss's own ∂L/∂weights (either may be None), the gradients of every intermediate and
        a mapping from scenario field names ("x", "w_q", ...) to the gradient of each field
        the computation read. None: the Gradients and Learn pages say the variant has none yet.
    compute_heads : callable(Inputs) -> result, optional
        The variant's own multi-head form, with ``inputs.n_heads`` heads and W_O (what
        ``run_scenario(..., heads=n)`` computes); None: scaled dot-product heads with the
        variant's causal mask and fixed scale.
    heads_of : callable(Scenario) -> bool, optional
        Whether this scenario runs several heads and W_O, when its settings decide it (a list
        of steps' heads step); None: ``always_heads``. Read through
        ``Scenario.always_heads``.
    to_steps : callable(Scenario) -> tuple of Step, optional
        The variant as attention steps (:mod:`attnviz.core.steps`) beside what every
        dot-product variant's flags already say (``causal``: a causal mask; ``always_heads``:
        the heads and W_O; ``scale_fixed``): its own changes of q and k, of the scores, its
        mask parts and normaliser, from its settings. Read by
        :func:`attnviz.scenarios.variants.steps.as_steps`.
    query_formula : str or callable(Written) -> str
        LaTeX for the query vector that reaches the scores when the variant changes the
        projection before them (RoPE rotates it by its position, QK-norm normalises it): Step
        by step writes it instead of ``q_i = x_i W_Q``, which would name a vector other than
        the one shown; a function of the settings when they change it (RoPE's attention
        scaling a). Empty: the query is the projection.
    reference : callable(Inputs) -> (weights, output), optional
        An independent computation of the same thing with explicit loops over queries, keys
        and dimensions (:mod:`attnviz.scenarios.reference`): weights of shape
        (n_heads, t_q, t_k) and the output. The tests compare ``compute`` with it for every
        variant, on every preset it declares and the scenarios the tests build.
    """

    key: str
    name: str
    description: str
    formula: str | Callable[[Written], str]
    compute: Callable[[Inputs], Result]
    order: int
    keys_from_source: bool = False
    projections: bool = True
    scale_fixed: float | None = None
    causal: bool = False
    heads: bool = False
    always_heads: bool = False
    direct: bool = False
    parts: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    presets: tuple[Preset, ...] = field(default=())
    same_as: str = ""
    backward: Callable[..., tuple[Any, dict[str, Array]]] | None = None
    reference: Callable[[Inputs], tuple[Array, Array]] | None = None
    query_formula: str | Callable[[Written], str] = ""
    compute_heads: Callable[[Inputs], Result] | None = None
    heads_of: Callable[[ScenarioT], bool] | None = None
    to_steps: Callable[[ScenarioT], tuple] | None = None

    def __post_init__(self):
        unknown = [p for p in self.parts if p not in PARTS]
        if unknown:
            raise ValueError(f"variant {self.key}: unknown part(s) {', '.join(unknown)}; "
                             f"the parts are {', '.join(PARTS)}")
        vectors = {p.name for p in self.params
                   if isinstance(p.default, tuple) and not p.structured}
        for p in self.params:
            if p.overridden_by and p.overridden_by not in vectors:
                raise ValueError(f"variant {self.key}: {p.name} is overridden_by "
                                 f"{p.overridden_by!r}, which is not one of its vector settings")

    def written(self, w: Written = GENERAL) -> str:
        """The formula for the settings ``w`` (by default: every step, as the variant is
        defined)."""
        return self.formula(w) if callable(self.formula) else self.formula

    def written_query(self, w: Written = GENERAL) -> str:
        """The query vector's formula for the settings ``w`` (empty: the query is the
        projection)."""
        return self.query_formula(w) if callable(self.query_formula) else self.query_formula

    @property
    def uses_source(self) -> bool:
        """True when keys and values come from a second (source) sequence."""
        return self.keys_from_source

    def param(self, name: str) -> Param:
        """The declared setting ``name`` (ValueError if the variant has none of that name)."""
        for p in self.params:
            if p.name == name:
                return p
        raise ValueError(f"{self.name} has no setting {name!r}")


# ---------------------------------------------------------------------------------------------
# The dot-product family's computation, shared by its variant modules
# ---------------------------------------------------------------------------------------------

def dot_product(inputs: Inputs, *, causal: bool = False, scale: float | None = None,
                always_heads: bool = False) -> AttentionResult | MultiHeadResult:
    """Dot-product attention on prepared inputs, one head or several.

    Parameters
    ----------
    inputs : Inputs
    causal : bool
        Add the causal mask to the user's.
    scale : float, optional
        A scale fixed by the variant (overrides ``inputs.scale``).
    always_heads : bool
        Run multi-head attention (with W_O) even for one head.
    """
    sc = inputs.scenario
    scale = inputs.scale if scale is None else scale
    kw = dict(scale=scale, temperature=inputs.temperature)
    if sc.direct:  # Q, K and V as given (seed 001, seed 004): one head, no projections
        mask = inputs.mask
        if causal:
            t_q, t_k = sc.q_in.shape[0], sc.k_in.shape[0]
            mask = combine([causal_mask(t_q, t_k), mask], t_q, t_k)
        return scaled_dot_product_attention(sc.q_in, sc.k_in, sc.v_in, mask=mask, **kw)
    if inputs.n_heads > 1 or always_heads:
        return multi_head_attention(inputs.x, inputs.source, sc.w_q, sc.w_k, sc.w_v, sc.w_o,
                                    n_heads=inputs.n_heads, mask=inputs.mask, causal=causal, **kw)
    if inputs.source is not None:
        return cross_attention(inputs.x, inputs.source, sc.w_q, sc.w_k, sc.w_v,
                               mask=inputs.mask, **kw)
    return self_attention(inputs.x, sc.w_q, sc.w_k, sc.w_v, mask=inputs.mask, causal=causal,
                          **kw)


def dot_product_backward(inputs: Inputs, result: AttentionResult | MultiHeadResult, d_output,
                         d_weights, *, pullback: Callable | None = None
                         ) -> tuple[AttentionGradients, dict[str, Array]]:
    """The backward pass of every dot-product variant: attention, then the projections.

    The forward projected x (and the source) with the first column blocks of W_Q, W_K and W_V
    (all of them, or ``n_kv_heads`` blocks of W_K and W_V for grouped-query attention), maybe
    changed q and k per head (RoPE, QK-norm: ``pullback``), and attended
    (:func:`~attnviz.core.attention.attend_heads`). This runs those steps backwards.

    Parameters
    ----------
    inputs : Inputs
        The inputs the forward ran on.
    result : AttentionResult or MultiHeadResult
    d_output, d_weights
        As in :func:`~attnviz.core.backward.attention_backward` (which reads the score
        modifiers and W_O from the result).
    pullback : callable(Inputs, d_q_h, d_k_h) -> (d_q_h, d_k_h), optional
        Carries the gradients of the changed q and k back to the projections' q and k.

    Returns
    -------
    gradients : AttentionGradients
    params : dict
        ∂L/∂ of the scenario fields: "x" (the embeddings with any positional encoding:
        the encoding is a constant, so this is also ∂L/∂X), "source_x" for cross-attention,
        "w_q", "w_k", "w_v" ("w_o" with heads); "q_in", "k_in", "v_in" when Q, K and V are
        given directly. Blocks of W_K and W_V the forward did not read get 0.
    """
    sc = inputs.scenario
    grads = attention_backward(result, d_output, d_weights=d_weights)
    d_q_h, d_k_h = grads.d_q, grads.d_k
    if pullback is not None:
        d_q_h, d_k_h = pullback(inputs, d_q_h, d_k_h)
    d_q, d_k, d_v = (_side_by_side(a) for a in (d_q_h, d_k_h, grads.d_v))
    if sc.direct:
        return grads, {"q_in": d_q, "k_in": d_k, "v_in": d_v}
    x_kv = inputs.x if inputs.source is None else inputs.source
    params: dict[str, Array] = {}
    d_x, params["w_q"] = linear_backward(inputs.x, sc.w_q, d_q)
    d_x_kv = np.zeros_like(x_kv)
    for name, d in (("w_k", d_k), ("w_v", d_v)):
        w = np.asarray(getattr(sc, name), dtype=float)
        d_x_part, d_w_used = linear_backward(x_kv, w[:, :d.shape[1]], d)
        d_x_kv += d_x_part
        params[name] = np.zeros_like(w)
        params[name][:, :d.shape[1]] = d_w_used
    if inputs.source is None:
        params["x"] = d_x + d_x_kv
    else:
        params["x"], params["source_x"] = d_x, d_x_kv
    if grads.d_w_o is not None:
        params["w_o"] = np.asarray(grads.d_w_o)
    return grads, params


def _side_by_side(a: Array) -> Array:
    """Heads (n, t, d) side by side as one (t, n·d) matrix: head h in columns h·d .. (h+1)·d."""
    return a.transpose(1, 0, 2).reshape(a.shape[1], -1)
