"""Training speed of the Induction heads page: Adam steps per second of its training loop.

    python benchmarks/bench_induction_train.py [--quick] [--runs N] [--steps N] [--json PATH]

``attnviz.scenarios.induction.train_steps`` at the page's default settings (2 layers × 2 heads,
d_model 32, d_head 16, 24 tokens, batch 32: a fresh batch, the forward, the backward and an
Adam step each), once for every position option of the model. Each run trains ``--steps``
steps from the start; the table gives the median steps per second over the runs.
The page trains within a click budget (``limits.TRAIN_SECONDS``), so this rate is how far one
click gets. BLAS threads as the dashboard runs them (the default).
"""

from __future__ import annotations

import time

import _common as c

from attnviz.core.transformer import POSITIONAL
from attnviz.scenarios.induction import InductionSettings, start_training, train_steps


def steps_per_second(positional: str, steps: int) -> float:
    """One run of ``steps`` training steps from the start, in steps per second."""
    state = start_training(InductionSettings(positional=positional, steps=steps))
    start = time.perf_counter()
    state = train_steps(state, steps)
    return state.step / (time.perf_counter() - start)


def main(argv=None) -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=60, help="training steps per run")
    args = p.parse_args(argv)
    runs = args.runs or (1 if args.quick else 5)
    steps = 3 if args.quick else args.steps
    rates = {pos: c.median([steps_per_second(pos, steps) for _ in range(runs)])
             for pos in POSITIONAL}
    rows = [[pos, f"{rate:.1f}", c.ms(1.0 / rate)] for pos, rate in rates.items()]
    markdown = ("### Induction heads: training speed (`python benchmarks/bench_induction_train.py`)"
                "\n\n" + c.md_table(["positions", "steps / s", "one step (ms)"], rows)
                + f"\nMedian of {runs} runs of {steps} steps at the page's defaults. "
                  f"Load average: {c.load_average()}.\n")
    c.emit(args, {"name": "induction_train", "markdown": markdown, "steps_per_second": rates,
                  "targets": []})


if __name__ == "__main__":
    main()
