"""Why √d_k: random q and k for growing d_k; score variance and softmax entropy, scaled or not."""

import streamlit as st

from attnviz.figures.charts import (
    SCALED,
    UNSCALED,
    entropy_figure,
    grouped_bars,
    max_weight_figure,
    variance_figure,
)
from attnviz.teach.sqrt_dk import sqrt_dk_experiment
from attnviz.teach.text import why_sqrt_dk as text
from attnviz.ui import state
from attnviz.ui.panels import show_figure

state.get_scenario()
st.header("Why divide by √d_k?")
st.write(text.INTRO)
st.latex(text.FORMULA)

WIDTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
c1, c2, c3, c4 = st.columns(4)
largest = c1.select_slider("Largest d_k", WIDTHS[1:], value=512, key="sqrtdk_max_dk")
t_k = c2.slider("Keys per query t_k", 2, 64, 16, key="sqrtdk_t_k")
n_queries = c3.select_slider("Random queries per d_k", [50, 100, 200, 400, 800], value=400,
                             key="sqrtdk_n_queries")
seed = c4.number_input("Seed", 0, 2**31 - 1, 0, key="sqrtdk_seed")


@st.cache_data(max_entries=32, show_spinner=False)
def experiment(d_ks: tuple[int, ...], t_k: int, n_queries: int, seed: int):
    """The experiment is deterministic in its arguments: cache it."""
    return sqrt_dk_experiment(d_ks, t_k=t_k, n_queries=n_queries, seed=seed)


d_ks = tuple(d for d in WIDTHS if d <= largest)
res = experiment(d_ks, int(t_k), int(n_queries), int(seed))

left, right = st.columns(2, gap="large")
with left:
    st.markdown("**Variance of the scores**")
    st.caption(text.VARIANCE)
    show_figure(variance_figure(res), key="sqrtdk_fig_variance")
with right:
    st.markdown("**Entropy of the softmax**")
    st.caption(text.ENTROPY)
    show_figure(entropy_figure(res), key="sqrtdk_fig_entropy")

left, right = st.columns(2, gap="large")
with left:
    st.markdown("**Largest weight of a row**")
    st.caption(text.MAX_WEIGHT)
    show_figure(max_weight_figure(res), key="sqrtdk_fig_max_weight")
with right:
    st.markdown("**One query's weights**")
    if st.session_state.get("sqrtdk_example_dk") not in d_ks:
        st.session_state.pop("sqrtdk_example_dk", None)  # the largest d_k shrank below it
    pick = st.select_slider("d_k of the example", list(d_ks), value=d_ks[-1],
                            key="sqrtdk_example_dk")
    k = d_ks.index(pick)
    st.caption(text.EXAMPLE)
    show_figure(grouped_bars([f"k{j}" for j in range(res.t_k)],
                             {UNSCALED: res.example_unscaled[k], SCALED: res.example_scaled[k]},
                             y_title="weight", y_range=(0.0, 1.05)),
                key="sqrtdk_fig_example")

st.dataframe({"d_k": res.d_ks, "Var(q·k)": res.var_unscaled, "Var(q·k/√d_k)": res.var_scaled,
              "entropy unscaled": res.entropy_unscaled, "entropy scaled": res.entropy_scaled},
             key="sqrtdk_table", hide_index=True)
