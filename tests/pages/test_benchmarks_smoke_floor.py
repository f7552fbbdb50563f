"""The floor benchmark (a bare app with 0 and 1 charts) and the load benchmark (two sessions)
run in their ``--quick`` mode and write well-formed tables. One of test_benchmarks_smoke.py's
pieces, which its docstring explains.
"""

from __future__ import annotations

import pytest
from test_benchmarks_smoke import _run, tables

pytestmark = pytest.mark.bench


@pytest.mark.browser
def test_floor_benchmark_quick(tmp_path):
    section = _run("bench_floor.py", tmp_path)
    (table,) = tables(section["markdown"])
    assert table[0][0] == "heatmaps changed by the slider"
    assert [r[:2] for r in table[1:]] == [["0", "n/a"], ["1", "component"],
                                          ["1", "st.plotly_chart"]]
    no_chart, *one_chart = section["rows"]
    assert no_chart["text"] > 0 and no_chart["redrawn"] is None
    for row in one_chart:  # the chart follows the value, either way
        assert row["redrawn"] >= row["text"] > 0


@pytest.mark.browser
def test_load_benchmark_quick(tmp_path):
    section = _run("load.py", tmp_path, "--time-limit", "400")
    (table,) = tables(section["markdown"])
    succeeded = sum(r["ok"] for r in section["data"]["results"])
    assert table[1] == ["sessions succeeded", f"{succeeded}/2"]
    assert section["data"]["sessions"] == 2
    assert section["data"]["rss_peak"] > 0
