"""Gradients: the backward pass of the current scenario, every gradient beside its matrix."""

from dataclasses import replace

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.figures.lines import line_chart
from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.gradients import (
    LOSSES,
    PATTERNS,
    Loss,
    gradients,
    norm_sweep,
    target_pattern,
)
from attnviz.teach import backward
from attnviz.teach.text import gradients as text
from attnviz.ui import controls, heads, state
from attnviz.ui.editors import matrix_editor
from attnviz.ui.panels import scenario_caption, show_figure

SCALE_MULTIPLES = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
TEMPERATURES = [8.0, 4.0, 2.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125]

scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
st.write(text.INTRO)
result = controls.compute(scenario)
if result is None:
    st.stop()
spec = scenario.spec
if spec.backward is None:
    st.info(text.NO_BACKWARD.format(variant=spec.name))
    st.stop()
att = result.attention
q_lab, k_lab = result.q_labels, result.k_labels


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


def pair(title: str, grad_title: str, forward, grad, cols, rows, formula: str, key: str, *,
         kind: str | None = None) -> None:
    """The backward formula, then a forward matrix (left) beside its gradient (right,
    diverging, centred at 0), level with each other."""
    if formula:
        st.latex(formula)
    left, right = st.columns(2, gap="medium")
    with left:
        st.markdown(f"**{title}**")
        show_figure(heatmap(forward, cols, rows, kind=kind), key=f"{key}_fwd",
                    filename=title)
    with right:
        st.markdown(f"**{grad_title}**")
        show_figure(heatmap(grad, cols, rows, kind="signed"), key=f"{key}_grad",
                    filename=f"d_{title}")


c_loss, c_head, c_pattern = st.columns([3, 2, 3])
kind = c_loss.selectbox(text.LOSS_LABEL, LOSSES, format_func=text.LOSS_NAMES.get,
                        key="gradients_loss", help=text.LOSS_HELP)
head = heads.head_picker(att, "gradients_head", c_head) or 0
part = att.head(head)
out_cols = controls.dims("o", np.shape(att.output)[1])
if kind == "pattern_ce":
    pattern = c_pattern.selectbox(text.PATTERN_LABEL, [*PATTERNS, "custom"],
                                  format_func=text.PATTERN_NAMES.get, key="gradients_pattern")
    if pattern == "custom":
        with st.expander(text.TARGET_TITLE[kind], expanded=True):
            target = edit_target(kind, target_pattern("previous", result.mask), q_lab, k_lab)
    else:
        target = target_pattern(pattern, result.mask, scenario.tokens)
else:
    default = np.zeros if kind == "output_mse" else np.ones
    with st.expander(text.TARGET_TITLE[kind], expanded=False):
        target = edit_target(kind, default(np.shape(att.output)), q_lab, out_cols)

try:
    grads = gradients(scenario, Loss(kind, target))
except ValueError as exc:
    st.error(f"{text.CANNOT}: {exc}")
    st.stop()
g = grads.attention
multi = g.n_heads > 1
n_kv = np.shape(g.d_v)[0] if spec.projections else 1
group = g.n_heads // n_kv
kv = head // group
f = backward.formulas(backward.settings_of(spec, scenario, att, shared_kv=n_kv < g.n_heads,
                                           loss=kind))

st.markdown(f"### {text.LOSS_VALUE.format(value=f'{grads.loss:.6g}')}")
st.latex(f["loss"])

pair(text.OUTPUT, "dO", att.output, g.d_output, out_cols, q_lab, "", "gradients_output")
pair(text.WEIGHTS, "dP", part.weights, g.d_weights[head], k_lab, q_lab, f["d_weights"],
     "gradients_weights", kind="weights")
pair(text.SCALED, "dS̃", part.masked, g.d_scaled[head], k_lab, q_lab, f["d_scaled"],
     "gradients_scaled")
