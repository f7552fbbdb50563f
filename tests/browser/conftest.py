"""Fixtures for real-browser tests: a Streamlit server, the system Chromium, a page per test.

Every test under tests/browser gets the ``browser`` marker (deselect with ``-m "not browser"``)
and runs after all other tests of the session (see ``pytest_collection_modifyitems``).

- ``app_server`` (session): ``streamlit run`` on a free loopback port, yields the base URL.
  The app is ``$ATTNVIZ_APP`` if set, else <repo>/app.py; the server runs with the repo root as
  its working directory and logs to tests/artifacts/streamlit-server.log.
- ``serve_app`` (session): the factory behind ``app_server``, for a test module that needs a
  server of its own with other environment variables (``with serve_app(env, log) as url``).
- ``models_server`` (module): for a module whose ``model`` fixture saves a model in a folder of
  its own: the app with that folder's parent as its models folder (``ATTNVIZ_MODELS_DIR``),
  models allowed and ``HF_HUB_OFFLINE=1``, logging to the module's ``SERVER_LOG``.
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
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
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

from benchmarks._common import streamlit_server

HERE = Path(__file__).resolve().parent
SERVER_LOG = ARTIFACTS / "streamlit-server.log"
HEALTH_TIMEOUT_S = 60.0


# Seconds each file's tests took (where and how measured: FILE_SECONDS_RUN).
# The browser tests run in this order, heaviest file first: tests/run_all.sh hands them out a
# file at a time with --no-loadscope-reorder, which keeps it (pytest-xdist's own order, most
# tests first, started the longest single tests last and left one process idle meanwhile). A
# file not listed counts as DEFAULT_FILE_SECONDS; a stale figure costs balance, never a test.
FILE_SECONDS_RUN = ("session 22, wall seconds per file at load 20-28 (several times CI's): the "
                    "files unchanged that session from a full browser-phase run on two "
                    "processes, the files whose tests it merged each run alone")
FILE_SECONDS: dict[str, float] = {
    "tests/browser/test_lecture.py": 283,
    "tests/browser/test_drag_window.py": 263,
    "tests/browser/test_guided_lecture.py": 260,
    "tests/browser/test_readable_words.py": 244,  # the 6- and 10-word walks: 162 + 82
    "tests/browser/test_wide_head.py": 207,
    "tests/browser/test_induction_page.py": 206,
    "tests/browser/test_focus_switch.py": 203,
    "tests/pages/test_benchmarks_smoke_browser.py": 185,
    "tests/browser/test_backward_pages.py": 179,
    "tests/pages/test_benchmarks_smoke_floor.py": 177,
    "tests/browser/test_presenter_sizes.py": 175,
    "tests/browser/test_grid.py": 161,
    "tests/browser/test_every_preset.py": 156,
    "tests/browser/test_presenter_pages.py": 151,
    "tests/browser/test_typing.py": 144,
    "tests/browser/test_presenter_row_browser.py": 144,
    "tests/browser/test_readable_lectures.py": 138,
    "tests/browser/test_real_head.py": 131,
    "tests/browser/test_share_link.py": 128,
    "tests/browser/test_readable_8_words.py": 115,
    "tests/browser/test_long_labels.py": 106,
    "tests/pages/test_benchmarks_smoke_drag.py": 102,
    "tests/browser/test_page_nav_browser.py": 99,
    "tests/browser/test_grid_width.py": 93,
    "tests/pages/test_benchmarks_smoke.py": 92,
    "tests/browser/test_generate_browser.py": 92,
    "tests/browser/test_presenter_row_title.py": 70,
    "tests/browser/test_security.py": 61,
    "tests/browser/test_colours_browser.py": 60,
    "tests/browser/test_presenter_selectors.py": 53,
    "tests/browser/test_trace_and_lines.py": 49,
    "tests/browser/test_pages.py": 46,
    "tests/browser/test_cell_sizes.py": 45,
    "tests/browser/test_chart_component.py": 39,
    "tests/browser/test_notebook_offline.py": 38,
    "tests/browser/test_gradients_loss_part.py": 37,
    "tests/browser/test_reload.py": 35,
    "tests/browser/test_model_view.py": 33,
    "tests/browser/test_clicks_lazy.py": 28,
    "tests/browser/test_speed_fragment.py": 23,
    "tests/browser/test_hand_made_states.py": 4,
}
DEFAULT_FILE_SECONDS = 30.0


def file_seconds(item: pytest.Item) -> float:
    """The measured seconds of the file ``item`` belongs to (``FILE_SECONDS``)."""
    path = Path(item.path).resolve().relative_to(REPO_ROOT).as_posix()
    return FILE_SECONDS.get(path, DEFAULT_FILE_SECONDS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test collected from this directory ``browser`` and run the browser tests
    (these and the ones marked elsewhere) last, the heaviest file first (``FILE_SECONDS``).

    Last, because while sync Playwright is open (session-scoped ``browser``) its event loop counts
    as running in the main thread, so a later ``asyncio.run()`` in any other test would fail.
    """
    for item in items:
        if Path(item.path).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.browser)
    browser = [item for item in items if item.get_closest_marker("browser")]
    ids = {id(item) for item in browser}
    browser.sort(key=file_seconds, reverse=True)  # stable: a file's tests keep their order
    items[:] = [item for item in items if id(item) not in ids] + browser


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    """Keep each phase's report on the item so ``page`` can tell whether its test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def serve_app() -> Callable[..., AbstractContextManager[str]]:
    """A factory: ``with serve_app(env, log) as base_url:`` runs the app (``streamlit run``,
    benchmarks/_common.py's ``streamlit_server``) with ``env`` added to this process's
    environment (a value None removes a variable), logging to ``log``; the test fails with the
    log's tail when the server does not start."""
    app = Path(os.environ.get("ATTNVIZ_APP", REPO_ROOT / "app.py")).resolve()
    if not app.is_file():
        pytest.fail(f"Streamlit app not found: {app} (set ATTNVIZ_APP to override)")

    @contextmanager
    def serve(env: dict[str, str | None] | None = None, log: Path = SERVER_LOG) -> Iterator[str]:
        with ExitStack() as stack:
            try:
                base_url, _proc = stack.enter_context(
                    streamlit_server(log, env=env, timeout=HEALTH_TIMEOUT_S, script=app))
            except RuntimeError as exc:
                pytest.fail(str(exc), pytrace=False)
            yield base_url

    return serve


@pytest.fixture(scope="module")
def models_server(serve_app, model: dict, request: pytest.FixtureRequest) -> Iterator[str]:
    """``streamlit run app.py`` with HF_HUB_OFFLINE=1, models allowed and the folder of the
    module's saved model (``model["folder"]``) in the models folder, logging to the module's
    ``SERVER_LOG``."""
    env = {"HF_HUB_OFFLINE": "1", "ATTNVIZ_NO_MODELS": None,
           "ATTNVIZ_MODELS_DIR": str(model["folder"].parent)}
    with serve_app(env, request.module.SERVER_LOG) as base:
        yield base


@pytest.fixture(scope="session")
def app_server(serve_app) -> Iterator[str]:
    """Run the app with ``streamlit run`` on a free port; yield ``http://127.0.0.1:PORT``."""
    with serve_app() as base_url:
        yield base_url


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
