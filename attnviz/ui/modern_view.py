"""The figures of the Modern attention page (RoPE, ALiBi, GQA, QK-norm), each with the frames
its own drag slider steps through; the numbers come from :mod:`attnviz.teach.modern`."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from attnviz.figures import heatmap
from attnviz.figures.heatmap import Values, mask_figure, with_slider
from attnviz.scenarios import limits, sweep
from attnviz.teach.modern import (
    angles,
    cache_rows,
    causal_bias,
    kv_choices,
    kv_for,
    kv_sharing,
    qk_norm_effect,
    shift_check,
)
from attnviz.teach.modern import slopes as alibi_slope
from attnviz.teach.text import common
from attnviz.teach.text import modern as text
from attnviz.ui import one_map
from attnviz.ui.panels import set_widget_from_named_slider, set_widget_from_slider, show_figure

DELTAS = range(0, limits.ROPE_SHIFT_MAX + 1)  # the shift slider's values
GAINS = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0]  # QK-norm's gain g
ROPE_BASES = [4.0, 10.0, 100.0, 1000.0, 10000.0, 500000.0]
GQA_QUERY_HEADS = [1, 2, 4, 8, 16, 32]  # the GQA tab's query heads slider
HEAD_WIDTHS = [8, 16, 32, 64, 128]  # and its head width slider
ALIBI_HEADS = [1, 2, 4, 8, 12, 16]  # ALiBi's heads slider
ANGLE_WIDTHS = [2, 4, 6, 8, 16, 32, 64, 128]  # head widths d of the angle chart
OPENING_ANGLE_WIDTH = 8  # four pairs: a fast and a slow pair side by side


def opening_angle_width(d_k: int) -> int:
    """The head width the angle chart opens with: the scenario's own (its widest choice up to
    it) when it has at least three pairs, else :data:`OPENING_ANGLE_WIDTH` — one pair (the
    four-word scenario's d_k = 3) shows nothing of how the pairs' speeds differ."""
    fits = [w for w in ANGLE_WIDTHS if w <= d_k]
    return fits[-1] if d_k >= 6 else OPENING_ANGLE_WIDTH


def delta_on_chart(scenario) -> bool:
    """True when Δ's one control is the PE scores chart's own slider (a frame for every Δ fits
    in :data:`attnviz.scenarios.sweep.MAX_CELLS`): no Δ slider above it."""
    return len(DELTAS) * scenario.t ** 2 <= sweep.MAX_CELLS


def show_dragged(fig, key: str, frames: list[dict] | None, control: str, values,
                 cast=int, drag: str = "", fit: dict | None = None) -> None:
    """Show ``fig`` (chart key ``key``) with its drag slider's ``frames`` (None: no slider):
    with frames, the caption ``drag`` above it and the slider's release setting ``control``
    to one of ``values`` (:func:`~attnviz.ui.panels.set_widget_from_slider`). ``fit``: the
    chart's height follows the screen (:func:`~attnviz.ui.panels.show_figure`'s ``fit``)."""
    if frames and drag:
        st.caption(drag)
    show_figure(fig, key=key, frames=frames, fit=fit,
                on_slider=partial(set_widget_from_slider, key, control, values, cast)
                if frames else None)


def signed_beside(title: str, z, x_labels: list[str], y_labels: list[str], key: str,
                  right_title: str):
    """Two columns: ``title`` over the signed heatmap ``z`` (chart key ``key``) on the left,
    ``right_title`` on the right; returns the right column for what it compares with."""
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(f"**{title}**")
        show_figure(heatmap(z, x_labels, y_labels, kind="signed"), key=key)
    right.markdown(f"**{right_title}**")
    return right


def show_pe_shifted(scenario, labels: list[str], check, delta: int, base: float,
                    fitted: bool = False) -> None:
    """The sinusoidal-PE scores after the shift, with a frame for every Δ (while they fit) so
    that the figure's own slider moves them during a drag: RoPE's stay, these change.
    ``fitted``: its height follows the screen (presenter mode's one map, ui/one_map.py)."""
    def title(d: int, change: float) -> str:
        return text.PE_SHIFT_TITLE.format(delta=d, pe=f"{change:.3g}")

    checks = None
    if delta_on_chart(scenario):
        checks = [shift_check(scenario, d, base=base) for d in DELTAS]
    zs = [c.pe_shifted for c in checks] if checks else [check.pe_shifted]
    bound = max(float(np.abs(z).max()) for z in zs) or 1.0  # one colour range for every Δ
    fig = heatmap(check.pe_shifted, labels, labels, kind="signed",
                  title=title(delta, check.pe_change), values=Values(zmin=-bound, zmax=bound))
    frames = None
    if checks:
        frames = with_slider(fig, zs, [str(d) for d in DELTAS], delta, prefix=text.DELTA_PREFIX,
                             kind="signed", titles=[title(d, c.pe_change)
                                                    for d, c in zip(DELTAS, checks, strict=True)])
    show_dragged(fig, "modern_fig_pe_scores", frames, "modern_delta", DELTAS,
                 drag=text.DELTA_DRAG, fit=one_map.fit(fig) if fitted else None)


def show_angles(t: int, d_head: int, delta: int, base: float) -> None:
    """The angle of every position and pair, with a frame for every base so that the figure's
    own slider turns them during a drag (one colour range: pair 0 turns 1 radian per position
    whatever the base)."""
    thetas = [angles(t + delta, d_head, base=b)[delta:] for b in ROPE_BASES]
    top = max(float(z.max()) for z in thetas) or 1.0
    fig = heatmap(thetas[ROPE_BASES.index(base)], [f"i={i}" for i in range(thetas[0].shape[1])],
                  [str(p) for p in range(delta, delta + t)], kind="sequential",
                  x_title=text.AXIS_PAIR, y_title=text.AXIS_POSITION,
                  values=Values(zmin=0.0, zmax=top))
    frames = with_slider(fig, thetas, [f"{b:g}" for b in ROPE_BASES], ROPE_BASES.index(base),
                         prefix=text.BASE_PREFIX, kind="sequential")
    show_dragged(fig, "modern_fig_angles", frames, "modern_base", ROPE_BASES, float,
                 drag=text.BASE_DRAG)


def show_sharing(n_q: int, n_kv: int) -> None:
    """Which key/value head each query head reads, with a frame for every number of key/value
    heads (the divisors of n_q) and one for every number of query heads, so that the figure's
    own sliders regroup them during a drag."""
    def kv_names(kv: int) -> list[str]:
        return [text.KV_NAME.format(g=g) for g in range(kv)]

    def q_names(q: int) -> list[str]:
        return [common.HEAD_NAME.format(h=h) for h in range(q)]

    def title(q: int, kv: int) -> str:
        return text.SHARING_TITLE.format(q=common.count(q, text.QUERY_HEAD_NOUN),
                                         kv=common.count(kv, text.KV_HEAD_NOUN))

    fig = mask_figure(kv_sharing(n_q, n_kv), kv_names(n_kv), q_names(n_q),
                      title=title(n_q, n_kv))
    choices = kv_choices(n_q)
    frames = []
    if len(choices) > 1:
        frames += with_slider(fig, [kv_sharing(n_q, kv) for kv in choices],
                              [str(kv) for kv in choices], choices.index(n_kv),
                              prefix=text.KV_PREFIX, kind="mask",
                              names=[f"kv:{kv}" for kv in choices],
                              x_labels=[kv_names(kv) for kv in choices],
                              y_labels=[q_names(n_q)] * len(choices),
                              titles=[title(n_q, kv) for kv in choices])
    kvs = [kv_for(q, n_kv) for q in GQA_QUERY_HEADS]
    frames += with_slider(fig, [kv_sharing(q, kv) for q, kv in zip(GQA_QUERY_HEADS, kvs,
                                                                    strict=True)],
                          [str(q) for q in GQA_QUERY_HEADS], GQA_QUERY_HEADS.index(n_q),
                          prefix=text.QUERY_HEADS_PREFIX, kind="mask",
                          names=[f"q:{q}" for q in GQA_QUERY_HEADS],
                          x_labels=[kv_names(kv) for kv in kvs],
                          y_labels=[q_names(q) for q in GQA_QUERY_HEADS],
                          titles=[title(q, kv) for q, kv in zip(GQA_QUERY_HEADS, kvs,
                                                                strict=True)])
    st.caption(text.KV_DRAG)
    show_figure(fig, key="modern_fig_sharing", frames=frames, on_slider=partial(
        set_widget_from_named_slider, "modern_fig_sharing", {"kv": ("modern_gqa_kv", choices, int),
                                           "q": ("modern_gqa_heads", GQA_QUERY_HEADS, int)}))


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
    fig = heatmap(effect.normed, key_labels, labels, kind="signed",
                  title=title(gain, effect.bound), values=Values(zmin=-bound, zmax=bound))
    frames = None
    if effects:
        frames = with_slider(fig, zs, [f"{g:g}" for g in GAINS], GAINS.index(gain),
                             prefix=text.GAIN_PREFIX, kind="signed",
                             titles=[title(g, e.bound) for g, e in zip(GAINS, effects,
                                                                         strict=True)])
    show_dragged(fig, "modern_fig_normed_logits", frames, "modern_qk_gain", GAINS, float,
                 drag=text.GAIN_DRAG)


def show_slopes(n_heads: int) -> None:
    """The slope of every head as one row, with a frame for every number of heads so that the
    figure's own slider spreads the geometric slopes during a drag (one colour range, 0 to 1)."""
    def names(n: int) -> list[str]:
        return [common.HEAD_NAME.format(h=h) for h in range(n)]

    slopes = [alibi_slope(n) for n in ALIBI_HEADS]
    fig = heatmap(slopes[ALIBI_HEADS.index(n_heads)], names(n_heads), [text.SLOPE_ROW],
                  kind="sequential", title=text.SLOPES_TITLE, values=Values(zmin=0.0, zmax=1.0))
    frames = with_slider(fig, slopes, [str(n) for n in ALIBI_HEADS], ALIBI_HEADS.index(n_heads),
                         prefix=text.HEADS_PREFIX, kind="sequential",
                         x_labels=[names(n) for n in ALIBI_HEADS])
    show_dragged(fig, "modern_fig_alibi_slopes", frames, "modern_alibi_heads", ALIBI_HEADS,
                 drag=text.HEADS_DRAG)


def show_alibi_head(n_heads: int, h: int, length: int, lengths: list[int], *,
                    slider: bool) -> None:
    """Head ``h``'s causal bias; with ``slider``, a frame for every one of ``lengths`` so that
    the figure's own slider grows it during a drag. One colour range for every head, the
    steepest head's at this length (a bias is signed: diverging, centred at 0), so the heads'
    slopes look as different as they are: head 0's farthest cell is the darkest blue, a gentle
    head's stay pale. During a drag the range stays (longer lengths saturate) until the release
    draws the new length. One head has the slider: its frames are the page's largest payload
    (64 × 64 numbers, twice)."""
    lengths = lengths if slider else None
    low = float(causal_bias(n_heads, 0, length)[length - 1, 0]) or -1.0  # −m_0·(length − 1)
    fig = heatmap(causal_bias(n_heads, h, length), kind="signed",
                  values=Values(zmin=low, zmax=-low))
    frames = None
    if lengths:
        names = [[str(i) for i in range(n)] for n in lengths]
        frames = with_slider(fig, [causal_bias(n_heads, h, n) for n in lengths],
                             [str(n) for n in lengths], lengths.index(length),
                             prefix=text.LENGTH_PREFIX, kind="signed", x_labels=names,
                             y_labels=names)
    show_dragged(fig, f"modern_fig_alibi_{h}", frames, "modern_alibi_length", lengths)


def cache_table(n_q: int, n_kv: int, d_head: int) -> None:
    """The KV cache per token of multi-head, grouped-query and multi-query attention."""
    rows = cache_rows(n_q, n_kv, d_head)
    st.dataframe({text.CACHE_COLUMNS[0]: [text.CACHE_NAMES[r[0]] for r in rows],
                  text.CACHE_COLUMNS[1]: [r[1] for r in rows],
                  text.CACHE_COLUMNS[2]: [r[2] for r in rows],
                  text.CACHE_COLUMNS[3]: [text.RATIO.format(ratio=f"{r[3]:.3g}") for r in rows]},
                 hide_index=True, key="modern_cache")


def rope_views(scenario, labels: list[str], check, delta: int, base: float) -> None:
    """What a shift by Δ does: RoPE's scores beside the sinusoidal encoding's (presenter mode:
    one of them at a time, large: ui/one_map.py), and the angles."""
    st.markdown(text.SHIFT_RESULT.format(delta=delta, rope=f"{check.rope_change:.1e}",
                                         pe=f"{check.pe_change:.3g}"))
    shown = one_map.pick("modern_rope_map", {"rope": text.ROPE_SCORES, "pe": text.PE_SCORES},
                         default="rope")
    if shown == "rope":
        fig = heatmap(check.rope_shifted, labels, labels, kind="signed")
        show_figure(fig, key="modern_fig_rope_scores", fit=one_map.fit(fig))
    elif shown == "pe":
        show_pe_shifted(scenario, labels, check, delta, base, fitted=True)
    else:
        with signed_beside(text.ROPE_SCORES, check.rope_shifted, labels, labels,
                           "modern_fig_rope_scores", text.PE_SCORES):
            show_pe_shifted(scenario, labels, check, delta, base)
    st.markdown(f"**{text.ANGLES}**")
    d_k = int(scenario.w_q.shape[1])
    st.session_state.setdefault("modern_angle_width", opening_angle_width(d_k))
    width = int(st.select_slider(text.ANGLE_WIDTH_LABEL, ANGLE_WIDTHS, key="modern_angle_width",
                                 help=text.ANGLE_WIDTH_HELP))
    if width != d_k:
        st.caption(text.ANGLE_WIDTH_NOTE.format(d=width, pairs=width // 2, d_k=d_k))
    show_angles(scenario.t, width, delta, base)


def norm_views(scenario, labels: list[str], effect, gain: float) -> None:
    """The logits without and with QK-norm at gain ``gain``, and what bounds them."""
    st.markdown(text.NORM_RESULT.format(
        plain=f"{effect.plain_largest:.3g}", normed=f"{effect.normed_largest:.3g}",
        bound=f"{effect.bound:.3g}", plain_h=f"{effect.plain_entropy:.3f}",
        normed_h=f"{effect.normed_entropy:.3f}"))
    key_labels = [f"{j}:{tok}" for j, tok in enumerate(scenario.key_tokens)]
    with signed_beside(text.NORM_PLAIN, effect.plain, key_labels, labels,
                       "modern_fig_plain_logits", text.NORM_NORMED):
        show_normed(scenario, labels, key_labels, effect, gain)
