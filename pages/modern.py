"""Modern attention: RoPE's rotation and shift invariance, ALiBi's bias at any length, and the
key/value heads grouped-query attention shares, with the KV cache each keeps. The figures and
their drag sliders: :mod:`attnviz.ui.modern_view`; the numbers: :mod:`attnviz.teach.modern`."""

import streamlit as st

from attnviz.scenarios import limits
from attnviz.teach.modern import (
    alibi_length,
    alibi_lengths,
    kv_choices,
    kv_for,
    qk_norm_effect,
    shift_check,
    shown_heads,
)
from attnviz.teach.text import common
from attnviz.teach.text import modern as text
from attnviz.ui import head_grid, presenter, state
from attnviz.ui.modern_view import (
    ALIBI_HEADS,
    GAINS,
    GQA_QUERY_HEADS,
    HEAD_WIDTHS,
    cache_table,
    delta_on_chart,
    norm_views,
    rope_views,
    show_alibi_head,
    show_sharing,
    show_slopes,
)
from attnviz.ui.panels import scenario_caption

scenario = state.get_scenario()
st.header(text.HEADER)
scenario_caption(scenario)
presenter.page_intro(text.INTRO)
rope_tab, alibi_tab, gqa_tab, norm_tab = st.tabs([text.ROPE_TAB, text.ALIBI_TAB, text.GQA_TAB,
                                                 text.NORM_TAB])
labels = [f"{i}:{tok}" for i, tok in enumerate(scenario.tokens)]

with rope_tab:
    if not state.presenter():  # presenter mode: the explanation under the scores (first screen)
        st.write(text.ROPE_INTRO)
    if scenario.variant == "rope" and len(scenario.param("rope_inv_freq")):
        st.info(text.OWN_BASE)  # the model's frequencies are not this tab's base
    # one control per value: the base's is the angles chart's own slider,
    # Δ's the PE scores' one where that chart has a frame for every Δ (their release sets these)
    base = st.session_state.setdefault("modern_base", 10000.0)
    st.session_state.setdefault("modern_delta", 5)
    if delta_on_chart(scenario):
        delta = st.session_state["modern_delta"]
        st.caption(text.ON_CHARTS)
    else:
        delta = st.slider(text.DELTA_LABEL, 0, limits.ROPE_SHIFT_MAX, key="modern_delta")
        st.caption(text.BASE_ON_CHART)
    try:
        check = shift_check(scenario, int(delta), base=float(base))
    except ValueError as exc:
        st.error(common.CANNOT_COMPUTE.format(what=common.THIS_SCENARIO, reason=exc))
    else:
        rope_views(scenario, labels, check, int(delta), float(base))
    if state.presenter():
        st.write(text.ROPE_INTRO)

with alibi_tab:
    st.write(text.ALIBI_INTRO)
    c1, c2 = st.columns(2)
    st.session_state.setdefault("modern_alibi_heads", 4)  # also set by the slopes' drag slider
    n_heads = int(c1.select_slider(text.HEADS_LABEL, ALIBI_HEADS, key="modern_alibi_heads"))
    lengths = alibi_lengths(scenario.t)
    st.session_state.setdefault("modern_alibi_length", alibi_length(scenario.t))  # and drag
    if st.session_state["modern_alibi_length"] not in lengths:  # a scenario of other length
        st.session_state["modern_alibi_length"] = alibi_length(scenario.t)
    length = int(c2.select_slider(text.LENGTH_LABEL, lengths, key="modern_alibi_length"))
    show_slopes(n_heads)
    shown = shown_heads(n_heads)
    if len(shown) < n_heads:
        st.caption(text.ALIBI_HEADS_SHOWN.format(shown=", ".join(map(str, shown)), n=n_heads))
    st.caption(text.LENGTH_DRAG)
    for h, col in zip(shown, head_grid.grid(len(shown)), strict=True):
        with col:
            st.markdown(f"**{text.ALIBI_HEAD.format(h=h)}**")
            show_alibi_head(n_heads, h, length, lengths, slider=h == 0)

with gqa_tab:
    st.write(text.GQA_INTRO)
    c1, c2, c3 = st.columns(3)
    st.session_state.setdefault("modern_gqa_heads", 8)  # also set by the grid's drag sliders
    n_q = int(c1.select_slider(text.QUERY_HEADS_LABEL, GQA_QUERY_HEADS, key="modern_gqa_heads"))
    choices = kv_choices(n_q)
    if st.session_state.get("modern_gqa_kv") not in choices:
        st.session_state.pop("modern_gqa_kv", None)  # fewer query heads than before
    st.session_state.setdefault("modern_gqa_kv", kv_for(n_q, 0))  # also: drag
    n_kv = int(c2.select_slider(text.KV_HEADS_LABEL, choices, key="modern_gqa_kv"))
    d_head = c3.select_slider(text.HEAD_WIDTH_LABEL, HEAD_WIDTHS, value=128,
                              key="modern_gqa_width")
    st.markdown(f"**{text.SHARING}**")
    show_sharing(n_q, n_kv)
    st.markdown(f"**{text.CACHE_TITLE}**")
    cache_table(int(n_q), int(n_kv), int(d_head))

with norm_tab:
    st.write(text.NORM_INTRO)
    st.session_state.setdefault("modern_qk_gain", 1.0)  # also set by the drag slider
    gain = st.select_slider(text.GAIN_LABEL, GAINS, key="modern_qk_gain")
    try:
        effect = qk_norm_effect(scenario, float(gain))
    except ValueError as exc:
        st.error(common.CANNOT_COMPUTE.format(what=common.THIS_SCENARIO, reason=exc))
    else:
        norm_views(scenario, labels, effect, float(gain))
