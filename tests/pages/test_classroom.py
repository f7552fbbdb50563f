"""``python -m attnviz class``: two attnviz processes behind Debian's nginx, on loopback.

Sessions stick to one process (the cookie, which only nginx can issue), new browsers spread over
both, no response names a backend or lets another site frame the page, the simulated class
of benchmarks/ws_load.py runs through the proxy with every number checked, and stopping one
process leaves the other serving (nginx sends its browsers to the survivor).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from attnviz import classroom

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import ws_load  # noqa: E402 - the benchmark's simulated students


def get(opener, url: str, query: str = ""):
    """GET the app's page (with ``query`` appended when given); the response (status 200
    checked, body read)."""
    with opener.open(url + "/" + query, timeout=30) as response:
        assert response.status == 200
        response.read()
        return response


def backend(opener, served) -> str:
    """Which process served a GET of the app's page: its line in nginx's access log (no
    response names it). The request carries a query of its own, so its line is told apart from
    every other (nginx writes a line just after its response: an earlier GET's line may land
    after this one's, and CI once counted two new page lines)."""
    probe = f"?probe={uuid.uuid4().hex}"
    get(opener, served.url, probe)
    deadline = time.monotonic() + 10
    while not (logged := classroom.served_by(served.folder, f"GET /{probe} ")):
        assert time.monotonic() < deadline, "nginx logged no line for the request"
        time.sleep(0.01)
    assert len(logged) == 1
    return logged[0]


def node_cookie(response) -> str:
    """The value of the sticky cookie a response sets."""
    for header in response.headers.get_all("Set-Cookie") or []:
        name, _, rest = header.partition("=")
        if name == classroom.COOKIE:
            return rest.split(";", 1)[0]
    raise AssertionError("no attnviz_node cookie set")


def test_the_config_hashes_a_cookie_and_passes_websockets(tmp_path):
    conf = classroom.nginx_config([8601, 8602], address="0.0.0.0", port=9000, folder=tmp_path,
                                  secret="s")
    assert "hash $attnviz_key consistent;" in conf
    assert "server 127.0.0.1:8601" in conf and "server 127.0.0.1:8602" in conf
    assert "listen 0.0.0.0:9000;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert f"pid {tmp_path}/nginx.pid;" in conf  # nothing written outside its folder


def test_the_config_issues_only_signed_cookies_and_names_no_backend(tmp_path):
    """No X-Attnviz-Backend header (it would tell every client the backends' ports), and only
    a cookie value nginx signed chooses a process."""
    conf = classroom.nginx_config([8601], address="127.0.0.1", port=9000, folder=tmp_path,
                                  secret="s")
    tokens = classroom.node_tokens("s")
    assert len(set(tokens)) == classroom.NODE_TOKENS and all(len(t) == 32 for t in tokens)
    assert tokens != classroom.node_tokens("t")  # keyed by the class's secret
    assert all(f"{t} {t};" in conf for t in tokens)
    assert "X-Attnviz-Backend" not in conf and "server_tokens off;" in conf
    assert "add_header X-Frame-Options SAMEORIGIN always;" in conf
    assert """add_header Content-Security-Policy "frame-ancestors 'self'" always;""" in conf


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    assert classroom.find_nginx(), "nginx is needed: tests/run_all.sh installs Debian's"
    with classroom.running_class(2, log_folder=tmp_path_factory.mktemp("class")) as server:
        yield server


def test_new_browsers_spread_and_each_one_sticks(served):
    fresh = {backend(urllib.request.build_opener(), served) for _ in range(16)}
    assert fresh == {f"127.0.0.1:{p}" for p in served.ports}
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    first = backend(browser, served)
    assert all(backend(browser, served) == first for _ in range(8))


async def _exceptions_after(ws, page: str, states) -> tuple[dict, list]:
    """Send one rerun of ``page`` with these widget states; (widget ids, exception elements)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.rerun_script.page_name = page
    back.rerun_script.widget_states.widgets.extend(states)
    await ws.send(back.SerializeToString())
    widgets, exceptions = {}, []
    while True:
        msg = ForwardMsg()
        msg.ParseFromString(await asyncio.wait_for(ws.recv(), 60))
        if msg.WhichOneof("type") == "delta" and \
                msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            sub = getattr(element, element.WhichOneof("type"))
            if element.WhichOneof("type") == "exception":
                exceptions.append(sub)
            elif getattr(sub, "id", ""):
                widgets[ws_load.user_key(sub.id)] = sub.id
        elif msg.WhichOneof("type") == "script_finished" and msg.script_finished == 0:
            return widgets, exceptions


def test_a_hand_made_widget_state_shows_no_server_path(served):
    """Streamlit parses a data editor's state before any page code runs: a hand-made one (row
    'abc') raises there. Through the class's proxy the page shows a redacted message."""
    import websockets

    async def attack():
        url = served.url.replace("http://", "ws://") + "/_stcore/stream"
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None,
                                      ping_interval=None) as ws:
            widgets, _ = await _exceptions_after(ws, "masks", [])
            custom = ws_load.widget_state(widgets["masks_kind"], string_value="custom")
            widgets, _ = await _exceptions_after(ws, "masks", [custom])
            bad = ws_load.widget_state(widgets["masks_custom_v0"],
                                       string_value='{"edited_rows": {"abc": {}}}')
            return (await _exceptions_after(ws, "masks", [custom, bad]))[1]

    exceptions = asyncio.run(attack())
    assert exceptions, "the malformed state no longer raises in Streamlit: the test is moot"
    for exc in exceptions:
        assert "redacted" in exc.message and not exc.stack_trace
        assert "site-packages" not in str(exc) and "/work" not in str(exc)
    for proc in served.backends:
        assert "--client.showErrorDetails=none" in proc.args


