"""A drag slider's release sets its widget: ``panels.set_widget_from_slider`` and
``panels.set_widget_from_named_slider`` (the chart's ``on_slider`` callback; AppTest cannot
press a chart's slider, the browser tests do)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script():
    import streamlit as st

    from attnviz.ui.panels import set_widget_from_named_slider, set_widget_from_slider

    set_widget_from_slider("one", "width", range(1, 5))
    set_widget_from_named_slider("many", {"kv": ("kv_heads", [1, 2, 4], int),
                                          "q": ("q_heads", [1, 8], int),
                                          "": ("logit", [-2.5, 0.0], float)})
    st.write("ran")


def run_with(**state) -> AppTest:
    at = AppTest.from_function(_script)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def test_land_sets_the_widget_to_an_allowed_value_only():
    assert run_with(one={"slider": "3"}).session_state["width"] == 3
    for name in ("9", "x", None):
        at = run_with(one={"slider": name}, width=2)
        assert at.session_state["width"] == 2


def test_set_widget_from_named_slider_picks_the_setting_by_the_frames_name():
    at = run_with(many={"slider": "q:8"}, q_heads=1, kv_heads=4)
    assert (at.session_state["q_heads"], at.session_state["kv_heads"]) == (8, 4)
    at = run_with(many={"slider": "kv:2"}, q_heads=1, kv_heads=4)
    assert (at.session_state["q_heads"], at.session_state["kv_heads"]) == (1, 2)
    assert run_with(many={"slider": "-2.5"}, logit=0.0).session_state["logit"] == -2.5


def test_set_widget_from_named_slider_ignores_unknown_settings_and_values():
    for name in ("kv:3", "kv:two", "head:1", "q:", ":", "", "7"):
        at = run_with(many={"slider": name}, q_heads=1, kv_heads=4, logit=0.0)
        assert (at.session_state["q_heads"], at.session_state["kv_heads"],
                at.session_state["logit"]) == (1, 4, 0.0), name
    assert not run_with(many=None).exception
