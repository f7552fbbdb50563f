"""Browser: how long a typed cell takes to reach the app — st.data_editor against a plain grid.

    python benchmarks/bench_grid_commit.py [--quick] [--runs N] [--json PATH]

Not attnviz's pages: a minimal script (written to a temporary directory) with one 4×3 grid of
numbers as text and a line that prints the edits the app received. The grid is either

- *st.data_editor*: Streamlit's editor, as attnviz's matrix editors use it (it sends an edit
  150 ms after it was made: a fixed debounce in its frontend), or
- *input grid*: a prototype ``st.components.v2`` component of plain ``<input>`` cells that sends
  the edits (the same ``{"edited_rows": ...}`` shape) when Enter is pressed.

In the same headless Chromium as bench_browser.py, a new number is typed into a cell with the
keyboard and committed with Enter; the clock runs from the Enter key to the printed edits
changing (Streamlit's round trip included). The difference is what a grid of attnviz's own
would take off every cell edit (the Playground's cell edit → repaint is ~325 ms
against a 300 ms target, 150 of them the editor's debounce).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import _common as c

WAYS = ("st.data_editor", "input grid")

_SCRIPT = r'''
import json

import numpy as np
import pandas as pd
import streamlit as st

JS = """
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  if (parentElement.querySelector(":scope > table")) return;  // drawn: keep what is typed
  const table = document.createElement("table"), edits = {};
  parentElement.appendChild(table);
  JSON.parse(data).forEach((row, r) => {
    const tr = table.insertRow();
    row.forEach((text, c) => {
      const input = document.createElement("input");
      input.value = text;
      input.dataset.cell = r + "," + c;
      input.addEventListener("keydown", (event) => {
        if (event.key !== "Enter") return;
        event.preventDefault();
        (edits[r] = edits[r] || {})["c" + c] = input.value;
        setStateValue("edits", {edited_rows: edits});
      });
      tr.insertCell().appendChild(input);
    });
  });
}
"""
base = np.eye(4, 3)
way = st.radio("way", ["st.data_editor", "input grid"], key="way", horizontal=True)
if way == "st.data_editor":
    frame = pd.DataFrame(base).map(repr).rename(columns=lambda j: f"c{j}")
    st.data_editor(frame, key="editor")
    edits = (st.session_state.get("editor") or {}).get("edited_rows", {})
else:
    grid = st.components.v2.component("bench_input_grid", js=JS, isolate_styles=False)
    result = grid(key="grid", data=json.dumps([[repr(v) for v in row] for row in base]),
                  default={"edits": None}, on_edits_change=lambda: None)
    edits = (result.edits or {}).get("edited_rows", {})
st.write("received", json.dumps(edits, sort_keys=True))
'''

_WATCH = """
() => {
  window.__grid = {t0: 0, shown: 0, armed: false};
  document.addEventListener('keydown', (e) => {  // the committing key: the clock starts
    const b = window.__grid;
    if (e.key === 'Enter' && b.armed) { b.t0 = performance.now(); b.shown = 0; b.armed = false; }
  }, true);
  let last = null;
  const loop = () => {
    const b = window.__grid;
    const text = Array.from(document.querySelectorAll('[data-testid=stMarkdownContainer]'))
      .map(e => e.innerText).filter(t => t.startsWith('received')).join();
    if (text !== last) { last = text; if (b.t0 && !b.shown) b.shown = performance.now(); }
    requestAnimationFrame(loop);
  };
  loop();
}
"""
_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def _type_into_editor(page, text: str) -> None:
    """Open cell (0, c0) of the data editor with Enter and type ``text`` (not committed)."""
    canvas = page.get_by_test_id("stDataFrame").get_by_test_id("data-grid-canvas")
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + 60 + 20, box["y"] + 35 + 17)  # row 0, the first value column
    page.wait_for_function(
        "() => document.activeElement?.dataset?.testid === 'glide-cell-1-0'")
    page.keyboard.press("Enter")
    overlay = page.get_by_test_id("portal").locator(".gdg-clip-region input, "
                                                    ".gdg-clip-region textarea").first
    overlay.wait_for()
    overlay.press("Control+a")
    page.keyboard.type(text, delay=20)


def _type_into_grid(page, text: str) -> None:
    """Click cell (0, c0) of the input grid and type ``text`` over its value."""
    cell = page.locator("input[data-cell='0,0']")
    cell.click()
    cell.press("Control+a")
    page.keyboard.type(text, delay=20)


def _measure(page, way: str, runs: int) -> list[float]:
    """``runs`` typed edits; seconds from Enter to the app printing the new edits."""
    out = []
    for i in range(runs):
        page.locator(_IDLE).wait_for(state="attached")
        (_type_into_editor if way == WAYS[0] else _type_into_grid)(page, f"{i + 2}.5")
        page.evaluate("() => { window.__grid.armed = true; }")
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.__grid.shown > 0", timeout=60_000)
        b = page.evaluate("() => window.__grid")
        out.append((b["shown"] - b["t0"]) / 1000)
        page.wait_for_timeout(300)
    return out


def main(argv=None) -> None:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    runs = args.runs or (1 if args.quick else 9)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, c.chromium() as browser:
        script = Path(tmp) / "grid_app.py"
        script.write_text(_SCRIPT)
        with c.streamlit_server(c.RESULTS_DIR / "grid-commit.log",
                                script=script) as (base, _proc):
            page = browser.new_page(viewport=c.VIEWPORT)
            page.goto(base + "/")
            page.get_by_test_id("stDataFrame").wait_for()
            page.wait_for_timeout(1000)
            page.evaluate(_WATCH)
            for way in WAYS:
                if way != WAYS[0]:
                    page.get_by_text(way, exact=True).click()
                    page.locator("input[data-cell='0,0']").wait_for()
                start = time.perf_counter()
                times = _measure(page, way, runs)
                rows.append({"way": way, "runs": runs, "enter_to_app": c.median(times),
                             "worst": max(times), "seconds": time.perf_counter() - start})
            page.close()
    table = c.md_table(["grid", "Enter to the app's reply (ms)", "slowest (ms)"],
                       [[r["way"], c.ms(r["enter_to_app"]), c.ms(r["worst"])] for r in rows])
    markdown = (
        f"### Browser: a typed cell's way to the app ({c.chromium_version()}, median of {runs} "
        f"edits)\n\n{table}\n\n"
        "A minimal script, not a page of attnviz: one 4×3 grid and a line printing the edits "
        "it received. A number typed with the keyboard is committed with Enter; the clock "
        "stops when the printed edits change. *st.data_editor* sends 150 ms after the edit "
        "(its debounce); the *input grid* is a prototype `st.components.v2` component of "
        "`<input>` cells that sends on Enter.\n")
    c.emit(args, {"name": "grid_commit", "rows": rows, "targets": [], "markdown": markdown})


if __name__ == "__main__":
    main()
