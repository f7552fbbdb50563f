"""``python -m attnviz`` starts the dashboard with the repository's config (loopback only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from launched import stop_group, wait_healthy

import attnviz.__main__ as cli
from attnviz import launch
from attnviz.classroom import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_command_runs_the_repo_app():
    assert launch.dashboard_root() == ROOT  # a checkout runs its own app.py and pages/
    cmd = cli.command(["--server.port", "9999"], ROOT)
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert cmd[4] == str(ROOT / "app.py") and cmd[5:] == ["--server.port", "9999"]


def test_an_installed_copy_is_found_when_there_is_no_checkout(monkeypatch, tmp_path):
    copy = tmp_path / "attnviz" / "_dashboard"  # what a wheel carries (setup.py)
    (copy / "pages").mkdir(parents=True)
    (copy / "app.py").write_text("")
    monkeypatch.setattr(launch, "CANDIDATE_ROOTS", (tmp_path, copy))
    assert launch.dashboard_root() == copy


def test_missing_app_gives_a_message(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(launch, "CANDIDATE_ROOTS", (tmp_path, tmp_path / "attnviz" / "_dashboard"))
    assert launch.dashboard_root() is None
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


# --- model loading beyond loopback ------------------------------------------------------------

@pytest.fixture
def started(monkeypatch):
    """main()'s server command and environment, recorded instead of started."""
    runs = []
    monkeypatch.setattr(cli, "serve", lambda cmd, root, env: runs.append((cmd, env)) or 0)
    monkeypatch.delenv("ATTNVIZ_NO_MODELS", raising=False)
    monkeypatch.delenv("STREAMLIT_SERVER_ADDRESS", raising=False)
    return runs


@pytest.mark.parametrize("args", [["--server.address", "0.0.0.0"],
                                  ["--server.address=192.168.1.5", "--server.port", "8600"],
                                  ["--server.address", ""]])
def test_a_lan_start_runs_the_server_with_model_loading_off(started, capsys, args):
    assert cli.main(args) == 0
    (cmd, env), = started
    assert env["ATTNVIZ_NO_MODELS"] == "1"
    assert cmd[5:] == args  # the arguments reach Streamlit as given
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "Model loading is OFF" in out and "--allow-models" in out


def test_allow_models_turns_it_on_and_is_not_passed_to_streamlit(started, capsys):
    assert cli.main(["--server.address", "0.0.0.0", "--allow-models"]) == 0
    (cmd, env), = started
    assert "ATTNVIZ_NO_MODELS" not in env
    assert cmd[5:] == ["--server.address", "0.0.0.0"]
    out = capsys.readouterr().out
    assert "Model loading is ON for everyone" in out and "--allow-models" in out


@pytest.mark.parametrize("args", [[], ["--server.address", "127.0.0.1"],
                                  ["--server.address=localhost"], ["--server.address", "::1"]])
def test_a_loopback_start_keeps_model_loading_on(started, capsys, args):
    assert cli.main(args) == 0
    (_, env), = started
    assert "ATTNVIZ_NO_MODELS" not in env
    assert "Model loading is ON" in capsys.readouterr().out


def test_the_address_from_streamlits_environment_counts(started, monkeypatch, capsys):
    monkeypatch.setenv("STREAMLIT_SERVER_ADDRESS", "0.0.0.0")
    cli.main([])
    assert started[0][1]["ATTNVIZ_NO_MODELS"] == "1"
    cli.main(["--server.address", "127.0.0.1"])  # the command line wins over the environment
    assert "ATTNVIZ_NO_MODELS" not in started[1][1]


def test_no_models_in_the_environment_stays_off_and_is_said(started, monkeypatch, capsys):
    monkeypatch.setenv("ATTNVIZ_NO_MODELS", "1")
    cli.main(["--allow-models"])
    assert started[0][1]["ATTNVIZ_NO_MODELS"] == "1"
    assert "ATTNVIZ_NO_MODELS is set" in capsys.readouterr().out


def test_a_relative_models_folder_is_made_absolute_for_the_server(started, monkeypatch,
                                                                   tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNVIZ_MODELS_DIR", "models")
    cli.main([])  # the server runs from the dashboard's folder, not this one
    assert started[0][1]["ATTNVIZ_MODELS_DIR"] == str(tmp_path / "models")


def test_python_m_attnviz_on_the_lan_prints_that_models_are_off(tmp_path):
    """The line comes before the server replaces the process (flushed), in a real start."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ATTNVIZ_NO_MODELS"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnviz", "--server.address", "0.0.0.0",
         f"--server.port={port}", "--server.headless=true"],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(proc, port, timeout=60)
    finally:
        stop_group(proc)
    out = proc.stdout.read().decode()
    assert "attnviz: Model loading is OFF" in out, out
