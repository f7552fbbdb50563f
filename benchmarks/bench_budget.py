"""Compute budget per click: one Train click at the editing limits, alone and beside busy sessions.

    python benchmarks/bench_budget.py [--quick] [--runs N] [--json PATH] [--busy 4,16]

The Learn page's Train click, in the core loop the page runs (``attnviz.scenarios.learn``
``Training.run`` under ``attnviz.scenarios.budget.click_budget()``), at the editing limits:
256 tokens, 16 heads, widths 128 (d_model 64), every field trained (W_Q, W_K, W_V, W_O, X),
1000 steps asked for, "attend to the previous token", Adam. One process with one BLAS thread,
as the server runs (``attnviz.ui.blas``).

Beside the click, K *busy sessions*: threads that rerun a page at the limits without pause
(``run_scenario`` on the same scenario: a student dragging a slider on the Playground), as
one server process runs every session in a thread of its own. For each K it reports

- the click: wall time, steps taken of the 1000, ms per step, and what the click would have
  taken without the budget (1000 steps at that pace: the issue measured 53 s idle, 586 s
  under a class's load);
- the busy sessions: their rerun time (median and 90th percentile) with no click running and
  while the click runs — how much one Train click takes from everyone else.

With K = 4 it also runs the click without yielding the CPU (the budget's slice set beyond the
budget) to show what ``time.sleep(0)`` between steps changes.

``--quick``: the default scenario and a 1 s budget (checks the script works, not speed).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import _common as c
import numpy as np

BUSY = (0, 4, 16)  # busy sessions beside the click
BASELINE_S = 3.0  # seconds the busy sessions run alone, before the click


def limits_scenario():
    """The editing limits: 256 tokens, 16 heads, widths 128, positions on (seeded)."""
    from attnviz.scenarios import limits
    t, d, w = limits.MAX_TOKENS, limits.MAX_D_MODEL, limits.MAX_WIDTH
    rng = np.random.default_rng(0)
    sc = replace(c.default_scenario(), variant="multi_head", n_heads=limits.MAX_HEADS,
                 use_pe=True)
    return replace(sc, tokens=tuple(f"t{i}" for i in range(t)), x=rng.normal(size=(t, d)),
                   w_q=rng.normal(size=(d, w)) / 8, w_k=rng.normal(size=(d, w)) / 8,
                   w_v=rng.normal(size=(d, w)) / 8, w_o=rng.normal(size=(w, d)) / 8)


def _busy(scenario, stop: threading.Event, times: list) -> None:
    """A session rerunning a page without pause: (start, seconds) of every rerun."""
    from attnviz.scenarios.scenario import run_scenario
    while not stop.is_set():
        began = time.perf_counter()
        run_scenario(scenario)
        times.append((began, time.perf_counter() - began))


def click(scenario, loss, busy: int, seconds: float, *, yields: bool = True) -> dict:
    """One Train click (1000 steps asked for) under a budget of ``seconds``, beside ``busy``
    sessions; the busy sessions run alone for BASELINE_S first."""
    from attnviz.scenarios.budget import Budget, click_budget
    from attnviz.scenarios.learn import MAX_STEPS, TRAINABLE, Training
    stop, times = threading.Event(), [[] for _ in range(busy)]
    threads = [threading.Thread(target=_busy, args=(scenario, stop, t), daemon=True)
               for t in times]
    for th in threads:
        th.start()
    try:
        time.sleep(BASELINE_S if busy else 0)
        began = time.perf_counter()
        budget = click_budget(seconds) if yields else Budget(seconds, slice_seconds=1e9).start()
        training = Training(scenario, loss, trainable=TRAINABLE, steps=MAX_STEPS)
        training.run(budget)
        wall = time.perf_counter() - began
    finally:
        stop.set()
        for th in threads:
            th.join()
    alone = [s for t in times for (b, s) in t if b < began]
    during = [s for t in times for (b, s) in t if began <= b and b + s <= began + wall]
    steps = training.step
    per_step = wall / max(steps, 1)
    return {"busy": busy, "yields": yields, "wall_s": wall, "steps": steps,
            "ms_per_step": per_step * 1e3, "unbudgeted_s": per_step * MAX_STEPS,
            "paused": training.paused, "yielded": budget.yields,
            "busy_alone_ms": [c.median(alone) * 1e3, c.percentile(alone, 90) * 1e3],
            "busy_during_ms": [c.median(during) * 1e3, c.percentile(during, 90) * 1e3],
            "busy_reruns": [len(alone), len(during)]}


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--busy", default=",".join(map(str, BUSY)),
                   help="comma-separated counts of busy sessions beside the click")
    args = p.parse_args(argv)
    from attnviz.scenarios import limits
    from attnviz.scenarios.gradients import Loss, target_pattern
    from attnviz.scenarios.scenario import run_scenario
    from attnviz.ui.blas import one_blas_thread
    one_blas_thread()  # as the server process

    seconds = 1.0 if args.quick else limits.TRAIN_SECONDS
    busy_counts = [0, 2] if args.quick else [int(k) for k in args.busy.split(",")]
    sc = (replace(c.default_scenario(), variant="multi_head", n_heads=1, use_pe=True)
          if args.quick else limits_scenario())
    loss = Loss("pattern_ce", target_pattern("previous", run_scenario(sc).mask))
    rows = [click(sc, loss, k, seconds) for k in busy_counts]
    if not args.quick and 4 in busy_counts:
        rows.append(click(sc, loss, 4, seconds, yields=False))

    def pair(v):
        return "—" if v[0] != v[0] else f"{c.ms(v[0] / 1e3)} / {c.ms(v[1] / 1e3)}"

    table = c.md_table(
        ["busy sessions", "yield", "click wall time", "steps of 1000", "ms / step",
         "without the budget (1000 steps)", "busy rerun alone (p50 / p90 ms)",
         "busy rerun during the click (p50 / p90 ms)"],
        [[r["busy"], "sleep(0) / 50 ms" if r["yields"] else "none", f"{r['wall_s']:.2f} s",
          r["steps"], c.ms(r["ms_per_step"] / 1e3), f"{r['unbudgeted_s']:.0f} s",
          pair(r["busy_alone_ms"]), pair(r["busy_during_ms"])] for r in rows])
    worst = max(r["wall_s"] for r in rows)
    each = ", ".join(f"{r['busy']} busy: {r['wall_s']:.2f} s" for r in rows)
    targets = [c.target(
        f"budget: one Train click at the editing limits ends within its budget "
        f"({seconds:g} s, + 0.5 s), alone and beside busy sessions",
        f"{worst:.2f} s worst ({each})", worst <= seconds + 0.5)]
    where = ("the default scenario (--quick)" if args.quick else
             "the editing limits (256 tokens, 16 heads, widths 128, every field)")
    markdown = (
        f"### Compute budget per click: one Train click at {where}\n\n"
        f"Budget {seconds:g} s per click (`limits.TRAIN_SECONDS`); 1000 steps asked for; one "
        f"process, one BLAS thread, {c.machine()['cores']} cores, load average "
        f"{c.load_average()} at the end. *Busy sessions*: threads rerunning the same scenario "
        "without pause (`run_scenario`), as a server runs sessions; their rerun times alone "
        f"({BASELINE_S:g} s before the click) and during it.\n\n{table}\n\n"
        "*Without the budget*: the 1000 steps asked for at the measured pace — what one click "
        "held the server for before (issue 26: 53 s idle, 586 s under a class's load).\n")
    c.emit(args, {"name": "budget", "targets": targets, "rows": rows, "markdown": markdown})


if __name__ == "__main__":
    main()
