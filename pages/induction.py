"""Induction heads: a small attention-only transformer learns to copy in context.

Opens on the lesson: the shipped trained model's loss curve over its layers × heads grid,
stepped by one slider and Play (read from its file: nothing trains on opening). Train it
again sits below the grid, with the experiments; a live run trains within the click budget
(``limits.TRAIN_SECONDS``, a progress bar, Stop, Continue) and then fills the same grid. The
figures, the ablation, the residual stream and "open a head" are in
attnviz/ui/induction_view.py; the words in attnviz/teach/text/induction.py.
"""

import streamlit as st

from attnviz.teach.text import induction as text
from attnviz.ui import induction_view as view
from attnviz.ui import presenter

view.init()
presenter.compact_page(titled=True)
st.header(text.HEADER)
st.caption(text.INTRO)
lesson = st.container()  # filled below, once the training (if any) has run

st.subheader(text.TRAIN_TITLE)
st.caption(text.TRAIN_CAPTION)
view.experiments()
settings = view.settings_controls()
view.train_panel(settings)

run, model, is_shipped = view.current()
with lesson:
    view.formation(run)
    view.source_caption(run, is_shipped)
    if not is_shipped:
        st.button(text.BACK_TO_SHIPPED, key="induction_shipped", on_click=view.back_to_shipped)
    with st.expander(text.ABOUT_TITLE):
        st.markdown(text.ABOUT)

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
