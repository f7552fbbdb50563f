"""Modern attention: RoPE's rotation and shift invariance, ALiBi's bias at any length, and the
key/value heads grouped-query attention shares, with the KV cache each keeps."""

from functools import partial

import numpy as np
import streamlit as st

from attnviz.core.alibi import alibi_bias, alibi_slopes
from attnviz.figures import heatmap
from attnviz.figures.heatmap import mask_figure, with_slider
from attnviz.scenarios import sweep
from attnviz.teach.modern import (
    angles,
    cache_entries_per_token,
    kv_sharing,
    qk_norm_effect,
    shift_check,
)
from attnviz.teach.text import common
from attnviz.teach.text import modern as text
from attnviz.ui import heads, state
from attnviz.ui.panels import land, scenario_caption, show_figure

DELTAS = range(0, 51)  # the shift slider's values
GAINS = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0]  # QK-norm's gain g
ROPE_BASES = [4.0, 10.0, 100.0, 1000.0, 10000.0, 500000.0]


def show_pe_shifted(scenario, labels: list[str], check, delta: int, base: float) -> None:
    """The sinusoidal-PE scores after the shift, with a frame for every Δ (while they fit) so
    that the figure's own slider moves them during a drag: RoPE's stay, these change."""
    def title(d: int, change: float) -> str:
        return text.PE_SHIFT_TITLE.format(delta=d, pe=f"{change:.3g}")

    checks = None
    if len(DELTAS) * scenario.t ** 2 <= sweep.MAX_CELLS:
        checks = [shift_check(scenario, d, base=base) for d in DELTAS]
    zs = [c.pe_shifted for c in checks] if checks else [check.pe_shifted]
    bound = max(float(np.abs(z).max()) for z in zs) or 1.0  # one colour range for every Δ
    fig = heatmap(check.pe_shifted, labels, labels, kind="signed", zmin=-bound, zmax=bound,
                  title=title(delta, check.pe_change))
    frames = None
    if checks:
        frames = with_slider(fig, zs, [str(d) for d in DELTAS], delta, prefix=text.DELTA_PREFIX,
                             kind="signed", titles=[title(d, c.pe_change)
                                                    for d, c in zip(DELTAS, checks, strict=True)])
        st.caption(text.DELTA_DRAG)
    show_figure(fig, key="modern_fig_pe_scores", frames=frames,
                on_slider=partial(land, "modern_fig_pe_scores", "modern_delta", DELTAS)
                if frames else None)


def show_angles(t: int, d_head: int, delta: int, base: float) -> None:
    """The angle of every position and pair, with a frame for every base so that the figure's
    own slider turns them during a drag (one colour range: pair 0 turns 1 radian per position
    whatever the base)."""
    thetas = [angles(t + delta, d_head, base=b)[delta:] for b in ROPE_BASES]
    top = max(float(z.max()) for z in thetas) or 1.0
    fig = heatmap(thetas[ROPE_BASES.index(base)], [f"i={i}" for i in range(thetas[0].shape[1])],
                  [str(p) for p in range(delta, delta + t)], kind="sequential", zmin=0.0,
                  zmax=top, x_title=text.AXIS_PAIR, y_title=text.AXIS_POSITION)
    frames = with_slider(fig, thetas, [f"{b:g}" for b in ROPE_BASES], ROPE_BASES.index(base),
                         prefix=text.BASE_PREFIX, kind="sequential")
    st.caption(text.BASE_DRAG)
    show_figure(fig, key="modern_fig_angles", frames=frames,
                on_slider=partial(land, "modern_fig_angles", "modern_base", ROPE_BASES, float))


def show_sharing(n_q: int, n_kv: int, choices: list[int]) -> None:
    """Which key/value head each query head reads, with a frame for every number of key/value
    heads (the divisors of n_q) so that the figure's own slider regroups them during a drag."""
    def kv_names(kv: int) -> list[str]:
        return [text.KV_NAME.format(g=g) for g in range(kv)]

    fig = mask_figure(kv_sharing(n_q, n_kv), kv_names(n_kv),
                      [common.HEAD_NAME.format(h=h) for h in range(n_q)])
    frames = None
    if len(choices) > 1:
        frames = with_slider(fig, [kv_sharing(n_q, kv) for kv in choices],
                             [str(kv) for kv in choices], choices.index(n_kv),
                             prefix=text.KV_PREFIX, kind="mask",
                             x_labels=[kv_names(kv) for kv in choices])
        st.caption(text.KV_DRAG)
    show_figure(fig, key="modern_fig_sharing", frames=frames,
                on_slider=partial(land, "modern_fig_sharing", "modern_gqa_kv", choices)
                if frames else None)


