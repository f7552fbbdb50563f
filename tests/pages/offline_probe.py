"""Run inside a network namespace with loopback only (tests/pages/test_offline.py): start a
server, open a WebSocket from a foreign origin, and report what reached 127.0.0.1:9 (where
``attnviz.offline`` points every proxy variable). Prints one JSON line.

    python offline_probe.py attnviz|streamlit PORT
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """Bring ``lo`` up (a new network namespace starts with it down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def http_status(port: int, request: bytes, timeout: float = 15) -> str:
    """The status line of a raw HTTP request to 127.0.0.1:port (no proxy, no library)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        return s.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")


def main() -> None:
    how, port = sys.argv[1], int(sys.argv[2])
    loopback_up()
    hole = socket.socket()
    hole.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    hole.bind(("127.0.0.1", 9))
    hole.listen(8)
    hole.settimeout(0.2)
    args = [f"--server.port={port}", "--server.headless=true"]
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    if how == "attnviz":
        cmd = [sys.executable, "-m", "attnviz", *args]
    else:
        cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), *args]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    received: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if http_status(port, b"GET /_stcore/health HTTP/1.1\r\nHost: x\r\n\r\n",
                               timeout=1).endswith("200 OK"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("server did not start")
            time.sleep(0.2)
        status = http_status(port, (
            f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            "Origin: http://evil.example\r\n\r\n").encode())
        end = time.monotonic() + 3
        while time.monotonic() < end:
            try:
                conn, _ = hole.accept()
            except TimeoutError:
                continue
            conn.settimeout(1)
            try:
                received.append(conn.recv(200).split(b"\r\n", 1)[0].decode("latin-1"))
            except OSError:
                received.append("")
            conn.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(json.dumps({"websocket": status, "to_black_hole": received}))


if __name__ == "__main__":
    main()
