"""The sections of the Gradients page: the loss's target, every forward matrix beside its
gradient, the parameters' gradients, one dS̃_ij traced and the √d_k story (‖dS̃‖ over the
scale, kept for the session for the last few scenarios and losses: switching the loss back
and forth does not compute it again).

In two parts, so that a loss select redraws only what the loss changes (the run, the messages
and the browser's work shrink with it). :func:`matrices` draws what the loss
does not change — every forward matrix with its title, the formulas but the loss's and dP's,
the sections' titles and words — and leaves a place (:class:`Slots`) for each thing it does;
:func:`loss_part`, which the page runs as an ``st.fragment`` of its own, writes the loss's
target, value and formula, every gradient, the traced dS̃_ij with its pickers and the √d_k
slider and charts into those places (a fragment may write elements and widgets into
containers created outside it: Streamlit 1.67; a widget there reruns the fragment that wrote
it). It writes in every place on every run, so that a later run of it alone finds each one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.figures.lines import line_chart, mark_x
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.gradients import (
    LOSSES,
    PATTERNS,
    Gradients,
    KVHead,
    Loss,
    SaturationSweep,
    gradients,
    kv_head,
    norm_sweep,
    saturation_sweep,
    self_output,
    target_pattern,
)
from attnviz.scenarios.scenario import run_scenario
from attnviz.teach import backward
from attnviz.teach.text import gradients as text
from attnviz.ui import controls, layout, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import show_figure

SWEEP_MEMO = "gradients_sweep_memo"  # {fingerprint of the inputs: ‖dS̃‖ per value or a message}
SWEEPS_KEPT = 6  # the sweeps kept per session (each a few numbers): every loss of two scenarios
Place = Any  # a Streamlit container: st.container(), a column
SHAPE_MEMO = "gradients_shape_memo"  # {fingerprint of a scenario: its gradients' Shape}


def stored_target(kind: str, default: np.ndarray) -> np.ndarray:
    """The target the user last set for this loss, or ``default`` when the shape changed."""
    kept = st.session_state.get(f"gradients_target_{kind}")
    return kept if kept is not None and kept.shape == default.shape else default


def edit_target(kind: str, default: np.ndarray, rows, cols) -> np.ndarray:
    """The target's grid editor; its value is kept for the next run (and other pages)."""
    value = matrix_editor(text.TARGET_TITLE[kind], stored_target(kind, default),
                          key=f"gradients_edit_{kind}", row_labels=rows, col_labels=cols)
    st.session_state[f"gradients_target_{kind}"] = value
    return value


def loss_target(scenario, result, kind: str, pattern_box) -> np.ndarray:
    """The target of loss ``kind``: a pattern picked in ``pattern_box`` (or drawn in a grid) for
    the pattern loss, else an output (zeros for the MSE, ones for a given dO) in a grid."""
    att, q_lab, k_lab = result.attention, result.q_labels, result.k_labels
    if kind == "pattern_ce":
        pattern = pattern_box.selectbox(text.PATTERN_LABEL, [*PATTERNS, "custom"],
                                        format_func=text.PATTERN_NAMES.get,
                                        key="gradients_pattern")
        if pattern != "custom":
            return target_pattern(pattern, result.mask, scenario.tokens)
        with st.expander(text.TARGET_TITLE[kind], expanded=True):
            return edit_target(kind, target_pattern("previous", result.mask), q_lab, k_lab)
    start = self_output(scenario) if kind == "output_mse" else np.ones(np.shape(att.output))
    with st.expander(text.TARGET_TITLE[kind], expanded=False):
        return edit_target(kind, start, q_lab, controls.dims("o", np.shape(att.output)[1]))


def pair(title: str, grad_title: str, forward, cols, rows, formula: str, key: str, *,
         kind: str | None = None, pick=None) -> GradSlot:
    """The backward formula, then a forward matrix (left) beside the place of its gradient
    (right, under its title): the gradient is drawn there by :func:`draw_gradient`, with
    ``pick`` choosing it from the gradients."""
    if formula:
        st.latex(formula)
    if state.presenter():  # one at a time across the page: side by side, a t × t pair's cells
        # are too small for their numbers at 1024×768 (and below 24 px at 1920×1080)
        left, right = st.tabs([title, grad_title])
    else:
        left, right = st.columns(2, gap="medium")
        left.markdown(f"**{title}**")
        right.markdown(f"**{grad_title}**")
    with left:
        show_figure(heatmap(forward, cols, rows, kind=kind), key=f"{key}_fwd",
                    filename=title, lazy=True)
    return GradSlot(right, f"{key}_grad", f"d_{title}", cols, rows, pick)


