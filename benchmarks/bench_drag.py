"""Sliders that move the picture while dragging: the time the browser takes to show one step.

    python benchmarks/bench_drag.py [--quick] [--runs N] [--json PATH]

On the default scenario, in Chromium, for each chart whose own slider steps through frames
computed in advance (no server round trip while dragging): the Playground's weights over τ
(lecture view), the Masks page's weights over the window width, the Positional encoding page's
PE matrix over its base and over d_model (up to 50 × 128), the Inference page's weights over the
model call and the prefill, its running statistics and its sink weights, the Modern page's PE
scores over the shift Δ, RoPE angles, QK-norm logits, ALiBi slopes and biases (up to 64 × 64)
and GQA sharing grid, and the Learn page's playback after a 200-step run (the list: CHARTS).
Each step is ``Plotly.animate`` to one frame, awaited — what a drag does at every step — over
every frame of the chart.
Target: <= 50 ms per step.
"""

from __future__ import annotations

import _common as c

TARGET_MS = 50.0

DRAWN = ("k => document.querySelector(`.st-key-${k} .js-plotly-plot`)?._transitionData"
         "?._frames?.length > 0")


def _sliding_window(page) -> None:
    page.get_by_test_id("stRadio").first.get_by_text("sliding window").click()


def _train(page) -> None:
    page.get_by_role("button", name="Train", exact=True).click()


def _learned_sink(page) -> None:
    from attnviz.teach.text import inference as text
    page.get_by_role("tab", name=text.SINKS_TAB).click()
    page.get_by_text(text.LEARNED_LABEL, exact=True).click()


def _norm_tab(page) -> None:
    from attnviz.teach.text import modern as text
    page.get_by_role("tab", name=text.NORM_TAB).click()


def _alibi_tab(page) -> None:
    from attnviz.teach.text import modern as text
    page.get_by_role("tab", name=text.ALIBI_TAB).click()


def _gqa_tab(page) -> None:
    from attnviz.teach.text import modern as text
    page.get_by_role("tab", name=text.GQA_TAB).click()


def _online_tab(page) -> None:
    from attnviz.teach.text import inference as text
    page.get_by_role("tab", name=text.ONLINE_TAB).click()


# (row name, page path, chart key, what a user does first so that the chart has frames)
CHARTS = [
    ("Playground: weights over τ", "playground", "playground_fig_weights_slot_1", None),
    ("Masks: weights over the window width", "masks", "masks_fig_weights", _sliding_window),
    ("Positional encoding: PE over base and d_model (50 positions)", "positional_encoding",
     "positional_encoding_fig_pe", None),
    ("Inference: weights over the model call and the prefill", "inference",
     "inference_fig_call_weights", None),
    ("Inference: running statistics over the tile and the keys per tile", "inference",
     "inference_fig_running", _online_tab),
    ("Inference: sink weights over window, sink tokens and logit", "inference",
     "inference_fig_sink_weights", _learned_sink),
    ("Modern: PE scores over the shift Δ", "modern", "modern_fig_pe_scores", None),
    ("Modern: RoPE angles over the base", "modern", "modern_fig_angles", None),
    ("Modern: QK-norm logits over the gain g", "modern", "modern_fig_normed_logits", _norm_tab),
    ("Modern: ALiBi slopes over the heads", "modern", "modern_fig_alibi_slopes", _alibi_tab),
    ("Modern: an ALiBi bias over the length (2 to 64)", "modern", "modern_fig_alibi_0",
     _alibi_tab),
    ("Modern: GQA sharing over the key/value and query heads", "modern", "modern_fig_sharing",
     _gqa_tab),
    ("Learn: playback of a 200-step run", "learn", "learn_fig_training", _train),
]


# --quick: the first frames of each chart only, and waits for the page instead of pauses
QUICK_FRAMES = 2
IDLE = ("() => !!document.querySelector(\"[data-testid=stApp][data-test-connection-state="
        "'CONNECTED'][data-test-script-state='notRunning']\") && [...document.querySelectorAll("
        "'.js-plotly-plot')].some(g => g._fullData)")


def _charts(page, base: str, runs: int, quick: bool = False) -> dict[str, list[float]]:
    """Per-step times (ms) of each chart in CHARTS, each on a freshly opened page (``quick``:
    its first QUICK_FRAMES frames, a page opened once for its charts in a row, the user acting
    as soon as the page is idle with a chart drawn)."""
    out, opened = {}, None
    for name, path, key, prepare in CHARTS:
        if not (quick and path == opened):
            page.goto(f"{base}/{path}")
            opened = path
        if prepare:
            if quick:
                page.wait_for_function(IDLE, timeout=90_000)
            else:
                page.wait_for_timeout(2000)  # the page has drawn; now the user acts
            prepare(page)
        page.wait_for_function(DRAWN, arg=key, timeout=90_000)
        if not quick:
            page.wait_for_timeout(1000)
        out[name] = page.evaluate(c.ANIMATE_FRAMES, [key, runs, QUICK_FRAMES if quick else None])
    return out


def main(argv=None) -> None:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    runs = args.runs or (1 if args.quick else 3)
    with c.streamlit_server(c.RESULTS_DIR / "drag-server.log") as (base, _proc), \
            c.chromium() as browser:
        times = _charts(browser.new_page(viewport=c.VIEWPORT), base, runs, args.quick)
    rows = [[name, len(ts), f"{c.median(ts):.1f}", f"{c.percentile(ts, 90):.1f}",
             f"{max(ts):.1f}"] for name, ts in times.items()]
    worst = max(c.median(ts) for ts in times.values())
    targets = [] if args.quick else [c.target(
        f"drag: one slider step in the browser <= {TARGET_MS:g} ms (median, every chart with "
        "frames)", f"worst median {worst:.1f} ms", worst <= TARGET_MS)]
    markdown = (
        f"### Sliders while dragging ({c.chromium_version()}, {runs} passes over "
        f"{f'the first {QUICK_FRAMES} frames, QUICK' if args.quick else 'every frame'})"
        "\n\n" + c.md_table(["chart", "steps timed", "median (ms)", "90th percentile (ms)",
                             "slowest (ms)"], rows)
        + "\n\nEach step is `Plotly.animate` to one precomputed frame, awaited: what the "
          "browser does at every step of a drag, with no request to the server.\n")
    print(markdown)
    c.emit(args, {"name": "drag", "targets": targets, "markdown": markdown})


if __name__ == "__main__":
    main()
