"""Pitfalls: bugs that real tutorials ship, each computed wrong and right on the same inputs."""

import functools
import inspect

import numpy as np
import streamlit as st

from attnviz.figures.pitfall_view import panel_figure, shared_range
from attnviz.teach.pitfalls import PITFALLS
from attnviz.teach.text import pitfalls as text
from attnviz.ui import presenter, state
from attnviz.ui.panels import show_figure

state.get_scenario()
st.header(text.TITLE)
presenter.page_intro(text.INTRO)
# every title in view as radio buttons; in presenter mode one select box (the titles in large
# type filled the projected screen before any chart)
choose = st.selectbox if state.presenter() else functools.partial(st.radio, horizontal=True)
key = choose(text.CHOICE_LABEL, list(PITFALLS), format_func=lambda k: text.PITFALLS[k]["title"],
             key="pitfalls_choice")
info = text.PITFALLS[key]
case = PITFALLS[key]()

if not state.presenter():  # (presenter mode: the select box names it)
    st.subheader(info["title"])
st.caption(text.SOURCE.format(source=info["source"]))
st.warning(text.SYMPTOM.format(symptom=info["symptom"]))

if case.inputs:
    st.markdown(f"**{text.INPUTS}**")
    for col, panel in zip(st.columns(len(case.inputs)), case.inputs, strict=True):
        with col:
            st.caption(panel.name)
            show_figure(panel_figure(panel), key=f"pitfalls_fig_{key}_in_{panel.name}")

sides = ((text.WRONG, "wrong", case.wrong_function),
         (text.RIGHT, "right", case.right_function))
# side by side; in presenter mode one at a time across the page (in half a projected page
# the large code wrapped nearly every line)
boxes = st.tabs([label for label, _, _ in sides]) if state.presenter() else st.columns(
    2, gap="large")
for box, (label, _, function) in zip(boxes, sides, strict=True):
    with box:
        if not state.presenter():
            st.markdown(f"### {label}")
        st.code(inspect.getsource(function), language="python", wrap_lines=True)
for panel in case.wrong:  # the same matrices, side by side, on one colour scale
    pair = [case.panel("wrong", panel.name), case.panel("right", panel.name)]
    for col, (label, side, _), shown in zip(st.columns(2, gap="large"), sides, pair,
                                            strict=True):
        with col:
            st.markdown(f"**{text.PANEL_TITLE.format(side=label, matrix=panel.name)}**")
            show_figure(panel_figure(shown, **shared_range(pair)),
                        key=f"pitfalls_fig_{key}_{side}_{panel.name}")

if any(np.isnan(p.z).any() for p in case.wrong):
    st.caption(text.NAN)
st.info(info["look"])
