"""Quiz: the weights are hidden; predict where each query looks, then reveal and score."""

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.core.additive import AdditiveResult
from attnviz.core.attention import MultiHeadResult
from attnviz.figures import heatmap, mask_figure
from attnviz.teach.quiz import practice_question, score_predictions
from attnviz.teach.text import quiz as text
from attnviz.ui import controls, state
from attnviz.ui.panels import show_figure

MAX_QUERIES = 12
scenario = state.get_scenario()
st.header("Quiz: predict, then reveal")
st.write(text.INTRO)
st.session_state.setdefault("quiz_round", 0)

source = st.radio("Question", list(text.SOURCES), format_func=text.SOURCES.get,
                  horizontal=True, key="quiz_source")
if source == "practice":
    c1, c2 = st.columns(2)
    t = c1.slider("Tokens", 2, 6, 4, key="quiz_t")
    d_k = c2.slider("d_k", 1, 4, 2, key="quiz_d_k")
    part = practice_question(st.session_state["quiz_round"], t=t, d_k=d_k).result
    q_lab, k_lab = [f"q{i}" for i in range(t)], [f"k{j}" for j in range(t)]
else:
    result = controls.compute(scenario)
    if result is None:
        st.stop()
    part, q_lab, k_lab = result.attention, result.q_labels, result.k_labels
    if isinstance(part, MultiHeadResult):
        part = part.heads[st.selectbox("Head", range(part.n_heads), key="quiz_head",
                                       format_func=lambda h: f"head {h}")]
weights = np.atleast_2d(part.weights)
if weights.shape[0] > MAX_QUERIES:
    st.info(text.TOO_MANY.format(limit=MAX_QUERIES, n=weights.shape[0]))
    st.stop()
question = hashlib.sha1(weights.tobytes() + str(weights.shape).encode()).hexdigest()[:12]
revealed = st.session_state.get("quiz_revealed_for") == question

st.markdown("**What you know**")
if isinstance(part, AdditiveResult):
    st.markdown("**alignment scores e_ij**")
    show_figure(heatmap(part.scores, k_lab, q_lab), key="quiz_fig_scores")
else:
    cols = st.columns(3 if not part.mask.all() else 2)
    for col, name, z, labels in ((cols[0], "Q", part.q, q_lab), (cols[1], "K", part.k, k_lab)):
        with col:
            st.markdown(f"**{name}**")
            show_figure(heatmap(z, [f"d{m}" for m in range(z.shape[1])], labels),
                        key=f"quiz_fig_{name}")
    if not part.mask.all():
        with cols[2]:
            st.markdown("**mask**")
            show_figure(mask_figure(part.mask, k_lab, q_lab), key="quiz_fig_mask")
    if st.toggle("Hint: show the scaled, masked scores", key="quiz_hint"):
        show_figure(heatmap(part.masked, k_lab, q_lab, x_title="key", y_title="query"),
                    key="quiz_fig_hint")

st.markdown("**Your prediction: the key with the most weight, for each query**")
predictions = []
cols = st.columns(min(4, len(q_lab)))
for i in range(len(q_lab)):  # widget labels render Markdown: no token text in them
    predictions.append(cols[i % len(cols)].selectbox(
        f"query {i}", [None, *range(len(k_lab))], key=f"quiz_pred_{question}_{i}",
        format_func=lambda j: "—" if j is None else k_lab[j]))


def reveal() -> None:
    st.session_state["quiz_revealed_for"] = question


def new_question() -> None:
    st.session_state["quiz_round"] += 1


b1, b2, _ = st.columns([1, 1, 4])
b1.button("Reveal", type="primary", on_click=reveal, key="quiz_reveal",
          help=text.REVEAL_HELP)
if source == "practice":
    b2.button("New question", on_click=new_question, key="quiz_new")

if revealed:
    score = score_predictions(weights, predictions)
    m1, m2 = st.columns(2)
    m1.metric("Score", f"{score.n_correct} / {score.n_scored}")
    m2.metric("Weight captured", f"{score.captured:.0%}", help=text.CAPTURED)
    guesses = [(i, p) for i, p in enumerate(predictions) if p is not None]
    st.markdown("**The hidden weights**")
    show_figure(heatmap(weights, k_lab, q_lab, kind="weights", x_title="key", y_title="query",
                        highlight_cells=guesses),
                key="quiz_fig_weights")
    st.caption(f"{text.OUTLINES} {text.TIES}")
    st.dataframe(pd.DataFrame({
        "your key": ["—" if p is None else k_lab[p] for p in predictions],
        "right key(s)": [", ".join(k_lab[j] for j in a) or text.FULLY_MASKED
                         for a in score.answers],
        "its weight": score.predicted_weight,
        "max weight": weights.max(axis=1),
        "right": score.correct,
    }, index=pd.Index(q_lab, name="query")), key="quiz_table")
