"""The standalone HTML report: plotly.js inlined once, no CDN, user text escaped."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from attnviz.figures import heatmap
from attnviz.figures.report import html_report, html_report_bytes


@pytest.fixture(scope="module")
def figures():
    w = np.array([[0.25, 0.75], [0.5, 0.5]])
    return [("Attention weights", heatmap(w, ["0:a", "1:b"], ["0:a", "1:b"], kind="weights")),
            go.Figure(go.Heatmap(z=np.eye(2)), layout=dict(title=dict(text="identity"))),
            ("Third <b>bold</b>", "a caption & more", heatmap(np.ones((1, 3))))]


@pytest.fixture(scope="module")
def report(figures):
    return html_report(figures, title="Report <script>alert(1)</script>",
                       notes=["scenario: <img src=x onerror=alert(1)>"])


# The report is ~4.8 MB: every check computes a bool first, so a failure never makes pytest
# diff the whole document.

def test_plotly_bundle_is_inlined_once(report):
    copies = report.count(get_plotlyjs()[:200])
    versions = report.count("plotly.js v")
    size = len(report)
    assert copies == 1 and versions == 1
    assert size > 3_000_000  # the ~4.8 MB bundle is inside


def test_no_cdn_or_remote_script_anywhere(report):
    cdn = "cdn.plot.ly" in report
    remote_script = re.search(r"<script[^>]*\bsrc\s*=", report) is not None
    remote_urls = re.findall(r"https?://[^\s\"'<>)]+\.js\b", report)
    assert not cdn
    assert not remote_script
    assert remote_urls == []


def test_every_figure_is_drawn_with_its_data(report):
    counts = (report.count("Plotly.newPlot("), report.count('class="plotly-graph-div"'))
    assert counts == (3, 3)
    payloads = re.findall(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*\{", report, re.S)
    first = json.loads(payloads[0])
    z = first[0]["z"]
    if isinstance(z, dict):  # plotly's typed-array encoding
        import base64
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(2, 2)
    np.testing.assert_array_equal(np.asarray(z, dtype=float), [[0.25, 0.75], [0.5, 0.5]])


def test_headings_and_captions(report):
    found = ["<h2>Attention weights</h2>" in report,
             "<h2>identity</h2>" in report,  # a bare figure takes its layout title
             '<p class="caption">a caption &amp; more</p>' in report]
    assert found == [True, True, True]


def test_user_text_is_escaped(report):
    raw_script = "<script>alert(1)</script>" in report
    raw_img = "<img src=x" in report
    escaped = ["&lt;script&gt;alert(1)&lt;/script&gt;" in report,
               "<h2>Third &lt;b&gt;bold&lt;/b&gt;</h2>" in report,
               "&lt;img src=x onerror=alert(1)&gt;" in report]
    assert not raw_script and not raw_img
    assert escaped == [True, True, True]


def test_labels_inside_the_figure_json_cannot_close_the_script():
    fig = heatmap(np.eye(2), ["</script><script>alert(1)</script>", "b"], ["a", "b"])
    text = html_report([fig])
    injected = "</script><script>alert(1)" in text
    assert not injected


def test_document_shape_and_bytes(figures):
    data = html_report_bytes(figures[:1], title="t")
    text = data.decode("utf-8")
    shape = (text.startswith("<!DOCTYPE html>"), '<meta charset="utf-8">' in text,
             text.rstrip().endswith("</html>"))
    assert shape == (True, True, True)


def test_empty_report_and_bad_items():
    text = html_report([], title="nothing")
    assert "This page shows no figures." in text
    assert "Plotly.newPlot" not in text  # small document: no bundle
    with pytest.raises(ValueError, match=r"figure 0 must be a go.Figure or a \(title, figure\)"):
        html_report(["not a figure"])
    with pytest.raises(ValueError, match=r"figure 0 must be a plotly go.Figure"):
        html_report([("title", "not a figure")])
