"""``python -m attnviz`` starts the dashboard with the repository's config (loopback only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from launched import stop_group, wait_healthy

import attnviz.__main__ as cli
from attnviz.classroom import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_command_runs_the_repo_app():
    assert cli.dashboard_root() == ROOT  # a checkout runs its own app.py and pages/
    cmd = cli.command(["--server.port", "9999"], ROOT)
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert cmd[4] == str(ROOT / "app.py") and cmd[5:] == ["--server.port", "9999"]


def test_an_installed_copy_is_found_when_there_is_no_checkout(monkeypatch, tmp_path):
    copy = tmp_path / "attnviz" / "_dashboard"  # what a wheel carries (setup.py)
    (copy / "pages").mkdir(parents=True)
    (copy / "app.py").write_text("")
    monkeypatch.setattr(cli, "CANDIDATE_ROOTS", (tmp_path, copy))
    assert cli.dashboard_root() == copy


def test_missing_app_gives_a_message(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(cli, "CANDIDATE_ROOTS", (tmp_path, tmp_path / "attnviz" / "_dashboard"))
    assert cli.dashboard_root() is None
    assert cli.main([]) == 2
    assert "the dashboard (app.py and pages/) is in none of" in capsys.readouterr().err


def test_python_m_attnviz_serves_the_app_on_loopback(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnviz", f"--server.port={port}", "--server.headless=true"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(proc, port, timeout=60)
    finally:
        stop_group(proc)  # the process group this test started
    out = proc.stdout.read().decode()
    assert f"http://127.0.0.1:{port}" in out  # .streamlit/config.toml: address = 127.0.0.1


def test_class_refuses_zero_processes():
    proc = subprocess.run([sys.executable, "-m", "attnviz", "class", "--processes", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--processes must be at least 1" in proc.stderr
