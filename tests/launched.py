"""A dashboard started by a test with ``python -m attnviz`` in a process group of its own
(``start_new_session=True``, stdout piped): waiting for it to answer, and stopping it.

Used by tests/pages/test_cli.py (the checkout's command) and tests/test_install.py (the
installed wheel's).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from attnviz.classroom import healthy


def wait_healthy(proc: subprocess.Popen, port: int, timeout: float) -> None:
    """Wait until the server on ``port`` answers its health URL; fail with the end of its
    output if it exits first, or if ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not healthy(f"http://127.0.0.1:{port}/_stcore/health"):
        assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
        assert time.monotonic() < deadline, f"not healthy after {timeout:.0f} s"
        time.sleep(0.2)


def stop_group(proc: subprocess.Popen, timeout: float = 15) -> None:
    """Stop the process group the test started (SIGTERM, then SIGKILL after ``timeout``)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
