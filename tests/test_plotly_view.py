"""The in-place chart component (attnviz.ui.plotly_view): plotly.js served offline by this
server, the exact numbers in the figure it sends, and st.plotly_chart where it cannot run."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from apptest_helpers import chart_keys, chart_spec, chart_specs, charts, decode, open_page
from streamlit import config

from attnviz.figures import heatmap
from attnviz.ui import plotly_view
from attnviz.ui.panels import chart_config


@pytest.fixture
def static_serving():
    """Set ``server.enableStaticServing`` for one test; restore it afterwards."""
    before = config.get_option("server.enableStaticServing")

    def set_to(value: bool) -> None:
        config.set_option("server.enableStaticServing", value)

    yield set_to
    config.set_option("server.enableStaticServing", before)


def test_plotly_js_is_copied_once_and_identical(tmp_path):
    static = tmp_path / "static"
    assert plotly_view.copy_plotly_js(static)
    target = static / "plotly.min.js"
    assert target.read_bytes() == plotly_view.PLOTLY_JS.read_bytes()
    stamp = target.stat().st_mtime_ns
    os.utime(target, ns=(stamp - 10**9, stamp - 10**9))
    assert plotly_view.copy_plotly_js(static)  # identical: left alone
    assert target.stat().st_mtime_ns == stamp - 10**9
    target.write_bytes(b"truncated")  # a damaged copy is replaced
    assert plotly_view.copy_plotly_js(static)
    assert target.read_bytes() == plotly_view.PLOTLY_JS.read_bytes()
    assert [p.name for p in static.iterdir()] == ["plotly.min.js"]  # no temporary file left


def test_unwritable_static_folder_says_so_instead_of_failing(tmp_path, caplog):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    assert plotly_view.copy_plotly_js(blocker / "static") is False
    assert "fall back to st.plotly_chart" in caplog.text


def test_figure_json_keeps_every_float64_bit():
    z = np.array([[0.1 + 0.2, -1e-300], [np.pi, 1 / 3]])
    spec = json.loads(plotly_view.figure_json(heatmap(z, ["a", "b"], ["c", "d"]),
                                                 chart_config("x")))
    np.testing.assert_array_equal(decode(spec["data"][0]["z"]).astype(np.float64), z)
    assert spec["config"]["toImageButtonOptions"]["filename"] == "attnviz_x"


def test_pages_use_the_component_when_the_server_serves_plotly_js(static_serving):
    static_serving(True)
    at = open_page("playground")
    elements = charts(at)
    assert len(elements) == 10
    assert {e.type for e in elements} == {"bidi_component"}
    assert {e.proto.component_name for e in elements} == {plotly_view.NAME}


def test_without_static_serving_the_same_figures_come_from_st_plotly_chart(static_serving):
    static_serving(True)
    component = chart_specs(open_page("playground"))
    static_serving(False)
    at = open_page("playground")
    assert {e.type for e in charts(at)} == {"plotly_chart"}
    fallback = [chart_spec(e) for e in charts(at)]
    assert len(fallback) == len(component) == 10
    for a, b in zip(component, fallback, strict=True):
        assert a["config"] == b["config"]
        assert a["layout"] == b["layout"]
        assert len(a["data"]) == len(b["data"])
        for ta, tb in zip(a["data"], b["data"], strict=True):
            np.testing.assert_array_equal(decode(ta["z"]), decode(tb["z"]))


def test_clickable_charts_ask_the_component_for_clicks(static_serving):
    """Clicks come back from the component too (Line view, Trace a cell); plain charts send
    none."""
    static_serving(True)
    at = open_page("line_view")
    specs = dict(zip(chart_keys(at), chart_specs(at), strict=True))
    assert {e.type for e in charts(at)} == {"bidi_component"}
    assert specs["lines_fig"]["clickable"] is True
    assert all(spec["clickable"] is False for key, spec in specs.items() if key != "lines_fig")


def test_without_static_serving_clicks_come_from_st_plotly_chart_selections(static_serving):
    static_serving(False)
    at = open_page("trace")
    chart = charts(at)[chart_keys(at).index("trace_fig_weights")]
    assert chart.type == "plotly_chart"
    assert list(chart.proto.selection_mode) and chart.proto.form_id == ""
