"""Backward pass and learning: forward + backward against the forward alone, a Learn run, and
the Learn playback in the browser.

    python benchmarks/bench_backward.py [--quick] [--runs N] [--json PATH]

- At the dashboard's limits (attnviz.scenarios.limits: 256 tokens, d_model 64, 16 heads,
  projection widths 128; multi-head with W_O): ``run_scenario`` (the forward alone) against
  ``gradients`` with the ½‖O − T‖² loss (a forward, the loss and the backward pass of every
  intermediate and parameter). Target: <= 3x the forward.
- ``train`` for 200 Adam steps on the default scenario (seed 000, positional encoding on,
  W_Q and W_K, the previous-token pattern). Target: <= 2 s.
- In Chromium, on the Learn page after a 200-step run: the time Plotly takes to show one
  recorded frame (``Plotly.animate`` to a frame, awaited), over every recorded frame.
  Target: <= 50 ms per frame.

Medians of the runs; BLAS threads as the dashboard runs them (the default).
"""

from __future__ import annotations

import time
from dataclasses import replace

import _common as c
import numpy as np

FORWARD_TARGET = 3.0
LEARN_TARGET_S = 2.0
FRAME_TARGET_MS = 50.0


def _limits_scenario():
    from attnviz.scenarios import limits
    t, d, w = limits.MAX_TOKENS, limits.MAX_D_MODEL, limits.MAX_WIDTH
    rng = np.random.default_rng(0)
    sc = c.default_scenario()
    return replace(sc, tokens=tuple(f"t{i}" for i in range(t)), x=rng.normal(size=(t, d)),
                   w_q=rng.normal(size=(d, w)) / 8, w_k=rng.normal(size=(d, w)) / 8,
                   w_v=rng.normal(size=(d, w)), w_o=rng.normal(size=(w, d)),
                   variant="multi_head", n_heads=limits.MAX_HEADS)


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return c.median(times) * 1e3


def _frame_ms(runs: int, frames: int | None = None) -> list[float]:
    """Per-frame playback times on the Learn page (ms), in a real browser (``frames``: the
    first frames only, timed as soon as the chart has drawn: the --quick smoke run)."""
    with c.streamlit_server(c.RESULTS_DIR / "backward-server.log") as (base, _proc), \
            c.chromium() as browser:
        page = browser.new_page(viewport=c.VIEWPORT)
        page.goto(base + "/learn")
        page.get_by_role("button", name="Train", exact=True).click()
        page.wait_for_function(
            "() => document.querySelector('.st-key-learn_fig_training .js-plotly-plot')"
            "?._fullData?.length", timeout=60_000)
        if frames is None:
            page.wait_for_timeout(1000)
        return page.evaluate(c.ANIMATE_FRAMES, ["learn_fig_training", runs, frames])


def main(argv=None) -> None:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    runs = args.runs or (2 if args.quick else 15)
    from attnviz.scenarios.gradients import Loss, default_loss, gradients, previous_token_pattern
    from attnviz.scenarios.learn import train
    from attnviz.scenarios.scenario import run_scenario

    big = _limits_scenario() if not args.quick else c.default_scenario()
    loss = default_loss(big, "output_mse")
    forward = _median_ms(lambda: run_scenario(big), runs)
    both = _median_ms(lambda: gradients(big, loss), runs)
    learn_sc = replace(c.default_scenario(), use_pe=True)
    learn_loss = Loss("pattern_ce", previous_token_pattern(learn_sc.t, learn_sc.t))
    learn = _median_ms(lambda: train(learn_sc, learn_loss, steps=200), max(3, runs // 5)) / 1e3
    frames = _frame_ms(1, 2) if args.quick else _frame_ms(3)
    frame = c.median(frames)
    targets = [] if args.quick else [
        c.target("backward: forward + backward at the dashboard's limits (256 tokens, 16 heads, "
                 f"widths 128) <= {FORWARD_TARGET:g}x the forward alone",
                 f"{both / forward:.2f}x ({both:.1f} ms vs {forward:.1f} ms)",
                 both / forward <= FORWARD_TARGET),
        c.target(f"learn: 200 Adam steps on the default scenario <= {LEARN_TARGET_S:g} s",
                 f"{learn:.2f} s", learn <= LEARN_TARGET_S),
        c.target(f"learn: playback of one recorded frame in the browser <= "
                 f"{FRAME_TARGET_MS:g} ms", f"{frame:.1f} ms median, "
                 f"{c.percentile(frames, 90):.1f} ms 90th percentile",
                 frame <= FRAME_TARGET_MS)]
    table = c.md_table(["measurement", "median"], [
        ["forward alone (run_scenario)", f"{forward:.1f} ms"],
        ["forward + loss + backward (gradients)", f"{both:.1f} ms"],
        ["ratio", f"{both / forward:.2f}x"],
        ["Learn: 200 Adam steps, default scenario", f"{learn:.3f} s"],
        [f"Learn playback: one frame ({len(frames)} frames timed)", f"{frame:.1f} ms"]])
    markdown = (f"### Backward pass and learning (median of {runs} runs)\n\n{table}\n\n"
                "The forward and backward figures are at the dashboard's limits (multi-head, "
                "16 heads of width 8, W_O); the playback is Plotly.animate to each recorded "
                "frame of a 200-step run on the Learn page (3 heatmaps and the loss marker), "
                "awaited, in Chromium.\n")
    print(markdown)
    c.emit(args, {"name": "backward", "targets": targets, "markdown": markdown})


if __name__ == "__main__":
    main()
