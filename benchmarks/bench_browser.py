"""Browser: time from a cell edit or slider move to the repainted heatmaps (Playwright).

    python benchmarks/bench_browser.py [--quick] [--runs N] [--json PATH] [--pages a,b]

Starts ``streamlit run app.py`` on a free loopback port and drives the system Chromium
(/usr/bin/chromium, headless, 1366×768) through Playwright. One browser tab per scenario keeps
one Streamlit session, and pages are switched with the sidebar links (client-side, so the
session — and the scenario — is kept):

- default: the scenario a new session starts with;
- t = 256, 8 heads: the same large scenario as the server benchmark, loaded as a scenario file
  through the Save & share page's uploader (skipped if that page does not exist);
- on Your own attention: a 1024-token, 2-head .npz uploaded through its uploader.

On every page three kinds of edit are timed, each ``runs`` times, where the page has them: a
new value typed into cell (0, 0) of the first visible matrix editor (committed with Enter), the
first slider moved by one step with the arrow keys, and the first select box set to the next
option with the keyboard. (The matrix editors' grid sends an edit on Enter; Streamlit's own
data editor waited 150 ms — ``bench_grid_commit.py``.) An edit whose rerun redraws no chart
is listed as such.

A requestAnimationFrame watcher in the page notes every time a Plotly chart is (re)drawn (its
``_fullData`` changes). The clock starts just before the committing key press and stops at

- *first repaint*: the first chart redrawn after it, and
- *all repainted*: the last chart redrawn once Streamlit's script has finished and no chart has
  changed for 0.5 s.

Targets: edit-to-repaint <= 300 ms at the default scenario, <= 1 s at t = 256 (median).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import _common as c

KINDS = ("cell", "slider", "select")  # the edits timed on every page that has them
DEFAULT_TARGET_S = 0.300
BIG_TARGET_S = 1.0
WAIT_MS = 90_000  # longest wait for one step (a loaded machine is slow, never hang)
QUIET_S = 0.5  # no repaint for this long = the page has settled
NO_REPAINT_S = 3.0  # a rerun finished this long ago without a repaint: the edit redrew nothing

_WATCH = """
() => {
  if (window.__bench) return;
  window.__bench = {t0: 0, first: 0, last: 0, count: 0, runStart: 0, runEnd: 0};
  const plots = document.getElementsByClassName('js-plotly-plot');  // live, cheap to poll
  new MutationObserver(changes => {  // Streamlit's script state: when the rerun ran
    const b = window.__bench, now = performance.now();
    if (!b.t0) return;
    for (const m of changes) {
      const state = m.target.getAttribute('data-test-script-state');
      if (state === 'running' && !b.runStart) b.runStart = now;
      if (state === 'notRunning' && b.runStart) b.runEnd = now;
    }
  }).observe(document,
             {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
  const loop = () => {
    for (const g of plots) {
      if (g._fullData && g.__benchSeen !== g._fullData) {
        g.__benchSeen = g._fullData;
        const now = performance.now(), b = window.__bench;
        if (b.t0 && now >= b.t0) { if (!b.first) b.first = now; b.last = now; b.count++; }
      }
    }
    requestAnimationFrame(loop);
  };
  loop();
}
"""
_ARM = ("() => { const b = window.__bench; b.first = 0; b.last = 0; b.count = 0; "
        "b.runStart = 0; b.runEnd = 0; b.t0 = performance.now(); }")
_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
_CONNECTED = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"


def _wait_idle(page) -> None:
    """Until the app is connected and its script has finished."""
    page.wait_for_timeout(150)
    page.locator(_CONNECTED).wait_for(state="attached", timeout=WAIT_MS)
    page.locator(_IDLE).wait_for(state="attached", timeout=WAIT_MS)


def _wait_drawn(page) -> None:
    """Until every visible Plotly chart on the page has drawn (charts in a closed tab or
    expander are not drawn until they are shown)."""
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".filter(g => g.offsetParent !== null)"
        ".every(g => g._fullData && g._fullData.length > 0)", timeout=WAIT_MS)


def _settle(page) -> dict:
    """Wait for a repaint after the armed edit, then for quiet; return the times (seconds
    after the clock started) of the first and last repaint and the script run's start and
    end, and the number of repaints."""
    # a repaint, or a finished rerun followed by NO_REPAINT_S without one (nothing was redrawn)
    page.wait_for_function(
        f"() => {{ const b = window.__bench; return b.first > 0 || (b.runEnd > 0 && "
        f"performance.now() - b.runEnd > {NO_REPAINT_S * 1000}); }}",
        timeout=WAIT_MS, polling=20)
    while True:
        _wait_idle(page)
        before = page.evaluate("() => window.__bench.last")
        page.wait_for_timeout(int(QUIET_S * 1000))
        b = page.evaluate("() => window.__bench")
        idle = page.locator(_IDLE).count() > 0
        if b["last"] == before and idle:
            t0 = b["t0"]
            if not b["first"]:  # the edit redrew no chart
                return {"first": None, "last": None, "count": 0, "run_start": (
                    b["runStart"] - t0) / 1000 if b["runStart"] else None, "run": (
                    b["runEnd"] - b["runStart"]) / 1000 if b["runEnd"] else None}
            return {"first": (b["first"] - t0) / 1000, "last": (b["last"] - t0) / 1000,
                    "run_start": (b["runStart"] - t0) / 1000 if b["runStart"] else None,
                    "run": (b["runEnd"] - b["runStart"]) / 1000 if b["runEnd"] else None,
                    "count": int(b["count"])}


def _nav(page, base: str, path: str) -> None:
    """Switch page with the sidebar link (keeps the session), expanding "View more" first."""
    stem = c.url_path(path)
    href = f"{base}/" if path == c.pages()[0][0] else f"{base}/{stem}"
    link = page.locator(f"[data-testid='stSidebarNav'] a[href='{href}']")
    if link.count() == 0:
        more = page.get_by_test_id("stSidebarNavViewButton")
        if more.count():
            more.first.click()
    link.first.click()
    # the address bar also carries the scenario (?scenario=...): compare the page's path only
    page.wait_for_url(lambda url: url.split("?", 1)[0] == href, timeout=WAIT_MS)
    _wait_idle(page)
    _wait_drawn(page)
    _wait_stable(page)


def _wait_stable(page, limit_s: float = 15.0) -> None:
    """Until the page's main area stops changing (a page may rerun once more after a switch,
    and elements appear over a few frames)."""
    count = "() => document.querySelectorAll('[data-testid=\"stMain\"] *').length"
    deadline = time.monotonic() + limit_s
    before = -1
    while time.monotonic() < deadline:
        _wait_idle(page)
        _wait_drawn(page)
        now = page.evaluate(count)
        if now == before:
            return
        before = now
        page.wait_for_timeout(300)


def _edit_cell(page, editor, text: str) -> None:
    """Type ``text`` into body cell (0, 0) of a matrix editor's grid; the clock starts before
    Enter."""
    cell = editor.locator("input[data-r='0'][data-c='0']")
    cell.scroll_into_view_if_needed()
    cell.click()
    cell.press("Control+a")
    page.keyboard.type(text)
    page.evaluate(_ARM)
    page.keyboard.press("Enter")


def _edit(page, kind: str, i: int) -> str | None:
    """Make the i-th edit of one kind ("cell", "slider" or "select"), the clock armed just
    before the committing key; return what was edited, None if the page has none of that kind.
    """
    if kind == "cell":
        editors = page.locator("table.attnviz-grid")  # the matrix editors' grids
        for k in range(editors.count()):
            editor = editors.nth(k)
            if editor.is_visible():
                _edit_cell(page, editor, "0.3125" if i % 2 == 0 else "0.4375")
                return "cell edit (first matrix editor)"
        return None
    main = page.get_by_test_id("stMain")
    if kind == "slider":
        sliders = main.get_by_role("slider")
        for k in range(sliders.count()):
            slider = sliders.nth(k)
            if slider.is_visible():
                slider.scroll_into_view_if_needed()
                slider.focus()
                page.evaluate(_ARM)
                page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
                name = slider.get_attribute("aria-label") or str(k)
                return f"slider move ({name[:40]})"
        return None
    boxes = main.get_by_test_id("stSelectbox")
    for k in range(boxes.count()):
        box = boxes.nth(k)
        combo = box.get_by_role("combobox")
        if not box.is_visible() or combo.count() == 0 or combo.first.is_disabled():
            continue
        box.scroll_into_view_if_needed()
        combo.first.click()
        page.get_by_role("option").first.wait_for(timeout=WAIT_MS)
        page.keyboard.press("ArrowDown" if i % 2 == 0 else "ArrowUp")
        page.evaluate(_ARM)
        page.keyboard.press("Enter")
        label = box.inner_text().splitlines()[0] if box.inner_text() else str(k)
        return f"select box ({label[:40]})"
    return None


def _load_scenario_file(page, base: str, pages: list[tuple[str, str]], scenario) -> bool:
    """Replace the session's scenario with a scenario file through Save & share."""
    from attnviz.io import scenario_io

    share = next((p for p, _ in c.pages() if c.url_path(p) == "share"), None)
    if share is None:
        return False
    _nav(page, base, share)
    path = Path(tempfile.mkdtemp()) / "bench_scenario.json"
    path.write_text(scenario_io.to_json(scenario))
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(path))
    _wait_idle(page)
    page.wait_for_timeout(500)
    _wait_idle(page)
    return f"{scenario.t} tokens" in page.locator("[data-testid='stSidebar']").inner_text()