def show_normed(scenario, labels: list[str], key_labels: list[str], effect, gain: float) -> None:
    """The logits with QK-norm, with a frame for every gain (while they fit) so that the
    figure's own slider moves them during a drag: |logit| stays below d_k·g²·scale/τ."""
    def title(g: float, bound: float) -> str:
        return text.GAIN_TITLE.format(gain=f"{g:g}", bound=f"{bound:.3g}")

    effects = None
    if len(GAINS) * scenario.t * len(key_labels) <= sweep.MAX_CELLS:
        effects = [qk_norm_effect(scenario, g) for g in GAINS]
    zs = [e.normed for e in effects] if effects else [effect.normed]
    finite = [np.abs(z[np.isfinite(z)]) for z in zs]
    bound = max((float(f.max()) for f in finite if f.size), default=1.0) or 1.0
    fig = heatmap(effect.normed, key_labels, labels, kind="signed", zmin=-bound, zmax=bound,
                  title=title(gain, effect.bound))
    frames = None
    if effects:
        frames = with_slider(fig, zs, [f"{g:g}" for g in GAINS], GAINS.index(gain),
                             prefix=text.GAIN_PREFIX, kind="signed",
                             titles=[title(g, e.bound) for g, e in zip(GAINS, effects,
                                                                         strict=True)])
        st.caption(text.GAIN_DRAG)
    show_figure(fig, key="modern_fig_normed_logits", frames=frames,
                on_slider=partial(land, "modern_fig_normed_logits", "modern_qk_gain", GAINS,
                                  float) if frames else None)


scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
st.write(text.INTRO)
rope_tab, alibi_tab, gqa_tab, norm_tab = st.tabs([text.ROPE_TAB, text.ALIBI_TAB, text.GQA_TAB,
                                                 text.NORM_TAB])
labels = [f"{i}:{tok}" for i, tok in enumerate(scenario.tokens)]

with rope_tab:
    st.write(text.ROPE_INTRO)
    c1, c2 = st.columns(2)
    st.session_state.setdefault("modern_base", 10000.0)  # also set by the angles' drag slider
    base = c1.select_slider(text.BASE_LABEL, ROPE_BASES, key="modern_base")
    st.session_state.setdefault("modern_delta", 5)  # also set by land_delta()
    delta = c2.slider(text.DELTA_LABEL, 0, 50, key="modern_delta")
    try:
        check = shift_check(scenario, int(delta), base=float(base))
    except ValueError as exc:
        st.error(common.CANNOT_COMPUTE.format(what=common.THIS_SCENARIO, reason=exc))
    else:
        st.markdown(text.SHIFT_RESULT.format(delta=delta, rope=f"{check.rope_change:.1e}",
                                             pe=f"{check.pe_change:.3g}"))
        left, right = st.columns(2, gap="large")
        with left:
            st.markdown(f"**{text.ROPE_SCORES}**")
            show_figure(heatmap(check.rope_shifted, labels, labels, kind="signed"),
                        key="modern_fig_rope_scores")
        with right:
            st.markdown(f"**{text.PE_SCORES}**")
            show_pe_shifted(scenario, labels, check, int(delta), float(base))
        st.markdown(f"**{text.ANGLES}**")
        show_angles(scenario.t, int(scenario.w_q.shape[1]), int(delta), float(base))

