"""Helpers for real-browser tests of the Streamlit app (Playwright sync API, system Chromium).

The recipe behind them is /work/shared/BROWSER.md: Debian's /usr/bin/chromium driven through
Playwright's ``executable_path`` (``playwright install`` is never used), one browser and context
per test session, and explicit waits on Streamlit's run state and on Plotly's ``_fullData``.

Import them in a test module under tests/browser with ``from helpers import ...``; the fixtures
(``app_server``, ``browser``, ``context``, ``page``) live in conftest.py beside this file.

Waiting for a rerun. The ``stApp`` attribute ``data-test-script-state`` is not enough after a
widget action: on a busy machine the rerun may start later than any fixed pause, and a short run
can go "running" -> "notRunning" inside one React commit, so the attribute never changes at all.
A first run may also end in ``st.rerun()`` and show "notRunning" in between. ``expect_rerun``
therefore watches the app's websocket for the server's ``script_finished`` message that is not
"early for rerun" (``track_reruns``, which the ``page`` fixture calls), then waits for the page
to settle. ``goto_page`` and ``edit_cell`` use it.

``wait_for_app_run`` alone (after an action not wrapped in ``expect_rerun``) waits until
``INPUT_SETTLE_MS`` after the page's last input event (a click, a key, a typed or committed
value: a debounced widget sends its value that long after), not a fixed pause at every call,
then for every rerun request the page has sent (``track_reruns`` watches them too) to finish,
then for the page to be idle and drawn.

Waiting for a chart. ``wait_for_plots`` waits until charts have drawn at all; ``wait_for_charts``
until every visible chart has its final drawing: the chart component's drawn flag
(``data-sized="1"``, attnviz/ui/plotly_view.js), at its column's width, its height fitted where
it stands now. ``wait_for_slider`` waits until a chart's slider shows a step and its frame is
drawn. No test waits a fixed time for any of these; ``expect_no_rerun`` is the one bounded
wait, for a check that nothing happens.

Scrolling. A page entered from the sidebar is held at its top for up to 2 s
(attnviz/ui/page_top.js) until the person scrolls with the wheel, types, touches or presses in
the page: a scroll made by a script in that time (``scroll_into_view_if_needed``) can be undone
before the test presses where the element was. Before pressing with ``page.mouse`` at a
measured place, scroll with ``wheel_into_view``, as a person does.
"""

from __future__ import annotations

import re
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from playwright.sync_api import Error, Locator, Page, WebSocket, expect
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"

CHROMIUM = "/usr/bin/chromium"
# BROWSER.md flags; --disable-dev-shm-usage keeps Chromium alive where /dev/shm is small (Docker).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1366, "height": 768}
# Default for every wait (ms), also set on the shared context. Generous: on a loaded 2-core
# machine the first load of a page took up to 26 s.
TIMEOUT_MS = 60_000

_APP_CONNECTED = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
_APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
_SKELETON = "[data-testid='stSkeleton']"
_FILL_ASK = ".st-key-playground_fill_tabs"  # attnviz/ui/playground_view.py FILL_KEY
_EARLY = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
# After an action, a rerun may start this long after the page's last input event (Streamlit's
# slider sends its value 200 ms after the last key; st.data_editor 150 ms): the fixed pause
# every wait_for_app_run used to make, now counted from the input and made only when needed.
INPUT_SETTLE_MS = 250


class _Runs:
    """What the page's websocket said: the statuses of the script runs that finished, and
    whether a rerun request was sent after the last run that finished for good."""

    def __init__(self) -> None:
        self.finished: list[int] = []
        self.pending = False


_runs: weakref.WeakKeyDictionary[Page, _Runs] = weakref.WeakKeyDictionary()
# the statuses alone (tests count the runs a drag makes)
_finished_runs: weakref.WeakKeyDictionary[Page, list[int]] = weakref.WeakKeyDictionary()

# page time of the last input event (installed by track_reruns before the page opens)
_INPUT_WATCH = """(() => {
    const seen = window.__attnvizInput = {last: performance.now()};
    for (const type of ["pointerdown", "pointerup", "keydown", "keyup", "input", "change",
                        "focusout", "wheel"]) {
        window.addEventListener(type, () => { seen.last = performance.now(); }, true);
    }
})()"""
# after two frames (the messages received so far rendered), the ms left until INPUT_SETTLE_MS
# after the last input event, or null when the page has no input watch
_SETTLE_LEFT = """settle => new Promise(done => {
    const left = () => { const seen = window.__attnvizInput;
        done(seen ? Math.max(0, settle - (performance.now() - seen.last)) : null); };
    requestAnimationFrame(() => requestAnimationFrame(left));
    setTimeout(left, 100);  // (no frames in a hidden page)
})"""


