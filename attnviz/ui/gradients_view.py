"""The sections of the Gradients page: the loss's target, every forward matrix beside its
gradient, the parameters' gradients, one dS̃_ij traced and the √d_k story (‖dS̃‖ over the
scale, kept for the session for the last few scenarios and losses: switching the loss back
and forth does not compute it again)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.figures.lines import line_chart
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.gradients import (
    PATTERNS,
    KVHead,
    Loss,
    gradients,
    norm_sweep,
    saturation_sweep,
    self_output,
    target_pattern,
)
from attnviz.teach import backward
from attnviz.teach.text import gradients as text
from attnviz.ui import controls, layout
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import show_figure
from attnviz.ui.plotly_view import drawn_when_seen

SWEEP_MEMO = "gradients_sweep_memo"  # {fingerprint of the inputs: ‖dS̃‖ per value or a message}
SWEEPS_KEPT = 6  # the sweeps kept per session (each a few numbers): every loss of two scenarios


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


def pair(title: str, grad_title: str, forward, grad, cols, rows, formula: str, key: str, *,
         kind: str | None = None) -> None:
    """The backward formula, then a forward matrix (left) beside its gradient (right,
    diverging, centred at 0), level with each other."""
    if formula:
        st.latex(formula)
    left, right = st.columns(2, gap="medium")
    with left:
        st.markdown(f"**{title}**")
        show_figure(drawn_when_seen(heatmap(forward, cols, rows, kind=kind)),
                    key=f"{key}_fwd", filename=title)
    with right:
        st.markdown(f"**{grad_title}**")
        show_figure(drawn_when_seen(heatmap(grad, cols, rows, kind="signed")),
                    key=f"{key}_grad", filename=f"d_{title}")


def backward_pairs(scenario, result, grads, head: int, kv: KVHead, f: dict) -> None:
    """Head ``head``'s forward matrices beside their gradients, from the output back to Q, K
    and V (K and V of the key/value head ``kv`` it reads)."""
    att, g, q_lab, k_lab = result.attention, grads.attention, result.q_labels, result.k_labels
    part = att.head(head)
    out_cols = controls.dims("o", np.shape(att.output)[1])
    pair(text.OUTPUT, "dO", att.output, g.d_output, out_cols, q_lab, "", "gradients_output")
    pair(text.WEIGHTS, "dP", part.weights, g.d_weights[head], k_lab, q_lab, f["d_weights"],
         "gradients_weights", kind="weights")
    pair(text.SCALED, "dS̃", part.masked, g.d_scaled[head], k_lab, q_lab, f["d_scaled"],
         "gradients_scaled")
    st.latex(f["d_scores"])
    if not scenario.spec.projections:
        return
    d_k_width, d_v_width = np.shape(part.q)[1], np.shape(part.v)[1]
    pair(text.Q_TITLE, "dQ", part.q, g.d_q[head], controls.dims("d", d_k_width), q_lab, f["d_q"],
         "gradients_q")
    if kv.n_kv < g.n_heads:
        st.caption(text.KV_HEAD.format(g=kv.kv, heads=", ".join(map(str, kv.query_heads))))
    pair(text.K_TITLE, "dK", part.k, g.d_k[kv.kv], controls.dims("d", d_k_width), k_lab,
         f["d_k"], "gradients_k")
    pair(text.V_TITLE, "dV", part.v, g.d_v[kv.kv], controls.dims("d", d_v_width), k_lab,
         f["d_v"], "gradients_v")


def param_pairs(scenario, result, grads, f: dict) -> None:
    """Every scenario field the computation read beside its gradient."""
    q_lab, k_lab = result.q_labels, result.k_labels
    st.subheader(text.PARAMS_TITLE)
    st.latex(f["params"])
    if f["d_w_o"]:
        st.latex(f["d_w_o"])
    for name, grad in grads.params.items():
        value = np.atleast_2d(np.asarray(getattr(scenario, name), dtype=float))
        grad = np.atleast_2d(grad)
        rows = {"x": q_lab, "q_in": q_lab}.get(name, k_lab if name in ("source_x", "k_in", "v_in")
                                              else controls.dims("r", value.shape[0]))
        title = text.PARAM_NAMES.get(name, name)
        pair(title, "d" + title.split(" ")[0], value, grad, controls.dims("c", value.shape[1]),
             rows, "", f"gradients_param_{name}")


def traced_cell(result, grads, head: int) -> None:
    """One dS̃_ij of head ``head`` written out, for a query and a key picked here."""
    q_lab, k_lab, g = result.q_labels, result.k_labels, grads.attention
    st.subheader(text.TRACE_TITLE)
    c_i, c_j = st.columns(2)
    i = c_i.selectbox(text.TRACE_QUERY, range(len(q_lab)), format_func=q_lab.__getitem__,
                      key=f"gradients_trace_i_{len(q_lab)}")
    j = c_j.selectbox(text.TRACE_KEY, range(len(k_lab)), format_func=k_lab.__getitem__,
                      key=f"gradients_trace_j_{len(k_lab)}")
    cell = backward.cell_gradient(result.attention.head(head).weights, g.d_weights[head],
                                  g.d_scaled[head], i, j)
    st.latex(backward.cell_latex(cell))
    if cell.masked:
        st.caption(text.TRACE_MASKED)


def remembered_sweep(scenario, loss: Loss, setting: str, values) -> np.ndarray | str:
    """:func:`attnviz.scenarios.gradients.norm_sweep` (or why it cannot run), computed again
    only for a scenario, loss and setting that are not among the session's last
    :data:`SWEEPS_KEPT` (256 tokens: ~0.3 s a sweep, every loss select before)."""
    memo_key = fingerprint((scenario, loss.kind, loss.target, setting))
    memo = st.session_state.get(SWEEP_MEMO)
    memo = memo if isinstance(memo, dict) else {}
    if memo_key not in memo:
        try:
            memo[memo_key] = norm_sweep(scenario, loss, setting, values)
        except ValueError as exc:
            memo[memo_key] = str(exc)
        while len(memo) > SWEEPS_KEPT:
            memo.pop(next(iter(memo)))  # the oldest
    st.session_state[SWEEP_MEMO] = memo
    return memo[memo_key]


def saturation(scenario, result, loss: Loss, head: int) -> None:
    """The √d_k story: ‖dS̃‖ over the scale (or τ) with the picked value marked, beside head
    ``head``'s dS̃ at that value."""
    st.subheader(text.SATURATION_TITLE)
    st.write(text.SATURATION)
    if not scenario.spec.projections:
        return
    att = result.attention
    sweep = saturation_sweep(scenario, np.shape(att.head(head).q)[1])
    by_scale = sweep.setting == "scale"
    left, right = st.columns(layout.WIDE_LEFT, gap="large")
    with left:
        label = text.SWEEP_SCALE_LABEL if by_scale else text.SWEEP_TEMPERATURE_LABEL
        pick = st.select_slider(label, list(sweep.picks), value=1.0, key="gradients_sweep_pick")
        norms = remembered_sweep(scenario, loss, sweep.setting, sweep.values)
        if isinstance(norms, str):
            st.warning(f"{text.CANNOT}: {norms}")
        else:
            fig = line_chart(np.array(sweep.values), {text.SWEEP_SERIES: norms},
                             x_title=text.SWEEP_AXIS_SCALE if by_scale
                             else text.SWEEP_AXIS_TEMPERATURE,
                             y_title=text.SWEEP_AXIS_NORM, x_axis=dict(type="log"))
            fig.add_vline(x=pick * sweep.base, line_dash="dot", line_color="#d62728")
            show_figure(drawn_when_seen(fig), key="gradients_fig_sweep")
        now = (f"{att.scale:.4g}" if by_scale else f"{scenario.temperature:g}")
        st.caption((text.SWEEP_CAPTION_SCALE if by_scale else text.SWEEP_CAPTION_TEMPERATURE)
                   .format(now=now))
    with right:
        st.markdown(f"**{text.SWEEP_HEATMAP}**")
        try:
            d_scaled = gradients(sweep.swept(scenario, pick), loss).attention.d_scaled[head]
            fig = heatmap(d_scaled, result.k_labels, result.q_labels, kind="signed")
            show_figure(drawn_when_seen(fig), key="gradients_fig_sweep_heatmap")
        except ValueError as exc:
            st.warning(f"{text.CANNOT}: {exc}")
