"""Core: the attention trace against the two matrix products alone, a naive loop and PyTorch.

    python benchmarks/bench_core.py [--quick] [--runs N] [--json PATH]

For t = 16, 256, 1024 tokens, d_model = 512 split into 8 heads (d_k = d_v = 64), in float32 and
float64, given q, k and v of shape (t, d_model):

- matmuls: the two products alone, ``q_h k_hᵀ`` and ``weights_h v_h`` for all heads (batched);
- trace: the core's computing path (``attnviz.core.attention.attend_kernel``, which every public
  function calls): scores, scaled, masked, weights and output for all heads, each kept;
- naive: a textbook numpy reference, one head at a time (``s = qkᵀ/√d_k``, stable softmax, ·v);
- public MHA: ``multi_head_attention(x, None, w_q, w_k, w_v, w_o, n_heads=8)`` end to end,
  which adds validation and the projections x·W and concat·W_O (timed alone as "projections");
- torch MHA (when torch is installed): ``torch.nn.MultiheadAttention`` on the same x and
  weights (no bias), ``need_weights=True, average_attn_weights=False`` (every head's weights,
  as the core keeps them), under ``torch.inference_mode()``, with torch limited to as many
  threads as BLAS.

Then ``run_scenario`` at the dashboard's limits (attnviz.scenarios.limits: 256 tokens, d_model
64, 16 heads, projection widths 128), and the cost of reusing a scenario's result.

Everything runs twice, each time in a fresh process: with OpenBLAS's default threads (one per
core) and with ``OPENBLAS_NUM_THREADS=1`` (BLAS reads it when numpy is first imported). The
functions are timed in turn within each repetition (so a busy machine slows them alike); the
median of the runs is reported, with the fastest run beside it and the load average.

Targets (full run only): ``run_scenario`` at the dashboard's limits <= 10 ms median with the
BLAS threads the dashboard runs with (the default: app.py sets none); trace at t = 1024,
float32 <= 2.5 × matmuls, taking for each side its faster BLAS setting; the ratio of the
public MHA to torch's at t = 1024, float32 is reported (no target).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import _common as c
import numpy as np

D_MODEL = 512
N_HEADS = 8
LIMITS_TARGET_S = 0.010
TRACE_TARGET = 2.5


def _cores() -> int:
    """The cores this process may use (OpenBLAS starts one thread per core by default)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _blas_threads() -> int:
    """The BLAS threads of this process: OPENBLAS_NUM_THREADS if set, else one per core."""
    return int(os.environ.get("OPENBLAS_NUM_THREADS") or _cores())


# ---------------------------------------------------------------- the trace at d_model = 512

def _inputs(t: int, dtype, rng: np.random.Generator) -> dict:
    """q, k, v (t, d_model), their head views, x and projection weights w_q, w_k, w_v, w_o."""
    q, k, v, x = (rng.standard_normal((t, D_MODEL)).astype(dtype) for _ in range(4))
    w = [(rng.standard_normal((D_MODEL, D_MODEL)) / np.sqrt(D_MODEL)).astype(dtype)
         for _ in range(4)]

    def heads(a):
        return a.reshape(t, N_HEADS, -1).transpose(1, 0, 2)  # (n_heads, t, d_k)

    return dict(q=q, k=k, v=v, qh=heads(q), kh=heads(k), vh=heads(v), x=x, w=w,
                mask=np.ones((t, t), dtype=bool))