@dataclass(frozen=True)
class GradSlot:
    """Where one gradient goes: its place (beside its forward matrix), its chart's key and file
    name, its labels, and ``pick``: the gradient, from a :class:`Gradients`."""

    box: Place
    key: str
    filename: str
    cols: Sequence[str]
    rows: Sequence[str]
    pick: Callable[[Gradients], np.ndarray]


@dataclass(frozen=True)
class Slots:
    """The places the loss's part of the page writes in (laid out by :func:`matrices`), with
    the head picked."""

    loss: Place  # the loss select
    pattern: Place  # the target pattern select (pattern loss)
    value: Place  # the target's editor (but for a pattern picked), the loss's value, formula
    d_weights: Place  # dP's formula (the pattern loss adds a term)
    grads: tuple[GradSlot, ...]
    trace_picks: tuple[Place, Place]  # the traced cell's query and key pickers
    trace: Place  # the traced dS̃_ij
    head: int
    sweep: SaturationSweep | None = None  # None: no √d_k story (no projections)
    sweep_line: Place | None = None  # the √d_k value's slider, ‖dS̃‖ over the values
    sweep_map: Place | None = None

    def places(self) -> list[Place]:
        """Every place the loss's part writes in after the loss's value."""
        return [self.d_weights, *(g.box for g in self.grads), *self.trace_picks, self.trace,
                *(box for box in (self.sweep_line, self.sweep_map) if box is not None)]


