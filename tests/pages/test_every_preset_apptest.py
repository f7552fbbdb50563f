"""Every preset on every page, every tab shown: no exception, every chart a figure with data
(the server's half of tests/browser/test_every_preset.py's walk, which draws each preset in the
browser on one page; here each preset meets every page).

One session a preset, loaded with the sidebar's Load button as a class does; then every page
by ``switch_to`` (lazy expanders opened) and each tab of its lazy tab sets. Gradients states
its loss, or says why it cannot (it did in the browser's every-preset test on Gradients).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest_helpers import APP, chart_specs, decode, lazy_tab_sets, open_page, switch_to

from attnviz.scenarios.fingerprint import fingerprint
from attnviz.scenarios.presets import PRESETS
from attnviz.teach.text import gradients as gradients_text
from attnviz.ui import state

PAGES = [p for p in re.findall(r'st\.Page\("pages/(\w+)\.py"', Path(APP).read_text())
         if p != "home"]
LOSS_SAID = gradients_text.LOSS_VALUE.split("{")[0]  # "Loss L = "
NO_BACKWARD = gradients_text.NO_BACKWARD.split("{")[0]  # "Gradients are not available for "


def texts(at) -> list[str]:
    """Every markdown, caption, info and warning text of the run."""
    return [e.value for kind in (at.markdown, at.caption, at.info, at.warning) for e in kind]


def assert_charts_have_data(at, where: str) -> int:
    """Every chart of the run is a figure whose traces carry data; returns how many."""
    specs = chart_specs(at)
    for spec in specs:
        assert spec["data"], f"{where}: a chart without a trace"
        for trace in spec["data"]:
            if trace.get("type") == "table":  # a table's data are its columns of cells
                columns = (trace.get("cells") or {}).get("values") or []
                assert columns and all(len(c) for c in columns), (where, "table")
                continue
            values = [trace.get(axis) for axis in ("z", "y", "x", "r") if trace.get(axis)
                      is not None]
            assert values and all(decode(v).size for v in values), (where, trace.get("type"))
    return len(specs)


def each_other_tab(at) -> list[str]:
    """Rerun the page with each tab but the first of its lazy tab sets selected, each run checked
    for exceptions; returns the labels visited. The page's own run drew every first tab (a new
    session opens each page once), so no run goes back to it as ``each_weight_tab`` does."""
    visited = []
    for key, labels in lazy_tab_sets(at).items():
        for label in labels[1:]:
            at.session_state[key] = label
            at.run()
            assert not at.exception, (key, label, [e.message for e in at.exception])
            visited.append(label)
    return visited


def test_every_page_is_walked():
    assert len(PAGES) >= 18 and "gradients" in PAGES and "modern" in PAGES


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_page_draws_the_preset_on_every_tab(key):
    at = open_page("home")
    at.selectbox(key="sidebar_preset").set_value(key)
    at.button(key="sidebar_load_preset").click().run()
    assert not at.exception, [e.message for e in at.exception]
    loaded = fingerprint(PRESETS[key].build())
    drawn = 0
    for page in PAGES:
        switch_to(at, page)
        assert not at.exception, (page, [e.message for e in at.exception])
        at.selectbox(key="sidebar_preset")  # the shared sidebar (app.py's frame) is there
        drawn += assert_charts_have_data(at, page)
        for tab in each_other_tab(at):  # (each run checked for exceptions there)
            drawn += assert_charts_have_data(at, f"{page} / {tab}")
        if page == "gradients":
            said = texts(at)
            assert any(LOSS_SAID in t for t in said) or any(NO_BACKWARD in t for t in said), (
                key, said)
        assert fingerprint(at.session_state[state.SCENARIO]) == loaded, page
    assert drawn >= len(PAGES), (key, drawn)


# nothing to show until a file or link is given (Save & share), or until a model of the models
# folder has generated (Generate)
NO_CHART_AT_START = {"share", "generate"}


def test_every_page_opens_with_a_chart():
    """Every page but Save & share and Generate opens with a chart for the scenario a session
    starts with (how the browser draws each: tests/browser/test_presenter_pages.py's walks and
    test_every_preset.py's)."""
    at = open_page("home")
    for page in PAGES:
        switch_to(at, page)
        assert not at.exception, (page, [e.message for e in at.exception])
        if page not in NO_CHART_AT_START:
            assert chart_specs(at), page
