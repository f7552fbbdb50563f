"""The benchmark scripts run (in their tiny ``--quick`` mode) and write well-formed tables.

Nothing here asserts on a timing: the figures belong in benchmarks/RESULTS.md, written by
``python benchmarks/run_all.py``. The browser and load scripts start a Streamlit server and the
system Chromium, so they carry the ``browser`` marker. Every test here carries the ``bench``
marker (about 60 s in all): the default ``python -m pytest`` leaves them out (pyproject.toml's
addopts), ``tests/run_all.sh`` (CI) runs them; ``python -m pytest -m bench`` runs them alone.

The browser scripts' tests but bench_clicks' live in test_benchmarks_smoke_browser.py, _drag.py
and _floor.py (they import ``_run`` and ``tables`` from here): the browser phase hands out a
file at a time, and one file of them all had kept one process busy for minutes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row (escaped pipes stay inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def tables(markdown: str) -> list[list[list[str]]]:
    """Every markdown table as rows of cells; fails if one is malformed."""
    found, current = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
            continue
        if current:
            assert len(current) >= 3, f"a table needs a header, a rule and a row: {current}"
            assert re.fullmatch(r"\|(---\|)+", current[1]), f"bad rule line {current[1]!r}"
            rows = [_cells(r) for r in current]
            width = len(rows[0])
            assert width >= 2
            assert all(len(r) == width for r in rows), f"ragged table: {current}"
            assert all(cell for cell in rows[0]) or rows[0][1] == "", "empty header"
            found.append([rows[0]] + rows[2:])
            current = []
    return found


def _run(script: str, tmp_path: Path, *extra: str, timeout: float = 600) -> dict:
    out = tmp_path / f"{Path(script).stem}.json"
    proc = subprocess.run([sys.executable, str(BENCH / script), "--quick", "--json", str(out),
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    section = json.loads(out.read_text())
    assert section["markdown"].strip() in proc.stdout  # printed as well as saved
    return _targets_checked(section)


def _targets_checked(section: dict) -> dict:
    """The section, its targets checked well-formed."""
    for t in section["targets"]:
        assert set(t) >= {"target", "measured", "ok"}
        assert t["ok"] in (True, False, None)
    return section


def test_table_parser_catches_ragged_tables():
    assert tables("| a | b |\n|---|---|\n| 1 | 2 |\n") == [[["a", "b"], ["1", "2"]]]
    assert tables("| a | b |\n|---|---|\n| 1 \\| 2 | 3 |\n")[0][1] == ["1 \\| 2", "3"]
    with pytest.raises(AssertionError):
        tables("| a | b |\n|---|---|\n| 1 |\n")


def check_core_section(section: dict) -> None:
    """The core benchmark's quick section: its three tables and the trace's figures."""
    _targets_checked(section)
    found = tables(section["markdown"])
    assert len(found) == 3  # trace, caching, BLAS threads
    header, *rows = found[0]
    assert header[:3] == ["BLAS threads", "dtype", "t"] and "trace / matmuls" in header
    sizes = {("float32", "16"), ("float32", "64"), ("float64", "16"), ("float64", "64")}
    assert {(r[1], r[2]) for r in rows} == sizes
    assert {r[0] for r in rows} >= {"1"}  # always also measured with one BLAS thread
    for r in section["rows"]:
        assert r["max_abs_diff"] < 1e-5  # the trace agrees with the naive reference
        assert r["trace"] > 0 and r["matmuls"] > 0


def test_induction_training_benchmark_quick(tmp_path):
    section = _run("bench_induction_train.py", tmp_path)
    (table,) = tables(section["markdown"])
    assert table[0] == ["positions", "steps / s", "one step (ms)"]
    assert [row[0] for row in table[1:]] == ["learned", "sinusoidal", "rope", "alibi", "none"]
    assert all(rate > 0 for rate in section["steps_per_second"].values())


def test_server_benchmark_quick(tmp_path):
    section = _run("bench_server.py", tmp_path)
    timing, payload = tables(section["markdown"])
    assert timing[0][0] == "page" and payload[0][0] == "page"
    scenarios = {row[1] for row in timing[1:]}
    assert "default" in scenarios and any(s.startswith("t=16") for s in scenarios)
    playground = [r for r in section["rows"] if r["path"] == "pages/playground.py"]
    assert playground and all(not r.get("error") for r in playground)
    assert all(r["charts"] > 0 and r["fig_bytes"] > 0 for r in playground)
    assert all(r["what"].startswith("editor playground_x") for r in playground)


def test_pages_are_read_from_app_py():
    sys.path.insert(0, str(BENCH))
    try:
        import _common
    finally:
        sys.path.remove(str(BENCH))
    pages = _common.pages()
    app = (ROOT / "app.py").read_text()
    assert pages and pages[0][0] == "pages/home.py"
    for path, title in pages:
        assert f'"{path}"' in app and (ROOT / path).is_file() and title


@pytest.mark.browser
def test_clicks_benchmark_quick(tmp_path):
    section = _run("bench_clicks.py", tmp_path)
    (table,) = tables(section["markdown"])
    assert table[0][:3] == ["action", "first repaint (ms)", "all repainted (ms)"]
    assert [r[0] for r in table[1:]] == ["sidebar click → Playground drawn", "focus switch",
                                         "focus switch after an edit", "Gradients' loss select",
                                         "Gradients' loss select, 256 tokens"]
    for name, runs in section["results"].items():  # every click repainted a chart
        assert len(runs) == 1 and all(t["last"] is not None and t["last"] > 0 for t in runs), name


def test_websocket_load_quick(tmp_path):
    """Two simulated students edit for a few seconds; every run is checked against the core."""
    section = _run("ws_load.py", tmp_path)
    (row,) = section["data"]["rows"]
    assert row["students"] == 2 and row["edits"] > 0
    assert row["errors"] == 0 and row["edits_lost"] == 0, row
    assert row["rss_peak_mib"] >= row["rss_idle_mib"] > 0
    (table,) = tables(section["markdown"])
    assert table[1][:4] == ["2", "1", "default", str(row["edits"])]


def test_websocket_load_uploads_a_scenario_at_the_limits(tmp_path):
    """Students load a 256-token scenario file through Save & share's uploader (the upload
    protocol of the browser: upload URL, PUT with the XSRF token, the uploader's state), then
    edit it on the Playground; every drawn number is checked (float32 above 128 × 128)."""
    section = _run("ws_load.py", tmp_path, "--scenario", "limits")
    (row,) = section["data"]["rows"]
    assert row["scenario"] == "limits (upload)" and row["edits"] > 0
    assert row["errors"] == 0 and row["edits_lost"] == 0, row


def test_run_all_writes_a_report_with_the_core_benchmark(tmp_path):
    """run_all.py runs the core benchmark (``--quick``) in its own process and writes the
    report; the section it saved is the core benchmark's own test (a run of its own would
    repeat the same script with the same arguments: ~7 s of CPU)."""
    report = tmp_path / "RESULTS.md"
    proc = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--quick", "--only",
                           "core", "--output", str(report)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = report.read_text()
    machine, targets, *rest = tables(text)
    assert machine[0][0] == "machine"
    assert {row[0] for row in machine[1:]} >= {"CPU", "cores", "RAM (GiB)", "Python",
                                               "numpy (BLAS)", "streamlit"}
    assert targets[0] == ["target", "measured", "verdict", "note"]
    assert len(targets) == 2  # quick sizes stop below t = 1024: no target, said so
    assert rest  # the core section's tables
    # the section run_all.py saved (benchmarks/results/, removed before the run), in the report
    section = json.loads((BENCH / "results" / "core-quick.json").read_text())
    assert section["markdown"].strip() in text
    check_core_section(section)