_TWO_FRAMES = """() => new Promise(done => {
    requestAnimationFrame(() => requestAnimationFrame(done));
    setTimeout(done, 100);  // (no frames in a hidden page)
})"""


def _settle(page: Page) -> None:
    """Wait until a rerun the caller's last action asks for has been requested: until
    ``INPUT_SETTLE_MS`` after the page's last input event (200 ms on a page not watched).

    A wait for a state (a debounced widget's value sent): the pause is what is left of
    ``INPUT_SETTLE_MS`` since that event, none when it has passed."""
    try:
        left = page.evaluate(_SETTLE_LEFT, INPUT_SETTLE_MS)
    except Error:  # the page was navigating: its document is new
        left = None
    left = 200 if left is None else left
    if left > 0:
        page.wait_for_timeout(left)


def _wait_for_requests(page: Page, timeout: float) -> None:
    """Wait until every rerun the page has requested has finished (tracked pages only): a
    state, polled every 50 ms, the websocket's messages being Python-side events."""
    runs = _runs.get(page)
    deadline = time.monotonic() + timeout / 1000
    while runs is not None and runs.pending:
        if time.monotonic() > deadline:
            raise AssertionError(f"a requested rerun did not finish within {timeout / 1000:.0f} s")
        page.wait_for_timeout(50)  # also lets Playwright deliver the websocket events


def wait_for_app_run(page: Page, timeout: float = TIMEOUT_MS) -> None:
    """Wait until the app is connected, not running, and drawn (no loading skeletons left).

    Timeout in ms. After an action, wrap the action in ``expect_rerun`` instead: this alone can
    return before the triggered run starts when the page sends its request later than
    ``INPUT_SETTLE_MS`` after the action, or between a run and the ``st.rerun()`` it asks for.
    """
    _settle(page)  # let a rerun triggered just before this call be requested
    _wait_for_requests(page, timeout)
    page.locator(_APP_CONNECTED).wait_for(state="attached", timeout=timeout)
    page.locator(_APP_IDLE).wait_for(state="attached", timeout=timeout)
    # lazily loaded elements (Plotly, data editor) show a skeleton until their code has arrived
    page.locator(_SKELETON).first.wait_for(state="detached", timeout=timeout)
    # the Playground after an edit: the run its browser asks for once the open tab is drawn
    # (attnviz/ui/fill_tabs.js), which fills the hidden tabs
    if page.locator(_FILL_ASK).count():
        page.locator(_FILL_ASK).first.wait_for(state="detached", timeout=timeout)
        wait_for_app_run(page, timeout)