@dataclass(frozen=True)
class Shape:
    """What the gradients of a scenario have whatever the loss: the scenario fields they are
    taken with respect to, the key/value heads and the heads."""

    params: tuple[str, ...]
    n_kv: int
    n_heads: int

    def kv(self, head: int) -> KVHead:
        """The key/value head query head ``head`` reads (:func:`kv_head`)."""
        group = self.n_heads // self.n_kv
        return KVHead(self.n_kv, group, head // group)


def gradient_shape(scenario) -> Shape | None:
    """The :class:`Shape` of the scenario's gradients (from a backward pass with dO = 1, kept
    for the session's last :data:`SWEEPS_KEPT` scenarios), or None when it cannot run."""
    def make() -> Shape | None:
        try:
            att = run_scenario(scenario).attention
            grads = gradients(scenario, Loss("given", np.ones(np.shape(att.output))))
            kv = kv_head(scenario, grads, 0)
            return Shape(tuple(grads.params), kv.n_kv, grads.attention.n_heads)
        except ValueError:
            return None

    return state.session_memo(SHAPE_MEMO, fingerprint(scenario), make, entries=SWEEPS_KEPT)


def matrices(scenario, result, head: int, loss_box, pattern_box) -> Slots:
    """Everything the loss does not change, in the page's order — every forward matrix with
    its title, the backward formulas (but the loss's and dP's), the sections' titles and
    words — with a place left for each thing it does (:class:`Slots`)."""
    value = st.container()
    shape = gradient_shape(scenario)
    kv = shape.kv(head) if shape else None
    f = backward.formulas(backward.settings_of(
        scenario.spec, result.attention, loss=LOSSES[0],
        shared_kv=bool(shape and shape.n_kv < shape.n_heads)))  # loss & dP: drawn by the loss
    d_weights, grads = backward_pairs(scenario, result, head, kv, f)
    if shape:
        grads += param_pairs(scenario, result, shape, f)
    st.subheader(text.TRACE_TITLE)  # ---- one dS̃_ij traced
    picks = tuple(st.columns(2))
    return Slots(loss_box, pattern_box, value, d_weights, tuple(grads), picks, st.container(),
                 head, **saturation(scenario, result, head))  # ---- the √d_k story


def backward_pairs(scenario, result, head: int, kv: KVHead | None, f: dict):
    """Head ``head``'s forward matrices with places for their gradients, from the output back
    to Q, K and V (K and V of the key/value head ``kv`` it reads; none without ``kv``);
    returns dP's formula's place and the gradients' places."""
    att, q_lab, k_lab = result.attention, result.q_labels, result.k_labels
    part = att.head(head)
    out_cols = controls.dims("o", np.shape(att.output)[1])
    grads = [pair(text.OUTPUT, "dO", att.output, out_cols, q_lab, "", "gradients_output",
                  pick=lambda g: g.attention.d_output)]
    d_weights = st.container()
    grads.append(pair(text.WEIGHTS, "dP", part.weights, k_lab, q_lab, "", "gradients_weights",
                      kind="weights", pick=lambda g: g.attention.d_weights[head]))
    grads.append(pair(text.SCALED, "dS̃", part.masked, k_lab, q_lab, f["d_scaled"],
                      "gradients_scaled", pick=lambda g: g.attention.d_scaled[head]))
    st.latex(f["d_scores"])
    if not scenario.spec.projections or kv is None:
        return d_weights, grads
    d_k_width, d_v_width = np.shape(part.q)[1], np.shape(part.v)[1]
    grads.append(pair(text.Q_TITLE, "dQ", part.q, controls.dims("d", d_k_width), q_lab,
                      f["d_q"], "gradients_q", pick=lambda g: g.attention.d_q[head]))
    if kv.n_kv < att.n_heads:
        st.caption(text.KV_HEAD.format(g=kv.kv, heads=", ".join(map(str, kv.query_heads))))
    grads.append(pair(text.K_TITLE, "dK", part.k, controls.dims("d", d_k_width), k_lab,
                      f["d_k"], "gradients_k", pick=lambda g: g.attention.d_k[kv.kv]))
    grads.append(pair(text.V_TITLE, "dV", part.v, controls.dims("d", d_v_width), k_lab,
                      f["d_v"], "gradients_v", pick=lambda g: g.attention.d_v[kv.kv]))
    return d_weights, grads


def param_pairs(scenario, result, shape: Shape, f: dict) -> list[GradSlot]:
    """Every scenario field the computation read, with the place of its gradient."""
    q_lab, k_lab = result.q_labels, result.k_labels
    st.subheader(text.PARAMS_TITLE)
    st.latex(f["params"])
    if f["d_w_o"]:
        st.latex(f["d_w_o"])
    grads = []
    for name in shape.params:
        value = np.atleast_2d(np.asarray(getattr(scenario, name), dtype=float))
        rows = {"x": q_lab, "q_in": q_lab}.get(name, k_lab if name in ("source_x", "k_in", "v_in")
                                              else controls.dims("r", value.shape[0]))
        title = text.PARAM_NAMES.get(name, name)
        grads.append(pair(title, "d" + title.split(" ")[0], value,
                          controls.dims("c", value.shape[1]), rows, "",
                          f"gradients_param_{name}",
                          pick=lambda g, name=name: np.atleast_2d(g.params[name])))
    return grads


def saturation(scenario, result, head: int) -> dict:
    """The √d_k story's text and caption, and the places of its value's slider with ‖dS̃‖ over
    the scale (or τ), and of head ``head``'s dS̃ at the value picked (:class:`Slots`' fields)."""
    st.subheader(text.SATURATION_TITLE)
    st.write(text.SATURATION)
    if not scenario.spec.projections:
        return {}
    att = result.attention
    sweep = saturation_sweep(scenario, np.shape(att.head(head).q)[1])
    by_scale = sweep.setting == "scale"
    # presenter mode: the map under the line, across the page (beside it its numbers are
    # 14 px at 1920×1080)
    left, right = (st.container(), st.container()) if state.presenter() \
        else st.columns(layout.WIDE_LEFT, gap="large")
    with left:
        line = st.container()
        now = (f"{att.scale:.4g}" if by_scale else f"{scenario.temperature:g}")
        st.caption((text.SWEEP_CAPTION_SCALE if by_scale else text.SWEEP_CAPTION_TEMPERATURE)
                   .format(now=now))
    right.markdown(f"**{text.SWEEP_HEATMAP}**")
    return dict(sweep=sweep, sweep_line=line, sweep_map=right)


# ---- what the loss changes: drawn into the places above, again on every loss select --------

def loss_part(slots: Slots, scenario, result, kind: str) -> None:
    """Loss ``kind``'s target, the loss's value and everything computed from it, each in its
    place of ``slots``; a loss the scenario cannot take is explained where its value goes
    (every other place is emptied: each is written on every run)."""
    if kind != "pattern_ce":
        slots.pattern.empty()  # written on every run (the pattern select's place)
    with slots.value:  # written on every run: the value or why there is none
        loss = Loss(kind, loss_target(scenario, result, kind, slots.pattern))
        try:
            grads = gradients(scenario, loss)
        except ValueError as exc:
            st.error(f"{text.CANNOT}: {exc}")
            for box in slots.places():
                box.empty()
            return
    kv = kv_head(scenario, grads, slots.head)
    f = backward.formulas(backward.settings_of(scenario.spec, result.attention,
                                               shared_kv=kv.n_kv < grads.attention.n_heads,
                                               loss=kind))
    slots.value.markdown(f"### {text.LOSS_VALUE.format(value=f'{grads.loss:.6g}')}")
    slots.value.latex(f["loss"])
    slots.d_weights.latex(f["d_weights"])
    for place in slots.grads:
        with place.box:
            show_figure(heatmap(place.pick(grads), place.cols, place.rows, kind="signed"),
                        key=place.key, filename=place.filename, lazy=True)
    trace(slots, result, grads)
    if slots.sweep is not None:
        sweep_charts(slots, scenario, result, loss)


def trace(slots: Slots, result, grads) -> None:
    """The traced dS̃_ij's pickers (a query and a key), then the picked head's dS̃_ij written
    out with its numbers."""
    q_lab, k_lab = result.q_labels, result.k_labels
    c_i, c_j = slots.trace_picks
    i = c_i.selectbox(text.TRACE_QUERY, range(len(q_lab)), format_func=q_lab.__getitem__,
                      key=f"gradients_trace_i_{len(q_lab)}")
    j = c_j.selectbox(text.TRACE_KEY, range(len(k_lab)), format_func=k_lab.__getitem__,
                      key=f"gradients_trace_j_{len(k_lab)}")
    g = grads.attention
    cell = backward.cell_gradient(result.attention.head(slots.head).weights,
                                  g.d_weights[slots.head], g.d_scaled[slots.head], i, j)
    slots.trace.latex(backward.cell_latex(cell))
    if cell.masked:
        slots.trace.caption(text.TRACE_MASKED)


def remembered_sweep(scenario, loss: Loss, setting: str, values) -> np.ndarray | str:
    """:func:`attnviz.scenarios.gradients.norm_sweep` (or why it cannot run), computed again
    only for a scenario, loss and setting that are not among the session's last
    :data:`SWEEPS_KEPT` (256 tokens: ~0.3 s a sweep, saved on every loss select)."""
    def make() -> np.ndarray | str:
        try:
            return norm_sweep(scenario, loss, setting, values)
        except ValueError as exc:
            return str(exc)

    return state.session_memo(SWEEP_MEMO, fingerprint((scenario, loss.kind, loss.target, setting)),
                              make, entries=SWEEPS_KEPT)


def sweep_charts(slots: Slots, scenario, result, loss: Loss) -> None:
    """The √d_k value's slider, ‖dS̃‖ over the scale (or τ) with the picked value marked, and
    the picked head's dS̃ at that value."""
    sweep, by_scale = slots.sweep, slots.sweep.setting == "scale"
    norms = remembered_sweep(scenario, loss, sweep.setting, sweep.values)
    with slots.sweep_line:
        label = text.SWEEP_SCALE_LABEL if by_scale else text.SWEEP_TEMPERATURE_LABEL
        pick = st.select_slider(label, list(sweep.picks), value=1.0, key="gradients_sweep_pick")
        if isinstance(norms, str):
            st.warning(f"{text.CANNOT}: {norms}")
        else:
            fig = line_chart(np.array(sweep.values), {text.SWEEP_SERIES: norms},
                             x_title=text.SWEEP_AXIS_SCALE if by_scale
                             else text.SWEEP_AXIS_TEMPERATURE,
                             y_title=text.SWEEP_AXIS_NORM, x_axis=dict(type="log"))
            mark_x(fig, pick * sweep.base)  # the picked value
            show_figure(fig, key="gradients_fig_sweep", lazy=True)
    with slots.sweep_map:
        try:
            d_scaled = gradients(sweep.swept(scenario, pick), loss).attention.d_scaled[slots.head]
            fig = heatmap(d_scaled, result.k_labels, result.q_labels, kind="signed")
            show_figure(fig, key="gradients_fig_sweep_heatmap", lazy=True)
        except ValueError as exc:
            st.warning(f"{text.CANNOT}: {exc}")
