"""Why √d_k: random q and k for growing d_k; score variance and softmax entropy, scaled or not."""

from contextlib import nullcontext
from functools import partial

import streamlit as st

from attnviz.figures.charts import (
    bars_with_slider,
    entropy_figure,
    grouped_bars,
    max_weight_figure,
    variance_figure,
)
from attnviz.scenarios import limits
from attnviz.teach.sqrt_dk import remembered_experiment
from attnviz.teach.text import common
from attnviz.teach.text import why_sqrt_dk as text
from attnviz.ui import presenter, state
from attnviz.ui.panels import set_widget_from_slider, show_figure

state.get_scenario()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)
st.latex(text.FORMULA)
lesson = presenter.lesson_box()  # presenter mode: the first two charts above the controls

WIDTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
c1, c2, c3, c4 = st.columns(4)
largest = c1.select_slider(text.MAX_DK_LABEL, WIDTHS[1:], value=512, key="why_sqrt_dk_max_dk")
t_k = c2.slider(text.T_K_LABEL, 2, 64, 16, key="why_sqrt_dk_t_k")
n_queries = c3.select_slider(text.N_QUERIES_LABEL, [50, 100, 200, 400, 800], value=400,
                             key="why_sqrt_dk_n_queries")
seed = c4.number_input(common.SEED_LABEL, 0, limits.SEED_MAX, 0, key="why_sqrt_dk_seed")


d_ks = tuple(d for d in WIDTHS if d <= largest)
res = remembered_experiment(d_ks, t_k=int(t_k), n_queries=int(n_queries), seed=int(seed))


def chart(title: str, caption: str, fig, key: str) -> None:
    """A chart under its title, its caption above it (in presenter mode under it: the chart
    starts on the first screen)."""
    st.markdown(f"**{title}**")
    if not state.presenter():
        st.caption(caption)
    show_figure(fig, key=key)
    if state.presenter():
        st.caption(caption)


with lesson or nullcontext():
    left, right = st.columns(2, gap="large")
    with left:
        chart(text.VARIANCE_TITLE, text.VARIANCE, variance_figure(res), "why_sqrt_dk_fig_variance")
    with right:
        chart(text.ENTROPY_TITLE, text.ENTROPY, entropy_figure(res), "why_sqrt_dk_fig_entropy")

left, right = st.columns(2, gap="large")
with left:
    st.markdown(f"**{text.MAX_WEIGHT_TITLE}**")
    st.caption(text.MAX_WEIGHT)
    show_figure(max_weight_figure(res), key="why_sqrt_dk_fig_max_weight")
with right:
    st.markdown(f"**{text.EXAMPLE_TITLE}**")
    if st.session_state.get("why_sqrt_dk_example_dk") not in d_ks:
        st.session_state.pop("why_sqrt_dk_example_dk", None)  # the largest d_k shrank below it
    # d_k's one control is the chart's own slider (its release sets this value)
    pick = st.session_state.setdefault("why_sqrt_dk_example_dk", d_ks[-1])
    k = d_ks.index(pick)
    st.caption(text.EXAMPLE)
    keys = [text.KEY_NAME.format(j=j) for j in range(res.t_k)]
    fig = grouped_bars(keys, {text.UNSCALED: res.example_unscaled[k],
                              text.SCALED: res.example_scaled[k]},
                       y_title=text.AXIS_WEIGHT, y_range=(0.0, 1.05))
    # every d_k in advance: the figure's own slider moves the bars while it is dragged
    frames = bars_with_slider(fig, [{text.UNSCALED: res.example_unscaled[i],
                                     text.SCALED: res.example_scaled[i]}
                                    for i in range(len(d_ks))], [str(d) for d in d_ks], k,
                              prefix=text.DK_PREFIX)
    show_figure(fig, key="why_sqrt_dk_fig_example", frames=frames, on_slider=partial(
        set_widget_from_slider, "why_sqrt_dk_fig_example", "why_sqrt_dk_example_dk", d_ks))

st.dataframe({column: getattr(res, field) for field, column in text.COLUMNS.items()},
             key="why_sqrt_dk_table", hide_index=True)
