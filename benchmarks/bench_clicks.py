"""Browser: where a lecturer clicks — sidebar click to the Playground drawn,
the Playground's focus switch (also the first one after an edit), Gradients' loss select
(Playwright, default scenario).

    python benchmarks/bench_clicks.py [--quick] [--runs N] [--json PATH] [--only focus,...]

Starts ``streamlit run app.py`` on a free loopback port and drives the system Chromium
(headless, 1366×768), one session. Each action is timed from the press of the mouse button
(the ``pointerdown`` event's time stamp, as the browser's Event Timing counts an input) to
*all repainted*: the last chart drawn once the script has finished and nothing has changed for
0.5 s (bench_browser.py's watcher), and to *first repaint*. Also reported: *all repainted*
from just before Playwright's ``click()`` call (the clock of the first version of this script:
it adds Playwright's own checks before the press, ~20-80 ms on this machine). Charts a page
draws lazily (Gradients: redrawn once scrolled into view) and that are out of view are not
redrawn, so not counted; *script run ended*: when the page's script run finished (the
browser's run state; a long page may still be sending charts out of view after the ones in
view are drawn). Targets (medians): sidebar click → every chart of the Playground
drawn ≤ 1.5 s; focus switch ≤ 300 ms (after an edit too); Gradients' loss select ≤ 300 ms,
≤ 1 s with 256 tokens (8 heads: ``_common.big_scenario``, loaded through Save & share).
"""

from __future__ import annotations

import os

import _common as c
from bench_browser import (
    _ARM,
    _WATCH,
    _edit,
    _load_scenario_file,
    _nav,
    _settle,
    _wait_drawn,
    _wait_idle,
)

from attnviz.teach.text import gradients as gradients_text
from attnviz.teach.text import playground as playground_text

BIG_LOSS = "Gradients' loss select, 256 tokens"
EDIT_SWITCH = "focus switch after an edit"
TARGETS_S = {"sidebar click → Playground drawn": 1.5, "focus switch": 0.3, EDIT_SWITCH: 0.3,
             "Gradients' loss select": 0.3, BIG_LOSS: 1.0}
ACTIONS = {"sidebar click → Playground drawn": "sidebar", "focus switch": "focus",
           EDIT_SWITCH: "edit-focus",
           "Gradients' loss select": "loss", BIG_LOSS: "big-loss"}  # --only's names

# The clock restarts at the next press of a mouse button after _arm (the event's time stamp);
# window.__bench.armedAt keeps the time _arm ran (just before Playwright's click call)
_PRESS = """
() => document.addEventListener('pointerdown', e => {
  const b = window.__bench;
  if (b && b.atPress) { b.atPress = false; b.t0 = e.timeStamp; }
}, true)
"""


def _arm(page) -> None:
    """Start the clock now; restart it at the next press of a mouse button."""
    page.evaluate(_ARM)
    page.evaluate("() => { const b = window.__bench; b.armedAt = b.t0; b.atPress = true; }")


def _timed(page) -> dict:
    """_settle's times (from the press), with ``last_from_call``: all repainted from _arm."""
    times = _settle(page)
    b = page.evaluate("() => ({t0: window.__bench.t0, armedAt: window.__bench.armedAt})")
    before_press = (b["t0"] - b["armedAt"]) / 1000
    times["press_after_call"] = before_press
    times["last_from_call"] = None if times["last"] is None else times["last"] + before_press
    return times


def _path(stem: str) -> str:
    return next(p for p, _ in c.pages() if c.url_path(p) == stem)


def sidebar_clicks(page, base: str, runs: int) -> list[dict]:
    """From Home, click the Playground in the sidebar; time every chart drawn."""
    times = []
    for _ in range(runs):
        _nav(page, base, _path("home"))
        _arm(page)
        page.locator(f"[data-testid='stSidebarNav'] a[href='{base}/playground']").first.click()
        times.append(_timed(page))
    return times


# armed before the click: window.__shown becomes the time (performance.now()) of the first
# animation frame at which the focus tab `label` is open, its panel displayed and every chart in
# it drawn with its newest figure (at least one)
_SHOWN = """
(label) => {
  window.__shown = null;
  const tick = () => {
    const box = document.querySelector('.st-key-playground_focus');
    const tab = box && [...box.querySelectorAll('[role=tab]')]
      .find(t => t.textContent.trim() === label);
    const panel = box && [...box.querySelectorAll('[role=tabpanel]')]
      .find(p => p.getClientRects().length);
    const charts = panel ? [...panel.querySelectorAll('.attnviz-chart')] : [];
    if (tab && tab.getAttribute('aria-selected') === 'true' && charts.length &&
        charts.every(d => d._fullLayout && !d.dataset.stale && !d.__attnvizPending)) {
      window.__shown = performance.now();
    } else {
      requestAnimationFrame(tick);
    }
  };
  requestAnimationFrame(tick);
}
"""


def focus_switches(page, base: str, runs: int) -> list[dict]:
    """On the Playground: Scores, Q K V, All and back to Weights, in turn. A focus is a tab
    whose charts come with every run: a switch may draw no chart at all (a tab drawn before),
    so its time is the later of *all repainted* and the new tab shown with every chart in it
    drawn (``shown``)."""
    _nav(page, base, _path("playground"))
    order = ["scores", "projections", "all", "weights"]
    times = [_switch(page, order[i % len(order)]) for i in range(runs)]
    _nav(page, base, _path("playground"))
    return times