def test_responses_forbid_framing_and_name_no_backend(served):
    response = get(urllib.request.build_opener(), served.url)
    assert response.headers["X-Frame-Options"] == "SAMEORIGIN"
    assert response.headers["Content-Security-Policy"] == "frame-ancestors 'self'"
    assert "X-Attnviz-Backend" not in response.headers
    assert response.headers.get("Server", "nginx") == "nginx"  # no version
    assert not any(str(p) in str(response.headers) for p in served.ports)


def test_a_forged_cookie_is_ignored_and_replaced(served):
    """A value nginx did not issue does not choose a process: it is treated as no cookie (a
    new one is issued), while an issued one keeps its process."""
    issued = node_cookie(get(urllib.request.build_opener(), served.url))
    assert len(issued) == 32
    for forged in ("0" * 32, "a", issued[:-1] + ("0" if issued[-1] != "0" else "1"),
                   "../../etc", "x" * 4000):
        opener = urllib.request.build_opener()
        opener.addheaders = [("Cookie", f"{classroom.COOKIE}={forged}")]
        got = node_cookie(get(opener, served.url))
        assert got != forged and len(got) == 32
    sticky = urllib.request.build_opener()
    sticky.addheaders = [("Cookie", f"{classroom.COOKIE}={issued}")]
    first = backend(sticky, served)
    for _ in range(6):
        assert backend(sticky, served) == first
    assert node_cookie(get(sticky, served.url)) == issued


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
    first = backend(browser, served)
    victim = served.backends[[f"127.0.0.1:{p}" for p in served.ports].index(first)]
    victim.terminate()
    victim.wait(timeout=10)
    survivor = backend(browser, served)  # the same browser: served by the other process
    assert survivor != first and survivor.startswith("127.0.0.1:")
    row = ws_load.run_class(served.url, None, 3, 3.0, 0.5)
    assert row["edits"] > 0 and row["errors"] == 0 and row["edits_lost"] == 0, row


def test_a_student_uploads_a_scenario_through_the_proxy(served):
    """Save & share's uploader through nginx: the file reaches the student's own process (the
    sticky cookie goes with the upload) and the Playground then draws the uploaded scenario's
    numbers. Run as root, nginx's unprivileged worker once could not write the request body
    into the class's private folder and every upload answered HTTP 500."""
    from attnviz.io import scenario_io
    from attnviz.scenarios.presets import PRESETS

    uploaded = PRESETS["cat_sat"].build()  # six tokens: not the default's four
    student = ws_load.Student(0, uploaded)
    ws_url = served.url.replace("http://", "ws://") + "/_stcore/stream"
    asyncio.run(ws_load.student_session(student, ws_url, 2.0, 0.5, 0.0,
                                        scenario_io.to_json(uploaded).encode("utf-8"),
                                        served.url))
    assert student.errors == [] and student.lost == 0 and student.edits > 0, student


# --- model loading on a class's LAN -----------------------------------------------------------

@pytest.mark.parametrize("address, allow, off", [("0.0.0.0", False, True),
                                                 ("192.168.1.5", False, True),
                                                 ("0.0.0.0", True, False),
                                                 ("127.0.0.1", False, False)])
def test_the_class_processes_load_models_only_on_loopback_or_when_allowed(monkeypatch, address,
                                                                          allow, off):
    monkeypatch.delenv("ATTNVIZ_NO_MODELS", raising=False)
    env, line = classroom.backend_env({"PATH": "/bin"}, "s", address=address,
                                      allow_models=allow)
    assert (env.get("ATTNVIZ_NO_MODELS") == "1") is off
    assert env["STREAMLIT_SERVER_COOKIE_SECRET"] == "s"  # the rest as before
    assert line.startswith("Model loading is OFF" if off else "Model loading is ON")
    assert ("--allow-models" in line) is (address != "127.0.0.1")


class _FakeProxy:
    def poll(self):
        return 0  # "stopped": main returns at once


def test_the_class_command_passes_the_flag_and_prints_the_line(monkeypatch, capsys):
    """main() without nginx: running_class is replaced by a recorder that announces as the
    real one does."""
    seen = {}

    @contextlib.contextmanager
    def recorder(processes, *, address, port, allow_models, announce):
        seen.update(address=address, allow_models=allow_models)
        announce("attnviz: " + classroom.backend_env({}, "s", address=address,
                                                     allow_models=allow_models)[1])
        yield classroom.ClassServer("http://127.0.0.1:1", (), (), _FakeProxy(), Path("."))

    monkeypatch.setattr(classroom, "running_class", recorder)
    assert classroom.main(["--processes", "1", "--address", "0.0.0.0"]) == 0
    assert seen == {"address": "0.0.0.0", "allow_models": False}
    assert "attnviz: Model loading is OFF" in capsys.readouterr().out
    assert classroom.main(["--processes", "1", "--address", "0.0.0.0", "--allow-models"]) == 0
    assert seen["allow_models"] is True
    assert "attnviz: Model loading is ON for everyone" in capsys.readouterr().out
