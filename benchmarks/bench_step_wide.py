"""Browser: Step by step and Trace a cell on a GPT-2-small-sized real head (d_model
768, 12 heads of 64, biases, 32-128 tokens; open <= 1.5 s, edit -> repaint <= 1 s).

    python benchmarks/bench_step_wide.py [--quick] [--runs N] [--json PATH] [--tokens 32,128]

The head is built and opened as in bench_wide_head.py (a random one-layer GPT-2 of GPT-2
small's attention shape saved with ``save_pretrained``; Model view, the folder, a text of t
tokens, Capture, "Open layer 0, head 0 on every page"). Then, in that session, for each of Step
by step and Trace a cell:

- *open*: from Home, a click on the page in the sidebar, until the page is drawn — its script
  run finished, every chart drawn and every table (``st.dataframe``) drawn, then 0.5 s without
  a change (bench_browser.py's watcher, extended to the tables' canvases);
- *pick*: another query picked in the page's query box (Step by step: the step tables follow;
  Trace a cell: the cell's trace and the rows outlined follow), to all repainted.

Times from the mouse press (the ``pointerdown`` event's time stamp). Medians of ``--runs``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import _common as c
from bench_browser import _WATCH, _nav, _settle
from bench_clicks import _PRESS, _arm
from bench_wide_head import WAIT_MS, gpt2_small_folder, open_head

TARGETS_S = {"open": 1.5, "pick": 1.0}
PAGES = {"step_by_step": "step_by_step_query", "trace": "trace_query_"}

# a table (st.dataframe's canvas) drawn counts as a repaint too: the watcher's loop reads the
# charts; this one marks the time the last table's canvas changed size or appeared
_TABLES = """
() => {
  const seen = new WeakSet();
  new MutationObserver(() => {
    const b = window.__bench;
    if (!b || !b.t0) return;
    for (const t of document.querySelectorAll("[data-testid='stDataFrame'] canvas")) {
      if (!seen.has(t)) { seen.add(t); const now = performance.now();
        if (now >= b.t0) { if (!b.first) b.first = now; b.last = Math.max(b.last, now);
                           b.tables = (b.tables || 0) + 1; } }
    }
  }).observe(document, {childList: true, subtree: true});
}
"""


def _path(stem: str) -> str:
    return next(p for p, _ in c.pages() if c.url_path(p) == stem)


def opens(page, base: str, stem: str, runs: int) -> list[dict]:
    """From Home, the page's sidebar link clicked; the settled times."""
    times = []
    for _ in range(runs):
        _nav(page, base, _path("home"))
        link = page.locator(f"[data-testid='stSidebarNav'] a[href='{base}/{stem}']").first
        _arm(page)
        link.click()
        times.append(_settle(page))
    return times


def picks(page, stem: str, runs: int, t: int) -> list[dict]:
    """The page's query box set to another query, with a click; the settled times."""
    times = []
    for n in range(runs):
        box = page.locator(f"[class*='st-key-{PAGES[stem]}'] [data-testid='stSelectbox']").first
        box.scroll_into_view_if_needed()
        box.click()
        option = page.get_by_role("option").nth((n + 1) % min(t, 4) + 1)
        option.wait_for(timeout=WAIT_MS)
        _arm(page)
        option.click()
        times.append(_settle(page))
    return times


def browser_runs(folder: Path, tokens: list[int], runs: int,
                 stems: list[str]) -> list[dict]:
    from playwright.sync_api import sync_playwright

    rows = []
    log = c.RESULTS_DIR / f"step-wide-server-{os.getpid()}.log"
    os.environ.pop("ATTNVIZ_NO_MODELS", None)
    with c.streamlit_server(log, env={"HF_HUB_OFFLINE": "1"}) as (base, _proc), \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                     args=c.CHROMIUM_ARGS)
        try:
            for t in tokens:
                context = browser.new_context(viewport=c.VIEWPORT)
                context.set_default_timeout(WAIT_MS)
                page = context.new_page()
                page.add_init_script(f"({_WATCH})()")
                page.add_init_script(f"({_PRESS})()")
                page.add_init_script(f"({_TABLES})()")
                row: dict = {"t": t}
                try:
                    open_head(page, base, folder, t)
                    for stem in stems:
                        _nav(page, base, _path(stem))  # warm-up: the first open loads code
                        row[f"{stem}_open"] = opens(page, base, stem, runs)
                        row[f"{stem}_pick"] = picks(page, stem, runs, t)
                        row[f"{stem}_exceptions"] = page.locator(
                            "[data-testid='stException']").count()
                        shot = c.RESULTS_DIR / f"step_wide_{stem}_t{t}.png"
                        page.screenshot(path=str(shot))
                except Exception as exc:  # report it and go on with the next size
                    row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                finally:
                    context.close()
                rows.append(row)
                print(f"  t={t}: " + ", ".join(
                    f"{k} {c.ms(c.median([x['last'] for x in v if x['last'] is not None]))}"
                    for k, v in row.items() if isinstance(v, list)), flush=True)
        finally:
            browser.close()
    return rows


def section(rows: list[dict], quick: bool) -> dict:
    table_rows, targets = [], []
    for r in rows:
        for stem in PAGES:
            for what in ("open", "pick"):
                ts = r.get(f"{stem}_{what}") or []
                lasts = [x["last"] for x in ts if x["last"] is not None]
                if not lasts:
                    table_rows.append([r["t"], stem, what, r.get("error", "–"), "", "", "", ""])
                    continue
                last, worst = c.median(lasts), max(lasts)
                ended = c.median([x["run_start"] + x["run"] for x in ts
                                  if x["run_start"] is not None and x["run"] is not None]
                                 or [float("nan")])
                ok = last <= TARGETS_S[what] and not r.get(f"{stem}_exceptions")
                table_rows.append([r["t"], stem, what, c.ms(last), c.ms(worst), c.ms(ended),
                                   c.ms(TARGETS_S[what]), c.verdict(ok)])
                targets.append(c.target(f"{stem} {what} at {r['t']} tokens ≤ "
                                        f"{c.ms(TARGETS_S[what])} ms", f"{c.ms(last)} ms", ok))
    md = ("### Step by step and Trace a cell on a GPT-2-small-sized real head"
          f"{' QUICK' if quick else ''}\n\n"
          + c.md_table(["tokens", "page", "action", "all drawn (ms, median)", "worst (ms)",
                        "script run ended (ms)", "target (ms)", "verdict"], table_rows)
          + f"\nLoad average: {c.load_average()}.\n")
    return {"name": "step_wide", "rows": rows, "targets": targets, "markdown": md}


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--tokens", default="", help="comma-separated token counts (32..128)")
    p.add_argument("--pages", default=",".join(PAGES), help="comma-separated: "
                   + ", ".join(PAGES))
    args = p.parse_args(argv)
    stems = [s for s in args.pages.split(",") if s in PAGES]
    tokens = ([int(s) for s in args.tokens.split(",")] if args.tokens
              else [8] if args.quick else [32, 128])
    runs = args.runs or (1 if args.quick else 5)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="step_wide_") as tmp:
        folder = gpt2_small_folder(Path(tmp) / "gpt2_small_shape")
        rows = browser_runs(folder, tokens, runs, stems)
    print(f"  ({time.perf_counter() - start:.0f} s)")
    c.emit(args, section(rows, args.quick))


if __name__ == "__main__":
    main()
