"""Core: the full attention trace against the two matrix products alone and a naive reference.

    python benchmarks/bench_core.py [--quick] [--runs N] [--json PATH]

For t = 16, 256, 1024 tokens, d_model = 512 split into 8 heads (d_k = d_v = 64), in float32 and
float64, given q, k and v of shape (t, d_model):

- matmuls: the two products alone, ``q_h k_hᵀ`` and ``weights_h v_h`` for all heads (batched);
- trace: the core's computing path (``attnviz.core.attention._attend``, which every public function
  calls): scores, weights and output for all heads, each kept (with the scaled and masked
  scores up to 512 × 512 per head; above that the results derive those on access);
- naive: a textbook numpy reference, one head at a time (``s = qkᵀ/√d_k``, stable softmax, ·v);
- public MHA: ``multi_head_attention(x, None, w_q, w_k, w_v, n_heads=8)`` end to end, which adds
  validation and the three projections x·W (shown separately as "projections").

Everything runs twice: with OpenBLAS's default threads (one per core) and with one BLAS thread
(what the dashboard sets; then the core spreads large heads over one thread per core itself).

Target: trace at t = 1024, float32 <= 2 × matmuls, taking for each side its faster BLAS
setting. The functions are timed in turn within each repetition (so a busy machine slows them
alike) and the median of the runs is reported.
"""

from __future__ import annotations

import time

import _common as c
import numpy as np

D_MODEL = 512
N_HEADS = 8


def _inputs(t: int, dtype, rng: np.random.Generator) -> dict:
    """q, k, v (t, d_model), their head views, x and projection weights."""
    q, k, v, x = (rng.standard_normal((t, D_MODEL)).astype(dtype) for _ in range(4))
    w = [(rng.standard_normal((D_MODEL, D_MODEL)) / np.sqrt(D_MODEL)).astype(dtype)
         for _ in range(3)]

    def heads(a):
        return a.reshape(t, N_HEADS, -1).transpose(1, 0, 2)  # (n_heads, t, d_k)

    return dict(q=q, k=k, v=v, qh=heads(q), kh=heads(k), vh=heads(v), x=x, w=w,
                mask=np.ones((t, t), dtype=bool))


def _functions(d: dict) -> dict:
    """The measured callables, each on the same inputs."""
    from attnviz.core.attention import _attend, multi_head_attention

    d_k = D_MODEL // N_HEADS
    scale = 1.0 / np.sqrt(d_k)
    kt = np.swapaxes(d["kh"], -1, -2)

    def matmuls():
        scores = d["qh"] @ kt  # (n_heads, t, t)
        return scores @ d["vh"]  # (n_heads, t, d_v)

    def trace():
        return _attend(d["qh"], d["kh"], d["vh"], d["mask"], scale, 1.0)

    def naive():
        outs, weights = [], []
        for h in range(N_HEADS):
            cols = slice(h * d_k, (h + 1) * d_k)
            s = d["q"][:, cols] @ d["k"][:, cols].T / np.sqrt(d_k)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            w = e / e.sum(axis=1, keepdims=True)
            weights.append(w)
            outs.append(w @ d["v"][:, cols])
        return weights, outs

    def projections():
        return [d["x"] @ w for w in d["w"]]

    def public_mha():
        return multi_head_attention(d["x"], None, *d["w"], n_heads=N_HEADS)

    return dict(matmuls=matmuls, trace=trace, naive=naive, projections=projections,
                public_mha=public_mha)


def _agreement(d: dict, fns: dict) -> float:
    """Largest |trace − naive| over the weights (the two must agree)."""
    _, _, _, weights, _ = fns["trace"]()
    ref, _ = fns["naive"]()
    return float(np.max(np.abs(weights - np.stack(ref))))


def measure(sizes, dtypes, runs: int) -> list[dict]:
    """Median seconds per function for every size, dtype and BLAS setting."""
    from attnviz.core.blas import blas_threads, set_blas_threads

    default = blas_threads()
    settings = [default] if default in (None, 1) else [default, 1]
    rows = []
    try:
        for n in settings:
            if n is not None:
                set_blas_threads(n)
            rows += _measure(sizes, dtypes, runs, n)
    finally:
        if default is not None:
            set_blas_threads(default)
    return rows


def _measure(sizes, dtypes, runs: int, blas: int | None) -> list[dict]:
    """:func:`measure` at the current BLAS setting."""
    rng = np.random.default_rng(0)
    rows = []
    for dtype in dtypes:
        for t in sizes:
            d = _inputs(t, dtype, rng)
            fns = _functions(d)
            for f in fns.values():  # warm up (allocations, BLAS threads)
                f()
            times = {name: [] for name in fns}
            for _ in range(runs):
                for name, f in fns.items():
                    start = time.perf_counter()
                    f()
                    times[name].append(time.perf_counter() - start)
            row = {"dtype": np.dtype(dtype).name, "t": t, "runs": runs, "blas": blas,
                   "max_abs_diff": _agreement(d, fns)}
            row.update({name: c.median(ts) for name, ts in times.items()})
            row.update({f"best_{name}": min(ts) for name, ts in times.items()})
            row["ratio"] = row["trace"] / row["matmuls"]
            row["ratio_best"] = row["best_trace"] / row["best_matmuls"]
            rows.append(row)
    return rows