def _torch_mha(d: dict, threads: int):
    """A callable running torch.nn.MultiheadAttention on d's x and weights (None without torch)."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    torch.set_num_threads(threads)
    x = torch.from_numpy(d["x"])[None]  # (1, t, d_model)
    module = torch.nn.MultiheadAttention(D_MODEL, N_HEADS, bias=False, batch_first=True,
                                         dtype=x.dtype)
    w_q, w_k, w_v, w_o = d["w"]
    with torch.no_grad():  # torch computes x @ W.T: load the transposes
        module.in_proj_weight.copy_(torch.from_numpy(np.concatenate([w_q.T, w_k.T, w_v.T])))
        module.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(w_o.T)))

    def torch_mha():
        with torch.inference_mode():
            return module(x, x, x, need_weights=True, average_attn_weights=False)

    return torch_mha


def _functions(d: dict, threads: int) -> dict:
    """The measured callables, each on the same inputs."""
    from attnviz.core.attention import attend_kernel, multi_head_attention
    from attnviz.core.score_mods import At, chain

    d_k = D_MODEL // N_HEADS
    scale = 1.0 / np.sqrt(d_k)
    kt = np.swapaxes(d["kh"], -1, -2)

    def matmuls():
        scores = d["qh"] @ kt  # (n_heads, t, t)
        return scores @ d["vh"]  # (n_heads, t, d_v)

    n, t = d["qh"].shape[:2]
    mods, at = chain(scale, 1.0), At.grid(n, t, t)

    def trace():
        return attend_kernel(d["qh"], d["kh"], d["vh"], d["mask"], mods, at)

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

    fns = dict(matmuls=matmuls, trace=trace, naive=naive, projections=projections,
               public_mha=public_mha)
    torch_mha = _torch_mha(d, threads)
    if torch_mha is not None:
        fns["torch_mha"] = torch_mha
    return fns


def _agreement(fns: dict) -> dict:
    """Largest |trace − naive| over the weights, and |public MHA − torch| over the output."""
    _, _, _, weights, _ = fns["trace"]()
    ref, _ = fns["naive"]()
    out = {"max_abs_diff": float(np.max(np.abs(weights - np.stack(ref))))}
    if "torch_mha" in fns:
        theirs, _ = fns["torch_mha"]()
        out["torch_abs_diff"] = float(np.max(np.abs(fns["public_mha"]().output
                                                    - theirs[0].numpy())))
    return out


def measure(sizes, dtypes, runs: int) -> list[dict]:
    """Median seconds per function for every size and dtype, at this process's BLAS threads."""
    threads = _blas_threads()
    rng = np.random.default_rng(0)
    rows = []
    for dtype in dtypes:
        for t in sizes:
            d = _inputs(t, dtype, rng)
            fns = _functions(d, threads)
            for f in fns.values():  # warm up (allocations, BLAS threads)
                f()
            times = {name: [] for name in fns}
            for _ in range(runs):
                for name, f in fns.items():
                    start = time.perf_counter()
                    f()
                    times[name].append(time.perf_counter() - start)
            row = {"dtype": np.dtype(dtype).name, "t": t, "runs": runs, "blas": threads,
                   **_agreement(fns)}
            row.update({name: c.median(ts) for name, ts in times.items()})
            row.update({f"best_{name}": min(ts) for name, ts in times.items()})
            row["ratio"] = row["trace"] / row["matmuls"]
            row["ratio_best"] = row["best_trace"] / row["best_matmuls"]
            if "torch_mha" in row:
                row["torch_ratio"] = row["public_mha"] / row["torch_mha"]
            rows.append(row)
    return rows


# ---------------------------------------------------------------- run_scenario

def limits_scenario(t: int | None = None):
    """Multi-head self-attention at the dashboard's limits (seeded, the same on every run)."""
    from attnviz.core.initializers import init_weights
    from attnviz.scenarios import limits
    from attnviz.scenarios.scenario import resize

    t = limits.MAX_TOKENS if t is None else t
    d_model, width, heads = limits.MAX_D_MODEL, limits.MAX_WIDTH, limits.MAX_HEADS
    s = resize(replace(c.default_scenario(), variant="multi_head"), t=t, d_model=d_model,
               d_k=width, d_v=width, t_source=t)
    w_q, w_k, w_v = init_weights("glorot_uniform", [(d_model, width)] * 3, seed=0)
    (w_o,) = init_weights("glorot_uniform", [(width, d_model)], seed=1)
    x = np.random.default_rng(0).standard_normal((t, d_model))
    return replace(s, x=x, source_x=x.copy(), w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o,
                   n_heads=heads, tokens=tuple(f"tok{i}" for i in range(t)),
                   source_tokens=tuple(f"src{i}" for i in range(t)),
                   title=f"Benchmark: {t} tokens, {heads} heads, widths {width}",
                   description="")