def _upload_attention(page, data: bytes) -> None:
    """Upload a .npz to the Your own attention page's weights uploader."""
    path = Path(tempfile.mkdtemp()) / "attention.npz"
    path.write_bytes(data)
    start = time.perf_counter()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(path))
    page.wait_for_function(  # the file was read: the page says so
        "() => document.body.innerText.includes('× 1024 × 1024') || "
        "document.body.innerText.includes('cannot be shown')", timeout=WAIT_MS)
    _wait_idle(page)
    _wait_drawn(page)
    return time.perf_counter() - start


def run_session(browser, base: str, pages, label: str, runs: int, scenario=None,
                upload: bytes | None = None, deadline: float = float("inf")) -> list[dict]:
    """One tab: (optionally) load the scenario, then every page: open it, then ``runs`` cell
    edits in its first matrix editor and ``runs`` moves of its first slider (each if any)."""
    rows = []
    context = browser.new_context(viewport=c.VIEWPORT)
    page = context.new_page()
    page.add_init_script(f"({_WATCH})()")
    try:
        start = time.perf_counter()
        page.goto(base + "/")
        _wait_idle(page)
        first_load = time.perf_counter() - start
        if scenario is not None and not _load_scenario_file(page, base, pages, scenario):
            return [{"page": "(all)", "scenario": label, "error": "could not load the scenario "
                     "file through Save & share", "first_load": first_load}]
        for path, title in pages:
            base_row = {"page": title, "path": path, "scenario": label, "runs": runs,
                        "first_load": first_load}
            if time.monotonic() > deadline:
                rows.append(dict(base_row, error="skipped: time limit"))
                continue
            try:
                start = time.perf_counter()
                _nav(page, base, path)
                opened = time.perf_counter() - start
                if upload is not None:
                    opened = _upload_attention(page, upload)
            except Exception as exc:  # a broken page must not hide the others
                rows.append(dict(base_row, error=f"{type(exc).__name__}: "
                                                 f"{str(exc).splitlines()[0][:120]}"))
                continue
            found = False
            for kind in KINDS:
                row = dict(base_row, open=opened)
                try:
                    times, what = [], None
                    for i in range(runs):
                        what = _edit(page, kind, i)
                        if what is None:
                            break
                        times.append(_settle(page))
                    if what is None:
                        continue
                    found = True

                    def med(name, times=times):
                        return c.median([t[name] for t in times if t[name] is not None])

                    if all(t["first"] is None for t in times):
                        what += ": no chart redrawn"
                    row.update(what=what, first=med("first"), last=med("last"),
                               run=med("run"), run_start=med("run_start"), times=times,
                               exceptions=page.locator("[data-testid='stException']").count())
                except Exception as exc:  # report, and go on with the next page
                    row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                    found = True
                    shot = c.RESULTS_DIR / f"FAILED-{c.url_path(path)}-{kind}-{label[:5]}.png"
                    try:
                        page.screenshot(path=str(shot), full_page=True)
                        row["screenshot"] = str(shot.relative_to(c.ROOT))
                    except Exception:  # the screenshot is a courtesy
                        pass
                rows.append(row)
                print(f"  {title:28s} {label:24s} {kind:6s} first "
                      f"{c.ms(row.get('first', float('nan')))} all "
                      f"{c.ms(row.get('last', float('nan')))} ms", flush=True)
            if not found:
                rows.append(dict(base_row, open=opened, what="nothing to edit"))
    finally:
        context.close()
    return rows


