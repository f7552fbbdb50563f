"""``python -m attnviz class``: several attnviz server processes behind nginx, for a lecture hall.

One Streamlit process runs every session's script on one core. For a class larger than one
process serves, this starts ``--processes`` servers (default: one per core) on free loopback
ports and Debian's nginx in front of them on ``--address``:``--port``:

* **sticky sessions**: a browser's first request is given a cookie (``attnviz_node``) whose
  value nginx hashes (``hash ... consistent``) to pick the process; every later request of that
  browser — the page, the WebSocket, file uploads — carries it and reaches the same process.
  A new browser has no cookie and is given one of :data:`NODE_TOKENS` tokens by its request
  id, so a class spreads evenly. The tokens are HMACs of the shared secret (:func:`node_tokens`)
  and nginx accepts no other value: a browser cannot forge a cookie to choose its process (a
  value nginx did not issue is ignored and replaced), and nothing in a response names the
  process or its port (they are in nginx's access log only).
* **framing**: every response carries ``X-Frame-Options: SAMEORIGIN`` and ``Content-Security-
  Policy: frame-ancestors 'self'`` (Streamlit 1.67 has no option for response headers), so
  another site cannot show the dashboard in a frame (clickjacking); ``server_tokens off``.
* **error details**: the processes run with ``client.showErrorDetails = "none"``: an error the
  app cannot catch (Streamlit's own parsing of a hand-made widget state, before any page code
  runs) shows a redacted message in the page, without the server's paths (the log has it all).
* **a process that stops** loses only its own sessions: nginx marks it failed and hashes the
  affected browsers onto the others (``proxy_next_upstream``); Streamlit's page reconnects by
  itself and starts a new session there (the scenario comes back if the link holds it).
* the processes share one cookie secret, so an XSRF cookie set by one is valid on the others.
* **model loading** is off when nginx listens beyond loopback (``--address 0.0.0.0`` or a LAN
  address): the processes run with ``ATTNVIZ_NO_MODELS=1`` unless the teacher passes
  ``--allow-models`` (:func:`backend_env`; the start prints which).

Nothing is downloaded; nginx comes from Debian (``sudo apt install nginx``). The proxy's files
(config, logs, pid) live in a private temporary folder, its temporary files (uploads on their
way) in a second one its worker can reach (:func:`temp_folder`); both are removed at exit.
Spreading over several machines is the same config with other machines' addresses in the
``upstream`` block (docs/classroom.md, "A large class").
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from attnviz import offline
from attnviz.io import models_dir
from attnviz.launch import dashboard_root, model_loading

NGINX_CANDIDATES = ("nginx", "/usr/sbin/nginx")
COOKIE = "attnviz_node"
NODE_TOKENS = 256  # the cookie values nginx issues (new browsers get one by request id)
START_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class ClassServer:
    """A running class: the proxy's URL, the backends' ports and their processes."""

    url: str
    ports: tuple[int, ...]
    backends: tuple[subprocess.Popen, ...]
    proxy: subprocess.Popen
    folder: Path


def node_tokens(secret: str, n: int = NODE_TOKENS) -> list[str]:
    """The cookie values nginx may issue and accepts: HMAC-SHA256 of ``node-<i>`` keyed with
    ``secret``, 32 hex digits each. Without the secret no one can make another."""
    key = secret.encode("utf-8")
    return [hmac.new(key, f"node-{i}".encode(), hashlib.sha256).hexdigest()[:32]
            for i in range(n)]


def nginx_config(ports: list[int] | tuple[int, ...], *, address: str, port: int,
                 folder: Path, secret: str | None = None, temp: Path | None = None) -> str:
    """The nginx configuration for the backends on 127.0.0.1:<ports>, listening on
    ``address``:``port``, with its pid file and logs inside ``folder`` and its temporary files
    (request bodies such as uploads, buffered responses) inside ``temp`` (default ``folder``;
    see :func:`temp_folder`); the sticky cookie's values are :func:`node_tokens` of ``secret``
    (a fresh random one when None)."""
    temp = temp or folder
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=30s;"
                        for p in ports)
    tokens = node_tokens(secret or secrets.token_hex(32))
    known = "\n".join(f"        {tok} {tok};" for tok in tokens)
    by_prefix = "\n".join(f"        {i:02x} {tok};" for i, tok in enumerate(tokens))
    return f"""worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    server_tokens off;
    # which process served each request: here only, never in a response
    log_format attnviz '$remote_addr [$time_local] "$request" $status $upstream_addr';
    access_log {folder}/access.log attnviz;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    client_max_body_size 6m;  # Streamlit refuses uploads over 5 MB with its own message
    # an over-long ?scenario= link reaches the app, which says so in the page (nginx's 8k
    # default would answer a link near attnviz's 8,000-character limit with its own 414)
    large_client_header_buffers 4 64k;
    map_hash_bucket_size 128;

    # the cookie counts only when nginx issued it (an HMAC of the class's secret): a browser
    # cannot choose its process by writing another value
    map $cookie_{COOKIE} $attnviz_known {{
        default "";
{known}
    }}
    # a new browser: one of the issued values, by the first two hex digits of its request id
    map $request_id $attnviz_prefix {{
        "~^(?<head>[0-9a-f]{{2}})" $head;
    }}
    map $attnviz_prefix $attnviz_new {{
{by_prefix}
    }}
    map $attnviz_known $attnviz_key {{
        ""      $attnviz_new;
        default $attnviz_known;
    }}
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ""      close;
    }}
    upstream attnviz {{
        hash $attnviz_key consistent;
{servers}
    }}
    server {{
        listen {address}:{port};
        location / {{
            proxy_pass http://attnviz;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 1h;
            proxy_next_upstream error timeout http_502 http_503;
            add_header Set-Cookie "{COOKIE}=$attnviz_key; Path=/; HttpOnly; SameSite=Lax" always;
            # no other site may show the dashboard in a frame (clickjacking); the app's own
            # frames (same origin) still may
            add_header X-Frame-Options SAMEORIGIN always;
            add_header Content-Security-Policy "frame-ancestors 'self'" always;
        }}
    }}
}}
"""


def temp_folder() -> Path:
    """A new folder for nginx's temporary files that its worker process can reach.

    Started as root, nginx runs its worker as an unprivileged user (``nobody``) and makes the
    temporary folders inside this one that user's own (mode 0700); the worker must be able to
    pass through this folder to reach them, so it is 0711: others may enter it but not list
    it, and nothing else is kept here (the configuration, the logs and the pid file stay in
    the class's private folder). In a folder only root could enter, every request with a body
    nginx stores on disk — a student's file upload — failed with "Permission denied" and
    answered HTTP 500 (tests/pages/test_classroom.py uploads through the proxy)."""
    temp = Path(tempfile.mkdtemp(prefix="attnviz-class-temp-"))
    temp.chmod(0o711)
    return temp


def served_by(folder: Path, request: str = "") -> list[str]:
    """The backend (``127.0.0.1:<port>``) of every request nginx logged, oldest first (the
    access log in the class's ``folder``: no response names it); only the requests whose
    line holds ``request`` (e.g. ``"GET / "``) when given."""
    log = folder / "access.log"
    lines = log.read_text().splitlines() if log.is_file() else []
    return [line.rsplit(" ", 1)[-1] for line in lines if request in line]


def find_nginx() -> str | None:
    """The nginx executable, or None."""
    for name in NGINX_CANDIDATES:
        found = shutil.which(name) or (name if os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    """True when a Streamlit health URL answers "ok" (within 2 s)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError):
        return False


def _wait_healthy(url: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start (exit code {proc.poll()})")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def backend_env(environ: Mapping[str, str], secret: str, *, address: str,
                allow_models: bool = False) -> tuple[dict[str, str], str]:
    """The environment of every server process of a class whose nginx listens on ``address``
    (kept offline, one cookie secret, model loading off beyond loopback unless
    ``allow_models``), and the line that says whether models load
    (:func:`attnviz.launch.model_loading`)."""
    env = {**offline.server_env(environ), "PYTHONUNBUFFERED": "1",
           "STREAMLIT_SERVER_COOKIE_SECRET": secret}
    return model_loading(env, address, allow_models)


@contextlib.contextmanager
def running_class(processes: int, *, address: str = "127.0.0.1", port: int | None = None,
                  log_folder: Path | None = None, allow_models: bool = False,
                  announce=None) -> Iterator[ClassServer]:
    """Start ``processes`` attnviz servers and nginx in front; stop them all on exit.
    ``announce`` (e.g. ``print``) is given the line that says whether models load."""
    nginx = find_nginx()
    if nginx is None:
        raise RuntimeError("nginx is not installed: sudo apt install nginx")
    root = dashboard_root()  # the checkout, or the copy an installed wheel carries
    if root is None:
        raise RuntimeError("the dashboard (app.py and pages/) is not installed")
    folder = Path(tempfile.mkdtemp(prefix="attnviz-class-"))
    temp = temp_folder()
    logs = log_folder or folder
    port = port or free_port()
    secret = secrets.token_hex(32)  # one secret for all: XSRF cookies and node tokens
    env, line = backend_env(os.environ, secret, address=address, allow_models=allow_models)
    if announce is not None:
        announce(f"attnviz: {line}")
    backends: list[subprocess.Popen] = []
    proxy = None
    try:
        ports = []
        for i in range(processes):
            ports.append(free_port())
            log = (logs / f"backend-{i}.log").open("w")
            backends.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(root / "app.py"),
                 "--server.headless=true", "--client.showErrorDetails=none",
                 "--server.address=127.0.0.1", f"--server.port={ports[-1]}"],
                cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT))
        for p, proc in zip(ports, backends, strict=True):
            _wait_healthy(f"http://127.0.0.1:{p}/_stcore/health", proc, f"attnviz on port {p}")
        conf = folder / "nginx.conf"
        conf.write_text(nginx_config(ports, address=address, port=port, folder=folder,
                                     secret=secret, temp=temp))
        proxy = subprocess.Popen([nginx, "-p", str(folder), "-c", str(conf), "-g",
                                  "daemon off;"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        host = "127.0.0.1" if address in ("0.0.0.0", "") else address
        url = f"http://{host}:{port}"
        _wait_healthy(f"{url}/_stcore/health", proxy, "nginx")
        yield ClassServer(url, tuple(ports), tuple(backends), proxy, folder)
    finally:
        for proc in ([proxy] if proxy else []) + backends:
            _stop(proc)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(temp, ignore_errors=True)


def main(argv: list[str]) -> int:
    """``python -m attnviz class [--processes N] [--address A] [--port P]``."""
    parser = argparse.ArgumentParser(prog="python -m attnviz class",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="attnviz server processes (default: one per core)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="where nginx listens: 0.0.0.0 lets students' browsers reach it")
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument(models_dir.ALLOW_MODELS_FLAG, action="store_true",
                        help="let Model view load the models folder's models even when nginx "
                        "listens beyond loopback (off there by default)")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        with running_class(args.processes, address=args.address, port=args.port,
                           allow_models=args.allow_models,
                           announce=lambda line: print(line, flush=True)) as served:
            print(f"attnviz for a class: {args.processes} processes behind nginx.\n"
                  f"Open {served.url} (students: this machine's LAN address, port {args.port})."
                  "\nStop with Ctrl+C.", flush=True)
            while not stop["now"] and served.proxy.poll() is None:
                time.sleep(0.5)
    except RuntimeError as err:
        print(f"attnviz: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