st.latex(f["d_scores"])
if spec.projections:
    kv_rows = k_lab
    d_k_width, d_v_width = np.shape(part.q)[1], np.shape(part.v)[1]
    pair(text.Q_TITLE, "dQ", part.q, g.d_q[head], controls.dims("d", d_k_width), q_lab, f["d_q"],
         "gradients_q")
    if n_kv < g.n_heads:
        st.caption(text.KV_HEAD.format(g=kv, heads=", ".join(
            str(h) for h in range(kv * group, (kv + 1) * group))))
    pair(text.K_TITLE, "dK", part.k, g.d_k[kv], controls.dims("d", d_k_width), kv_rows, f["d_k"],
         "gradients_k")
    pair(text.V_TITLE, "dV", part.v, g.d_v[kv], controls.dims("d", d_v_width), kv_rows, f["d_v"],
         "gradients_v")

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

# ---- one dS̃_ij traced
st.subheader(text.TRACE_TITLE)
c_i, c_j = st.columns(2)
i = c_i.selectbox(text.TRACE_QUERY, range(len(q_lab)), format_func=q_lab.__getitem__,
                  key=f"gradients_trace_i_{len(q_lab)}")
j = c_j.selectbox(text.TRACE_KEY, range(len(k_lab)), format_func=k_lab.__getitem__,
                  key=f"gradients_trace_j_{len(k_lab)}")
cell = backward.cell_gradient(part.weights, g.d_weights[head], g.d_scaled[head], i, j)
st.latex(backward.cell_latex(cell))
if cell.masked:
    st.caption(text.TRACE_MASKED)

# ---- the √d_k story
st.subheader(text.SATURATION_TITLE)
st.write(text.SATURATION)
if spec.projections:
    by_scale = spec.scale_fixed is None
    base = 1.0 / np.sqrt(np.shape(part.q)[1])
    values = [m * base for m in SCALE_MULTIPLES] if by_scale else TEMPERATURES
    left, right = st.columns([3, 2], gap="large")
    with left:
        label = text.SWEEP_SCALE_LABEL if by_scale else text.SWEEP_TEMPERATURE_LABEL
        pick = st.select_slider(label, SCALE_MULTIPLES if by_scale else TEMPERATURES,
                                value=1.0, key="gradients_sweep_pick")
        setting = "scale" if by_scale else "temperature"
        memo_key = fingerprint((scenario, kind, target, setting))
        memo = st.session_state.get("gradients_sweep_memo")
        if memo is None or memo[0] != memo_key:
            try:
                memo = (memo_key, norm_sweep(scenario, Loss(kind, target), setting, values))
            except ValueError as exc:
                memo = (memo_key, str(exc))
            st.session_state["gradients_sweep_memo"] = memo
        if isinstance(memo[1], str):
            st.warning(f"{text.CANNOT}: {memo[1]}")
        else:
            fig = line_chart(np.array(values), {text.SWEEP_SERIES: memo[1]},
                             x_title=text.SWEEP_AXIS_SCALE if by_scale
                             else text.SWEEP_AXIS_TEMPERATURE,
                             y_title=text.SWEEP_AXIS_NORM, x_axis=dict(type="log"))
            chosen = pick * base if by_scale else pick
            fig.add_vline(x=chosen, line_dash="dot", line_color="#d62728")
            show_figure(fig, key="gradients_fig_sweep")
        now = (f"{att.scale:.4g}" if by_scale else f"{scenario.temperature:g}")
        st.caption((text.SWEEP_CAPTION_SCALE if by_scale else text.SWEEP_CAPTION_TEMPERATURE)
                   .format(now=now))
    with right:
        st.markdown(f"**{text.SWEEP_HEATMAP}**")
        swept = (replace(scenario, scale_mode="custom", custom_scale=float(pick * base))
                 if by_scale else replace(scenario, temperature=float(pick)))
        try:
            d_scaled = gradients(swept, Loss(kind, target)).attention.d_scaled[head]
            show_figure(heatmap(d_scaled, k_lab, q_lab, kind="signed"),
                        key="gradients_fig_sweep_heatmap")
        except ValueError as exc:
            st.warning(f"{text.CANNOT}: {exc}")