def measure_limits(runs: int, t: int | None) -> dict:
    """run_scenario at the dashboard's limits, at this process's BLAS threads."""
    from attnviz.scenarios import limits
    from attnviz.scenarios.scenario import run_scenario

    scenario = limits_scenario(t)
    run_scenario(scenario)  # warm up
    load_before = c.load_average()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run_scenario(scenario)
        times.append(time.perf_counter() - start)
    return {"threads": _blas_threads(),
            "scenario": f"t={scenario.t}, {limits.MAX_HEADS} heads, widths {limits.MAX_WIDTH}",
            "runs": runs, "compute": c.median(times), "best": min(times),
            "load": f"{load_before} / {c.load_average()}"}


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


# ---------------------------------------------------------------- one process per BLAS setting

def _settings() -> list[str | None]:
    """OPENBLAS_NUM_THREADS values to run with: the default (None) and 1, or what is set."""
    if os.environ.get("OPENBLAS_NUM_THREADS"):
        return [os.environ["OPENBLAS_NUM_THREADS"]]
    return [None] if _cores() == 1 else [None, "1"]


def _in_child(args) -> dict:
    """Everything measured at one BLAS setting (this process's)."""
    sizes = (16, 64) if args.quick else (16, 256, 1024)
    runs = args.runs or (2 if args.quick else 7)
    return {"rows": measure(sizes, (np.float32, np.float64), runs),
            "limits": measure_limits(max(runs, 5) * (1 if args.quick else 5),
                                     16 if args.quick else None)}


def run_settings(argv: list[str]) -> dict:
    """Run this script once per BLAS setting, each in a fresh process; merge what they measured."""
    merged: dict = {"rows": [], "limits": []}
    for threads in _settings():
        env = dict(os.environ)
        if threads is not None:
            env["OPENBLAS_NUM_THREADS"] = threads
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "child.json"
            subprocess.run([sys.executable, __file__, *argv, "--child", str(out)], env=env,
                           check=True)
            child = json.loads(out.read_text())
        merged["rows"] += child["rows"]
        merged["limits"].append(child["limits"])
    return merged


# ---------------------------------------------------------------- the report

def section(rows: list[dict], quick: bool, caching: list[dict] | None = None,
            limits: list[dict] | None = None) -> dict:
    """The markdown section and the targets for run_all."""
    with_torch = any("torch_mha" in r for r in rows)
    headers = ["BLAS threads", "dtype", "t", "matmuls QKᵀ, ·V (ms)", "full trace (ms)",
               "trace / matmuls", "same, fastest runs", "naive reference (ms)", "public MHA (ms)",
               "of which projections (ms)", "max abs diff trace vs naive"]
    if with_torch:
        headers += ["torch MHA (ms)", "public MHA / torch", "max abs diff MHA vs torch"]

    def cells(r):
        out = [r["blas"], r["dtype"], r["t"], c.ms(r["matmuls"]), c.ms(r["trace"]),
               f"{r['ratio']:.2f}", f"{r['ratio_best']:.2f}", c.ms(r["naive"]),
               c.ms(r["public_mha"]), c.ms(r["projections"]), f"{r['max_abs_diff']:.1e}"]
        if with_torch:
            out += ([c.ms(r["torch_mha"]), f"{r['torch_ratio']:.2f}",
                     f"{r['torch_abs_diff']:.1e}"] if "torch_mha" in r else ["n/a"] * 3)
        return out

    targets = [] if quick else _targets(rows, limits or [])
    runs = rows[0]["runs"] if rows else 0
    md = (f"### Core: attention trace (d_model = {D_MODEL}, {N_HEADS} heads, "
          f"median of {runs} runs{', QUICK' if quick else ''})\n\n"
          f"`python benchmarks/bench_core.py{' --quick' if quick else ''}`\n\n"
          f"{c.md_table(headers, [cells(r) for r in rows])}\n\n"
          "*matmuls*: the two products alone for all heads; *full trace*: scores, scaled, "
          "masked, weights and output for all heads — the core's `attend_kernel`; *naive*: a "
          "textbook loop over heads; *public MHA*: `multi_head_attention` from x, including "
          "validation and the projections x·W and concat·W_O (timed alone in the next column)"
          + ("; *torch MHA*: `torch.nn.MultiheadAttention(need_weights=True, "
             "average_attn_weights=False)` on the same x and weights, torch limited to as many "
             "threads as BLAS" if with_torch else "")
          + ". Each BLAS setting runs in its own process (`OPENBLAS_NUM_THREADS`). The "
          "functions run in turn within each repetition; on a shared machine the times move "
          "with the load, so the ratio of the fastest runs is shown as well.\n")
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
    if limits:
        md += ("\n#### run_scenario at the dashboard's limits, by BLAS threads\n\n"
               + c.md_table(["BLAS threads", "scenario", "runs", "run_scenario median (ms)",
                             "best (ms)", "load average before / after"],
                            [[r["threads"], r["scenario"], r["runs"], c.ms(r["compute"]),
                              c.ms(r["best"]), r["load"]] for r in limits])
               + "\n\nThe dashboard sets no BLAS thread count (OpenBLAS's default: one thread "
               "per core).\n")
    return {"name": "core", "rows": rows, "caching": caching or [], "threads": limits or [],
            "targets": targets, "markdown": md}