def measure_caching(runs: int, big_t: int) -> list[dict]:
    """What reusing a scenario's result costs, three ways, against computing it again.

    - compute: ``run_scenario`` (what every rerun did before);
    - st.cache_data hit: a pickle round trip of the result (cache_data stores pickled values
      and unpickles a copy on every hit);
    - session memo hit: hashing the scenario's content (``fingerprint``), what
      ``controls.compute`` does before reusing the result it kept.
    """
    import pickle

    from attnviz.scenarios.fingerprint import fingerprint
    from attnviz.scenarios.scenario import run_scenario

    out = []
    for label, scenario in (("default", c.default_scenario()),
                            (f"t={big_t}, {c.BIG_HEADS} heads", c.big_scenario(t=big_t))):
        result = run_scenario(scenario)
        size = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        fns = {"compute": lambda s=scenario: run_scenario(s),
               "pickle": lambda r=result: pickle.loads(
                   pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)),
               "fingerprint": lambda s=scenario: fingerprint(s)}
        times = {k: [] for k in fns}
        for _ in range(runs):
            for k, f in fns.items():
                start = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - start)
        out.append({"scenario": label, "pickled_bytes": size,
                    **{k: c.median(v) for k, v in times.items()}})
    return out


def measure_threads(runs: int, big_t: int) -> list[dict]:
    """run_scenario on the large scenario with OpenBLAS's default threads and with one."""
    from attnviz.core.blas import blas_threads, set_blas_threads
    from attnviz.scenarios.scenario import run_scenario

    default = blas_threads()
    if default is None:
        return []
    scenario = c.big_scenario(t=big_t)
    times: dict[int, list[float]] = {default: [], 1: []}
    try:
        for _ in range(runs):
            for n in times:
                set_blas_threads(n)
                run_scenario(scenario)  # first call after a change: warm the threads
                start = time.perf_counter()
                run_scenario(scenario)
                times[n].append(time.perf_counter() - start)
    finally:
        set_blas_threads(default)
    return [{"threads": n, "scenario": f"t={big_t}, {c.BIG_HEADS} heads",
             "compute": c.median(ts), "best": min(ts)} for n, ts in times.items()]


def section(rows: list[dict], quick: bool, caching: list[dict] | None = None,
            threads: list[dict] | None = None) -> dict:
    """The markdown section and the targets for run_all."""
    headers = ["BLAS threads", "dtype", "t", "matmuls QKᵀ, ·V (ms)", "full trace (ms)",
               "trace / matmuls", "same, fastest runs", "naive reference (ms)", "public MHA (ms)",
               "of which projections (ms)", "max abs diff trace vs naive"]
    table = c.md_table(headers, [
        [r.get("blas") or "?", r["dtype"], r["t"], c.ms(r["matmuls"]), c.ms(r["trace"]),
         f"{r['ratio']:.2f}", f"{r['ratio_best']:.2f}", c.ms(r["naive"]),
         c.ms(r["public_mha"]), c.ms(r["projections"]),
         f"{r['max_abs_diff']:.1e}"] for r in rows])
    goal = [r for r in rows if r["t"] == 1024 and r["dtype"] == "float32"]
    targets = []
    if goal:
        trace = min(goal, key=lambda r: r["trace"])
        products = min(goal, key=lambda r: r["matmuls"])
        ratio = trace["trace"] / products["matmuls"]
        targets.append(c.target(
            "core: full trace at t=1024, float32 <= 2x the two matmuls",
            f"{ratio:.2f}x ({c.ms(trace['trace'])} ms with {trace.get('blas')} BLAS thread(s) "
            f"vs {c.ms(products['matmuls'])} ms with {products.get('blas')})",
            ratio <= 2.0))
    runs = rows[0]["runs"] if rows else 0
    md = (f"### Core: attention trace (d_model = {D_MODEL}, {N_HEADS} heads, "
          f"median of {runs} runs{', QUICK' if quick else ''})\n\n{table}\n\n"
          "*matmuls*: the two products alone for all heads; *full trace*: scores, weights and "
          "output for all heads, plus the scaled and masked scores up to 512 × 512 per head "
          "(above, the results derive those on access) — the core's `_attend`; with one BLAS "
          "thread it runs large heads on one thread per core itself; *naive*: a textbook "
          "loop over heads; *public MHA*: `multi_head_attention` from x, including validation "
          "and the three projections x·W (timed alone in the next column). The functions run in "
          "turn within each repetition; on a shared machine the products' time moves with the "
          "load (two BLAS threads), so the ratio of the fastest runs is shown as well.\n")
    if caching:
        md += ("\n#### Reusing a scenario's result instead of computing it again\n\n"
               + c.md_table(["scenario", "compute (ms)", "st.cache_data hit = pickle round "
                             "trip (ms)", "pickled size (KiB)", "session memo hit = content "
                             "hash (ms)"],
                            [[r["scenario"], c.ms(r["compute"]), c.ms(r["pickle"]),
                              c.kib(r["pickled_bytes"]), c.ms(r["fingerprint"])]
                             for r in caching])
               + "\n\n`controls.compute` keeps the last results of a session keyed by the "
               "content hash; `st.cache_data` would unpickle a copy on every hit.\n")
    if threads:
        md += ("\n#### OpenBLAS threads (the dashboard sets 1: `attnviz.core.blas`)\n\n"
               + c.md_table(["BLAS threads", "scenario", "run_scenario median (ms)",
                             "best (ms)"],
                            [[r["threads"], r["scenario"], c.ms(r["compute"]), c.ms(r["best"])]
                             for r in threads])
               + "\n")
    return {"name": "core", "rows": rows, "caching": caching or [], "threads": threads or [],
            "targets": targets, "markdown": md}


def main(argv=None) -> None:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    sizes = (16, 64) if args.quick else (16, 256, 1024)
    runs = args.runs or (2 if args.quick else 7)
    rows = measure(sizes, (np.float32, np.float64), runs)
    big_t = 16 if args.quick else c.BIG_T
    caching = measure_caching(max(runs, 5), big_t)
    threads = measure_threads(max(runs, 5) * (1 if args.quick else 3), big_t)
    c.emit(args, section(rows, args.quick, caching, threads))


if __name__ == "__main__":
    main()
