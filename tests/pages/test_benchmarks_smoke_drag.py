"""The drag benchmark (every chart with frames) and the grid-commit benchmark run in their
``--quick`` mode and write well-formed tables; a piece of test_benchmarks_smoke.py (why: there).
"""

from __future__ import annotations

import sys

import pytest
from test_benchmarks_smoke import BENCH, _run, tables

pytestmark = pytest.mark.bench


@pytest.mark.browser
def test_drag_benchmark_quick(tmp_path):
    section = _run("bench_drag.py", tmp_path)
    (table,) = tables(section["markdown"])
    sys.path.insert(0, str(BENCH))
    try:
        import bench_drag
    finally:
        sys.path.remove(str(BENCH))
    assert [r[0] for r in table[1:]] == [name for name, *_ in bench_drag.CHARTS]
    assert len(table) - 1 >= 7  # every chart with frames, the Learn playback among them
    assert all(int(r[1]) > 0 and float(r[2]) > 0 for r in table[1:])


@pytest.mark.browser
def test_grid_commit_benchmark_quick(tmp_path):
    section = _run("bench_grid_commit.py", tmp_path)
    (table,) = tables(section["markdown"])
    assert table[0][0] == "grid"
    assert [r[0] for r in table[1:]] == ["st.data_editor", "input grid"]
    for row in section["rows"]:  # each way's typed edit reached the app
        assert row["runs"] == 1 and row["worst"] >= row["enter_to_app"] > 0
