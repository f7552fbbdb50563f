"""No request leaves the machine: Streamlit's external-IP lookup, which a
WebSocket from a foreign origin sets off, goes to a closed port of this machine when the server
is started by ``python -m attnviz`` (``attnviz.offline``). Checked in a network namespace that
has loopback only, with a listener on that port (``offline_probe.py``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnviz import offline

PROBE = Path(__file__).with_name("offline_probe.py")
NAMESPACE = ["unshare", "--map-root-user", "--net"]


def _namespace_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*NAMESPACE, "true"], capture_output=True).returncode == 0


def probe(how: str) -> dict:
    """Run the probe for a server started by ``how`` ("attnviz" or "streamlit")."""
    if _namespace_works():
        prefix = NAMESPACE
    elif how == "attnviz" and os.geteuid() == 0:  # no namespace: the host's loopback, port 9
        prefix = []
    else:
        pytest.skip("needs a network namespace (unshare) or root for port 9")
    done = subprocess.run([*prefix, sys.executable, str(PROBE), how, "8765"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_server_env_points_every_proxy_at_the_black_hole():
    env = offline.server_env({"PATH": "/bin", "NO_PROXY": "*", "https_proxy": "http://corp:3128"})
    assert env["PATH"] == "/bin"
    assert all(env[name] == offline.BLACK_HOLE for name in offline.PROXY_VARIABLES)
    assert "NO_PROXY" not in env and "no_proxy" not in env


def test_the_ip_lookup_of_a_foreign_origin_websocket_stays_on_this_machine():
    seen = probe("attnviz")
    assert seen["websocket"].endswith("403 Forbidden")  # the foreign origin is refused
    # both of Streamlit's attempts (HTTP, then HTTPS) reached the closed local port instead
    assert seen["to_black_hole"] == ["GET http://checkip.amazonaws.com/ HTTP/1.1",
                                     "CONNECT checkip.amazonaws.com:443 HTTP/1.0"]


def test_without_the_launcher_the_lookup_heads_for_the_internet():
    """The control: plain ``streamlit run`` sends nothing to the local port — its lookup went
    for the internet (which this namespace has no route to)."""
    if not _namespace_works():
        pytest.skip("only safe in a network namespace without a route")
    seen = probe("streamlit")
    assert seen["websocket"].endswith("403 Forbidden") and seen["to_black_hole"] == []