def track_reruns(page: Page) -> None:
    """Record the status of every script run that finishes on ``page`` from now on, whether a
    rerun request is waiting for its run, and the time of the page's last input event.

    Call it before the page opens the app (the ``page`` fixture does): it listens on websockets
    the page opens later.
    """
    runs = _runs.setdefault(page, _Runs())
    _finished_runs[page] = runs.finished
    page.add_init_script(_INPUT_WATCH)

    def on_frame(payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "script_finished":
                runs.finished.append(msg.script_finished)
                if msg.script_finished != _EARLY:
                    runs.pending = False

    def on_sent(payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            msg = BackMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "rerun_script":
                runs.pending = True

    def on_websocket(ws: WebSocket) -> None:
        if ws.url.endswith("/_stcore/stream"):
            ws.on("framereceived", on_frame)
            ws.on("framesent", on_sent)

    page.on("websocket", on_websocket)


@contextmanager
def expect_rerun(page: Page, timeout: float = TIMEOUT_MS) -> Iterator[None]:
    """Wait, after the block, for the script run the block's action triggers to finish and show
    (a state: the server's message that the run finished, polled every 50 ms).

    Use it around every widget action whose result the test reads next::

        with expect_rerun(page):
            page.get_by_role("slider").first.press("ArrowRight")
    """
    runs = _runs.get(page)
    if runs is None:
        raise RuntimeError("call track_reruns(page) before opening the app (the fixture does)")
    statuses = runs.finished
    seen = len(statuses)
    yield
    deadline = time.monotonic() + timeout / 1000
    while len(statuses) == seen or statuses[-1] == _EARLY:  # an early finish means a rerun follows
        if time.monotonic() > deadline:
            raise AssertionError(f"no script run finished within {timeout / 1000:.0f} s")
        page.wait_for_timeout(50)  # also lets Playwright deliver the websocket events
    wait_for_app_run(page, timeout)  # the page renders the messages it has received


# every visible chart inside `within` (a CSS selector; the page when null) has its final
# drawing, and at least `n` do: the drawn flag, drawn at the width it has now (unless the figure
# sets its own), its screen-fitted height measured where the chart stands now and for this
# window's height (what plotly_view.js's watchTop compares); on the whole page, also no chart
# drawing under way. A chart showing its "could not be drawn" message counts as final (the
# caller then fails with the message); one waiting to be scrolled into view (data-stale) keeps
# its last drawing.
_CHARTS_FINAL = """([n, within]) => {
  const root = within ? document.querySelector(within) : document;
  if (!root || (!within && (window.__attnvizDraws?.busy ?? 0) > 0)) return false;
  const pageTop = el => { let y = el.getBoundingClientRect().top;
    for (let p = el.parentElement; p; p = p.parentElement) y += p.scrollTop || 0;
    return y; };
  const failed = g => g.parentElement?.querySelector(':scope > .attnviz-chart-error');
  const final = g => failed(g) || g.dataset.stale === '1' || (
    g.dataset.sized === '1' && g._fullData?.length > 0 &&
    (g.__attnvizOwnWidth ||
     Math.abs((g._fullLayout?.width || 0) - g.getBoundingClientRect().width) <= 2) &&
    (g.__attnvizFitTop === undefined || (Math.abs(pageTop(g) - g.__attnvizFitTop) <= 2 &&
                                          window.innerHeight === g.__attnvizFitVh)));
  const charts = [...root.querySelectorAll('.js-plotly-plot')]
    .filter(g => g.getClientRects().length > 0);
  return charts.filter(g => g._fullData?.length > 0).length >= n && charts.every(final);
}"""
# Plotly's animation queue of the chart `sel` is empty, its slider `nth` stands on a step other
# than `before` (any step when null), and that step's frame is the one drawn
_SLIDER_SHOWN = """([sel, nth, before]) => {
  const g = document.querySelector(sel);
  const s = g?._fullLayout?.sliders?.[nth], t = g?._transitionData;
  if (!s || !t || s.active === before) return false;
  return !(t._frameQueue || []).length && !t._animationRaf && !t._currentFrame
    && (window.__attnvizDraws?.busy ?? 0) === 0;
}"""


def wait_for_charts(page: Page, n: int = 0, within: str | None = None,
                    timeout: float = TIMEOUT_MS) -> None:
    """Wait until the app is idle and every visible chart (inside the element ``within``, a CSS
    selector, or on the whole page) has its final drawing, and at least ``n`` have drawn.

    Final: the chart component's drawn flag (``data-sized="1"``: the newest figure drawn, its
    cell numbers and height final), drawn at the width the chart has now, its screen-fitted
    height measured where it stands now. Use it where a test measures what is drawn (sizes,
    fonts, pixels) or reads a chart after a tab is shown. Fails at once when a chart shows its
    "could not be drawn" message instead.
    """
    wait_for_app_run(page, timeout)
    page.wait_for_function(_CHARTS_FINAL, arg=[n, within], timeout=timeout)
    failed = page.locator(f"{within or ''} .attnviz-chart-error".strip())
    if failed.count():
        raise AssertionError(f"a chart on {page.url} was not drawn: {failed.first.inner_text()}")


def painted(page: Page) -> None:
    """Wait until the page has laid out and painted what it was last given (two animation
    frames): after a change of the window's size, before a screenshot."""
    page.evaluate(_TWO_FRAMES)


def wheel_into_view(page: Page, target: Locator, timeout: float = TIMEOUT_MS) -> None:
    """Scroll the page with the mouse wheel, over ``target``'s column, until ``target`` is
    wholly in the window: as a person scrolls. A page entered from the sidebar is held at its
    top for a moment (attnviz/ui/page_top.js) against any scroll but a person's (the wheel, a
    key, a touch, a press in the page), so a scroll made by a script just after entering it
    can be undone before the test acts where it scrolled to."""
    height = page.viewport_size["height"]
    deadline = time.monotonic() + timeout / 1000
    target.wait_for(state="visible", timeout=timeout)
    while True:
        box = target.bounding_box()
        if box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the wheel did not bring {target} into the window: {box}")
        if box is not None:
            page.mouse.move(box["x"] + box["width"] / 2, height / 2)
            page.mouse.wheel(0, box["y"] + box["height"] / 2 - height / 2)
        painted(page)  # the scroll applied (a smooth scroll goes on: measured again)


def wait_for_hover(page: Page, xy: tuple[float, float] | list[float],
                   timeout: float = TIMEOUT_MS) -> None:
    """Wait until the chart under the point ``xy`` (page pixels) holds Plotly's hover data
    there: a click on it then counts as a click on that point."""
    page.wait_for_function(
        """([x, y]) => { const g = document.elementFromPoint(x, y)?.closest('.js-plotly-plot');
                         return Boolean(g && g._hoverdata && g._hoverdata.length); }""",
        arg=list(xy), timeout=timeout)


def wait_for_chart(page: Page, key: str, timeout: float = TIMEOUT_MS) -> None:
    """``wait_for_charts`` for the one chart with Streamlit key ``key``."""
    wait_for_charts(page, 1, f".st-key-{key}", timeout)


def slider_step(page: Page, chart: str, nth: int = 0) -> int:
    """The step (index) the ``nth`` slider of the chart ``chart`` (a CSS selector of its
    ``.js-plotly-plot``) stands on."""
    return page.evaluate("([s, n]) => document.querySelector(s)._fullLayout.sliders[n].active",
                         [chart, nth])


def wait_for_slider(page: Page, chart: str, nth: int = 0, moved_from: int | None = None,
                    timeout: float = TIMEOUT_MS) -> int:
    """Wait until the ``nth`` slider of the chart ``chart`` (a CSS selector of its
    ``.js-plotly-plot``) stands on a step (one other than ``moved_from`` when given) and
    Plotly has drawn that step's frame (its animation queue is empty); return the step."""
    page.wait_for_function(_SLIDER_SHOWN, arg=[chart, nth, moved_from], timeout=timeout)
    return slider_step(page, chart, nth)


def rerun_pending(page: Page) -> bool:
    """True while a script run the page asked for has not finished (tracked pages only)."""
    runs = _runs.get(page)
    return runs is not None and runs.pending


def expect_no_rerun(page: Page, within_ms: float = 500) -> None:
    """Fail if the page asks for a script run or one finishes within ``within_ms`` from now.

    The one bounded wait of these helpers: it checks that nothing happens (a key that must
    send nothing), which no state can announce. ``within_ms`` is counted after the page's last
    input event has settled (``INPUT_SETTLE_MS``), which covers a debounced widget's send.
    """
    runs = _runs.get(page)
    if runs is None:
        raise RuntimeError("call track_reruns(page) before opening the app (the fixture does)")
    seen = len(runs.finished)
    _settle(page)
    deadline = time.monotonic() + within_ms / 1000
    while time.monotonic() < deadline:
        assert not runs.pending and len(runs.finished) == seen, "the page ran the script"
        page.wait_for_timeout(50)  # a poll: lets Playwright deliver the websocket events
    assert not runs.pending and len(runs.finished) == seen, "the page ran the script"


def wait_for_plots(page: Page, n: int = 1, timeout: float = TIMEOUT_MS) -> None:
    """Wait until at least ``n`` Plotly charts have drawn (their element carries ``_fullData``)."""
    page.wait_for_function(
        """n => {
            const drawn = Array.from(document.querySelectorAll('.js-plotly-plot'))
                .filter(g => g._fullData && g._fullData.length > 0);
            return drawn.length >= n;
        }""",
        arg=n,
        timeout=timeout,
    )


def plot_z(page: Page, index: int = 0, trace: int = 0) -> list[list[float | None]]:
    """Return the z matrix the browser drew for the ``index``-th chart (document order).

    Values are floats, None where Plotly holds null (NaN stays ``float('nan')``).
    """
    rows = page.evaluate(
        """([index, trace]) => {
            const g = document.querySelectorAll('.js-plotly-plot')[index];
            if (!g || !g._fullData || !g._fullData[trace]) return null;
            return Array.from(g._fullData[trace].z, r => Array.from(r));
        }""",
        [index, trace],
    )
    if rows is None:
        raise AssertionError(f"no drawn Plotly chart {index} with trace {trace} on the page")
    return [[None if v is None else float(v) for v in row] for row in rows]


def chart_z(page: Page, key: str) -> np.ndarray:
    """The z matrix the browser drew for the chart with Streamlit key ``key`` (NaN where
    Plotly holds null)."""
    rows = page.evaluate(
        """key => {
            const g = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
            if (!g || !g._fullData || !g._fullData[0]) return null;
            return Array.from(g._fullData[0].z, r => Array.from(r));
        }""",
        key,
    )
    assert rows is not None, f"no drawn chart with key {key}"
    return np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float)

EDITOR = "table.attnviz-grid"  # a matrix editor's grid (attnviz/ui/grid.js)


def grid_cell(editor: Locator, row: int, col: int) -> Locator:
    """The ``<input>`` of body cell (``row``, ``col``) of a matrix editor's grid (0-based, the
    label column not counted); ``editor`` locates the grid or an element around it."""
    return editor.locator(f"input[data-r='{row}'][data-c='{col}']")


def edit_cell(page: Page, editor: Locator, row: int, col: int, text: str) -> None:
    """Type ``text`` into body cell (``row``, ``col``) of a matrix editor's grid with the
    keyboard (click, select what is there, type) and commit it with Enter.

    ``editor`` locates the grid (e.g. ``page.locator(EDITOR).first``) or its keyed container
    (``page.locator(".st-key-playground_x_v0")``). Returns once the rerun caused by the edit
    has finished (so the new value must differ).
    """
    wait_for_app_run(page)
    cell = grid_cell(editor, row, col)
    cell.click()
    cell.press("Control+a")
    page.keyboard.type(text)
    with expect_rerun(page):
        page.keyboard.press("Enter")


def type_into(page: Page, label: str, typed: str, timeout: float = TIMEOUT_MS) -> None:
    """Click the text box labelled ``label``, select what is there, type ``typed`` key by key,
    press Enter and wait for the run it triggers."""
    box = page.get_by_label(label, exact=True)
    box.click()
    box.press("Control+a")
    page.keyboard.type(typed)
    with expect_rerun(page, timeout):
        page.keyboard.press("Enter")


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` of the select box labelled ``label``, and wait for the run it
    triggers."""
    box = page.get_by_role("combobox", name=label)
    box.scroll_into_view_if_needed()
    box.click()
    with expect_rerun(page):
        page.get_by_role("option", name=option, exact=True).click()
    wait_for_app_run(page)


def assert_no_exception(page: Page) -> None:
    """Fail if Streamlit shows an exception box (``data-testid="stException"``) on the page."""
    boxes = page.locator("[data-testid='stException']")
    if boxes.count():
        raise AssertionError(f"Streamlit exception on {page.url}:\n{boxes.first.inner_text()}")


def goto_page(page: Page, base_url: str, url_path: str = "") -> None:
    """Open a ``st.navigation`` page (file stem or ``url_path``; "" = default) and wait for it.

    Waits through ``st.rerun()`` calls the first run makes (app.py does one per server process).
    """
    with expect_rerun(page):
        page.goto(f"{base_url.rstrip('/')}/{url_path.lstrip('/')}")


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page PNG as tests/artifacts/screenshots/NAME.png and return its path.

    Streamlit scrolls inside ``<main data-testid="stMain">``, not the document, so Playwright's
    ``full_page`` alone stops at the viewport: the viewport is stretched to the content's height
    for the shot, then restored.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    viewport = page.viewport_size
    height = page.evaluate(
        "() => document.querySelector(\"[data-testid='stMain']\")?.scrollHeight ?? 0"
    )
    if viewport is None or height <= viewport["height"]:
        page.screenshot(path=str(path), full_page=True)
        return path
    page.set_viewport_size({"width": viewport["width"], "height": height})
    try:
        # the taller window laid out and painted (a chart fitted to the screen is shot as the
        # real window had it, before its next fit to this one)
        page.evaluate(_TWO_FRAMES)
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(viewport)
    return path


def load_preset(page: Page, title: str) -> None:
    """Choose the classroom demo ``title`` in the sidebar's "Classroom demos" box and load it.

    The box's dropdown list is virtualised: an option far down the list is not in the DOM until
    scrolled to (and how far that is depends on the sidebar's height). Typing the title filters
    the list to that option, so it is always rendered and clickable.
    """
    box = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Classroom demos")
    box.click()
    box.fill(title)
    page.get_by_role("option", name=title, exact=True).click()
    expect(box).to_have_value(title)  # the box shows its choice as the input's value
    wait_for_app_run(page)
    with expect_rerun(page):
        page.get_by_test_id("stSidebar").get_by_role("button", name="Load preset").click()


def focus_tab(page: Page, label: str):
    """The Playground's focus tab ``label``."""
    return page.locator(".st-key-playground_focus [role='tab']").filter(
        has_text=re.compile(f"^{re.escape(label)}$")).first


def playground_focus(page: Page, label: str) -> None:
    """Open the Playground's focus tab ``label`` ("All": the full view with every matrix) and
    wait for the run the click starts (none when it is open already)."""
    wait_for_app_run(page)
    tab = focus_tab(page, label)
    if tab.get_attribute("aria-selected") == "true":
        return
    with expect_rerun(page):
        tab.click()
    wait_for_app_run(page)