with alibi_tab:
    st.write(text.ALIBI_INTRO)
    c1, c2 = st.columns(2)
    n_heads = c1.select_slider(text.HEADS_LABEL, [1, 2, 4, 8, 12, 16], value=4,
                               key="modern_alibi_heads")
    length = c2.slider(text.LENGTH_LABEL, 2, 64, min(max(scenario.t, 2), 64),
                       key="modern_alibi_length")
    slopes = alibi_slopes(int(n_heads))
    st.caption(text.ALIBI_SLOPES.format(slopes=", ".join(f"{m:.4g}" for m in slopes)))
    bias = alibi_bias(int(n_heads), int(length))
    causal = np.tri(int(length), dtype=bool)
    shown_heads = sorted({int(round(h)) for h in np.linspace(0, int(n_heads) - 1,
                                                            min(int(n_heads), 4))})
    if len(shown_heads) < int(n_heads):
        st.caption(text.ALIBI_HEADS_SHOWN.format(shown=", ".join(map(str, shown_heads)),
                                                 n=int(n_heads)))
    for h, col in zip(shown_heads, heads.grid(len(shown_heads)), strict=True):
        with col:
            st.markdown(f"**{text.ALIBI_HEAD.format(h=h)}**")
            shown = np.where(causal, bias[h], -np.inf)
            show_figure(heatmap(shown, show_text=int(length) <= 8, kind="sequential"),
                        key=f"modern_fig_alibi_{h}")

with gqa_tab:
    st.write(text.GQA_INTRO)
    c1, c2, c3 = st.columns(3)
    n_q = c1.select_slider(text.QUERY_HEADS_LABEL, [1, 2, 4, 8, 16, 32], value=8,
                           key="modern_gqa_heads")
    choices = [d for d in range(1, int(n_q) + 1) if int(n_q) % d == 0]
    if st.session_state.get("modern_gqa_kv") not in choices:
        st.session_state.pop("modern_gqa_kv", None)  # fewer query heads than before
    st.session_state.setdefault("modern_gqa_kv", choices[len(choices) // 2])  # also: drag
    n_kv = c2.select_slider(text.KV_HEADS_LABEL, choices, key="modern_gqa_kv")
    d_head = c3.select_slider(text.HEAD_WIDTH_LABEL, [8, 16, 32, 64, 128], value=128,
                              key="modern_gqa_width")
    st.markdown(f"**{text.SHARING}**")
    show_sharing(int(n_q), int(n_kv), choices)
    st.markdown(f"**{text.CACHE_TITLE}**")
    full = cache_entries_per_token(int(n_q), int(d_head))
    rows = [(text.CACHE_NAMES["mha"], int(n_q)), (text.CACHE_NAMES["gqa"], int(n_kv)),
            (text.CACHE_NAMES["mqa"], 1)]
    st.dataframe({text.CACHE_COLUMNS[0]: [r[0] for r in rows],
                  text.CACHE_COLUMNS[1]: [r[1] for r in rows],
                  text.CACHE_COLUMNS[2]: [cache_entries_per_token(r[1], int(d_head))
                                          for r in rows],
                  text.CACHE_COLUMNS[3]: [text.RATIO.format(
                      ratio=f"{cache_entries_per_token(r[1], int(d_head)) / full:.3g}")
                      for r in rows]},
                 hide_index=True, key="modern_cache")

with norm_tab:
    st.write(text.NORM_INTRO)
    st.session_state.setdefault("modern_qk_gain", 1.0)  # also set by the drag slider
    gain = st.select_slider(text.GAIN_LABEL, GAINS, key="modern_qk_gain")
    try:
        effect = qk_norm_effect(scenario, float(gain))
    except ValueError as exc:
        st.error(common.CANNOT_COMPUTE.format(what=common.THIS_SCENARIO, reason=exc))
    else:
        st.markdown(text.NORM_RESULT.format(
            plain=f"{effect.plain_largest:.3g}", normed=f"{effect.normed_largest:.3g}",
            bound=f"{effect.bound:.3g}", plain_h=f"{effect.plain_entropy:.3f}",
            normed_h=f"{effect.normed_entropy:.3f}"))
        left, right = st.columns(2, gap="large")
        key_labels = [f"{j}:{tok}" for j, tok in enumerate(scenario.key_tokens)]
        with left:
            st.markdown(f"**{text.NORM_PLAIN}**")
            show_figure(heatmap(effect.plain, key_labels, labels, kind="signed"),
                        key="modern_fig_plain_logits")
        with right:
            st.markdown(f"**{text.NORM_NORMED}**")
            show_normed(scenario, labels, key_labels, effect, float(gain))
