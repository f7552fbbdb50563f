"""The τ key step on the Playground against a bare Streamlit app, in the same run (Playwright).

    python benchmarks/bench_tau_ratio.py [--quick] [--runs N] [--json PATH]

Two servers on loopback, one headless Chromium (1366×768):

- *bare*: a one-file Streamlit script with one τ slider (0.05–5.0, step 0.05) and one 4×4
  weights heatmap (``st.plotly_chart``) computed from it — what any Streamlit app pays;
- *attnviz*: the Playground's lecture view (default scenario, weights focus): its τ control,
  the weights chart's own slider (the scaled scores and the output follow it in the browser;
  the rerun that records τ redraws no chart whose frame is already shown).

Each run focuses the slider, starts the clock and presses → (or ←, alternately), and stops at
the last chart repainted once the script has finished and nothing has changed for 0.5 s
(bench_browser.py's *all repainted*; its *first repaint* too), and the script run recording
the value: when the browser saw it start and how long it ran (from the first run's start to
the last run's end, should one rerun follow another). Target: attnviz's median
≤ 1.5 × the bare app's, measured in the same run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import _common as c
from bench_browser import _ARM, _WATCH, _nav, _settle, _wait_drawn, _wait_idle

TARGET_RATIO = 1.5

_BARE = '''
import numpy as np
import plotly.graph_objects as go
import streamlit as st

tau = st.slider("Temperature τ", 0.05, 5.0, 1.0, step=0.05, key="tau")
s = np.array([[1.0, 0.2, -0.5, 0.3], [0.1, 0.9, 0.4, -0.2], [-0.3, 0.5, 1.2, 0.0],
              [0.6, -0.1, 0.2, 0.8]]) / tau
w = np.exp(s - s.max(axis=1, keepdims=True))
w /= w.sum(axis=1, keepdims=True)
labels = ["0:the", "1:cat", "2:sat", "3:down"]
fig = go.Figure(go.Heatmap(z=w, x=labels, y=labels, zmin=0, zmax=1, colorscale="Viridis",
                           texttemplate="%{z:.2f}"))
fig.update_layout(height=320, margin=dict(l=60, r=20, t=30, b=40), title="weights")
st.plotly_chart(fig, key="weights", theme=None)
'''


def _steps(page, runs: int, slider) -> list[dict]:
    """``runs`` key steps of ``slider``, each timed to the settled repaint."""
    times = []
    for i in range(runs):
        slider.scroll_into_view_if_needed()
        slider.focus()
        page.evaluate(_ARM)
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        times.append(_settle(page))
    return times


TAU_CONTROL = ".st-key-playground_fig_weights_slot_1 g.slider-group[role='slider']"


def _tau_slider(page):
    """The Playground's τ control: the weights chart's own slider (it takes the keyboard focus:
    one control per value), or a τ slider above the charts where there is
    none (the aria-label names the temperature)."""
    on_chart = page.locator(TAU_CONTROL)
    try:  # it takes the focus once the chart is drawn
        on_chart.first.wait_for(state="attached", timeout=5000)
        return on_chart.first
    except Exception:  # noqa: BLE001 - Playwright's timeout: no slider on the chart
        pass
    sliders = page.get_by_test_id("stMain").get_by_role("slider")
    for k in range(sliders.count()):
        s = sliders.nth(k)
        if s.is_visible() and "τ" in (s.get_attribute("aria-label") or ""):
            return s
    raise RuntimeError("no visible τ control on the Playground")


def measure(browser, base: str, runs: int, *, playground: bool) -> list[dict]:
    """One tab: the bare app's slider, or the Playground's τ slider."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.add_init_script(f"({_WATCH})()")
    try:
        page.goto(base + "/")
        _wait_idle(page)
        _wait_drawn(page)
        if playground:
            path = next(p for p, _ in c.pages() if c.url_path(p) == "playground")
            _nav(page, base, path)
            slider = _tau_slider(page)
        else:
            slider = page.get_by_role("slider").first
        _steps(page, 1, slider)  # warm-up: first rerun compiles and caches
        return _steps(page, runs, slider)
    finally:
        context.close()


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    runs = args.runs or (3 if args.quick else 9)
    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        bare = Path(tmp) / "bare.py"
        bare.write_text(_BARE)
        browser = pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                     args=c.CHROMIUM_ARGS)
        try:
            for name, script, playground in (("bare", bare, False), ("attnviz", c.APP, True)):
                log = c.RESULTS_DIR / f"tau-{name}-{os.getpid()}.log"
                with c.streamlit_server(log, script=script) as (base, _proc):
                    results[name] = measure(browser, base, runs, playground=playground)
        finally:
            browser.close()
    med = {name: {k: c.median([t[k] for t in ts if t[k] is not None])
                  for k in ("first", "last")} for name, ts in results.items()}
    ratio = med["attnviz"]["last"] / med["bare"]["last"]
    ratio_first = med["attnviz"]["first"] / med["bare"]["first"]
    def _run_median(ts, part) -> float:
        return c.median([part(t) for t in ts
                         if t.get("run_start") is not None and t.get("run") is not None])

    ends = {name: _run_median(ts, lambda t: t["run_start"] + t["run"])
            for name, ts in results.items()}  # the rerun recording the value (text follows)
    starts = {name: _run_median(ts, lambda t: t["run_start"]) for name, ts in results.items()}
    spans = {name: _run_median(ts, lambda t: t["run"]) for name, ts in results.items()}
    rows = [[name, c.ms(m["first"]), c.ms(m["last"]), c.ms(starts[name]), c.ms(spans[name]),
             c.ms(ends[name]), len(results[name])] for name, m in med.items()]
    markdown = (
        "### τ key step: Playground against a bare Streamlit app (same run)\n\n"
        + c.md_table(["app", "first repaint (ms)", "all repainted (ms)", "rerun started (ms)",
                      "rerun ran (ms)", "rerun ended (ms)", "runs"], rows)
        + f"\nRatio attnviz / bare: {ratio:.2f} (all repainted), {ratio_first:.2f} (first "
          f"repaint); target ≤ {TARGET_RATIO}. Load average: {c.load_average()}.\n")
    c.emit(args, {"name": "tau_ratio", "markdown": markdown, "medians": med, "ratio": ratio,
                  "targets": [c.target("τ key step ≤ 1.5 × a bare Streamlit app",
                                       f"{ratio:.2f}×", ratio <= TARGET_RATIO)]})


if __name__ == "__main__":
    main()
