"""Browser floor: what a slider move costs in a minimal Streamlit app with 0, 1, 4 or 10 heatmaps.

    python benchmarks/bench_floor.py [--quick] [--runs N] [--json PATH]

Not attnviz's pages: a one-slider script (written to a temporary directory) that prints the
slider's value and shows N small heatmaps built as the pages do (``attnviz.figures.heatmap``),
every one of them changed by the slider, shown either way:

- *component*: ``attnviz.ui.panels.show_figure``, as the pages show them (the in-place chart
  component of ``attnviz.ui.plotly_view``: Plotly.react on the chart already there);
- *st.plotly_chart*: Streamlit's own element, which draws a changed chart anew.
 It measures, in the same headless Chromium as bench_browser.py, the time from the
arrow key to

- *text shown*: the printed value changed (Streamlit's round trip, no chart involved), and
- *charts redrawn*: the last heatmap redrawn (as bench_browser.py's *all repainted*).

So it separates what Streamlit costs on this machine from what each changed chart adds: the
lower bound any page with that many changed charts can reach with ``st.plotly_chart``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import _common as c

CHART_COUNTS = (0, 1, 4, 10)
WAYS = ("component", "st.plotly_chart")
QUIET_S = 0.5  # nothing redrawn for this long after the rerun: the page has settled

_SCRIPT = '''
import os
import numpy as np
import streamlit as st
from attnviz.figures import heatmap
from attnviz.ui.panels import chart_config, show_figure

value = st.slider("value", 0.0, 10.0, 1.0, 0.1, key="floor_value")
st.write(f"value {value:.1f}")
z = np.random.default_rng(0).standard_normal((4, 4))
labels = [f"{i}:tok" for i in range(4)]
for i in range(int(os.environ["FLOOR_CHARTS"])):
    fig = heatmap(z * value + i, labels, labels, title=f"matrix {i}")
    if os.environ["FLOOR_WAY"] == "component":
        show_figure(fig, key=f"floor_{i}")
    else:
        st.plotly_chart(fig, key=f"floor_{i}", width="stretch", theme=None,
                        config=chart_config(f"floor_{i}"))
'''

_WATCH = """
() => {
  window.__floor = {t0: 0, text: 0, last: 0, runEnd: 0};
  const plots = document.getElementsByClassName('js-plotly-plot');
  let shown = '';
  new MutationObserver(changes => {
    const b = window.__floor;
    for (const m of changes)
      if (b.t0 && m.target.getAttribute('data-test-script-state') === 'notRunning')
        b.runEnd = performance.now();
  }).observe(document, {attributes: true, subtree: true,
                        attributeFilter: ['data-test-script-state']});
  const loop = () => {
    const b = window.__floor, now = performance.now();
    const text = Array.from(document.querySelectorAll('[data-testid=stMarkdownContainer]'))
      .map(e => e.innerText).filter(t => t.startsWith('value ')).join();
    if (text !== shown) { shown = text; if (b.t0 && !b.text) b.text = now; }
    for (const g of plots)
      if (g._fullData && g.__floorSeen !== g._fullData) {
        g.__floorSeen = g._fullData; if (b.t0) b.last = now;
      }
    requestAnimationFrame(loop);
  };
  loop();
}
"""


def _measure(page, runs: int, charts: int) -> list[tuple[float, float | None]]:
    """``runs`` slider moves; (text shown, last chart redrawn) in seconds after each key."""
    slider = page.get_by_role("slider")
    slider.focus()
    out = []
    for i in range(runs):
        page.evaluate("() => Object.assign(window.__floor, "
                      "{t0: performance.now(), text: 0, last: 0, runEnd: 0})")
        page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function("() => window.__floor.text > 0", timeout=60_000)
        if charts:
            page.wait_for_function("() => window.__floor.last > 0", timeout=60_000)
        while True:  # settle: no redraw for QUIET_S
            before = page.evaluate("() => window.__floor.last")
            page.wait_for_timeout(int(QUIET_S * 1000))
            if page.evaluate("() => window.__floor.last") == before:
                break
        b = page.evaluate("() => window.__floor")
        out.append(((b["text"] - b["t0"]) / 1000,
                    (b["last"] - b["t0"]) / 1000 if charts else None))
    return out


def main(argv=None) -> None:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    runs = args.runs or (1 if args.quick else 9)
    counts = (0, 1) if args.quick else CHART_COUNTS
    rows = []
    with tempfile.TemporaryDirectory() as tmp, c.chromium() as browser:
        script = Path(tmp) / "floor_app.py"
        script.write_text(_SCRIPT)
        for charts, way in [(n, w) for n in counts for w in (WAYS if n else WAYS[:1])]:
            env = {"FLOOR_CHARTS": str(charts), "FLOOR_WAY": way,
                   "PYTHONPATH": os.pathsep.join([str(c.ROOT), os.environ.get(
                       "PYTHONPATH", "")])}
            with c.streamlit_server(c.RESULTS_DIR / f"floor-{charts}-{way[:3]}.log", env=env,
                                    script=script) as (base, _proc):
                page = browser.new_page(viewport=c.VIEWPORT)
                page.goto(base + "/")
                page.get_by_role("slider").wait_for()
                page.wait_for_timeout(1500)  # first drawing done
                page.evaluate(_WATCH)
                start = time.perf_counter()
                times = _measure(page, runs, charts)
                page.close()
            rows.append({"charts": charts, "way": way if charts else "n/a", "runs": runs,
                         "text": c.median([t[0] for t in times]),
                         "redrawn": c.median([t[1] for t in times]) if charts else None,
                         "seconds": time.perf_counter() - start})
    table = c.md_table(
        ["heatmaps changed by the slider", "shown by", "slider to text shown (ms)",
         "slider to last heatmap redrawn (ms)", "per heatmap beyond the text (ms)"],
        [[r["charts"], r["way"], c.ms(r["text"]), c.ms(r["redrawn"]) if r["redrawn"] else "n/a",
          c.ms((r["redrawn"] - r["text"]) / r["charts"]) if r["redrawn"] else "n/a"]
         for r in rows])
    markdown = (
        f"### Browser floor: a minimal app with N heatmaps ({c.chromium_version()}, median of "
        f"{runs} slider moves)\n\n{table}\n\n"
        "A one-slider Streamlit script (not a page of attnviz) whose slider changes N small "
        "heatmaps built as the pages do, shown by attnviz's in-place chart component (as the "
        "pages show them) or by `st.plotly_chart`. *Text shown*: the printed value changed — "
        "Streamlit's round trip alone; *last heatmap redrawn*: as *all repainted* above. The "
        "difference is what each changed chart costs in this browser; a page cannot be "
        "faster than the row with its number of changed charts.\n")
    c.emit(args, {"name": "floor", "rows": rows, "targets": [], "markdown": markdown})


if __name__ == "__main__":
    main()
