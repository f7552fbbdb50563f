"""Browser: where a lecturer clicks (issue 28 item 7) — sidebar click to the Playground drawn,
the Playground's focus switch, Gradients' loss select (Playwright, default scenario).

    python benchmarks/bench_clicks.py [--quick] [--runs N] [--json PATH]

Starts ``streamlit run app.py`` on a free loopback port and drives the system Chromium
(headless, 1366×768), one session. Each action is timed from just before the click (or the
key press that commits a select box) to *all repainted*: the last chart drawn once the script
has finished and nothing has changed for 0.5 s (bench_browser.py's watcher), and to *first
repaint*. Targets (medians): sidebar click → every chart of the Playground drawn ≤ 1.5 s;
focus switch ≤ 300 ms; Gradients' loss select ≤ 300 ms.
"""

from __future__ import annotations

import os

import _common as c
from bench_browser import _ARM, _WATCH, _nav, _settle, _wait_drawn, _wait_idle

from attnviz.teach.text import gradients as gradients_text
from attnviz.teach.text import playground as playground_text

TARGETS_S = {"sidebar click → Playground drawn": 1.5, "focus switch": 0.3,
             "Gradients' loss select": 0.3}


def _path(stem: str) -> str:
    return next(p for p, _ in c.pages() if c.url_path(p) == stem)


def sidebar_clicks(page, base: str, runs: int) -> list[dict]:
    """From Home, click the Playground in the sidebar; time every chart drawn."""
    times = []
    for _ in range(runs):
        _nav(page, base, _path("home"))
        page.evaluate(_ARM)
        page.locator(f"[data-testid='stSidebarNav'] a[href='{base}/playground']").first.click()
        times.append(_settle(page))
    return times


def focus_switches(page, base: str, runs: int) -> list[dict]:
    """On the Playground: Scores, Q K V, All and back to Weights, in turn."""
    _nav(page, base, _path("playground"))
    order = ["scores", "projections", "all", "weights"]
    times = []
    for i in range(runs):
        label = playground_text.FOCUS[order[i % len(order)]]
        button = page.locator(".st-key-playground_focus button").filter(
            has_text=label)  # the focus switch's options
        button.first.scroll_into_view_if_needed()
        page.evaluate(_ARM)
        button.first.click()
        times.append(_settle(page))
    _nav(page, base, _path("playground"))
    return times


def loss_selects(page, base: str, runs: int) -> list[dict]:
    """On Gradients: the loss select box set to the next option (wrapping), with the keyboard."""
    _nav(page, base, _path("gradients"))
    names = list(gradients_text.LOSS_NAMES.values())
    times = []
    for i in range(runs):
        box = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").filter(
            has_text=gradients_text.LOSS_LABEL).first
        box.click()
        option = page.get_by_role("option", name=names[(i + 1) % len(names)], exact=True)
        option.wait_for(timeout=10_000)
        page.evaluate(_ARM)
        option.click()
        times.append(_settle(page))
    return times


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    runs = args.runs or (2 if args.quick else 9)
    results = {}
    log = c.RESULTS_DIR / f"clicks-{os.getpid()}.log"
    with c.streamlit_server(log) as (base, _proc), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                     args=c.CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            page.add_init_script(f"({_WATCH})()")
            page.goto(base + "/")
            _wait_idle(page)
            _nav(page, base, _path("playground"))  # warm-up: the first run compiles, caches
            _wait_drawn(page)
            for name, measure in (("sidebar click → Playground drawn", sidebar_clicks),
                                  ("focus switch", focus_switches),
                                  ("Gradients' loss select", loss_selects)):
                results[name] = measure(page, base, runs)
        finally:
            browser.close()
    rows, targets = [], []
    for name, ts in results.items():
        first = c.median([t["first"] for t in ts if t["first"] is not None])
        last = c.median([t["last"] for t in ts if t["last"] is not None])
        ok = last <= TARGETS_S[name]
        rows.append([name, c.ms(first), c.ms(last), len(ts), c.ms(TARGETS_S[name]),
                     c.verdict(ok)])
        targets.append(c.target(f"{name} ≤ {c.ms(TARGETS_S[name])} ms", f"{c.ms(last)} ms", ok))
    markdown = ("### Where a lecturer clicks (medians, default scenario, 1366×768)\n\n"
                + c.md_table(["action", "first repaint (ms)", "all repainted (ms)", "runs",
                              "target (ms)", "verdict"], rows)
                + f"\nLoad average: {c.load_average()}.\n")
    c.emit(args, {"name": "clicks", "markdown": markdown, "results": results,
                  "targets": targets})


if __name__ == "__main__":
    main()