def section(rows: list[dict], quick: bool, extra: dict) -> dict:
    """The markdown table and the targets."""
    nan = float("nan")

    def limit(r):
        return DEFAULT_TARGET_S if r["scenario"] == "default" else BIG_TARGET_S

    def ok(r):
        if r.get("error") or r.get("last") is None or r["last"] != r["last"]:
            return None
        return r["last"] <= limit(r) and not r.get("exceptions")

    table = c.md_table(
        ["page", "scenario", "edit", "open page (ms)", "key to rerun start (ms)",
         "rerun in browser (ms)", "first repaint (ms)", "all repainted (ms)", "target (ms)",
         "verdict"],
        [[r["page"], r["scenario"],
          f"ERROR: {r['error']}" if r.get("error") else r.get("what", ""),
          c.ms(r.get("open", nan)), c.ms(r.get("run_start", nan)), c.ms(r.get("run", nan)),
          c.ms(r.get("first", nan)), c.ms(r.get("last", nan)), c.ms(limit(r)),
          c.verdict(ok(r))]
         for r in rows])
    targets = []
    for name, sel, lim in (
            ("default scenario", [r for r in rows if r["scenario"] == "default"],
             DEFAULT_TARGET_S),
            (extra["big_label"], [r for r in rows if r["scenario"] == extra["big_label"]],
             BIG_TARGET_S),
            (f"{extra['upload_label']} (Your own attention)",
             [r for r in rows if r["scenario"] == extra["upload_label"]], BIG_TARGET_S)):
        measured = [r for r in sel if ok(r) is not None]
        if not sel:
            continue
        worst = max(measured, key=lambda r: r["last"], default=None)
        missed = [r["page"] for r in measured if not ok(r)]
        broken = [r["page"] for r in sel if r.get("error")]
        targets.append(c.target(
            f"browser: edit to repainted heatmaps, {name}, <= {c.ms(lim)} ms",
            f"worst {c.ms(worst['last'])} ms ({worst['page']})" if worst else "n/a",
            bool(measured) and not missed and not broken,
            ", ".join(filter(None, [f"over on: {', '.join(missed)}" if missed else "",
                                    f"errors on: {', '.join(broken)}" if broken else ""]))))
    runs = rows[0].get("runs", 0) if rows else 0
    load = next((r["first_load"] for r in rows if "first_load" in r), float("nan"))
    md = (f"### Browser: edit to repainted heatmaps ({extra['chromium']}, "
          f"median of {runs} edits{', QUICK' if quick else ''})\n\n{table}\n\n"
          f"First load of the app in a fresh browser: {c.ms(load)} ms. All times are medians. "
          "*Open page*: sidebar click to every chart drawn. From the committing key press: "
          "*rerun start*, when the app shows its script running; *rerun in browser*, how long "
          "it shows it running (the server's script run plus streaming its output); *first "
          "repaint*, the first chart redrawn; *all repainted*, the last chart redrawn once the "
          "script finished (the figure the target is checked on).\n")
    return {"name": "browser", "rows": rows, "targets": targets, "markdown": md}


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    c.add_pages_option(p)
    p.add_argument("--time-limit", type=float, default=1800, help="seconds for the whole run")
    args = p.parse_args(argv)
    pages = c.chosen_pages(args)
    runs = args.runs or (1 if args.quick else 3)
    big_t = 16 if args.quick else c.BIG_T
    big_label = f"t={big_t}, {c.BIG_HEADS} heads"
    upload_label = "uploaded t=1024, 2 heads"
    deadline = time.monotonic() + args.time_limit
    log = c.RESULTS_DIR / f"browser-server-{os.getpid()}.log"  # one per run: runs may overlap
    rows = []
    with c.streamlit_server(log) as (base, _proc), c.chromium() as browser:
        rows += run_session(browser, base, pages, "default", runs, deadline=deadline)
        rows += run_session(browser, base, pages, big_label, runs,
                            scenario=c.big_scenario(t=big_t), deadline=deadline)
        upload_page = [p for p in pages if c.url_path(p[0]) == "your_attention"]
        if upload_page and not args.quick:
            rows += run_session(browser, base, upload_page, upload_label, runs,
                                upload=c.attention_npz(1024, 2), deadline=deadline)
    errors = c.server_errors(log)
    extra = {"chromium": c.chromium_version(), "big_label": big_label,
             "upload_label": upload_label}
    sec = section(rows, args.quick, extra)
    if errors:
        sec["markdown"] += f"\nServer log reported {len(errors)} error line(s), e.g. " \
                           f"`{errors[0][:160]}`.\n"
    sec["server_errors"] = errors[:20]
    c.emit(args, sec)


if __name__ == "__main__":
    main()
