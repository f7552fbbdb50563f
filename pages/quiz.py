"""Quiz: the weights are hidden; predict where each query looks, then reveal and score."""

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.figures import heatmap, mask_figure
from attnviz.teach.quiz import practice_question, score_predictions
from attnviz.teach.text import common
from attnviz.teach.text import quiz as text
from attnviz.ui import controls, layout, presenter, state
from attnviz.ui.page_end import end_page
from attnviz.ui.panels import show_figure

MAX_QUERIES = 12
scenario = state.get_scenario()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)
st.session_state.setdefault("quiz_round", 0)

source = st.radio(text.SOURCE_LABEL, list(text.SOURCES), format_func=text.SOURCES.get,
                  horizontal=True, key="quiz_source")
if source == "practice":
    c1, c2 = st.columns(2)
    t = c1.slider(text.TOKENS_LABEL, 2, 6, 4, key="quiz_t")
    d_k = c2.slider(text.D_K_LABEL, 1, 4, 2, key="quiz_d_k")
    part = practice_question(st.session_state["quiz_round"], t=t, d_k=d_k).result
    q_lab = [text.QUERY_NAME.format(i=i) for i in range(t)]
    k_lab = [text.KEY_NAME.format(j=j) for j in range(t)]
else:
    result = controls.compute(scenario)
    if result is None:
        end_page()
    part, q_lab, k_lab = result.attention, result.q_labels, result.k_labels
    part = part.head(controls.head_picker(part, "quiz_head") or 0)
weights = np.atleast_2d(part.weights)
if weights.shape[0] > MAX_QUERIES:
    st.info(text.TOO_MANY.format(limit=MAX_QUERIES, n=weights.shape[0]))
    end_page()
question = hashlib.sha1(weights.tobytes() + str(weights.shape).encode()).hexdigest()[:12]
revealed = st.session_state.get("quiz_revealed_for") == question

st.markdown(f"**{text.KNOWN}**")
if source != "practice" and not scenario.spec.projections:  # additive: no Q and K
    st.markdown(f"**{text.SCORES}**")
    show_figure(heatmap(part.scores, k_lab, q_lab), key="quiz_fig_scores")
else:
    cols = st.columns(3 if not part.mask.all() else 2)
    for col, name, z, labels in ((cols[0], text.Q, part.q, q_lab), (cols[1], text.K, part.k,
                                                                    k_lab)):
        with col:
            st.markdown(f"**{name}**")
            show_figure(heatmap(z, [text.DIM_NAME.format(m=m) for m in range(z.shape[1])], labels),
                        key=f"quiz_fig_{name}")
    if not part.mask.all():
        with cols[2]:
            st.markdown(f"**{text.MASK}**")
            show_figure(mask_figure(part.mask, k_lab, q_lab), key="quiz_fig_mask")
    if st.toggle(text.HINT, key="quiz_hint"):
        show_figure(heatmap(part.masked, k_lab, q_lab, x_title=common.AXIS_KEY,
                            y_title=common.AXIS_QUERY),
                    key="quiz_fig_hint")

st.markdown(f"**{text.PREDICT}**")
predictions = []
cols = st.columns(min(4, len(q_lab)))
for i in range(len(q_lab)):  # widget labels render Markdown: no token text in them
    predictions.append(cols[i % len(cols)].selectbox(
        text.PREDICTION_LABEL.format(i=i), [None, *range(len(k_lab))],
        key=f"quiz_pred_{question}_{i}",
        format_func=lambda j: common.NO_VALUE if j is None else k_lab[j]))


def reveal() -> None:
    st.session_state["quiz_revealed_for"] = question


def new_question() -> None:
    st.session_state["quiz_round"] += 1


b1, b2, _ = st.columns(layout.TWO_BUTTONS)
b1.button(text.REVEAL, type="primary", on_click=reveal, key="quiz_reveal",
          help=text.REVEAL_HELP)
if source == "practice":
    b2.button(text.NEW_QUESTION, on_click=new_question, key="quiz_new")

if revealed:
    score = score_predictions(weights, predictions)
    m1, m2 = st.columns(2)
    m1.metric(text.SCORE, text.SCORE_VALUE.format(n_correct=score.n_correct,
                                                  n_scored=score.n_scored))
    m2.metric(text.CAPTURED_LABEL, f"{score.captured:.0%}", help=text.CAPTURED)
    guesses = [(i, p) for i, p in enumerate(predictions) if p is not None]
    st.markdown(f"**{text.HIDDEN_WEIGHTS}**")
    show_figure(heatmap(weights, k_lab, q_lab, kind="weights", x_title=common.AXIS_KEY,
                        y_title=common.AXIS_QUERY, highlight=guesses),
                key="quiz_fig_weights")
    st.caption(f"{text.OUTLINES} {text.TIES}")
    columns = text.COLUMNS
    st.dataframe(pd.DataFrame({
        columns["yours"]: [common.NO_VALUE if p is None else k_lab[p] for p in predictions],
        columns["right"]: [", ".join(k_lab[j] for j in a) or text.FULLY_MASKED
                           for a in score.answers],
        columns["weight"]: score.predicted_weight,
        columns["max"]: weights.max(axis=1),
        columns["correct"]: score.correct,
    }, index=pd.Index(q_lab, name=common.AXIS_QUERY)), key="quiz_table")
