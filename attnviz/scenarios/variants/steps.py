"""Attention as a list of steps (:mod:`attnviz.core.steps`): a scenario whose attention is the
list in its ``steps`` setting, and every other dot-product scenario read as such a list.

The list holds the head structure, the changes of q and k (QK-norm, RoPE), the changes of the
scores (ALiBi, SSMax, a bias, the soft-cap), the variant's own mask parts and the normaliser
(softmax, or a sink logit). The scale and τ and the user's mask stay where every page edits
them — the scenario's scale mode, temperature and mask — and join the list when it runs: the
scale first among the score steps, the mask as one more part. A real model's head that combines
ideas (Qwen 3: QK-norm and RoPE; gpt-oss: RoPE, a window and sinks; Gemma 3: QK-norm, RoPE, a
window and its scale) opens as one such list.

:func:`as_steps` reads any dot-product scenario of today's ``(variant, params)`` as a list
(each variant's ``to_steps`` says its own part), and the result computes the same numbers.
Two variants: ``steps`` (keys from the main sequence) and ``steps_source`` (keys and values
from the source sequence, as cross-attention).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from attnviz.core import steps as S
from attnviz.core.attention import valid_head_counts
from attnviz.core.checks import as_array
from attnviz.core.score_mods import At
from attnviz.core.steps.base import KINDS
from attnviz.core.steps.run import heads_of, normaliser_of
from attnviz.scenarios import reference
from attnviz.scenarios.formulas import PROJECTIONS, Written, scaled, softmax
from attnviz.scenarios.variant import Inputs, Param, Variant, dot_product_backward

KEYS = ("steps", "steps_source")  # the two variants of this module


def parse(value: Any) -> tuple:
    """The ``steps`` setting from a list of step objects or their dictionaries; a list
    without a scale step (the scale comes from the scenario's scale mode and τ)."""
    try:
        steps = S.from_dicts(value)
    except ValueError as err:
        raise ValueError(f"steps: {err}") from None
    if any(isinstance(s, S.Scale) for s in steps):
        raise ValueError("steps: the scale and τ are the scenario's scale mode and temperature; "
                         "leave the scale step out of the list")
    return steps


def describe(value: tuple) -> str:
    """The list in words: each step's title, in order."""
    return " → ".join(s.title for s in value) if value else "scaled dot-product attention"


PARAMS = (Param("steps", "Attention steps", (), parse=parse, dump=S.to_dicts,
                describe=describe),)


def full_steps(own: tuple, scale: float | None, temperature: float) -> tuple:
    """The list a head runs: ``own`` with the scale step first among the score steps."""
    head = [s for s in own if s.kind in ("heads", "qk")]
    rest = [s for s in own if s.kind not in ("heads", "qk")]
    return (*head, S.Scale(scale, temperature), *rest)


def _project(inputs: Inputs, heads: S.Heads):
    """q_h (n_heads, t_q, d_k), k_h and v_h (n_kv_heads, t_k, ·) of the scenario: Q, K and V
    given directly (one head), or x (and the source for keys) times the column blocks."""
    sc = inputs.scenario
    if sc.direct:
        if heads.n_heads != 1:
            raise ValueError("Q, K and V given directly are one head; set the heads step to one "
                             "head or switch off 'Q, K, V given directly'")
        return (as_array("q", sc.q_in, 2)[None], as_array("k", sc.k_in, 2)[None],
                as_array("v", sc.v_in, 2)[None])
    x = as_array("x", inputs.x, 2)
    x_kv = x if inputs.source is None else as_array("source_x", inputs.source, 2)
    n, n_kv = heads.n_heads, heads.n_kv_heads
    w = {name: as_array(name, getattr(sc, name), 2) for name in ("w_q", "w_k", "w_v")}
    for name, m in w.items():
        rows = x.shape[1] if name == "w_q" else x_kv.shape[1]
        if m.shape[0] != rows:
            raise ValueError(f"{name} must have one row per embedding dimension: it has "
                             f"{m.shape[0]} rows for {rows} dimensions")
        if m.shape[1] % n:
            choices = ", ".join(map(str, valid_head_counts(m.shape[1], 16)))
            raise ValueError(f"n_heads ({n}) must divide the number of columns of {name} "
                             f"({m.shape[1]}); valid choices: {choices}")
    if w["w_q"].shape[1] != w["w_k"].shape[1]:
        raise ValueError(f"w_q and w_k must have the same number of columns (d_k), got "
                         f"{w['w_q'].shape[1]} and {w['w_k'].shape[1]}")
    d_k, d_v = w["w_q"].shape[1] // n, w["w_v"].shape[1] // n
    with np.errstate(over="ignore", invalid="ignore"):
        q = x @ w["w_q"]  # (t_q, n·d_k)
        k = x_kv @ w["w_k"][:, :n_kv * d_k]  # (t_k, n_kv·d_k)
        v = x_kv @ w["w_v"][:, :n_kv * d_v]  # (t_k, n_kv·d_v)
    if not (np.isfinite(q).all() and np.isfinite(k).all() and np.isfinite(v).all()):
        raise ValueError("the projections overflow the floating-point range; use smaller values")
    t_q, t_k = x.shape[0], x_kv.shape[0]
    return (q.reshape(t_q, n, d_k).transpose(1, 0, 2),  # (n_heads, t_q, d_k)
            k.reshape(t_k, n_kv, d_k).transpose(1, 0, 2),  # (n_kv_heads, t_k, d_k)
            v.reshape(t_k, n_kv, d_v).transpose(1, 0, 2))  # (n_kv_heads, t_k, d_v)


def _listed(inputs: Inputs, *, heads: bool = False) -> tuple:
    """The list the inputs run; ``heads``: with ``inputs.n_heads`` heads of their own and W_O
    (``run_scenario(..., heads=n)``, the Multi-head page and Compare)."""
    own = tuple(inputs.scenario.param("steps"))
    if heads:
        own = (S.Heads(inputs.n_heads, inputs.n_heads, project_out=True),
               *(s for s in own if s.kind != "heads"))
    return full_steps(own, inputs.scale, inputs.temperature)


def compute(inputs: Inputs, *, heads: bool = False):
    """Every head through the list (:func:`attnviz.core.steps.attend_steps`), with the user's
    mask as one more part; W_O when the heads step says so or there are several heads.
    ``heads``: the list with ``inputs.n_heads`` heads of its own (its multi-head form)."""
    listed = _listed(inputs, heads=heads)
    heads = heads_of(listed)
    q_h, k_h, v_h = _project(inputs, heads)
    w_o = inputs.scenario.w_o if heads.project_out or heads.n_heads > 1 else None
    return S.attend_steps(listed, q_h, k_h, v_h, w_o=w_o, mask=inputs.mask)


def compute_heads(inputs: Inputs):
    """The list's multi-head form: ``inputs.n_heads`` heads of its own, and W_O."""
    return compute(inputs, heads=True)


def pullback(inputs: Inputs, d_q_h, d_k_h):
    """The gradients of the changed q and k carried back through every q/k step, last first."""
    listed = _listed(inputs)
    heads = heads_of(listed)
    qk = [s for s in listed if s.kind == "qk"]
    if not qk:
        return d_q_h, d_k_h
    q_h, k_h, _ = _project(inputs, heads)

    def back(x_h, d_h, side, heads_read):
        out = []
        for x, d, h in zip(x_h, d_h, heads_read, strict=True):
            stages = [x]
            for step in qk:
                stages.append(step.forward(stages[-1], side, h))
            for n in range(len(qk) - 1, -1, -1):
                d = qk[n].backward(stages[n], d, side, h)
            out.append(d)
        return np.stack(out)

    return (back(q_h, d_q_h, "q", range(heads.n_heads)),
            back(k_h, d_k_h, "k", _first_readers(heads)))


def _first_readers(heads: S.Heads) -> range:
    """For each key/value head, the first query head that reads it: a q/k step's tables have
    one row per query head, and a key takes the row of the query heads that read it (the
    index :func:`attnviz.core.steps.run_head` passes for both sides)."""
    return range(0, heads.n_heads, heads.n_heads // heads.n_kv_heads)


def backward(inputs: Inputs, result, d_output, d_weights):
    """The dot-product backward pass (it reads the score modifiers from the result), then back
    through the q/k steps, then the projections."""
    return dot_product_backward(inputs, result, d_output, d_weights, pullback=pullback)


def loop_reference(inputs: Inputs):
    """Explicit loops over queries, keys and dimensions for the scores, each logit through the
    score steps one cell at a time, the mask and the normaliser per row (q and k through the
    q/k steps as the core changes them: tests/core/test_steps.py checks those with loops)."""
    listed = _listed(inputs)
    heads = heads_of(listed)
    q_h, k_h, v_h = (np.asarray(a, dtype=float) for a in _project(inputs, heads))
    n, t_q, d_k = q_h.shape
    t_k = k_h.shape[1]
    qk = [s for s in listed if s.kind == "qk"]
    allowed = S.combine([*(s for s in listed if s.kind == "mask"), inputs.mask], t_q, t_k)
    ok = [[bool(allowed[i, j]) for j in range(t_k)] for i in range(t_q)]
    norm = normaliser_of(listed)
    weights = np.zeros((n, t_q, t_k))
    outs = []
    for h in range(n):
        g = heads.kv_head(h)
        q, k = q_h[h], k_h[g]
        for step in qk:
            q, k = step.forward(q, "q", h), step.forward(k, "k", h)
        shape = S.HeadShape(n, t_q, t_k, d_k, allowed, q=np.broadcast_to(q, (n, t_q, d_k)),
                            k=np.broadcast_to(k, (n, t_k, d_k)))  # terms read from q and k
        mods = [s.mod(shape) for s in listed if s.kind == "score"]
        for i in range(t_q):
            logits = {}
            for j in range(t_k):
                if not ok[i][j]:
                    continue
                s = np.array(reference.dot(q[i], k[j]))
                for mod in mods:
                    s = mod.forward(s, At(np.intp(h), np.intp(i), np.intp(j)))
                logits[j] = float(s)
            sink = norm.logit(h) if isinstance(norm, S.SinkSoftmax) else None
            weights[h, i] = reference.softmax_row(logits, t_k, sink=sink)
        outs.append(reference.matmul(weights[h], v_h[g]))
    concat = np.hstack(outs)
    if heads.project_out or n > 1:
        return weights, reference.matmul(concat, inputs.scenario.w_o)
    return weights, concat


# ------------------------------------------------------------------------------ the formulas

def _scores(w: Written) -> str:
    heads = heads_of(w.steps)
    grouped = heads.n_kv_heads != heads.n_heads
    qk = r"Q_h K_{g(h)}^\top" if grouped else (r"Q_h K_h^\top" if heads.n_heads > 1
                                               else r"QK^\top")
    current = scaled(qk, w)
    for step in w.steps:
        if step.kind == "score":
            current = step.mod_for_writing().written_matrix(current)
    if isinstance(normaliser_of(w.steps), S.SinkSoftmax):
        masked = rf"\mathrm{{mask}}_M\!\left({current}\right)" if w.masked else current
        return rf"\mathrm{{softmax}}_{{+s_h}}\!\left({masked}\right)"
    return softmax(current, w)


def formula(w: Written) -> str:
    """The list's formula: the scores through every score step, the mask, the normaliser,
    then each step's definition (only the steps the list has)."""
    heads = heads_of(w.steps)
    v = r"V_{g(h)}" if heads.n_kv_heads != heads.n_heads else (
        "V_h" if heads.n_heads > 1 else "V")
    main = _scores(w) + v
    if heads.n_heads > 1 or heads.project_out:
        main = (r"\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W_O,\quad "
                r"\mathrm{head}_h = " + main)
    parts = [step.written() for step in w.steps
             if step.kind == "qk" or isinstance(step, S.SinkSoftmax)]
    masks = list(dict.fromkeys(step.written().removeprefix("M_{ij} = ") for step in w.steps
                               if step.kind == "mask"))
    if masks and w.masked:
        parts.append("M_{ij} = " + r" \wedge ".join(masks))
    if heads.n_kv_heads != heads.n_heads:
        parts.append(r"g(h) = \left\lfloor h \,/\, \tfrac{n_{\text{heads}}}{n_{\text{kv}}} "
                     r"\right\rfloor")
    parts += [step.mod_for_writing().written(r"s_{ij}")[0] for step in w.steps
              if step.kind == "score" and not isinstance(step, S.AddBias)]
    return r",\quad ".join([main, *parts, PROJECTIONS])


def query_formula(w: Written) -> str:
    """The query that reaches the scores: the projection through every q/k step (empty: the
    query is the projection)."""
    current = r"x_i W_Q"
    changed = False
    for step in w.steps:
        if step.kind == "qk":
            current, changed = step.written_vector(rf"({current})", "q"), True
    return rf"q_i = {current},\quad k_j \text{{ likewise}}" if changed else ""


def runs_heads(scenario) -> bool:
    """The list runs several heads and W_O: its heads step projects out or has several."""
    heads = heads_of(tuple(scenario.param("steps")))
    return heads.project_out or heads.n_heads > 1


def _variant(key: str, name: str, order: int, source: bool) -> Variant:
    return Variant(
        key=key, name=name, order=order,
        description=("Attention as a list of steps: head structure, changes of q and k, of the "
                     "scores, mask parts and a normaliser, composed in order"
                     + ("; keys and values from the source sequence." if source else ".")),
        formula=formula, compute=compute, backward=backward, heads=not source, direct=True,
        keys_from_source=source, parts=("source",) if source else (), params=PARAMS,
        reference=loop_reference, query_formula=query_formula, compute_heads=compute_heads,
        heads_of=runs_heads)


VARIANTS = (_variant("steps", "Composed steps", 200, False),
            _variant("steps_source", "Composed steps, cross", 201, True))


# ------------------------------------------------------------------------------ as a list

_NOT_A_LIST = ("{name} computes its scores with a small network (W_q·query + W_k·key, tanh, "
               "v_a), not as q·kᵀ, so it is not a list of dot-product steps")


def own_steps(scenario) -> tuple:
    """The scenario's attention as the ``steps`` setting holds it (without the scale and the
    user's mask): the list itself for a steps scenario, else its variant read as steps.

    Raises
    ------
    ValueError
        For a variant whose scores are not dot products (additive attention).
    """
    spec = scenario.spec
    if spec.key in KEYS:
        return tuple(scenario.param("steps"))
    if not spec.projections:
        raise ValueError(_NOT_A_LIST.format(name=spec.name))
    own = tuple(spec.to_steps(scenario)) if spec.to_steps is not None else ()
    listed: list = []
    if not any(s.kind == "heads" for s in own):
        n = scenario.n_heads if spec.always_heads and not scenario.direct else 1
        listed.append(S.Heads(n, n, project_out=spec.always_heads))
    listed += [s for s in own if s.kind in ("heads", "qk")]
    listed += [s for s in own if s.kind == "score"]
    if spec.causal:
        listed.append(S.Causal())
    listed += [s for s in own if s.kind in ("mask", "normaliser")]
    return tuple(listed)


def as_steps(scenario):
    """The scenario as a list of steps: the same tokens, weights, scale, τ and mask, the
    variant ``steps`` (``steps_source`` when keys come from the source), and the numbers the
    scenario's own variant computes.

    Raises
    ------
    ValueError
        For a variant whose scores are not dot products (additive attention).
    """
    spec = scenario.spec
    if spec.key in KEYS:
        return scenario
    own = own_steps(scenario)
    fields: dict[str, Any] = dict(variant="steps_source" if spec.uses_source else "steps",
                                  params={"steps": own}, n_heads=heads_of(own).n_heads
                                  if not scenario.direct else scenario.n_heads)
    if spec.scale_fixed is not None:
        fields.update(scale_mode="custom", custom_scale=spec.scale_fixed)
    return replace(scenario, **fields)


# ------------------------------------------------------------------------------ a menu of steps

#: The kinds of step a menu adds and drops (the head structure is the heads control's).
MENU_KINDS = ("qk", "score", "mask", "normaliser")


def menu() -> dict[str, str]:
    """The steps a menu can add by name, name -> title: every registered step of
    :data:`MENU_KINDS` that builds from its defaults (a step module of its own joins it) and,
    a mask part, lets some key through with them (padding's defaults hide every key), but the
    scale, which is the scenario's scale mode and τ; in the order a head computes them."""
    offered = {}
    for name, cls in sorted(S.STEP_TYPES.items(), key=lambda item: KINDS.index(item[1].kind)):
        if cls.kind not in MENU_KINDS or issubclass(cls, S.Scale):
            continue
        try:
            step = cls()
        except (TypeError, ValueError):  # needs a table of its own (a bias, a drawn mask)
            continue
        if step.kind == "mask" and not step.allowed(2, 2).any():  # padding with no real token
            continue
        offered[name] = cls.title
    return offered


def with_names(current: tuple, names) -> tuple:
    """The list ``current`` holding exactly the steps ``names`` of the menu: a step already in
    it keeps its settings and place, a step named anew joins with its defaults after the steps
    of its kind (the kinds in the order a head computes them), a step not named leaves; a step
    the menu does not offer (a bias, a drawn mask, padding with its real tokens) stays.

    Raises
    ------
    ValueError
        A name the menu does not offer, or a list that cannot be one (two normalisers), in a
        sentence.
    """
    offered = menu()
    unknown = [str(n)[:40] for n in names if n not in offered]
    if unknown:
        raise ValueError(f"the menu has no step {', '.join(unknown)}; it offers "
                         f"{', '.join(offered)}")
    kept = [s for s in current if s.name in names or s.name not in offered]
    present = {s.name for s in kept}
    for name in names:
        if name in present:
            continue
        new = S.STEP_TYPES[name]()
        rank = KINDS.index(new.kind)
        at = max((i + 1 for i, s in enumerate(kept) if KINDS.index(s.kind) <= rank), default=0)
        kept.insert(at, new)
        present.add(name)
    return S.from_dicts(kept)
