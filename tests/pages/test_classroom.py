"""``python -m attnviz class``: two attnviz processes behind Debian's nginx, on loopback.

Sessions stick to one process (the cookie), new browsers spread over both, the simulated class
of benchmarks/ws_load.py runs through the proxy with every number checked, and stopping one
process leaves the other serving (nginx sends its browsers to the survivor).
"""

from __future__ import annotations

import http.cookiejar
import sys
import urllib.request
from pathlib import Path

import pytest

from attnviz import classroom

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import ws_load  # noqa: E402 - the benchmark's simulated students


def backend(opener, url: str) -> str:
    """Which process served a GET of the app's page (nginx names it in a header)."""
    with opener.open(url + "/", timeout=30) as response:
        assert response.status == 200
        return response.headers["X-Attnviz-Backend"]


def test_the_config_hashes_a_cookie_and_passes_websockets(tmp_path):
    conf = classroom.nginx_config([8601, 8602], address="0.0.0.0", port=9000, folder=tmp_path)
    assert "hash $attnviz_key consistent;" in conf
    assert "server 127.0.0.1:8601" in conf and "server 127.0.0.1:8602" in conf
    assert "listen 0.0.0.0:9000;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert f"pid {tmp_path}/nginx.pid;" in conf  # nothing written outside its folder


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    assert classroom.find_nginx(), "nginx is needed: tests/run_all.sh installs Debian's"
    with classroom.running_class(2, log_folder=tmp_path_factory.mktemp("class")) as server:
        yield server


def test_new_browsers_spread_and_each_one_sticks(served):
    fresh = {backend(urllib.request.build_opener(), served.url) for _ in range(16)}
    assert fresh == {f"127.0.0.1:{p}" for p in served.ports}
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    first = backend(browser, served.url)
    assert all(backend(browser, served.url) == first for _ in range(8))


def test_a_long_link_reaches_the_app_through_the_proxy(served):
    """A link well over attnviz's 8,000 characters still reaches Streamlit (whose page then
    says it is too long), instead of nginx's own 414 page (its default buffer is 8 KiB)."""
    opener = urllib.request.build_opener()
    with opener.open(f"{served.url}/playground?scenario={'A' * 40_000}", timeout=30) as response:
        assert response.status == 200 and b"<html" in response.read().lower()


def test_a_class_edits_through_the_proxy_and_survives_a_stopped_process(served):
    row = ws_load.run_class(served.url, None, 4, 3.0, 0.5)
    assert row["edits"] > 0 and row["errors"] == 0 and row["edits_lost"] == 0, row
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    first = backend(browser, served.url)
    victim = served.backends[[f"127.0.0.1:{p}" for p in served.ports].index(first)]
    victim.terminate()
    victim.wait(timeout=10)
    survivor = backend(browser, served.url)  # the same browser: served by the other process
    assert survivor != first and survivor.startswith("127.0.0.1:")
    row = ws_load.run_class(served.url, None, 3, 3.0, 0.5)
    assert row["edits"] > 0 and row["errors"] == 0 and row["edits_lost"] == 0, row
