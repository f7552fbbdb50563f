"""One source of truth: every control that changes the scenario writes it in
its change callback, which Streamlit runs before the script, so one run draws one scenario —
the page's caption, the sidebar's summary, the share link in the address bar and the charts.

Each test changes one control through AppTest (which runs the widget's callback as a server
does) and checks, in that same run, that all four show the scenario the session now holds. With
the scenario written during the run instead, whatever was drawn above the control (the lecture
view's title, the sidebar) showed the scenario the run started with.

Matrix editors (attnviz's grid) are not here: AppTest cannot deliver a component's change
event; tests/ui/test_edit_path.py plays it.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_z_by_key, open_page, server_like_pages, switch_to
from streamlit.testing.v1 import AppTest

from attnviz.io import scenario_io
from attnviz.scenarios.presets import EDITED_FROM, preset_of, with_true_title
from attnviz.scenarios.scenario import Scenario, run_scenario
from attnviz.teach.text import common as text
from attnviz.ui import state


@pytest.fixture(autouse=True)
def _server_like_pages():
    """app.py as a server runs it after its first run (tests/pages/conftest.py does the same)."""
    with server_like_pages():
        yield


_WRITES: list[bool] = []  # per scenario write: True when made during the frame's script run


@pytest.fixture(autouse=True)
def _writes(monkeypatch):
    """Record where each write of the scenario happens: in a change callback (before the
    script, outside app.py's frame) or during the script run (``state.frame_run``)."""
    real = state.set_scenario

    def recorded(*args, **kwargs):
        _WRITES.append(bool(getattr(state._FRAME, "running", False)))
        return real(*args, **kwargs)

    monkeypatch.setattr(state, "set_scenario", recorded)
    _WRITES.clear()
    yield
    _WRITES.clear()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def _scenario(at: AppTest) -> Scenario:
    return at.session_state[state.SCENARIO]


def _vkey(at: AppTest, name: str) -> str:
    return f"{name}_v{at.session_state[state.EDITOR_VERSION]}"


def _plain(markdown: str) -> str:
    """Text as the reader sees it (the captions escape Markdown with backslashes)."""
    return markdown.replace("\\", "")


def _caption_agrees(at: AppTest, sc: Scenario) -> None:
    """The page's scenario caption names the scenario as it now is: "Edited from <preset>"
    once edited, the preset's title (and description) while it is the preset."""
    shown = with_true_title(sc)
    full = " — ".join(t for t in (shown.title, shown.description) if t)
    lines = [_plain(c.value).split("  \n")[0] for c in at.main.caption]
    naming = [line for line in lines  # the captions that start with the scenario's title
              if sc.title and line.startswith((sc.title, EDITED_FROM.format(title=sc.title)))]
    assert naming, (sc.title, lines)
    for line in naming:  # the full caption, or the lecture view's title line
        assert line in (full, shown.title), (line, full)


def _sidebar_agrees(at: AppTest, sc: Scenario) -> None:
    """The sidebar's summary: the title as the caption says it, variant, tokens, width."""
    shown = with_true_title(sc)
    texts = [t.value for t in at.sidebar.text]
    summary = text.SIDEBAR_SCENARIO.format(variant=sc.spec.name,
                                           tokens=text.count(sc.t, "token"), d_model=sc.d_model)
    assert any(t.startswith(summary) for t in texts), (summary, texts)
    if shown.title:
        assert shown.title in texts, (shown.title, texts)


def _link_agrees(at: AppTest, sc: Scenario) -> None:
    """The address bar holds the scenario's link (a reload or a bookmark restores it)."""
    param = at.query_params.get(scenario_io.LINK_PARAM)
    param = param[0] if isinstance(param, list) else param
    assert param == scenario_io.to_link_param(with_true_title(sc))


def _chart_agrees(at: AppTest, sc: Scenario, key: str, *, heads: int | None = None) -> None:
    """The chart ``key`` shows head 0's weights of the scenario as it now is."""
    assert key in chart_keys(at), (key, chart_keys(at))
    expected = run_scenario(sc, heads=heads).attention.head(0).weights
    np.testing.assert_array_equal(chart_z_by_key(at, key), expected)


def _no_write_during_the_run() -> None:
    """Since the last check the scenario was written by callbacks only, never by the script
    run (whose parts drawn above the writing widget would show the scenario before it)."""
    during, _WRITES[:] = [w for w in _WRITES if w], []
    assert not during, f"{len(during)} write(s) of the scenario during the script run"


def agree(at: AppTest, chart: str, *, heads: int | None = None) -> Scenario:
    """Caption, sidebar, link and chart of the last run all show the session's scenario, and
    no part of the run wrote it."""
    _ok(at)
    _no_write_during_the_run()
    sc = _scenario(at)
    _caption_agrees(at, sc)
    _sidebar_agrees(at, sc)
    _link_agrees(at, sc)
    _chart_agrees(at, sc, chart, heads=heads)
    return sc


def _on(page: str, preset: str | None = None, **kw) -> AppTest:
    """``page`` with preset ``preset`` loaded through the sidebar (None: the default one)."""
    at = open_page()
    if preset is not None:
        at.selectbox(key=state.PRESET_CHOICE).set_value(preset)
        at.button(key="sidebar_load_preset").click().run()
        _ok(at)
    _ok(switch_to(at, page, **kw))
    _WRITES.clear()  # the setting up: the tests check the change that follows
    return at


FULL = "playground_fig_weights"  # the Playground's full view ("Every matrix"), one head


def _edited(at: AppTest, before: Scenario) -> Scenario:
    """The scenario now, asserted to differ from ``before`` and to be no preset any more."""
    sc = _scenario(at)
    assert preset_of(sc) is None and preset_of(before) is not None
    return sc


# ---------------------------------------------------------------------------------------------
# The Playground's settings (attnviz/ui/controls.py), full view
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, widget, value, field", [
    ("playground_temperature", "slider", 2.5, "temperature"),
    ("playground_scale_mode", "radio", "none", "scale_mode"),
    ("playground_use_pe", "toggle", True, "use_pe"),
], ids=["temperature", "scale_mode", "use_pe"])
def test_a_setting_of_the_full_view_is_in_every_part_of_its_run(name, widget, value, field):
    at = _on("playground")
    before = agree(at, FULL)
    getattr(at, widget)(key=_vkey(at, name)).set_value(value).run()
    sc = agree(at, FULL)
    assert getattr(sc, field) == value != getattr(before, field)
    _edited(at, before)


