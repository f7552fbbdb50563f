"""Load: one server, 20 concurrent browser sessions that each load the Playground, edit a cell
and wait for the repaint.

    python benchmarks/load.py [--quick] [--sessions N] [--json PATH] [--time-limit S]

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 (no other address is contacted),
launches the system Chromium once and opens ``--sessions`` Playwright contexts at the same time
(asyncio): each is a separate Streamlit session. Every session

1. loads /playground and waits until every chart has drawn (*load*) — the sessions start
   ``RAMP_S`` = 1 s apart, as a class logging in, and then all work at the same time;
2. types a new value into cell (0, 0) of the embeddings editor and waits until the charts have
   been redrawn and the script has finished (*edit to repaint*, clock started just before the
   committing Enter);
3. checks that the page shows no Streamlit exception box, and stays connected until every
   session is done (so that all of them are open on the server together at the end).

A session succeeds when all three steps pass within the time limit. Reported: successes,
p50/p95 of both latencies, and the server's memory — the resident set size of the server
process (``/proc/<pid>/status``, VmRSS) before the sessions, its peak while they ran (sampled
every 0.25 s, and VmHWM), and after — plus any error line in the server's log.
Target: 20/20 sessions succeed with no server error.
"""

from __future__ import annotations

import asyncio
import os
import time

import _common as c
from bench_browser import _ARM, _WATCH  # the same repaint watcher as the browser benchmark

WAIT_MS = 300_000  # longest wait for one step of one session
TEXT = "0.3125"
RAMP_S = 1.0  # sessions start this far apart (a class logging in), then all run at once


async def _wait_idle(page) -> None:
    await page.wait_for_timeout(150)
    await page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']") \
        .wait_for(state="attached", timeout=WAIT_MS)
    await page.locator("[data-testid='stApp'][data-test-script-state='notRunning']") \
        .wait_for(state="attached", timeout=WAIT_MS)


async def _wait_drawn(page) -> None:
    await page.wait_for_function(
        "() => { const g = Array.from(document.querySelectorAll('.js-plotly-plot'));"
        " return g.length > 0 && g.every(x => x._fullData && x._fullData.length > 0); }",
        timeout=WAIT_MS)


async def _edit_first_cell(page) -> None:
    """Type TEXT into body cell (0, 0) of the first matrix editor; arm the clock before Enter."""
    cell = page.locator("table.attnviz-grid input[data-r='0'][data-c='0']").first
    await cell.scroll_into_view_if_needed(timeout=WAIT_MS)
    await cell.click()
    await cell.press("Control+a")
    await page.keyboard.type(TEXT)
    await page.evaluate(_ARM)
    await page.keyboard.press("Enter")


async def _settle(page) -> float:
    """Seconds from the armed key press to the last repaint, once the page is quiet."""
    await page.wait_for_function("() => window.__bench.first > 0", timeout=WAIT_MS, polling=20)
    while True:
        await _wait_idle(page)
        before = await page.evaluate("() => window.__bench.last")
        await page.wait_for_timeout(500)
        b = await page.evaluate("() => window.__bench")
        if b["last"] == before and await page.locator(
                "[data-testid='stApp'][data-test-script-state='notRunning']").count():
            return (b["last"] - b["t0"]) / 1000


class _Class:
    """Shared state of the sessions: how many are open, and when they may leave."""

    def __init__(self, n: int) -> None:
        self.open = 0
        self.peak = 0
        self.finished = 0
        self.n = n
        self.all_finished = asyncio.Event()
        self.leave = asyncio.Event()

    def opened(self) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)

    def finish(self) -> None:
        self.finished += 1
        if self.finished == self.n:
            self.all_finished.set()


async def session(browser, base: str, i: int, room: _Class, delay: float = 0.0) -> dict:
    """One student: load the Playground, edit a cell, wait for the repaint, stay connected
    until every student is done (so all sessions are open on the server at the end)."""
    await asyncio.sleep(delay)
    out = {"session": i, "ok": False}
    context = await browser.new_context(viewport={"width": 1366, "height": 768})
    room.opened()
    try:
        page = await context.new_page()
        await page.add_init_script(f"({_WATCH})()")
        start = time.perf_counter()
        await page.goto(f"{base}/playground", timeout=WAIT_MS)
        await _wait_idle(page)
        await _wait_drawn(page)
        out["load"] = time.perf_counter() - start
        await _edit_first_cell(page)
        out["edit"] = await _settle(page)
        out["exceptions"] = await page.locator("[data-testid='stException']").count()
        text = await page.locator("[data-testid='stMain']").inner_text()
        out["errors_shown"] = text.count("Cannot compute")
        out["ok"] = out["exceptions"] == 0 and out["errors_shown"] == 0
    except Exception as exc:  # report it as a failed session
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    finally:
        room.finish()
        await room.leave.wait()
        room.open -= 1
        await context.close()
    return out


