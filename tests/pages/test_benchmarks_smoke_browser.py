"""The browser benchmark (a typed edit and a slider move on the Playground) and the backward
benchmark run in their ``--quick`` mode and write well-formed tables (split from
test_benchmarks_smoke.py: see its docstring).
"""

from __future__ import annotations

import pytest
from test_benchmarks_smoke import _run, tables

pytestmark = pytest.mark.bench


@pytest.mark.browser
def test_browser_benchmark_quick(tmp_path):
    section = _run("bench_browser.py", tmp_path, "--time-limit", "400")
    (table,) = tables(section["markdown"])
    assert table[0][:3] == ["page", "scenario", "edit"]
    rows = table[1:]  # the Playground, default and the small large scenario
    assert {r[1] for r in rows} == {"default", "t=16, 8 heads"}
    assert any(r[2].startswith("cell edit") for r in rows)
    assert any(r[2].startswith("slider move") for r in rows)
    assert not section["server_errors"]


@pytest.mark.browser
def test_backward_benchmark_quick(tmp_path):
    section = _run("bench_backward.py", tmp_path)
    (table,) = tables(section["markdown"])
    assert [r[0] for r in table[1:]][:3] == ["forward alone (run_scenario)",
                                              "forward + loss + backward (gradients)", "ratio"]
    assert all(r[1] and r[1] != "nan ms" for r in table[1:])
