"""Fixtures for real-browser tests: a Streamlit server, the system Chromium, a page per test.

Every test under tests/browser gets the ``browser`` marker (deselect with ``-m "not browser"``)
and runs after all other tests of the session (see ``pytest_collection_modifyitems``).

- ``app_server`` (session): ``streamlit run`` on a free loopback port, yields the base URL.
  The app is ``$ATTNVIZ_APP`` if set, else <repo>/app.py; the server runs with the repo root as
  its working directory and logs to tests/artifacts/streamlit-server.log.
- ``browser`` (session): headless /usr/bin/chromium through Playwright's sync API.
- ``context`` (session): one shared 1366x768 context (the first load of the 4.6 MB Plotly
  bundle costs seconds; later pages reuse the cache); waits time out after ``TIMEOUT_MS``.
- ``page`` (function): a new page in that context, closed after the test, with ``track_reruns``
  on (needed by ``expect_rerun`` and ``edit_cell``); when the test fails a screenshot is saved
  as tests/artifacts/screenshots/FAILED-<test>.png.

Recipe and timings: /work/shared/BROWSER.md. Helpers for waiting and reading plots: helpers.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO_ROOT,
    TIMEOUT_MS,
    VIEWPORT,
    screenshot,
    track_reruns,
)
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from attnviz.classroom import free_port, healthy

HERE = Path(__file__).resolve().parent
SERVER_LOG = ARTIFACTS / "streamlit-server.log"
HEALTH_TIMEOUT_S = 60.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test collected from this directory ``browser`` and run them last.

    Last, because while sync Playwright is open (session-scoped ``browser``) its event loop counts
    as running in the main thread, so a later ``asyncio.run()`` in any other test would fail.
    """
    here = [item for item in items if Path(item.path).resolve().is_relative_to(HERE)]
    for item in here:
        item.add_marker(pytest.mark.browser)
    ids = {id(item) for item in here}
    items[:] = [item for item in items if id(item) not in ids] + here


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    """Keep each phase's report on the item so ``page`` can tell whether its test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def app_server() -> Iterator[str]:
    """Run the app with ``streamlit run`` on a free port; yield ``http://127.0.0.1:PORT``."""
    app = Path(os.environ.get("ATTNVIZ_APP", REPO_ROOT / "app.py")).resolve()
    if not app.is_file():
        pytest.fail(f"Streamlit app not found: {app} (set ATTNVIZ_APP to override)")
    port = free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.headless=true",
        "--browser.gatherUsageStats=false",
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--server.fileWatcherType=none",
    ]  # fmt: skip
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = SERVER_LOG.open("w")
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        cmd, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while not healthy(f"{base_url}/_stcore/health"):
            if proc.poll() is not None or time.monotonic() > deadline:
                state = (
                    f"exited with code {proc.returncode}"
                    if proc.poll() is not None
                    else f"not healthy after {HEALTH_TIMEOUT_S:.0f} s"
                )
                pytest.fail(
                    f"Streamlit server for {app} {state}; log {SERVER_LOG}:\n"
                    + SERVER_LOG.read_text()[-4000:],
                    pytrace=False,
                )
            time.sleep(0.1)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless system Chromium (never a Playwright-downloaded browser)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def context(browser: Browser) -> Iterator[BrowserContext]:
    """One browser context shared by the session, so the Plotly bundle is fetched once."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page for one test (reruns tracked for ``expect_rerun``); screenshot on failure."""
    page = context.new_page()
    track_reruns(page)
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed and not page.is_closed():
        try:
            screenshot(page, f"FAILED-{request.node.name}")
        except Exception as exc:  # a failed screenshot must not hide the test's own failure
            print(f"could not save failure screenshot: {exc}", file=sys.stderr)
    page.close()