def edits_then_switches(page, base: str, runs: int) -> list[dict]:
    """On the Playground: an X cell typed and committed with Enter, then, once the page is
    quiet (bench_browser's settle: 0.5 s without a repaint, as a person looks at the repaint),
    a switch between Scores and Weights, timed as :func:`focus_switches` times one."""
    _nav(page, base, _path("playground"))
    times = []
    for i in range(runs):
        _edit(page, "cell", i)
        _settle(page)
        open_tab = page.locator(".st-key-playground_focus [role='tab'][aria-selected='true']")
        away = open_tab.first.inner_text().strip() != playground_text.FOCUS["scores"]
        times.append(_switch(page, "scores" if away else "weights"))
    _nav(page, base, _path("playground"))
    return times


def _switch(page, focus: str) -> dict:
    """Click the Playground's focus tab ``focus``; its time is the later of *all repainted*
    and the tab shown with every chart in it drawn."""
    label = playground_text.FOCUS[focus]
    button = page.locator(".st-key-playground_focus [role='tab']").filter(
        has_text=label)  # the focus tabs
    button.first.scroll_into_view_if_needed()
    page.evaluate(_SHOWN, label)
    _arm(page)
    button.first.click()
    t = _timed(page)
    t["shown"] = page.evaluate("() => (window.__shown - window.__bench.t0) / 1000")
    t["last"] = max(t["last"] or 0, t["shown"])
    t["last_from_call"] = t["last"] + t["press_after_call"]
    return t


def loss_selects(page, base: str, runs: int) -> list[dict]:
    """On Gradients: the loss select box set to the next option (wrapping), with a click."""
    _nav(page, base, _path("gradients"))
    names = list(gradients_text.LOSS_NAMES.values())
    times = []
    for i in range(runs):
        box = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").filter(
            has_text=gradients_text.LOSS_LABEL).first
        box.click()
        option = page.get_by_role("option", name=names[(i + 1) % len(names)], exact=True)
        option.wait_for(timeout=10_000)
        _arm(page)
        option.click()
        times.append(_timed(page))
    return times


def big_loss_selects(page, base: str, runs: int, t: int) -> list[dict]:
    """The loss select again, in a session whose scenario has ``t`` tokens and 8 heads."""
    if not _load_scenario_file(page, base, c.pages(), c.big_scenario(t=t)):
        raise RuntimeError(f"the {t}-token scenario did not load through Save & share")
    return loss_selects(page, base, runs)


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="comma-separated actions to time: "
                   + ", ".join(ACTIONS.values()) + " (default: all)")
    args = p.parse_args(argv)
    known = set(ACTIONS.values())
    only = set(args.only.split(",")) - {""} or known
    if only - known:
        p.error(f"--only: unknown actions {sorted(only - known)}; known: {sorted(known)}")
    from playwright.sync_api import sync_playwright

    runs = args.runs or (1 if args.quick else 9)
    results = {}
    log = c.RESULTS_DIR / f"clicks-{os.getpid()}.log"
    with c.streamlit_server(log) as (base, _proc), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                     args=c.CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            page.add_init_script(f"({_WATCH})()")
            page.add_init_script(f"({_PRESS})()")
            page.goto(base + "/")
            _wait_idle(page)
            _nav(page, base, _path("playground"))  # warm-up: the first run compiles, caches
            _wait_drawn(page)
            for name, measure in (("sidebar click → Playground drawn", sidebar_clicks),
                                  ("focus switch", focus_switches),
                                  (EDIT_SWITCH, edits_then_switches),
                                  ("Gradients' loss select", loss_selects)):
                if ACTIONS[name] in only:
                    results[name] = measure(page, base, runs)
            if ACTIONS[BIG_LOSS] in only:
                results[BIG_LOSS] = big_loss_selects(page, base, runs,
                                                     16 if args.quick else c.BIG_T)
        finally:
            browser.close()
    rows, targets = [], []
    for name, ts in results.items():
        first = c.median([t["first"] for t in ts if t["first"] is not None])
        last = c.median([t["last"] for t in ts if t["last"] is not None])
        from_call = c.median([t["last_from_call"] for t in ts if t["last_from_call"] is not None])
        count = c.median([t["count"] for t in ts])
        ended = c.median([t["run_start"] + t["run"] for t in ts
                          if t["run_start"] is not None and t["run"] is not None])
        ok = last <= TARGETS_S[name]
        rows.append([name, c.ms(first), c.ms(last), c.ms(from_call), f"{count:g}", c.ms(ended),
                     len(ts), c.ms(TARGETS_S[name]), c.verdict(ok)])
        targets.append(c.target(f"{name} ≤ {c.ms(TARGETS_S[name])} ms", f"{c.ms(last)} ms", ok))
    markdown = ("### Where a lecturer clicks (medians, default scenario, 1366×768)\n\n"
                + c.md_table(["action", "first repaint (ms)", "all repainted (ms)",
                              "all repainted from the click call (ms)", "charts redrawn",
                              "script run ended (ms)", "runs", "target (ms)", "verdict"], rows)
                + f"\nLoad average: {c.load_average()}.\n")
    c.emit(args, {"name": "clicks", "markdown": markdown, "results": results,
                  "targets": targets})


if __name__ == "__main__":
    main()
