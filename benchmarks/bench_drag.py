"""Sliders that move the picture while dragging: the time the browser takes to show one step.

    python benchmarks/bench_drag.py [--quick] [--runs N] [--json PATH]

On the default scenario, in Chromium, for each chart whose own slider steps through frames
computed in advance (no server round trip while dragging): the Playground's weights over τ
(lecture view), the Masks page's weights over the window width, the Positional encoding page's
PE matrix over its base and over d_model (up to 50 × 128), and the Learn page's playback
after a 200-step run. Each step is ``Plotly.animate`` to one frame, awaited — what a drag does
at every step — over every frame of the chart. Target: <= 50 ms per step (issue 15, item 3).
"""

from __future__ import annotations

import _common as c

TARGET_MS = 50.0

ANIMATE = """async ([key, runs]) => {
    const g = document.querySelector(`.st-key-${key} .js-plotly-plot`);
    const names = g._transitionData._frames.map(f => f.name);
    const opts = {mode: 'immediate', frame: {duration: 0, redraw: true},
                  transition: {duration: 0}};
    const times = [];
    for (let r = 0; r < runs; r++) {
        for (const name of names) {
            const t = performance.now();
            await window.Plotly.animate(g, [name], opts);
            times.push(performance.now() - t);
        }
    }
    return times;
}"""

DRAWN = ("k => document.querySelector(`.st-key-${k} .js-plotly-plot`)?._transitionData"
         "?._frames?.length > 0")


def _charts(page, base: str, runs: int) -> dict[str, list[float]]:
    """Per-step times (ms) of each chart with frames."""
    out = {}
    page.goto(base + "/playground")
    page.wait_for_function(DRAWN, arg="playground_fig_weights_weights", timeout=90_000)
    page.wait_for_timeout(1000)
    out["Playground: weights over τ"] = page.evaluate(
        ANIMATE, ["playground_fig_weights_weights", runs])
    page.goto(base + "/masks")
    page.get_by_test_id("stRadio").first.get_by_text("sliding window").click()
    page.wait_for_function(DRAWN, arg="masks_fig_weights", timeout=90_000)
    page.wait_for_timeout(1000)
    out["Masks: weights over the window width"] = page.evaluate(
        ANIMATE, ["masks_fig_weights", runs])
    page.goto(base + "/positional_encoding")
    page.wait_for_function(DRAWN, arg="positional_encoding_fig_pe", timeout=90_000)
    page.wait_for_timeout(1000)
    out["Positional encoding: PE over base and d_model (50 positions)"] = page.evaluate(
        ANIMATE, ["positional_encoding_fig_pe", runs])
    page.goto(base + "/learn")
    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function(DRAWN, arg="learn_fig_training", timeout=90_000)
    page.wait_for_timeout(1000)
    out["Learn: playback of a 200-step run"] = page.evaluate(
        ANIMATE, ["learn_fig_training", runs])
    return out


def main(argv=None) -> None:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    runs = args.runs or (1 if args.quick else 3)
    from playwright.sync_api import sync_playwright
    with c.streamlit_server(c.RESULTS_DIR / "drag-server.log") as (base, _proc), \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=c.CHROMIUM, headless=True,
                                     args=c.CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            times = _charts(page, base, runs)
        finally:
            browser.close()
    rows = [[name, len(ts), f"{c.median(ts):.1f}", f"{c.percentile(ts, 90):.1f}",
             f"{max(ts):.1f}"] for name, ts in times.items()]
    worst = max(c.median(ts) for ts in times.values())
    targets = [] if args.quick else [c.target(
        f"drag: one slider step in the browser <= {TARGET_MS:g} ms (median, every chart with "
        "frames)", f"worst median {worst:.1f} ms", worst <= TARGET_MS)]
    markdown = (
        f"### Sliders while dragging ({c.chromium_version()}, {runs} passes over every frame)"
        "\n\n" + c.md_table(["chart", "steps timed", "median (ms)", "90th percentile (ms)",
                             "slowest (ms)"], rows)
        + "\n\nEach step is `Plotly.animate` to one precomputed frame, awaited: what the "
          "browser does at every step of a drag, with no request to the server.\n")
    print(markdown)
    c.emit(args, {"name": "drag", "targets": targets, "markdown": markdown})


if __name__ == "__main__":
    main()
