"""Run every benchmark and write benchmarks/RESULTS.md.

    python benchmarks/run_all.py            # everything (~60-70 min on 2 cores)
    python benchmarks/run_all.py --quick    # tiny sizes, one run: checks the scripts work
    python benchmarks/run_all.py --only core,server

Each benchmark runs in its own process (``python benchmarks/<script>.py --json ...``) so that
one's imports, caches and threads cannot colour another's figures; its raw figures go to
``benchmarks/results/<name>.json`` (not committed) and its markdown section into the report.
The report starts with the machine (CPU model, cores, RAM, load, Python and library versions)
and a table of the targets, met or not.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

import _common as c

BENCHMARKS = {  # name: (script, extra arguments of a full run)
    "core": ("bench_core.py", []),
    "server": ("bench_server.py", []),
    "browser": ("bench_browser.py", []),
    "floor": ("bench_floor.py", []),
    "grid_commit": ("bench_grid_commit.py", []),
    "backward": ("bench_backward.py", []),
    "drag": ("bench_drag.py", []),
    "load": ("load.py", []),
    "ws_load": ("ws_load.py", []),
    # the memory budget: 1, 20 and 60 students at the default scenario and at the
    # editing limits (a file), each class again after its sessions expired (~40 min)
    "memory": ("ws_load.py", ["--students", "1,20,60", "--seconds", "60", "--scenario",
                              "default,limits", "--expire", "130", "--classes", "2"]),
}
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"


def run_one(name: str, quick: bool, out_dir: Path, timeout: float) -> dict:
    """Run one benchmark script; return its JSON section (or a section saying it failed)."""
    script, extra = BENCHMARKS[name]
    out = out_dir / f"{name}{'-quick' if quick else ''}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(HERE / script), "--json", str(out)] + (["--quick"] if quick
                                                                        else extra)
    print(f"== {name}: {' '.join(cmd[1:])}", flush=True)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=c.ROOT, timeout=timeout, capture_output=True, text=True)
        code, tail = proc.returncode, (proc.stderr or "")[-2000:]
        print(proc.stdout[-3000:], flush=True)
    except subprocess.TimeoutExpired:
        code, tail = "timeout", f"no result after {timeout:.0f} s"
    took = time.perf_counter() - start
    if code == 0 and out.is_file():
        section = json.loads(out.read_text())
        section["seconds"] = took
        return section
    print(f"!! {name} failed ({code}):\n{tail}", file=sys.stderr, flush=True)
    last = tail.strip().splitlines()[-1] if tail.strip() else "no output"
    return {"name": name, "seconds": took, "targets": [],
            "markdown": f"### {name}\n\nThe benchmark did not finish ({code}): `{last[:200]}`\n",
            "failed": True}


def machine_table(info: dict, load_after: str) -> str:
    """The machine the figures come from."""
    rows = [["CPU", info["cpu"]], ["cores", info["cores"]], ["RAM (GiB)", info["ram_gib"]],
            ["OS", info["os"]], ["Python", info["python"]], ["numpy (BLAS)",
                                                             f"{info['numpy']} ({info['blas']})"],
            ["scipy", info["scipy"]], ["streamlit", info["streamlit"]],
            ["plotly", info["plotly"]], ["pandas", info["pandas"]],
            ["browser", c.chromium_version()],
            ["load average (1 min) before / after",
             f"{info['load_avg_1_5_15'][0] if info['load_avg_1_5_15'] else 'n/a'} / "
             f"{load_after}"]]
    return c.md_table(["machine", ""], rows)


def report(sections: list[dict], info: dict, load_after: str, quick: bool, took: float) -> str:
    """The whole RESULTS.md."""
    targets = [t for s in sections for t in s.get("targets", [])]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"# attnviz benchmarks{' (QUICK: not measurements)' if quick else ''}\n\n"
        f"Written by `python benchmarks/run_all.py{' --quick' if quick else ''}` on {when} "
        f"in {took / 60:.1f} min. Medians of several runs unless said otherwise; scripts and "
        "method in `benchmarks/` (each script's docstring says what it times).\n\n"
        f"{machine_table(info, load_after)}\n\n"
        "The load average counts runnable processes; on 2 cores anything above 2 means the "
        "benchmarks shared the CPU with other work, and the timings are that much slower.\n\n"
        "## Targets\n\n"
        + c.md_table(["target", "measured", "verdict", "note"],
                     [[t["target"], t["measured"], c.verdict(t["ok"]), t.get("note", "")]
                      for t in targets] or [["(no target is measured at these sizes)", "",
                                             "n/a", ""]])
        + "\n\n## Results\n\n")
    return head + "\n".join(s["markdown"] for s in sections)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes: check the scripts run")
    p.add_argument("--only", default="", help=f"comma-separated subset of {', '.join(BENCHMARKS)}")
    p.add_argument("--output", type=Path, default=None,
                   help="report path (default benchmarks/RESULTS.md; "
                        "benchmarks/results/RESULTS-quick.md with --quick)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per benchmark")
    args = p.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(BENCHMARKS)
    unknown = set(names) - set(BENCHMARKS)
    if unknown:
        p.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    output = args.output or (c.RESULTS_DIR / "RESULTS-quick.md" if args.quick else RESULTS)
    c.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    info = c.machine()
    start = time.perf_counter()
    sections = [run_one(n, args.quick, c.RESULTS_DIR, args.timeout) for n in names]
    text = report(sections, info, c.load_average(), args.quick, time.perf_counter() - start)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    print(f"wrote {output}")
    if any(s.get("failed") for s in sections):
        sys.exit(1)


if __name__ == "__main__":
    main()
