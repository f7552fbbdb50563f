"""``python -m attnviz`` starts the dashboard with the repository's config (loopback only)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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
        deadline = time.monotonic() + 60
        body = ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=2) as r:
                    body = r.read().decode()
                    break
            except OSError:
                time.sleep(0.3)
        assert body == "ok", proc.stdout.read().decode() if proc.poll() is not None else ""
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the process group this test started
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    out = proc.stdout.read().decode()
    assert f"http://127.0.0.1:{port}" in out  # .streamlit/config.toml: address = 127.0.0.1


def test_class_refuses_zero_processes():
    proc = subprocess.run([sys.executable, "-m", "attnviz", "class", "--processes", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--processes must be at least 1" in proc.stderr
