"""Induction heads: a small attention-only transformer learns to copy in context.

Opens on the shipped trained model; Train again trains one live within the click budget
(``limits.TRAIN_SECONDS``, a progress bar, Stop, Continue). The figures, the ablation, the
residual stream and "open a head" are in attnviz/ui/induction_view.py; the words in
attnviz/teach/text/induction.py.
"""

import streamlit as st

from attnviz.teach.text import induction as text
from attnviz.ui import induction_view as view

view.init()
st.header(text.HEADER)
st.write(text.INTRO)

st.subheader(text.TRAIN_TITLE)
st.caption(text.TRAIN_CAPTION)
st.markdown(f"**{text.EXPERIMENTS_TITLE}** — {text.EXPERIMENTS_CAPTION}")
for column, (key, label) in zip(st.columns(len(text.EXPERIMENTS)), text.EXPERIMENTS.items(),
                                strict=True):
    column.button(label, key=f"induction_exp_{key}", on_click=view.apply_experiment,
                  args=(key,), width="stretch")
view.experiment_note()
settings = view.settings_controls()
view.train_panel(settings)

run, model, is_shipped = view.current()
view.source_caption(run, is_shipped)
if not is_shipped:
    st.button(text.BACK_TO_SHIPPED, key="induction_shipped", on_click=view.back_to_shipped)

st.subheader(text.WATCH_TITLE)
view.formation(run)

st.subheader(text.SCORES_TITLE)
view.scores(run)

st.subheader(text.ABLATION_TITLE)
keep = view.ablation(run, model)

st.subheader(text.POSITION_TITLE)
view.position_loss(run, model, keep)

st.subheader(text.RESIDUAL_TITLE)
view.residual(run, model, keep)

st.subheader(text.OPEN_TITLE)
st.caption(text.OPEN_CAPTION)
view.open_head(run, model)