def test_the_custom_scale_is_in_every_part_of_its_run():
    at = _on("playground")
    at.radio(key=_vkey(at, "playground_scale_mode")).set_value("custom").run()
    before = agree(at, FULL)
    at.number_input(key=_vkey(at, "playground_custom_scale")).set_value(0.25).run()
    sc = agree(at, FULL)
    assert (sc.scale_mode, sc.custom_scale) == ("custom", 0.25) != (before.scale_mode,
                                                                   before.custom_scale)


def test_the_variant_is_in_every_part_of_its_run():
    at = _on("playground")
    before = _scenario(at)
    at.selectbox(key=_vkey(at, "playground_variant")).set_value("causal").run()
    sc = agree(at, FULL)
    assert sc.variant == "causal" != before.variant
    _edited(at, before)


def test_a_variant_setting_is_in_every_part_of_its_run():
    at = _on("playground", "capped_at_2")
    before = agree(at, FULL)
    at.number_input(key=_vkey(at, "playground_param_softcap")).set_value(7.5).run()
    sc = agree(at, FULL)
    assert sc.param("softcap") == 7.5 != before.param("softcap")
    _edited(at, before)


def test_the_head_count_is_in_every_part_of_its_run():
    at = _on("playground", "seed_004_two_heads")
    before = _scenario(at)
    at.select_slider(key=_vkey(at, "playground_n_heads")).set_value(1).run()
    sc = agree(at, "playground_fig_head_0")
    assert sc.n_heads == 1 != before.n_heads
    _edited(at, before)


def test_the_tokens_are_in_every_part_of_their_run():
    at = _on("playground")
    at.text_input(key="playground_tokens").set_value("a b c d e").run()
    sc = agree(at, FULL)
    assert sc.tokens == ("a", "b", "c", "d", "e")


def test_the_sizes_are_in_every_part_of_their_run():
    at = _on("playground")
    before = _scenario(at)
    at.number_input(key=_vkey(at, "playground_d_model")).set_value(before.d_model + 2).run()
    sc = agree(at, FULL)
    assert sc.d_model == before.d_model + 2
    _edited(at, before)


def test_regenerated_weights_are_in_every_part_of_their_run():
    at = _on("playground")
    before = _scenario(at)
    at.number_input(key="playground_init_seed").set_value(7).run()
    at.button(key="playground_regenerate").click().run()
    sc = agree(at, FULL)
    assert not np.array_equal(sc.w_q, before.w_q)
    _edited(at, before)