def _targets(rows: list[dict], limits: list[dict]) -> list[dict]:
    """The core's targets from a full run."""
    targets = []
    default = [r for r in limits if r["threads"] == _cores()]
    if default:
        r = default[0]
        others = "; ".join(f"{o['threads']} BLAS thread(s): {c.ms(o['compute'])} ms"
                           for o in limits if o is not r)
        targets.append(c.target(
            "core: run_scenario at the dashboard's limits (256 tokens, 16 heads, widths 128) "
            f"<= {LIMITS_TARGET_S * 1000:.0f} ms median",
            f"{c.ms(r['compute'])} ms with {r['threads']} BLAS thread(s) (the default)",
            r["compute"] <= LIMITS_TARGET_S, others))
    goal = [r for r in rows if r["t"] == 1024 and r["dtype"] == "float32"]
    if goal:
        trace = min(goal, key=lambda r: r["trace"])
        products = min(goal, key=lambda r: r["matmuls"])
        ratio = trace["trace"] / products["matmuls"]
        targets.append(c.target(
            f"core: full trace at t=1024, float32 <= {TRACE_TARGET}x the two matmuls",
            f"{ratio:.2f}x ({c.ms(trace['trace'])} ms with {trace['blas']} BLAS thread(s) "
            f"vs {c.ms(products['matmuls'])} ms with {products['blas']})",
            ratio <= TRACE_TARGET))
        with_torch = [r for r in goal if "torch_mha" in r]
        if with_torch:
            ours = min(with_torch, key=lambda r: r["public_mha"])
            theirs = min(with_torch, key=lambda r: r["torch_mha"])
            targets.append(c.target(
                "core: public multi_head_attention vs torch.nn.MultiheadAttention"
                "(need_weights=True), t=1024, float32 (reported, no target)",
                f"{ours['public_mha'] / theirs['torch_mha']:.2f}x "
                f"({c.ms(ours['public_mha'])} ms with {ours['blas']} BLAS thread(s) vs "
                f"{c.ms(theirs['torch_mha'])} ms with {theirs['blas']} thread(s))", None))
    return targets


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--child", type=Path, default=None,
                   help="internal: measure at this process's BLAS setting, save to this path")
    args = p.parse_args(argv)
    if args.child is not None:
        args.child.write_text(json.dumps(_in_child(args), default=float))
        return
    measured = run_settings((["--quick"] if args.quick else [])
                            + ([f"--runs={args.runs}"] if args.runs else []))
    runs = args.runs or (2 if args.quick else 7)
    caching = measure_caching(max(runs, 5), 16 if args.quick else c.BIG_T)
    c.emit(args, section(measured["rows"], args.quick, caching, measured["limits"]))


if __name__ == "__main__":
    main()