async def _sample_rss(pid: int, samples: list, stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(c.rss_mib(pid)[0])
        try:
            await asyncio.wait_for(stop.wait(), timeout=0.25)
        except TimeoutError:
            pass


async def run(n: int, time_limit: float) -> dict:
    """Start the server and the browser, run n sessions at once, collect the figures."""
    from playwright.async_api import async_playwright

    log = c.RESULTS_DIR / f"load-server-{os.getpid()}.log"  # one per run: runs may overlap
    with c.streamlit_server(log) as (base, proc):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                               args=c.CHROMIUM_ARGS)
            try:
                rss_before = c.rss_mib(proc.pid)[0]
                samples: list[float] = []
                stop = asyncio.Event()
                sampler = asyncio.create_task(_sample_rss(proc.pid, samples, stop))
                room = _Class(n)
                start = time.perf_counter()
                tasks = [asyncio.create_task(session(browser, base, i, room, i * RAMP_S))
                         for i in range(n)]
                try:
                    await asyncio.wait_for(room.all_finished.wait(), timeout=time_limit)
                except TimeoutError:
                    pass
                wall = time.perf_counter() - start
                rss_all_open = c.rss_mib(proc.pid)[0]
                room.leave.set()
                done, pending = await asyncio.wait(tasks, timeout=60)
                for t in pending:
                    t.cancel()
                stop.set()
                await sampler
                results = [t.result() for t in done]
                results += [{"session": -1, "ok": False, "error": "time limit"}
                            for _ in pending]
                rss_after, rss_hwm = c.rss_mib(proc.pid)
            finally:
                await browser.close()
        alive = proc.poll() is None
    errors = c.server_errors(log)
    return {"sessions": n, "results": results, "wall": wall, "rss_before": rss_before,
            "rss_peak": max(samples, default=float("nan")), "rss_hwm": rss_hwm,
            "rss_all_open": rss_all_open, "rss_after": rss_after, "peak_open": room.peak,
            "server_alive": alive, "server_errors": errors[:20]}


def section(data: dict, quick: bool) -> dict:
    """The markdown section and the target."""
    results = data["results"]
    ok = [r for r in results if r["ok"]]
    loads = [r["load"] for r in results if "load" in r]
    edits = [r["edit"] for r in results if "edit" in r]
    n = data["sessions"]
    failures = [r.get("error") or f"exceptions {r.get('exceptions')}, errors shown "
                f"{r.get('errors_shown')}" for r in results if not r["ok"]]
    table = c.md_table(["measure", "value"], [
        ["sessions succeeded", f"{len(ok)}/{n}"],
        ["load /playground to all charts drawn: p50 / p95 (ms)",
         f"{c.ms(c.percentile(loads, 50))} / {c.ms(c.percentile(loads, 95))}"],
        ["edit cell to repainted charts: p50 / p95 (ms)",
         f"{c.ms(c.percentile(edits, 50))} / {c.ms(c.percentile(edits, 95))}"],
        ["wall time for all sessions (s)", f"{data['wall']:.1f} (starts {RAMP_S:g} s apart)"],
        ["sessions open at the same time (peak)", str(data.get("peak_open", "n/a"))],
        ["server RSS before / with every session open / peak / after they left (MiB)",
         f"{data['rss_before']:.0f} / {data['rss_all_open']:.0f} / {data['rss_peak']:.0f} / "
         f"{data['rss_after']:.0f}"],
        ["server peak RSS, VmHWM (MiB)", f"{data['rss_hwm']:.0f}"],
        ["server error lines in its log", str(len(data["server_errors"]))],
        ["server still running afterwards", "yes" if data["server_alive"] else "NO"],
    ])
    met = len(ok) == n and not data["server_errors"] and data["server_alive"]
    note = "; ".join(filter(None, [
        f"failures: {'; '.join(str(f) for f in failures[:3])}" if failures else "",
        f"server log: {data['server_errors'][0][:120]}" if data["server_errors"] else ""]))
    targets = [c.target(f"load: {n} concurrent browser sessions load, edit, repaint; no "
                        "server error", f"{len(ok)}/{n}, {len(data['server_errors'])} server "
                        "errors", met, note)]
    md = (f"### Load: {n} concurrent browser sessions on one server"
          f"{' (QUICK)' if quick else ''}\n\n{table}\n\n"
          "Each session is a Playwright context in one headless Chromium on the same 2-core "
          "machine as the server, so the browsers' drawing competes with the server for the "
          "cores; the latencies are an upper bound for a classroom where each student has "
          "their own computer.\n")
    if failures:
        md += "\nFailed sessions: " + "; ".join(str(f) for f in failures[:5]) + "\n"
    return {"name": "load", "targets": targets, "markdown": md,
            "data": {k: v for k, v in data.items()}}


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=None, help="concurrent sessions (20)")
    p.add_argument("--time-limit", type=float, default=720,
                   help="seconds before unfinished sessions count as failed")
    args = p.parse_args(argv)
    n = args.sessions or (2 if args.quick else 20)
    data = asyncio.run(run(n, args.time_limit))
    c.emit(args, section(data, args.quick))


if __name__ == "__main__":
    main()