def test_a_preset_loaded_in_the_sidebar_is_in_every_part_of_its_run():
    at = _on("playground")
    at.selectbox(key=state.PRESET_CHOICE).set_value("cat_sat")
    at.button(key="sidebar_load_preset").click().run()
    sc = agree(at, FULL)
    assert preset_of(sc) == "cat_sat"


# ---------------------------------------------------------------------------------------------
# The lecture view: its title line is drawn above every control
# ---------------------------------------------------------------------------------------------

LECTURE_SCORES = "playground_fig_scores_slot_1"  # the scaled scores


@pytest.mark.parametrize("name, widget, value, field", [
    ("playground_temperature", "slider", 0.5, "temperature"),
    ("playground_scale_mode", "radio", "none", "scale_mode"),
    ("playground_variant", "selectbox", "causal", "variant"),
], ids=["temperature", "scale_mode", "variant"])
def test_a_setting_of_the_lecture_view_is_in_its_title_line_of_the_same_run(name, widget, value,
                                                                           field):
    """The scores focus: the scale above the charts, the variant beside it; τ's slider (in
    the "All" tab's settings: the weights chart holds it in the lecture view)."""
    at = _on("playground", focus="all" if field == "temperature" else "scores")
    before = _scenario(at)
    getattr(at, widget)(key=_vkey(at, name)).set_value(value).run()
    _ok(at)
    sc = _edited(at, before)
    assert getattr(sc, field) == value != getattr(before, field)
    _no_write_during_the_run()
    _caption_agrees(at, sc)
    _sidebar_agrees(at, sc)
    _link_agrees(at, sc)
    head = run_scenario(sc).attention.head(0)
    scaled = "playground_fig_scaled" if field == "temperature" else LECTURE_SCORES  # "All"'s
    np.testing.assert_array_equal(chart_z_by_key(at, scaled), head.scaled)


# ---------------------------------------------------------------------------------------------
# Page-level settings
# ---------------------------------------------------------------------------------------------

def test_the_multi_head_pages_head_count_is_in_every_part_of_its_run():
    at = _on("multi_head", "seed_004_two_heads")
    before = _scenario(at)
    at.number_input(key="multi_head_n_heads").set_value(1).run()
    sc = agree(at, "multi_head_fig_head_0", heads=1)
    assert sc.n_heads == 1 != before.n_heads
    _edited(at, before)


def test_the_mask_kind_is_in_every_part_of_its_run():
    at = _on("masks")
    before = _scenario(at)
    at.radio(key="masks_kind").set_value("causal").run()
    sc = agree(at, "masks_fig_weights")
    assert sc.mask_kind == "causal" != before.mask_kind
    _edited(at, before)



# ---------------------------------------------------------------------------------------------
# The mask editor's ticks (st.data_editor): written by its change callback
# ---------------------------------------------------------------------------------------------

def _mask_script():
    """A custom mask's editor; on a run with ``play`` set, the editor's change callback runs
    first, as Streamlit runs it before the script (AppTest does not deliver a data editor's
    change event: the test sets the editor's state and plays the callback)."""
    from dataclasses import replace

    import numpy as np
    import streamlit as st

    from attnviz.ui import mask_editor, state

    sc = state.get_scenario()
    if sc.custom_mask is None:
        state.set_scenario(replace(sc, mask_kind="custom",
                                   custom_mask=np.ones((sc.t, sc.t), dtype=bool)))
    labels = [str(i) for i in range(state.get_scenario().t)]
    if st.session_state.pop("play", False):
        mask_editor._write_ticks("masks_custom_v0", "custom_mask", tuple(labels))
    sc = state.get_scenario()  # the page reads the scenario after the callbacks
    st.session_state["page_saw"] = sc.custom_mask.copy()
    st.session_state["got"] = mask_editor.mask_editor(
        sc.custom_mask, key="masks_custom", row_labels=labels, col_labels=labels,
        field="custom_mask")


def test_a_tick_is_in_the_scenario_the_page_reads_before_its_editor_is_drawn():
    at = _ok(AppTest.from_function(_mask_script).run())
    assert at.session_state["page_saw"].all()
    at.session_state["masks_custom_v0"] = {"edited_rows": {1: {"0": False}, 2: {"3": False}},
                                           "added_rows": [], "deleted_rows": []}
    at.session_state["play"] = True
    _ok(at.run())
    expected = np.ones_like(at.session_state["page_saw"])
    expected[1, 0] = expected[2, 3] = False
    np.testing.assert_array_equal(at.session_state["page_saw"], expected)  # before drawing
    np.testing.assert_array_equal(_scenario(at).custom_mask, expected)
    np.testing.assert_array_equal(at.session_state["got"], expected)
