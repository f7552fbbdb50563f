"""The in-place chart component (attnviz.ui.plotly_view): plotly.js served offline by this
server from the installed plotly package (nothing written at run time), the exact numbers in
the figure it sends, and st.plotly_chart where it cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest
import streamlit.components.v1 as components
from apptest_helpers import chart_keys, chart_spec, chart_specs, charts, decode, open_page

from attnviz.figures import heatmap
from attnviz.ui import plotly_view
from attnviz.ui.panels import chart_config

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def plotly_js_present(monkeypatch):
    """Let one test say whether the installed plotly package has ``plotly.min.js``."""
    def set_to(present: bool) -> None:
        monkeypatch.setattr(plotly_view, "PLOTLY_JS", plotly_view.PLOTLY_JS if present
                            else plotly_view.PLOTLY_JS.with_name("missing.min.js"))

    return set_to


def test_plotly_js_is_served_from_the_installed_plotly_package():
    """The address names a folder Streamlit serves (a v1 component's path): plotly's own
    package_data, where the file the browser loads is plotly's own."""
    url = plotly_view.plotly_js_url()
    assert url == "component/attnviz.ui.plotly_view.plotly_js/plotly.min.js"
    served = components.declare_component(plotly_view.PLOTLY_JS_ROUTE,
                                          path=str(plotly_view.PLOTLY_JS.parent))
    assert Path(served.abspath, "plotly.min.js") == plotly_view.PLOTLY_JS
    assert plotly_view.PLOTLY_JS.stat().st_size > 1_000_000  # the whole bundle, not a stub
    assert json.loads(plotly_view.figure_json(heatmap(np.eye(2)), {}))["plotlyUrl"] == url


def test_drawing_charts_writes_nothing_into_the_source_tree():
    before = {p for p in REPO_ROOT.rglob("plotly*.js") if "artifacts" not in p.parts}
    at = open_page("playground")
    assert {e.type for e in charts(at)} == {"bidi_component"}
    after = {p for p in REPO_ROOT.rglob("plotly*.js") if "artifacts" not in p.parts}
    assert after == before
    assert not (REPO_ROOT / "static" / "plotly.min.js").exists()


def test_figure_json_keeps_every_float64_bit():
    z = np.array([[0.1 + 0.2, -1e-300], [np.pi, 1 / 3]])
    spec = json.loads(plotly_view.figure_json(heatmap(z, ["a", "b"], ["c", "d"]),
                                                 chart_config("x")))
    np.testing.assert_array_equal(decode(spec["data"][0]["z"]).astype(np.float64), z)
    assert spec["config"]["toImageButtonOptions"]["filename"] == "attnviz_x"


def test_pages_use_the_component_when_the_server_serves_plotly_js(plotly_js_present):
    plotly_js_present(True)
    at = open_page("playground")
    elements = charts(at)
    assert len(elements) == 10  # "All"'s (the other tabs are filled by a run that changes nothing)
    assert {e.type for e in elements} == {"bidi_component"}
    assert {e.proto.component_name for e in elements} == {plotly_view.NAME}


def test_without_plotly_js_the_same_figures_come_from_st_plotly_chart(plotly_js_present):
    plotly_js_present(True)
    component = chart_specs(open_page("playground"))
    plotly_js_present(False)
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


def test_clickable_charts_ask_the_component_for_clicks(plotly_js_present):
    """Clicks come back from the component too (Line view, Trace a cell); plain charts send
    none."""
    plotly_js_present(True)
    at = open_page("line_view")
    specs = dict(zip(chart_keys(at), chart_specs(at), strict=True))
    assert {e.type for e in charts(at)} == {"bidi_component"}
    assert specs["line_view_fig"]["clickable"] is True
    assert all(spec["clickable"] is False for key, spec in specs.items() if key != "line_view_fig")


def test_without_plotly_js_clicks_come_from_st_plotly_chart_selections(plotly_js_present):
    plotly_js_present(False)
    at = open_page("trace")
    chart = charts(at)[chart_keys(at).index("trace_fig_weights")]
    assert chart.type == "plotly_chart"
    assert list(chart.proto.selection_mode) and chart.proto.form_id == ""


def _figures():
    """One figure of every builder kind the pages show (heatmap with a click picker, line
    chart, grouped bars, line view, presenter-mode layout update)."""
    from attnviz.figures.charts import grouped_bars
    from attnviz.figures.clickable import add_cell_picker
    from attnviz.figures.line_view import head_view
    from attnviz.figures.lines import line_chart

    rng = np.random.default_rng(3)
    w = rng.dirichlet(np.ones(3), size=3)
    labels = ["a", "b", "<b>c</b>"]
    picked = heatmap(w, labels, labels, kind="weights")
    add_cell_picker(picked, w, labels, labels)
    bigger = heatmap(rng.standard_normal((2, 5)), list("vwxyz"), ["p", "q"])
    bigger.update_layout(font=dict(size=18), height=400)
    return [picked, bigger,
            line_chart(np.arange(4), {"d0": rng.standard_normal(4), "d1": np.ones(4)}),
            grouped_bars(["k0", "k1"], {"s": np.array([0.25, 0.75])}),
            head_view(w[None], labels, labels, heads=[0], focus=("query", 1))]


def _plain(value):
    """JSON with every Plotly typed array decoded to a plain list (for comparing)."""
    if isinstance(value, dict) and "bdata" in value:
        return decode(value).tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("index", range(5))
def test_figure_json_sends_plotlys_figure_with_the_exact_numbers(index):
    """The figure plotly's own serialisation gives (typed arrays decoded: same numbers, bit
    for bit), float arrays sent as typed arrays, and the figure left unchanged."""
    fig = _figures()[index]
    before = fig.to_plotly_json()
    text = plotly_view.figure_json(fig, {"k": 1}, clickable=index == 0)
    sent = json.loads(text)
    assert sent.pop("config") == {"k": 1} and sent.pop("clickable") is (index == 0)
    assert sent.pop("frames") == [] and sent.pop("sliderEvents") is False
    assert sent.pop("plotlyUrl") == plotly_view.plotly_js_url()
    assert _plain(sent) == _plain(json.loads(pio.to_json(before, validate=False)))
    assert '"bdata"' in text and "NaN" not in text
    assert _plain(json.loads(pio.to_json(fig.to_plotly_json(), validate=False))) == _plain(sent)


def test_figure_json_sends_the_frames_a_slider_steps_through():
    """The lecture view's τ slider: one frame per value with the exact weights."""
    from attnviz.figures.heatmap import with_slider

    zs = [np.array([[0.25, 0.75], [0.5, 0.5]]), np.array([[0.1, 0.9], [1 / 3, 2 / 3]])]
    fig = heatmap(zs[0], ["a", "b"], ["c", "d"], kind="weights")
    frames = with_slider(fig, zs, ["1", "2"], 0, prefix="τ = ", kind="weights")
    sent = json.loads(plotly_view.figure_json(fig, {}, frames=frames, slider_events=True))
    assert sent["sliderEvents"] is True and [f["name"] for f in sent["frames"]] == ["1", "2"]
    np.testing.assert_array_equal(decode(sent["frames"][1]["data"][0]["z"]), zs[1])
    assert sent["frames"][1]["data"][0]["text"] == [["0.100", "0.900"], ["0.333", "0.667"]]
    steps = sent["layout"]["sliders"][0]["steps"]
    assert [s["args"][0] for s in steps] == [["1"], ["2"]] and steps[0]["method"] == "animate"


def test_figure_json_falls_back_to_plotly_for_what_json_cannot_hold():
    fig = heatmap(np.eye(2), ["a", "b"], ["a", "b"])
    fig.update_layout(meta=[float("nan")])  # a NaN outside a numpy array
    sent = json.loads(plotly_view.figure_json(fig, {}))
    assert sent["layout"]["meta"] == [None]
    np.testing.assert_array_equal(decode(sent["data"][0]["z"]), np.eye(2))
