"""Server memory: RSS of one attnviz server with 1 and 20 browser sessions open.

    python benchmarks/bench_memory.py [--sessions 1,20] [--json PATH]

For each scenario — the default one, and the largest preset that a link can carry (the
preset whose ``?scenario=`` link is longest: the most numbers) — a fresh server is started on
127.0.0.1 (a free port; only loopback is used), its RSS is read from /proc, then N Chromium
contexts (one browser, one context per session: separate Streamlit sessions) open the
Playground with that scenario's link at once, and the script waits until every page has drawn
its heatmaps; the RSS is read again, the contexts are closed, and after Streamlit's session
cleanup the RSS is read a third time. Bounded: at most 60 sessions, 180 s per step.
"""

from __future__ import annotations

import sys
import time

import _common as c

MAX_SESSIONS = 60
STEP_TIMEOUT_MS = 180_000


def _largest_linkable_preset() -> tuple[str, object]:
    from attnviz.io import scenario_io
    from attnviz.scenarios.presets import PRESETS

    best = None
    for key, preset in PRESETS.items():
        try:
            n = len(scenario_io.to_link_param(preset.build()))
        except ValueError:
            continue
        if best is None or n > best[0]:
            best = (n, key)
    return best[1], PRESETS[best[1]].build()


def _measure(scenario, n: int) -> dict:
    from playwright.sync_api import sync_playwright

    from attnviz.io import scenario_io

    link = scenario_io.to_link_param(scenario)
    log = c.RESULTS_DIR / "bench_memory_server.log"
    with c.streamlit_server(log) as (base, proc), sync_playwright() as p:
        time.sleep(2)
        before, _ = c.rss_mib(proc.pid)
        browser = p.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                    args=c.CHROMIUM_ARGS)
        contexts = [browser.new_context() for _ in range(n)]
        pages = [ctx.new_page() for ctx in contexts]
        t0 = time.monotonic()
        for page in pages:  # all requests go out before any page is waited for
            page.goto(f"{base}/playground?scenario={link}", wait_until="commit",
                      timeout=STEP_TIMEOUT_MS)
        for page in pages:
            page.wait_for_function(
                "() => { const g = document.querySelector('.js-plotly-plot');"
                " return g && g._fullData && g._fullData.length > 0 }",
                timeout=STEP_TIMEOUT_MS)
        opened_s = time.monotonic() - t0
        time.sleep(2)
        open_rss, peak = c.rss_mib(proc.pid)
        for ctx in contexts:
            ctx.close()
        browser.close()
        time.sleep(5)
        closed_rss, _ = c.rss_mib(proc.pid)
        errors = c.server_errors(log)
    return dict(sessions=n, before=before, open=open_rss, peak=peak, closed=closed_rss,
                opened_s=opened_s, errors=len(errors))


def main() -> int:
    ap = c.parser(__doc__.splitlines()[0])
    ap.add_argument("--sessions", default="1,20", help="comma-separated session counts")
    args = ap.parse_args()
    counts = [min(MAX_SESSIONS, int(s)) for s in args.sessions.split(",")]
    big_key, big = _largest_linkable_preset()
    rows, data = [], []
    for name, sc in (("default", c.default_scenario()), (f"largest preset ({big_key})", big)):
        for n in counts:
            r = _measure(sc, n)
            data.append({"scenario": name, **r})
            rows.append([name, n, f"{r['before']:.0f}", f"{r['open']:.0f}", f"{r['peak']:.0f}",
                         f"{(r['open'] - r['before']) / n:.1f}", f"{r['closed']:.0f}",
                         f"{r['opened_s']:.1f}", r["errors"]])
            print(rows[-1], file=sys.stderr, flush=True)
    table = c.md_table(["scenario", "sessions", "RSS idle (MiB)", "RSS open (MiB)",
                        "peak (MiB)", "per session (MiB)", "RSS 5 s after closing (MiB)",
                        "all drawn after (s)", "server errors"], rows)
    c.emit(args, {"name": "memory", "rows": data, "markdown": table})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
