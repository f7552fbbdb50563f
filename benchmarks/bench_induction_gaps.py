"""How well the shipped induction model copies across each gap between the two copies.

    python benchmarks/bench_induction_gaps.py [--quick] [--before REV] [--sequences N] [--json PATH]

Held-out sequences of the induction task (``attnviz.scenarios.induction.make_batch`` at the
shipped model's settings, seed :data:`SEED`, none of them a training batch): every gap between
the copies equally likely for its segment length. For each range of gaps, the mean next-token
loss over the repeat's predictions (the task loss, :func:`~attnviz.scenarios.induction.
loss_by_gap`) of

- a *perfect induction head*: it predicts, evenly, the tokens that followed every earlier
  occurrence of the current token (a token that occurred before by chance makes it hedge, so
  it is not 0; a model can do better by matching longer prefixes);
- the shipped model (``attnviz/io/examples/induction_model.npz``);
- with ``--before REV``, the shipped model as it was at git revision REV (read with
  ``git show``, nothing trained), so a rebuild's effect is one table.

Losses, not times: nothing here depends on the machine's speed.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import _common as c
import numpy as np

from attnviz.io.examples.make_induction_model import INDUCTION_NPZ, load_induction_model
from attnviz.scenarios.induction import InductionBatch, loss_by_gap, make_batch

SEED = 4141
RANGES = ((0, 0), (1, 3), (4, 7), (8, 11), (12, 16), (0, 16))  # the last: every gap


def copier_nll(batch: InductionBatch, vocab_size: int) -> np.ndarray:
    """The perfect induction head's next-token loss at every position, shape (batch, t − 1)."""
    tokens = batch.tokens
    b, t = tokens.shape
    nll = np.full((b, t - 1), np.log(vocab_size))  # nothing to copy: uniform
    for i in range(1, t - 1):
        earlier = tokens[:, :i] == tokens[:, i:i + 1]  # (b, i) earlier occurrences
        n = earlier.sum(axis=1)
        hits = (earlier & (tokens[:, 1:i + 1] == tokens[:, i + 1:i + 2])).sum(axis=1)
        seen = n > 0
        with np.errstate(divide="ignore"):
            nll[seen, i] = -np.log(hits[seen] / n[seen])
    return nll


def by_range(losses: dict[int, tuple[float, int]]) -> list[tuple[float, int]]:
    """(mean loss, predictions) for each of :data:`RANGES`, weighted by predictions."""
    out = []
    for low, high in RANGES:
        parts = [(loss, n) for gap, (loss, n) in losses.items() if low <= gap <= high]
        count = sum(n for _, n in parts)
        out.append((sum(loss * n for loss, n in parts) / count if count else float("nan"),
                    count))
    return out


def copier_by_gap(batch: InductionBatch, vocab_size: int) -> dict[int, tuple[float, int]]:
    nll = copier_nll(batch, vocab_size)
    found = {}
    for gap in np.unique(batch.gap):
        counted = batch.loss_mask & (batch.gap == gap)[:, None]
        found[int(gap)] = (float(nll[counted].mean()), int(counted.sum()))
    return found


def model_at(rev: str):
    """The shipped model as git revision ``rev`` holds it."""
    path = INDUCTION_NPZ.relative_to(c.ROOT).as_posix()
    data = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=c.ROOT, check=True,
                          capture_output=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "induction_model.npz"
        file.write_bytes(data)
        return load_induction_model(file)


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--before", default="", help="also the shipped model at this git revision")
    p.add_argument("--sequences", type=int, default=4000, help="held-out sequences")
    args = p.parse_args()
    n = 200 if args.quick else args.sequences
    model = load_induction_model()
    settings = model.settings
    batch = make_batch(settings, np.random.default_rng(SEED), n)
    columns = {"perfect induction head": copier_by_gap(batch, settings.vocab_size)}
    if args.before:
        columns[f"shipped at {args.before}"] = loss_by_gap(model_at(args.before).params, batch)
    columns["shipped model"] = loss_by_gap(model.params, batch)
    ranged = {name: by_range(losses) for name, losses in columns.items()}
    rows = []
    for k, (low, high) in enumerate(RANGES):
        gaps = f"{low}" if low == high else f"{low}–{high}"
        gaps = "all" if (low, high) == RANGES[-1] else gaps
        count = ranged["shipped model"][k][1]
        rows.append([gaps, count, *(f"{ranged[name][k][0]:.2f}" for name in columns)])
    markdown = "\n\n".join([
        f"### Induction: held-out loss by gap (`python benchmarks/bench_induction_gaps.py"
        f"{' --before ' + args.before if args.before else ''}`)",
        f"{n:,} held-out task sequences (seed {SEED}), every gap equally likely for its "
        f"length; the mean next-token loss (nats) over the repeat's predictions. Chance: "
        f"ln {settings.vocab_size} = {np.log(settings.vocab_size):.2f}.",
        c.md_table(["gap", "predictions", *columns], rows)])
    c.emit(args, {"name": "induction_gaps", "markdown": markdown,
                  "by_gap": {name: {str(g): v for g, v in losses.items()}
                             for name, losses in columns.items()}})


if __name__ == "__main__":
    main()
